package migrate

import (
	"fmt"
	"testing"
)

// BenchmarkMigrateScale migrates a config of 1,000, 15,000 and 124,000
// models (largeConfig: three in four change; 15.9 MB of JSON at 124,000,
// the size of the file in issue 14), as JSON and as commented YAML, and
// diffs it, as `lcctl migrate` does: the cost must grow linearly with the
// input (124,000 entries took 53 s and 897 MB; target ≤ 3 s and ≤ 300 MB
// for the whole command). docs/performance.md records the numbers.
func BenchmarkMigrateScale(b *testing.B) {
	for _, format := range []string{"json", "yaml"} {
		for _, n := range []int{1000, 15000, 124000} {
			data := largeConfig(n, format == "yaml")
			opts := DefaultOptions()
			opts.Strategy = Bounded
			b.Run(fmt.Sprintf("%s/%d-models", format, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					res, err := Migrate("lb."+format, data, opts)
					if err != nil || res.Status != StatusPending || len(res.Changes) < n*3/4 {
						b.Fatalf("%v %s %d %v", err, res.Status, len(res.Changes), res.Notes)
					}
					if UnifiedDiff("a", "b", data, res.Output) == "" {
						b.Fatal("empty diff")
					}
				}
			})
		}
	}
}
