package report

import (
	"math"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/sim"
)

func TestInterval(t *testing.T) {
	// Mean 2, sample sd 1, n 3: half-width t(2)·1/√3 = 4.303/1.732.
	iv := interval([]float64{1, 2, 3})
	if iv.Mean != 2 || math.Abs(iv.High-2-4.303/math.Sqrt(3)) > 1e-5 || math.Abs(iv.Low-2+4.303/math.Sqrt(3)) > 1e-5 {
		t.Fatalf("%+v", iv)
	}
	if one := interval([]float64{5}); one.Low != 5 || one.High != 5 {
		t.Fatalf("%+v", one)
	}
	if tq(200) < 1.96 || tq(200) > 1.975 {
		t.Fatalf("t(200) = %v", tq(200))
	}
}

func flagResult(policy string, on bool, goodput, kv float64) *sim.Result {
	return &sim.Result{Policy: policy, Algorithm: "wait-and-widen", LastClusterAffinity: &on, GoodputRPS: goodput, KVReuse: kv, Requests: 100}
}

// TestSeedsVerdict: paired differences, significance and the trade-off
// sentence (KV reuse up, goodput down).
func TestSeedsVerdict(t *testing.T) {
	var runs [][]*sim.Result
	for k := 0; k < 5; k++ {
		noise := float64(k) * 0.1 // the level moves with the seed, the difference does not
		runs = append(runs, []*sim.Result{
			flagResult("w/lc-off", false, 10+noise, 0.50+noise/10),
			flagResult("w/lc-on", true, 9.5+noise+0.01*float64(k%2), 0.52+noise/10),
		})
	}
	s := NewSeeds([]uint64{1, 2, 3, 4, 5}, runs)
	if len(s.Differences) != 1 || len(s.Policies) != 2 || len(s.Policies[0].Metrics["goodput_rps"].Values) != 5 {
		t.Fatalf("%+v", s)
	}
	d := s.Differences[0]
	kv, gp, p50 := d.Metrics["kv_reuse"], d.Metrics["goodput_rps"], d.Metrics["ttft_p50_ms"]
	if !*kv.Significant || !*gp.Significant || *p50.Significant || math.Abs(kv.Mean-0.02) > 1e-9 {
		t.Fatalf("kv %+v goodput %+v p50 %+v", kv, gp, p50)
	}
	v := s.Verdict[0]
	for _, want := range []string{"over 5 seeds", "goodput down -0.496 r/s", "KV reuse up +2.0 points", "trade-off: KV reuse up, but goodput down", "not significant: TTFT p50"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q: %s", want, v)
		}
	}
	var b strings.Builder
	doc := &Document{Scenario: ScenarioInfo{Name: "x", Clusters: []string{"a"}}, Policies: runs[0], Seeds: s}
	if err := WriteSeedsText(&b, doc, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5 seeds: 1–5", "paired by seed", "+2.0 [", "verdict:", "trade-off"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
