package validate_test

import (
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// TestWarnings covers the operator warnings of lb-config.md §9: each has a
// firing input (valid: warnings never change acceptance) and the tests in
// TestWarningsAbsent show they stay quiet otherwise.
func TestWarnings(t *testing.T) {
	cases := []ruleCase{
		{name: "W1 string entry", src: `{"models": {"m": "pulsar-wait-and-widen"}}`, valid: true, want: []want{{validate.CodeNoSLO, 1, 18, `models["m"]`, "no queue SLO"}}},
		{name: "W1 default", src: `{"default": "pulsar-multiregion"}`, valid: true, want: []want{{validate.CodeNoSLO, 1, 13, "default", "pulsar-wait-and-widen"}}},
		{name: "W1 only floor", src: field("pulsar-wait-and-widen", "max_queue_time_floor_ms", "500"), valid: true, want: []want{
			{validate.CodeNoSLO, 3, 10, `models["m"]`, "only max_queue_time_floor_ms is set"},
			{validate.CodeHalfSLO, 5, valCol("max_queue_time_floor_ms"), fpath("max_queue_time_floor_ms"), "has no effect"},
		}},
		{name: "W1 as info when bounded (M4)", src: `{"models":{"m":{"algorithm":"pulsar-wait-and-widen","max_queued":4,"cache_affinity_wait_ms":300}}}`, valid: true, want: []want{{validate.CodeNoSLOBounded, 1, 16, `models["m"]`, "max_queued 4 and cache_affinity_wait_ms 300"}}},
		{name: "W3 floor above ceil", src: `{"models":{"m":{"algorithm":"wait-and-widen","max_queue_time_floor_ms":500,"max_queue_time_ceil_ms":100}}}`, valid: true, want: []want{{validate.CodeSLOOrder, 1, 72, `models["m"].max_queue_time_floor_ms`, "not reordered"}}},
		{name: "W4 nested request_algorithms", src: `{"request_algorithms":{"random":{"algorithm":"random","request_algorithms":{"pulsar":"random"}}}}`, valid: true, want: []want{{validate.CodeDiscarded, 1, 76, `request_algorithms["random"].request_algorithms`, "discarded"}}},
		{name: "W5 model level", src: field("pulsar", "request_algorithms", `{"pulsar": "pulsar"}`), valid: true, want: []want{{validate.CodeUnreachable, 5, valCol("request_algorithms") + 11, `models["m"].request_algorithms["pulsar"]`, "never used"}}},
		{name: "W5 top level", src: `{"default": "random", "request_algorithms": {"random": "random"}}`, valid: true, want: []want{{validate.CodeUnreachable, 1, 56, `request_algorithms["random"]`, "never used"}}},
		{name: "W6 virtual nodes on pwaw", src: field("pulsar-wait-and-widen", "cache_affinity_virtual_nodes", "100"), valid: true, want: []want{{validate.CodeIgnoredVirtualNodes, 5, valCol("cache_affinity_virtual_nodes"), fpath("cache_affinity_virtual_nodes"), "ignored"}}},
		{name: "W7 last_cluster_affinity without group", src: field("wait-and-widen", "last_cluster_affinity", "true"), valid: true, want: []want{
			{validate.CodeNoAffinityGroup, 5, valCol("last_cluster_affinity"), fpath("last_cluster_affinity"), "no effect on wait-and-widen without an affinity group"},
			{validate.CodeLastCluster, 5, valCol("last_cluster_affinity"), fpath("last_cluster_affinity"), "x-stargate-last-cluster-id"},
		}},
		{name: "W7 wait without group", src: field("wait-and-widen", "cache_affinity_wait_ms", "200"), valid: true, want: []want{{validate.CodeNoAffinityGroup, 5, valCol("cache_affinity_wait_ms"), fpath("cache_affinity_wait_ms"), "cache_affinity_wait_ms has no effect"}}},
		{name: "W8 n zero", src: field("wait-and-widen", "n", "0"), valid: true, want: []want{{validate.CodeNormalised, 5, valCol("n"), fpath("n"), "runs as 1"}}},
		{name: "W9 zero bucket", src: field("wait-and-widen", "ttft_bucket_size_ms", "0"), valid: true, want: []want{{validate.CodeZeroBucket, 5, valCol("ttft_bucket_size_ms"), fpath("ttft_bucket_size_ms"), "its own bucket"}}},
		{name: "W10 unlock factor", src: field("wait-and-widen", "next_bucket_unlock_factor", "1.5"), valid: true, want: []want{{validate.CodeUnlockFactor, 5, valCol("next_bucket_unlock_factor"), fpath("next_bucket_unlock_factor"), "outside 0–1"}}},
		{name: "W11 input work", src: field("power-of-n", "max_input_work_seconds", "-1"), valid: true, want: []want{{validate.CodeInputWorkLimit, 5, valCol("max_input_work_seconds"), fpath("max_input_work_seconds"), "rejects nearly every request"}}},
		{name: "W12 long wait", src: `{"models":{"m":{"algorithm":"pulsar-wait-and-widen","max_queued":4,"cache_affinity_wait_ms":60000}}}`, valid: true, want: []want{{validate.CodeLongWait, 1, 93, `models["m"].cache_affinity_wait_ms`, "60 s"}}},
		{name: "W13 with group", src: `{"models":{"m":{"algorithm":"wait-and-widen","cache_affinity_backend_selection_count":1,"last_cluster_affinity":true}}}`, valid: true, want: []want{{validate.CodeLastCluster, 1, 113, `models["m"].last_cluster_affinity`, "gateway"}}},
		{name: "W14 alias key and value", src: `{"request_algorithms": {"powerOf2": "powerofn"}}`, valid: true, want: []want{
			{validate.CodeDeprecatedName, 1, 25, `request_algorithms["powerOf2"]`, `"powerOf2" is a deprecated spelling of power-of-n`},
			{validate.CodeDeprecatedName, 1, 37, `request_algorithms["powerOf2"]`, `"powerofn" is a deprecated spelling`},
		}},
		{name: "W16 blank model key", src: `{"models": {" m": "random", "": "random"}}`, valid: true, want: []want{
			{validate.CodeModelKeyBlank, 1, 13, `models[" m"]`, "no request reaches it"},
			{validate.CodeModelKeyBlank, 1, 29, `models[""]`, "no request reaches it"},
		}},
		{name: "W17 YAML", file: "c.yaml", src: "default: random\n", valid: true, want: []want{{validate.CodeYAMLInput, 1, 1, "", "Stargate reads only JSON"}}},
		{name: "W18 pulsar without weight", src: `{"models": {"m": "pulsar"}}`, valid: true, want: []want{{validate.CodeImplicitWeight, 1, 18, `models["m"]`, "max-input-tps"}}},
		{name: "W19 many virtual nodes", src: field("wait-and-widen", "cache_affinity_virtual_nodes", "5000"), valid: true, want: []want{{validate.CodeManyVirtualNodes, 5, valCol("cache_affinity_virtual_nodes"), fpath("cache_affinity_virtual_nodes"), "above 1024"}}},
		{name: "W20 positional", src: `["random"]`, valid: true, want: []want{{validate.CodePositional, 1, 1, "", "positional"}}},
	}
	runRuleCases(t, cases)
}

// TestWarningsAbsent checks configs that must not warn.
func TestWarningsAbsent(t *testing.T) {
	for _, src := range []string{
		`{"models":{"m":{"algorithm":"pulsar-wait-and-widen","max_queue_time_floor_ms":0,"max_queue_time_ceil_ms":0,"rendezvous_weight":"max-input-tps"}}}`,
		`{"models":{"m":{"algorithm":"wait-and-widen","cache_affinity_backend_selection_count":2,"cache_affinity_wait_ms":200,"n":1}}}`,
		`{"default":"random","request_algorithms":{"random":"random"},"models":{"m":"pulsar-wait-and-widen"}}`[:0] + `{"default":"random","request_algorithms":{"random":"random"},"models":{"m":"round-robin"}}`,
		`{"request_algorithms":{"random":{"algorithm":"random"}},"models":{"m":{"algorithm":"pulsar","rendezvous_weight":"max-input-tps","request_algorithms":{"random":"random"}}}}`,
	} {
		r := validate.File("c.json", []byte(src))
		if !r.Valid() || r.Counts.Warnings+r.Counts.Infos != 0 {
			t.Errorf("%s:\n%s", src, dump(r.Diagnostics))
		}
	}
}
