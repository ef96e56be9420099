package metrics

import (
	"encoding/json"
	"math"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

func TestQuantileTable(t *testing.T) {
	inf := math.Inf(1)
	h := Histogram{Buckets: []Bucket{{0.001, 10}, {0.002, 30}, {0.005, 90}, {0.01, 100}, {inf, 100}}, Count: 100}
	for _, tc := range []struct {
		q    float64
		want float64
		ok   bool
	}{
		{0, 0, true},
		{0.05, 0.0005, true},                    // inside the first bucket, lower bound 0
		{0.1, 0.001, true},                      // exactly at a bound
		{0.5, 0.002 + 0.003*(50.0-30)/60, true}, // interpolated
		{0.95, 0.0075, true},
		{1, 0.01, true},
		{-0.1, 0, false},
		{1.1, 0, false},
		{math.NaN(), 0, false},
	} {
		got, ok := h.Quantile(tc.q)
		if ok != tc.ok || (ok && math.Abs(got-tc.want) > 1e-12) {
			t.Errorf("q=%v: got %v,%v want %v,%v", tc.q, got, ok, tc.want, tc.ok)
		}
	}
	// Rank in the +Inf bucket: the largest finite bound.
	tail := Histogram{Buckets: []Bucket{{0.02, 50}, {0.05, 60}, {inf, 100}}, Count: 100}
	if got, ok := tail.Quantile(0.99); !ok || got != 0.05 {
		t.Errorf("+Inf bucket: %v %v", got, ok)
	}
	// No +Inf bucket: the count carries the observations above.
	noInf := Histogram{Buckets: []Bucket{{0.02, 50}, {0.05, 60}}, Count: 100}
	if got, ok := noInf.Quantile(0.99); !ok || got != 0.05 {
		t.Errorf("missing +Inf bucket: %v %v", got, ok)
	}
	// Empty and only-+Inf histograms have no estimate.
	if _, ok := (Histogram{}).Quantile(0.5); ok {
		t.Error("empty histogram gave a quantile")
	}
	if _, ok := (Histogram{Buckets: []Bucket{{inf, 5}}, Count: 5}).Quantile(0.5); ok {
		t.Error("only +Inf bucket gave a quantile")
	}
	if _, ok := (Histogram{Buckets: []Bucket{{0.1, 0}, {inf, 0}}}).Quantile(0.5); ok {
		t.Error("zero observations gave a quantile")
	}
	// Non-monotonic counts are raised, not trusted.
	bad := Histogram{Buckets: []Bucket{{0.001, 50}, {0.002, 20}, {inf, 100}}, Count: 100}
	if got, ok := bad.Quantile(0.4); !ok || math.Abs(got-0.0008) > 1e-12 {
		t.Errorf("non-monotonic: %v %v", got, ok)
	}
}

// Property: for any histogram with finite bounds and an +Inf bucket, the
// estimate is non-decreasing in q and lies within [0 or the first bound,
// the largest finite bound].
func TestQuantileProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "n")
		bounds := make([]float64, n)
		for i := range bounds {
			bounds[i] = rapid.Float64Range(0.0001, 10).Draw(t, "le")
		}
		sort.Float64s(bounds)
		var bs []Bucket
		cum := 0.0
		for _, b := range bounds {
			cum += float64(rapid.IntRange(0, 100).Draw(t, "c"))
			bs = append(bs, Bucket{b, cum})
		}
		cum += float64(rapid.IntRange(0, 100).Draw(t, "inf"))
		bs = append(bs, Bucket{math.Inf(1), cum})
		h := Histogram{Buckets: bs, Count: cum}
		prev := -1.0
		for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
			v, ok := h.Quantile(q)
			if cum == 0 {
				if ok {
					t.Fatalf("estimate without observations")
				}
				return
			}
			if !ok {
				t.Fatalf("q=%v: no estimate", q)
			}
			if v < prev-1e-12 {
				t.Fatalf("q=%v: %v < previous %v", q, v, prev)
			}
			if v < 0 || v > bounds[len(bounds)-1]+1e-12 {
				t.Fatalf("q=%v: %v outside [0, %v]", q, v, bounds[len(bounds)-1])
			}
			prev = v
		}
	})
}

// Property: the increase between two cumulative snapshots plus the earlier
// one gives the later one when no counter went down.
func TestSinceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		results := []string{"hit", "miss", "error", "timeout", "skipped"}
		before := GatewaySnapshot{Lookups: map[string]float64{}}
		after := GatewaySnapshot{Lookups: map[string]float64{}}
		for _, r := range results {
			b := float64(rapid.IntRange(0, 1000).Draw(t, r+"-before"))
			before.Lookups[r] = b
			after.Lookups[r] = b + float64(rapid.IntRange(0, 1000).Draw(t, r+"-inc"))
		}
		d := after.Since(before)
		for _, r := range results {
			if d.Lookups[r]+before.Lookups[r] != after.Lookups[r] {
				t.Fatalf("%s: %v + %v != %v", r, d.Lookups[r], before.Lookups[r], after.Lookups[r])
			}
		}
	})
}

func TestBucketJSON(t *testing.T) {
	got, err := json.Marshal([]Bucket{{0.005, 3}, {math.Inf(1), 4}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `[{"le":"0.005","count":3},{"le":"+Inf","count":4}]` {
		t.Errorf("%s", got)
	}
}
