package validate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// BenchmarkValidate decodes and validates generated configs
// (testutil.GenerateLBConfig: every algorithm, string and detailed forms).
// Target (issue 2): models=1000 under 20 ms/op. Figures in
// docs/performance.md.
func BenchmarkValidate(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		data := testutil.GenerateLBConfig(n)
		b.Run(fmt.Sprintf("models=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := validate.File("bench.json", data)
				if !r.Valid() {
					b.Fatalf("generated config rejected: %v", r.Errors())
				}
			}
		})
	}
	yamlData := []byte("models:\n")
	for i := range 1000 {
		yamlData = fmt.Appendf(yamlData, "  model-%d:\n    algorithm: pulsar-wait-and-widen\n    seed: s-%d\n    max_queue_time_floor_ms: 100\n    max_queue_time_ceil_ms: 1000\n    cache_affinity_wait_ms: 300\n    rendezvous_weight: max-input-tps\n", i, i)
	}
	b.Run("yaml/models=1000", func(b *testing.B) {
		b.SetBytes(int64(len(yamlData)))
		b.ReportAllocs()
		for b.Loop() {
			if r := validate.File("bench.yaml", yamlData); !r.Valid() {
				b.Fatalf("generated YAML rejected: %v", r.Errors())
			}
		}
	})
	// The same config as one line (minified JSON read as YAML): positions
	// on a long line must not cost more than on short ones.
	var compact bytes.Buffer
	if err := json.Compact(&compact, testutil.GenerateLBConfig(1000)); err != nil {
		b.Fatal(err)
	}
	oneLine := compact.Bytes()
	b.Run("yaml-one-line/models=1000", func(b *testing.B) {
		b.SetBytes(int64(len(oneLine)))
		b.ReportAllocs()
		for b.Loop() {
			if r := validate.FileAs("bench.yaml", oneLine, validate.FormatYAML); !r.Valid() {
				b.Fatalf("generated config rejected as YAML: %v", r.Errors())
			}
		}
	})
}
