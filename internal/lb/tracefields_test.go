package lb

import (
	"math"
	"testing"
)

func candidate(t *testing.T, pt PhaseTrace, id string) CandidateTrace {
	t.Helper()
	for _, c := range pt.Candidates {
		if c.ClusterID == id {
			return c
		}
	}
	t.Fatalf("phase %v has no candidate %s", pt.Phase, id)
	return CandidateTrace{}
}

// E4 (wait-and-widen.md §7): fast TTFT 205, slow 805, gap 600 → the slow
// bucket unlocks 150 ms into the phase. The trace reports the locked
// bucket's index and unlock instant, and comparator_ttft.
func TestTraceBucketUnlockE4(t *testing.T) {
	d := decide(t, cfgOf(WaitAndWiden), e4Snap(), rq(input(4000), at(0)))
	pt := d.Trace.Phases[0]
	fast, slow := candidate(t, pt, "fast-a"), candidate(t, pt, "slow-idle")
	if fast.Bucket != 0 || !fast.Unlocked || fast.UnlockAtMs != 0 || fast.ComparatorTTFTMs != 205 {
		t.Fatalf("fast-a: %+v", fast)
	}
	if slow.Bucket != 1 || slow.Unlocked || slow.UnlockAtMs != 150 || slow.ComparatorTTFTMs != 805 {
		t.Fatalf("slow-idle: bucket %d unlocked %v at %v cmp %v; want bucket 1 locked until 150", slow.Bucket, slow.Unlocked, slow.UnlockAtMs, slow.ComparatorTTFTMs)
	}
	d = decide(t, cfgOf(WaitAndWiden), e4Snap(), rq(input(4000), at(150)))
	if s := candidate(t, d.Trace.Phases[0], "slow-idle"); !s.Unlocked || s.UnlockAtMs != 150 {
		t.Fatalf("at 150 ms: %+v", s)
	}
}

// E8: the global phase's clock starts at X = 200; b needs 50 ms, c 100 ms
// of budget, so they unlock at elapsed 250 and 300.
func TestTraceBucketUnlockGlobalOriginE8(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withSeed("seed-1"), withK(1), withX(200), withCmp(CompareUtilization), withN(2))
	d := decide(t, cfg, e8Snap(), rq(key("cached-prefix"), input(100), at(200)))
	var global PhaseTrace
	for _, p := range d.Trace.Phases {
		if p.Phase == PhaseGlobal {
			global = p
		}
	}
	for id, want := range map[string]float64{"a": 200, "b": 250, "c": 300} {
		if c := candidate(t, global, id); float64(c.UnlockAtMs) != want {
			t.Errorf("%s unlocks at %v, want %v", id, c.UnlockAtMs, want)
		}
	}
}

func TestTraceInfiniteTTFTNotBucketed(t *testing.T) {
	s := snapOf(cl("ok", tps(100)), cl("bad", tps(math.NaN())))
	d := decide(t, cfgOf(WaitAndWiden), s, rq(input(10)))
	if c := candidate(t, d.Trace.Phases[0], "bad"); c.Bucket != -1 || !math.IsInf(float64(c.UnlockAtMs), 1) {
		t.Fatalf("infinite TTFT: %+v", c)
	}
}
