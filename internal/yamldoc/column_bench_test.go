package yamldoc

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// benchConfig is an lb-config of n models in YAML with a syntax error
// (a mapping value in a plain scalar) on its last line.
func benchConfig(n int) []byte {
	var b strings.Builder
	b.WriteString("default: power-of-n\nmodels:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  model-%d:\n    algorithm: wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300\n", i)
	}
	b.WriteString("  bad: x: y\n")
	return []byte(b.String())
}

// BenchmarkParseSyntaxError measures the whole error path of Parse
// (yaml.v3 fails, then go-yaml finds the column) for a typical 4 KiB
// config and one at the 256 KiB bound; the line-only runs are yaml.v3
// alone, for comparison.
func BenchmarkParseSyntaxError(b *testing.B) {
	for _, n := range []int{40, 2700} {
		data := benchConfig(n)
		b.Run(fmt.Sprintf("%dKiB", len(data)>>10), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Parse(data); err == nil {
					b.Fatal("parsed")
				}
			}
		})
		b.Run(fmt.Sprintf("%dKiB-line-only", len(data)>>10), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var n yaml.Node
				if err := yaml.Unmarshal(data, &n); err == nil {
					b.Fatal("parsed")
				}
			}
		})
	}
}
