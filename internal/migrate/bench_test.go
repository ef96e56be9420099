package migrate

import (
	"fmt"
	"strings"
	"testing"
)

// largeConfig returns an lb-config with n models, three in four of them
// no-SLO pulsar-wait-and-widen (string and detailed forms), as JSON
// (2-space indentation) or as commented YAML.
func largeConfig(n int, yaml bool) []byte {
	var b strings.Builder
	if yaml {
		b.WriteString("# fleet\ndefault: power-of-n\nmodels:\n")
		for i := range n {
			fmt.Fprintf(&b, "  # model %d\n", i)
			switch i % 4 {
			case 0:
				fmt.Fprintf(&b, "  org/model-%05d: pulsar-wait-and-widen\n", i)
			case 1:
				fmt.Fprintf(&b, "  org/model-%05d:\n    algorithm: pulsar-wait-and-widen\n    seed: s-%d\n    n: 3\n    rendezvous_weight: last-mean-input-tps\n", i, i)
			case 2:
				fmt.Fprintf(&b, "  org/model-%05d: {algorithm: pulsar-wait-and-widen, seed: f-%d}\n", i, i)
			default:
				fmt.Fprintf(&b, "  org/model-%05d: round-robin\n", i)
			}
		}
		return []byte(b.String())
	}
	b.WriteString("{\n  \"default\": \"power-of-n\",\n  \"models\": {")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    \"org/model-%05d\": ", i)
		switch i % 4 {
		case 0:
			b.WriteString(`"pulsar-wait-and-widen"`)
		case 1:
			fmt.Fprintf(&b, "{\n      \"algorithm\": \"pulsar-wait-and-widen\",\n      \"seed\": \"s-%d\",\n      \"n\": 3,\n      \"rendezvous_weight\": \"last-mean-input-tps\"\n    }", i)
		case 2:
			fmt.Fprintf(&b, `{"algorithm": "pulsar-wait-and-widen", "seed": "f-%d"}`, i)
		default:
			b.WriteString(`"round-robin"`)
		}
	}
	b.WriteString("\n  }\n}\n")
	return []byte(b.String())
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
