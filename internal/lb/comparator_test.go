package lb

import (
	"math"
	"testing"
)

// wait-and-widen.md §2.10: every comparator, used by wait-and-widen and
// power-of-n.
func TestComparators(t *testing.T) {
	s := snapOf(
		cl("few-queued-slow", qsize(1), tps(10), queued(100), load(3, 4)),
		cl("many-queued-fast", qsize(9), tps(10000), queued(100), load(1, 4)),
		cl("idle-no-rate", qsize(5), tps(0), queued(0), load(0, 0)),
	)
	for _, tc := range []struct {
		cmp  Comparator
		want string
	}{
		{CompareNumRequestsQueued, "few-queued-slow"},
		{CompareUtilization, "idle-no-rate"},
		{CompareInputWorkSeconds, "many-queued-fast"},
		{CompareQueueTime, ""}, // every queue estimate is 0: a three-way tie
	} {
		pon := cfgOf(PowerOfN, func(c *AlgorithmConfig) { c.SampleCount = 3; c.Comparator = tc.cmp })
		d := decide(t, pon, s, rq(input(10)))
		if tc.cmp == CompareQueueTime {
			// All three have queue 0 (free slots, or an empty queue): a
			// three-way tie, each with probability 1/3.
			wantOneOf(t, d, "few-queued-slow", "many-queued-fast", "idle-no-rate")
			for _, c := range d.Choices {
				if c.Fraction() != "1/3" {
					t.Fatalf("tie probability %s", c.Fraction())
				}
			}
			continue
		}
		wantDispatch(t, d, tc.want, 1)
	}
	c := cl("x", tps(0), queued(0))
	if InputWorkSeconds(&c.Stats, 0) != 0 || !math.IsInf(InputWorkSeconds(&c.Stats, 1), 1) {
		t.Fatal("input-work-seconds edge cases")
	}
	c = cl("x", load(3, 0))
	if Utilization(&c.Stats) != 3 {
		t.Fatal("utilization divides by max(limit, 1)")
	}
}

// Probabilities of power-of-n with a partial sample: n = 2 of 4 with
// distinct scores a < b < c < d: a wins unless not sampled.
func TestPowerOfNProbabilities(t *testing.T) {
	s := snapOf(cl("a", queued(1)), cl("b", queued(2)), cl("c", queued(3)), cl("d", queued(4)))
	cfg := cfgOf(PowerOfN, func(c *AlgorithmConfig) { c.Comparator = CompareQueueTime })
	d := decide(t, cfg, s, rq())
	want := map[string]string{"a": "1/2", "b": "1/3", "c": "1/6"}
	if len(d.Choices) != 3 {
		t.Fatalf("choices %v", d.Choices)
	}
	for _, c := range d.Choices {
		if want[c.ClusterID] != c.Fraction() {
			t.Errorf("%s: %s, want %s", c.ClusterID, c.Fraction(), want[c.ClusterID])
		}
	}
}

// round-robin cycles over the non-excluded candidates in slice order
// (upstream round_robin.rs tests).
func TestRoundRobin(t *testing.T) {
	e := NewEngine(cfgOf(RoundRobin))
	s := snapOf(cl("cluster-0000"), cl("cluster-0001"), cl("cluster-0002"), cl("cluster-0003"))
	var got []string
	for i := 0; i < 6; i++ {
		got = append(got, e.Decide(s, rq(exclude("cluster-0002")), nil, Options{}).ClusterID)
	}
	if !equalStrings(got, []string{"cluster-0000", "cluster-0001", "cluster-0003", "cluster-0000", "cluster-0001", "cluster-0003"}) {
		t.Fatalf("single exclusion: %v", got)
	}
	e = NewEngine(cfgOf(RoundRobin))
	s = snapOf(cl("cluster-0000"), cl("cluster-0001"), cl("cluster-0002"), cl("cluster-0003"), cl("cluster-0004"))
	got = nil
	for i := 0; i < 7; i++ {
		got = append(got, e.Decide(s, rq(exclude("cluster-0001", "cluster-0003")), nil, Options{}).ClusterID)
	}
	if !equalStrings(got, []string{"cluster-0000", "cluster-0002", "cluster-0004", "cluster-0000", "cluster-0002", "cluster-0004", "cluster-0000"}) {
		t.Fatalf("two exclusions: %v", got)
	}
	before := e.RoundRobinCounter()
	wantUnavailable(t, e.Decide(s, rq(exclude("cluster-0000", "cluster-0001", "cluster-0002", "cluster-0003", "cluster-0004")), nil, Options{}))
	if e.RoundRobinCounter() != before {
		t.Fatal("the counter advances only on a choice")
	}
}

// random never selects excluded clusters and is uniform over the others.
func TestRandom(t *testing.T) {
	s := snapOf(cl("excluded-a"), cl("eligible"), cl("excluded-b"))
	for i := 0; i < 32; i++ {
		d := NewEngine(cfgOf(Random)).Decide(s, rq(exclude("excluded-a", "excluded-b")), seeded(uint64(i)), Options{})
		if d.ClusterID != "eligible" {
			t.Fatalf("chose %s", d.ClusterID)
		}
	}
	d := decide(t, cfgOf(Random), snapOf(cl("a"), cl("b"), cl("c"), cl("d")), rq(exclude("d")))
	wantOneOf(t, d, "a", "b", "c")
}
