package validate_test

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/validate"
)

// Generators of lb-config JSON texts built from the names, numbers and
// forms the rules care about (valid and invalid alike).
var (
	parityKeys = []string{"algorithm", "seed", "comparator", "n", "max_queued", "sample_count", "rendezvous_weight",
		"cache_affinity_input_tokens_scale", "next_bucket_unlock_factor", "max_input_work_seconds", "ignore_queue_time",
		"request_algorithms", "band_widen_interval_ms", "last_cluster_affinity", "consider_kv_free_tokens", "bogus",
		"cache_affinity_virtual_nodes", "max_queue_time_floor_ms", "max_queue_time_ceil_ms"}
	parityNames   = []string{"pulsar", "random", "wait-and-widen", "pulsar-wait-and-widen", "power-of-n", "round-robin", "groq-multiregion", "pulsar-multiregion", "powerOf2", "Pulsar", "power_of_n", ""}
	parityScalars = []string{"null", "true", "false", "0", "-0", "1", "-1", "2.0", "1e3", "1E2", "0.5", "1.5", "-0.0", "18446744073709551615",
		"18446744073709551616", "-9223372036854775809", "65", "64", `"ttft"`, `"queue-time"`, `"max-input-tps"`, `"5"`, `""`, `"x"`,
		`{}`, `[]`, `{"ttft":null}`, `{"max-input-tps":{}}`, `1e-7`, `1e16`, `"\u0041"`, `0.0000001`}
)

func drawValue(t *rapid.T, depth int) string {
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0:
		return fmt.Sprintf("%q", rapid.SampledFrom(parityNames).Draw(t, "name"))
	case 1:
		if depth < 3 {
			return drawEntry(t, depth+1)
		}
	case 2:
		if depth < 3 {
			return drawMap(t, depth+1)
		}
	}
	return rapid.SampledFrom(parityScalars).Draw(t, "scalar")
}

func drawMap(t *rapid.T, depth int) string {
	var parts []string
	for range rapid.IntRange(0, 2).Draw(t, "len") {
		parts = append(parts, fmt.Sprintf("%q: %s", rapid.SampledFrom(parityNames).Draw(t, "key"), drawValue(t, depth)))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func drawEntry(t *rapid.T, depth int) string {
	var parts []string
	if rapid.IntRange(0, 4).Draw(t, "has-algorithm") > 0 {
		parts = append(parts, fmt.Sprintf(`"algorithm": %q`, rapid.SampledFrom(parityNames).Draw(t, "algorithm")))
	}
	for range rapid.IntRange(0, 3).Draw(t, "fields") {
		k := rapid.SampledFrom(parityKeys).Draw(t, "field")
		v := drawValue(t, depth+1)
		if k == "request_algorithms" && depth < 3 {
			v = drawMap(t, depth+1)
		}
		parts = append(parts, fmt.Sprintf("%q: %s", k, v))
	}
	return "{" + strings.Join(rapid.Permutation(parts).Draw(t, "order"), ", ") + "}"
}

// TestConformanceNodeParity: a config-only conformance case carries the
// lb-config as JSON text under `lb_config:` and is read with validate.Node;
// its verdict and error messages must be those of the same text read as a
// JSON file (serde_json's rules, which Stargate applies).
func TestConformanceNodeParity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var parts []string
		if rapid.Bool().Draw(t, "default") {
			parts = append(parts, `"default": `+drawValue(t, 2))
		}
		if rapid.Bool().Draw(t, "request_algorithms") {
			parts = append(parts, `"request_algorithms": `+drawMap(t, 0))
		}
		parts = append(parts, fmt.Sprintf(`"models": {"m": %s, "n": %s}`, drawValue(t, 0), drawEntry(t, 0)))
		src := "{" + strings.Join(parts, ", ") + "}"
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("- name: x\n  lb_config: "+src+"\n"), &doc); err != nil {
			t.Fatalf("yaml: %v: %s", err, src)
		}
		got := validate.Node(doc.Content[0].Content[0].Content[3], nil, "config.yaml")
		want := validate.File("x.json", []byte(src))
		ge, we := got.Errors(), want.Errors()
		if got.Valid() != want.Valid() || len(ge) != len(we) {
			t.Fatalf("%s\nNode valid %v, JSON valid %v\n%s---\n%s", src, got.Valid(), want.Valid(), dump(ge), dump(we))
		}
		for i := range ge {
			if ge[i].Code != we[i].Code || ge[i].Path != we[i].Path || ge[i].Message != we[i].Message {
				t.Fatalf("%s\nNode %s\nJSON %s", src, ge[i], we[i])
			}
		}
	})
}
