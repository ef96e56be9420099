package conformance

import (
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/formats"
)

const base = `
name: %s
config: {algorithm: wait-and-widen, seed: seed-1, cache_affinity_virtual_nodes: 8, cache_affinity_backend_selection_count: 1,
         n: 2, cache_affinity_wait_ms: 300, cache_affinity_input_tokens_scale: 0.1, last_cluster_affinity: true}
request: {model: model-a, routing_key: rk-1, cache_affinity_key: session-prefix, input_tokens: 100, last_cluster_id: b, elapsed_ms: %s}
snapshot:
  clusters:
    - {cluster_id: a, rtt_ms: 5, stats: {last_mean_input_tps: 100}}
    - {cluster_id: b, rtt_ms: 5, stats: {last_mean_input_tps: 100, num_running_queries: 1, max_engine_concurrency: 1}}
    - {cluster_id: c, rtt_ms: 5, stats: {last_mean_input_tps: 100, num_running_queries: 0, max_engine_concurrency: 1}}
expect: %s
`

func eval(t *testing.T, elapsed, expect string) *Result {
	t.Helper()
	src := strings.Replace(strings.Replace(strings.Replace(base, "%s", "t", 1), "%s", elapsed, 1), "%s", expect, 1)
	cs, err := formats.DecodeCases("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return Evaluate(cs[0])
}

// E12 of wait-and-widen.md: returning session, group [b] full: wait 300,
// then global fallback where a and c tie.
func TestChecksDetectEveryKey(t *testing.T) {
	pass := []struct{ elapsed, expect string }{
		{"0", "{outcome: wait, retry_at_ms: 300, session_state: returning, promoted: true, affinity_order: [b], affinity_group: [b]}"},
		{"300", "{outcome: dispatch, one_of: [a, c], never: [b], rank_depth: 2, selected_after_kv_free_tokens_skip: false}"},
		{"300", "{never: [b]}"},
		{"0", "{retry_at_ms: 300.0000009}"},
		{"300", "{one_of: [a, c, d]}"},
		{"0", "{never: [c, b, a], outcome: wait}"},
		// never holds when no cluster is chosen (formats.md): a wait
		// chooses none, whatever the list names.
		{"0", "{never: [b]}"},
		{"0", "{never: [a, c], outcome: wait}"},
		{"0", "{never: [a, b, c]}"},
	}
	for _, p := range pass {
		if r := eval(t, p.elapsed, p.expect); !r.Pass() {
			t.Errorf("%s: unexpected mismatches %v", p.expect, r.Mismatches)
		}
	}
	fail := []struct{ elapsed, expect, key string }{
		{"0", "{outcome: dispatch}", "outcome"},
		{"0", "{retry_at_ms: 299.999}", "retry_at_ms"},
		{"0", "{session_state: new}", "session_state"},
		{"0", "{session_state: null}", "session_state"},
		{"0", "{promoted: false}", "promoted"},
		{"0", "{affinity_order: [c]}", "affinity_order"},
		{"0", "{affinity_group: [b, c]}", "affinity_group"},
		{"300", "{cluster: a}", "cluster"},
		{"300", "{one_of: [a]}", "one_of"},
		{"300", "{never: [c]}", "never"},
		{"300", "{rank_depth: 1}", "rank_depth"},
		{"300", "{selected_after_kv_free_tokens_skip: true}", "selected_after_kv_free_tokens_skip"},
		{"300", "{error_contains: x}", "error_contains"},
		{"0", "{valid: false}", "valid"},
		{"0", "{never: [a, b, c], outcome: dispatch}", "outcome"},
		{"0", "{retry_at_ms: 300.000002}", "retry_at_ms"},
		// Only outcome: dispatch requires a dispatch.
		{"0", "{never: [b], outcome: dispatch}", "outcome"},
	}
	for _, f := range fail {
		r := eval(t, f.elapsed, f.expect)
		if r.Pass() || !strings.HasPrefix(r.Mismatches[0], f.key+":") {
			t.Errorf("%s: want a %s mismatch, got %v", f.expect, f.key, r.Mismatches)
		}
	}
}

func TestConfigOnlyChecks(t *testing.T) {
	src := `
- name: ok
  lb_config: {"default": "pulsar"}
  expect: {valid: true}
- name: bad
  lb_config: {"models": {"m": {"algorithm": "pulsar", "last_cluster_affinity": true}}}
  expect: {valid: false, error_contains: "pulsar config does not support field(s): last_cluster_affinity"}
- name: wrong
  lb_config: {"default": "pulsar"}
  expect: {valid: false, error_contains: nope, outcome: dispatch}
`
	cs, err := formats.DecodeCases("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if r := Evaluate(cs[0]); !r.Pass() || !r.Valid {
		t.Errorf("ok: %v", r.Mismatches)
	}
	if r := Evaluate(cs[1]); !r.Pass() || r.Valid {
		t.Errorf("bad: %v %q", r.Mismatches, r.Error)
	}
	if r := Evaluate(cs[2]); len(r.Mismatches) != 3 {
		t.Errorf("wrong: %v", r.Mismatches)
	}
}

// A lone `config:` entry without request and snapshot is a config-only
// case validated like a models entry.
func TestEntryOnlyConfigCases(t *testing.T) {
	src := `
- name: ok
  config: {algorithm: pulsar-wait-and-widen, band_widen_interval_ms: 0}
  expect: {valid: true}
- name: factory-check
  config: {algorithm: wait-and-widen, band_widen_interval_ms: 0}
  expect: {valid: false, error_contains: band_widen_interval_ms}
- name: parse-check
  config: {algorithm: round-robin, seed: x}
  expect: {valid: false, error_contains: "round-robin config does not support field(s): seed"}
- name: wrong
  config: {algorithm: random}
  expect: {valid: false, outcome: dispatch}
`
	cs, err := formats.DecodeCases("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 0, 0, 2} {
		if !cs[i].ConfigOnly() {
			t.Fatalf("%s: not config-only", cs[i].Name)
		}
		if r := Evaluate(cs[i]); len(r.Mismatches) != want {
			t.Errorf("%s: want %d mismatches, got %v", cs[i].Name, want, r.Mismatches)
		}
	}
	// A config with only one of request/snapshot is still a broken decision case.
	if _, err := formats.DecodeCases("c.yaml", []byte("name: x\nconfig: {algorithm: random}\nrequest: {model: m, input_tokens: 1}\nexpect: {}\n")); err == nil {
		t.Error("a decision case without snapshot decoded")
	}
}

// A request's routing_method resolves against the case config as the
// model entry (E3) before the decision.
func TestRoutingMethodInCase(t *testing.T) {
	src := `
- name: override
  config: {algorithm: wait-and-widen, seed: seed-1, cache_affinity_backend_selection_count: 1, last_cluster_affinity: true,
           request_algorithms: {pulsar-wait-and-widen: {algorithm: pulsar-wait-and-widen, seed: seed-1}}}
  request: {model: model-a, routing_method: Pulsar_Wait_And_Widen, cache_affinity_key: k, last_cluster_id: a, input_tokens: 1}
  snapshot: {clusters: [{cluster_id: a, stats: {max_input_tps: 100, last_mean_input_tps: 100}}]}
  expect: {outcome: dispatch, cluster: a, session_state: null}
- name: unavailable
  config: {algorithm: pulsar}
  request: {model: model-a, routing_method: random, input_tokens: 1}
  snapshot: {clusters: [{cluster_id: a}]}
  expect: {outcome: error, error_contains: "routing method random is not configured"}
- name: expression
  config: {algorithm: pulsar, seed: x}
  request: {model: model-a, routing_method: "pulsar;consider_kv_free_tokens=true", input_tokens: 100}
  snapshot: {clusters: [{cluster_id: a, stats: {max_input_tps: 100, kv_cache_capacity_tokens: 10, kv_cache_free_tokens: 10}},
                        {cluster_id: b, stats: {max_input_tps: 1, kv_cache_capacity_tokens: 1000, kv_cache_free_tokens: 1000}}]}
  expect: {outcome: dispatch, cluster: b, selected_after_kv_free_tokens_skip: true}
`
	cs, err := formats.DecodeCases("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if r := Evaluate(c); !r.Pass() {
			t.Errorf("%s: %v", c.Name, r.Mismatches)
		}
	}
}
