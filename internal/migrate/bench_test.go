package migrate

import (
	"fmt"
	"strings"
	"testing"
)

// largeConfig returns an lb-config with n models, three in four of them
// no-SLO pulsar-wait-and-widen, as JSON (2-space indentation) or as
// commented YAML. The entries follow the upstream examples
// (../shared/examples/lb-config: e2e-last-cluster-*, docs-lb-configuration-*,
// the bench manifests): vendor/model IDs, and in turn a string entry, a
// detailed entry with the last-cluster and cache-affinity fields, a flow
// entry with a seed, and a wait-and-widen entry that does not change. At
// 124,000 models the JSON is about 15.9 MB, the size of the file in issue
// 14 (128 bytes an entry).
func largeConfig(n int, yaml bool) []byte {
	var b strings.Builder
	b.Grow(n * 136)
	if yaml {
		b.WriteString("# fleet\ndefault: power-of-n\nmodels:\n")
		for i := range n {
			fmt.Fprintf(&b, "  # model %d\n", i)
			id := modelID(i)
			switch i % 4 {
			case 0:
				fmt.Fprintf(&b, "  %s: pulsar-wait-and-widen\n", id)
			case 1:
				fmt.Fprintf(&b, "  %s:\n    algorithm: pulsar-wait-and-widen\n    seed: fleet-seed-%d\n    require_cache_affinity_key: true\n    last_cluster_affinity: true\n", id, i)
			case 2:
				fmt.Fprintf(&b, "  %s: {algorithm: pulsar-wait-and-widen, seed: f-%d}\n", id, i)
			default:
				fmt.Fprintf(&b, "  %s:\n    algorithm: wait-and-widen\n    cache_affinity_backend_selection_count: 2\n    cache_affinity_wait_ms: 200\n", id)
			}
		}
		return []byte(b.String())
	}
	b.WriteString("{\n  \"default\": \"power-of-n\",\n  \"models\": {")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    \"%s\": ", modelID(i))
		switch i % 4 {
		case 0:
			b.WriteString(`"pulsar-wait-and-widen"`)
		case 1:
			fmt.Fprintf(&b, "{\n      \"algorithm\": \"pulsar-wait-and-widen\",\n      \"seed\": \"fleet-seed-%d\",\n      \"require_cache_affinity_key\": true,\n      \"last_cluster_affinity\": true\n    }", i)
		case 2:
			fmt.Fprintf(&b, `{"algorithm": "pulsar-wait-and-widen", "seed": "f-%d"}`, i)
		default:
			b.WriteString("{\n      \"algorithm\": \"wait-and-widen\",\n      \"cache_affinity_backend_selection_count\": 2,\n      \"cache_affinity_wait_ms\": 200\n    }")
		}
	}
	b.WriteString("\n  }\n}\n")
	return []byte(b.String())
}

// modelID is the i-th model ID of largeConfig, shaped like the vendor/model
// IDs of the upstream examples (meta/llama-3.3-70b-instruct).
func modelID(i int) string {
	return fmt.Sprintf("org-%02d/llama-3-70b-%06d", i%100, i)
}

// BenchmarkMigrate migrates a 1,000-model config (750 entries change):
// decode, plan, splice, verify, validate the result and check idempotence.
// docs/performance.md records the numbers.
func BenchmarkMigrate(b *testing.B) {
	for _, yaml := range []bool{false, true} {
		for _, s := range []Strategy{Bounded, Pulsar} {
			name, file := "json", "lb.json"
			if yaml {
				name, file = "yaml", "lb.yaml"
			}
			data := largeConfig(1000, yaml)
			opts := DefaultOptions()
			opts.Strategy = s
			b.Run(fmt.Sprintf("%s/%s/1000-models", name, s), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					res, err := Migrate(file, data, opts)
					if err != nil || res.Status != StatusPending || len(res.Changes) < 750 {
						b.Fatalf("%v %s %d", err, res.Status, len(res.Changes))
					}
				}
			})
		}
	}
}

// BenchmarkUnifiedDiff diffs the 1,000-model config against its migration.
func BenchmarkUnifiedDiff(b *testing.B) {
	data := largeConfig(1000, false)
	opts := DefaultOptions()
	opts.Strategy = Bounded
	res, err := Migrate("lb.json", data, opts)
	if err != nil || res.Status != StatusPending {
		b.Fatal(err, res.Status)
	}
	b.ReportAllocs()
	for b.Loop() {
		if UnifiedDiff("a", "b", data, res.Output) == "" {
			b.Fatal("empty diff")
		}
	}
}
