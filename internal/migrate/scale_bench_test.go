package migrate

import (
	"fmt"
	"testing"
)

// BenchmarkMigrateScale migrates a JSON config with 1,000, 15,000 and
// 124,000 models (three in four change) and diffs it, as `lcctl migrate`
// does: the cost must grow linearly with the input (124,000 entries took
// 53 s and 897 MB; target ≤ 3 s and ≤ 300 MB). docs/performance.md
// records the numbers.
func BenchmarkMigrateScale(b *testing.B) {
	for _, n := range []int{1000, 15000, 124000} {
		data := largeConfig(n, false)
		opts := DefaultOptions()
		opts.Strategy = Bounded
		b.Run(fmt.Sprintf("%d-models", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := Migrate("lb.json", data, opts)
				if err != nil || res.Status != StatusPending || len(res.Changes) < n*3/4 {
					b.Fatalf("%v %s %d", err, res.Status, len(res.Changes))
				}
				if UnifiedDiff("a", "b", data, res.Output) == "" {
					b.Fatal("empty diff")
				}
			}
		})
	}
}
