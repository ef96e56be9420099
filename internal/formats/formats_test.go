package formats

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

const fullSnapshot = `
model: model-a
clusters:
  - cluster_id: A
    rtt_ms: 5.5
    status: inactive
    active_backend_count: 1
    stats:
      last_mean_input_tps: .nan
      max_input_tps: -1
      output_tps: 0
      max_output_tps: 100.0
      queue_size: 3
      queued_input_size: 0
      kv_cache_capacity_tokens: 1024
      kv_cache_used_tokens: 0
      kv_cache_free_tokens: 1024
      num_running_queries: 2
      max_engine_concurrency: 4
      total_query_input_size: 0
      queue_time_estimate_ms_by_priority: {4: 25, 0: 120}
      input_processing_queries: 0
      output_generation_queries: 0
  - {cluster_id: B}
`

func TestDecodeSnapshot(t *testing.T) {
	s, err := DecodeSnapshot("s.yaml", []byte(fullSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Clusters[0]
	if a.RTT != 5500*time.Microsecond || a.Status != lb.StatusInactive || !math.IsNaN(a.Stats.LastMeanInputTPS) ||
		a.Stats.MaxInputTPS != -1 || a.Stats.QueueSize != 3 || a.Stats.MaxEngineConcurrency != 4 {
		t.Fatalf("cluster A: %+v", a)
	}
	if p := a.Stats.QueueTimeEstimateMsByPriority; len(p) != 2 || p[0].Priority != 0 || p[0].QueueTimeMs != 120 || p[1].Priority != 4 {
		t.Fatalf("priority map not sorted: %v", p)
	}
	if b := s.Clusters[1]; b.RTT != 0 || b.Status != lb.StatusActive || b.Stats.LastMeanInputTPS != 0 {
		t.Fatalf("defaults: %+v", b)
	}
	// JSON is valid input too.
	j, err := DecodeSnapshot("s.json", []byte(`{"clusters":[{"cluster_id":"A","rtt_ms":1,"stats":{"queue_size":2}}]}`))
	if err != nil || j.Clusters[0].Stats.QueueSize != 2 || j.Clusters[0].RTT != time.Millisecond {
		t.Fatalf("json: %+v %v", j, err)
	}
}

// JSON writes map keys as strings: the priority map accepts decimal
// string keys ({"4": 25}), as protobuf's JSON mapping of ModelStats emits.
func TestDecodeSnapshotJSONPriorityKeys(t *testing.T) {
	s, err := DecodeSnapshot("s.json", []byte(`{"clusters": [{"cluster_id": "A", "stats": {"queue_time_estimate_ms_by_priority": {"4": 25, "0": 120}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Clusters[0].Stats.QueueTimeEstimateMsByPriority
	if len(got) != 2 || got[0] != (lb.PriorityEstimate{Priority: 0, QueueTimeMs: 120}) || got[1] != (lb.PriorityEstimate{Priority: 4, QueueTimeMs: 25}) {
		t.Fatalf("priority map %v", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown field", "clusters:\n  - cluster_id: A\n    rtt: 5\n", `s.yaml:3:5: clusters[0].rtt: unknown field "rtt"`},
		{"unknown stats field", "clusters:\n  - cluster_id: A\n    stats: {queue_sise: 1}\n", `s.yaml:3:13: clusters[0].stats.queue_sise: unknown field`},
		{"duplicate id", "clusters: [{cluster_id: A}, {cluster_id: A}]\n", `duplicate cluster_id "A"`},
		{"empty id", "clusters: [{cluster_id: ''}]\n", "must not be empty"},
		{"missing id", "clusters: [{rtt_ms: 1}]\n", `missing required field "cluster_id"`},
		{"negative counter", "clusters: [{cluster_id: A, stats: {queue_size: -1}}]\n", "must be a non-negative integer"},
		{"fraction counter", "clusters: [{cluster_id: A, stats: {queue_size: 1.5}}]\n", "must be a non-negative integer"},
		{"negative rtt", "clusters: [{cluster_id: A, rtt_ms: -1}]\n", "≥ 0"},
		{"nan rtt", "clusters: [{cluster_id: A, rtt_ms: .nan}]\n", "≥ 0"},
		{"bad status", "clusters: [{cluster_id: A, status: up}]\n", "active, inactive or unknown"},
		{"string number", "clusters: [{cluster_id: A, rtt_ms: '5'}]\n", "must be a number"},
		{"duplicate key", "clusters: []\nclusters: []\n", `duplicate key "clusters"`},
		{"missing clusters", "model: m\n", `missing required field "clusters"`},
		{"an lb-config", "{\"default\": \"pulsar\", \"models\": {}}\n", `s.yaml:1:2: default: this is a Stargate lb-config (top-level "default"), not a snapshot: give it with --config`},
		{"priority too large", "clusters: [{cluster_id: A, stats: {queue_time_estimate_ms_by_priority: {4294967296: 1}}}]\n", "out of range"},
		{"string priority too large", `{"clusters": [{"cluster_id": "A", "stats": {"queue_time_estimate_ms_by_priority": {"4294967296": 1}}}]}`, "out of range"},
		{"string priority not a number", `{"clusters": [{"cluster_id": "A", "stats": {"queue_time_estimate_ms_by_priority": {"p4": 1}}}]}`, "must be a non-negative integer"},
		{"duplicate string priority", `{"clusters": [{"cluster_id": "A", "stats": {"queue_time_estimate_ms_by_priority": {"4": 1, "04": 2}}}]}`, "duplicate priority 4"},
		{"not yaml", "clusters: [\n", "not valid YAML"},
		{"two documents", "clusters: []\n---\nclusters: []\n", "more than one YAML document"},
		{"empty", "", "empty input"},
		{"scalar root", "5\n", "must be a mapping"},
		// Numbers yaml.v3 cannot hold were reported as "got a string" or
		// "got a number"; the parser's own errors had a column 0.
		{"rate beyond float64", "clusters: [{cluster_id: A, stats: {max_input_tps: 1e400}}]\n", `s.yaml:1:51: clusters[0].stats.max_input_tps: number 1e400 is out of range (beyond ±1.8e308)`},
		{"counter beyond uint64", "clusters: [{cluster_id: A, stats: {queue_size: 99999999999999999999}}]\n", `clusters[0].stats.queue_size: integer 99999999999999999999 out of range (0..18446744073709551615)`},
		{"counter beyond float64", "clusters: [{cluster_id: A, stats: {queue_size: 1e400}}]\n", `clusters[0].stats.queue_size: must be a non-negative integer (0..18446744073709551615), got 1e400`},
		{"quoted huge number stays a string", "clusters: [{cluster_id: A, rtt_ms: '1e400'}]\n", "must be a number, got a string"},
		{"syntax error position, with the column validate gives too", "clusters:\n\t- cluster_id: A\n", "s.yaml:2:1: not valid YAML"},
		// An escape sequence in an id reached the terminal through the
		// plain-text output.
		{"escape in cluster id", "clusters: [{cluster_id: \"A\\e[31mRED\"}]\n", `s.yaml:1:25: clusters[0].cluster_id: contains control character U+001B at byte 1`},
		{"bell in model", "model: \"m\\a\"\nclusters: []\n", `s.yaml:1:8: model: contains control character U+0007 at byte 1`},
		{"C1 control in cluster id", "clusters: [{cluster_id: \"A\\u009b2J\"}]\n", `contains control character U+009B`},
	} {
		_, err := DecodeSnapshot("s.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
		var es Errors
		if err != nil && !errors.As(err, &es) {
			t.Errorf("%s: not Errors: %T", tc.name, err)
		}
	}
}

func TestDecodeRequest(t *testing.T) {
	r, err := DecodeRequest("r.yaml", []byte(`
model: model-a
routing_key: rk-1
routing_method: null
cache_affinity_key: " key-1 "
input_tokens: 100
priority: 4
request_slo_ms: 60000
max_wait_ms: null
last_cluster_id: B
excluded_cluster_ids: [A]
elapsed_ms: 123.75
first_classification: returning
`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "model-a" || r.CacheAffinityKey != " key-1 " || r.InputTokens != 100 || !r.HasInputTokens || r.Priority != 4 ||
		r.RequestSLOMs != lb.Some(60000) || r.MaxWaitMs.Set || r.RoutingMethod.Set || r.LastClusterID != "B" ||
		len(r.ExcludedClusterIDs) != 1 || r.Elapsed != 123750*time.Microsecond || r.FirstClassification != lb.SessionReturning {
		t.Fatalf("request: %+v", r)
	}
	r, err = DecodeRequest("r.yaml", []byte("model: m\ninput_tokens: null\n"))
	if err != nil || r.HasInputTokens {
		t.Fatalf("null input tokens: %+v %v", r, err)
	}
	for _, tc := range []struct{ src, want string }{
		{"model: m\npriority: 4294967296\n", "out of range"},
		{"model: m\nfirst_classification: old\n", "new, returning, stale"},
		{"input_tokens: 1\n", `missing required field "model"`},
		{"model: m\nexcluded_cluster_ids: A\n", "list of strings"},
		{"model: m\nheaders: {}\n", `unknown field "headers"`},
	} {
		if _, err := DecodeRequest("r.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v", tc.src, err)
		}
	}
}

func TestDecodeCases(t *testing.T) {
	one := `
name: single
config: {algorithm: wait-and-widen, cache_affinity_backend_selection_count: 1}
request: &r {model: m, input_tokens: 1}
snapshot: {clusters: [{cluster_id: A}]}
expect: {outcome: dispatch, session_state: null, never: [B], rank_depth: 1, retry_at_ms: 1.5}
`
	cs, err := DecodeCases("c.yaml", []byte(one))
	if err != nil || len(cs) != 1 {
		t.Fatalf("%v %v", cs, err)
	}
	c := cs[0]
	if c.Config == nil || c.Config.CacheAffinityBackendSelectionCount != 1 || !c.Expect.HasSessionState || c.Expect.SessionState != "" ||
		!c.Expect.HasNever || c.Expect.RankDepth != 1 || c.Expect.RetryAtMs != 1.5 || c.Expect.HasCluster {
		t.Fatalf("case: %+v", c)
	}
	bad := `- name: x
  config: {algorithm: power-of-n, last_cluster_affinity: true}
  request: {model: m, input_tokens: 1}
  snapshot: {clusters: []}
  expect: {outcome: error}
`
	cs, err = DecodeCases("c.yaml", []byte(bad))
	if err != nil || cs[0].Config != nil || !strings.Contains(cs[0].ConfigError(), "last_cluster_affinity") {
		t.Fatalf("invalid config must decode as a case: %v %v", cs, err)
	}
	for _, tc := range []struct{ src, want string }{
		{"- name: x\n  expect: {}\n", `missing required field "config"`},
		{"- name: x\n  lb_config: {}\n  expect: {valid: maybe}\n", "must be true or false"},
		{"- name: x\n  lb_config: {}\n  expect: {outcome: maybe}\n", "dispatch, wait, reject or error"},
		{"- name: x\n  lb_config: {}\n  expect: {bogus: 1}\n", `unknown field "bogus"`},
		{"- name: x\n  lb_config: {}\n  request: {model: m}\n  expect: {}\n", "config-only case"},
		{"- name: x\n  lb_config: {}\n", `missing required field "expect"`},
	} {
		if _, err := DecodeCases("c.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v", tc.src, err)
		}
	}
}

// TestNotUTF8: UTF-16 (which yaml.v3 would transcode) and Latin-1 input
// are refused at the first invalid byte, for every decoder.
func TestNotUTF8(t *testing.T) {
	utf16 := []byte("\xff\xfem\x00o\x00d\x00e\x00l\x00")
	latin1 := []byte("model: m\nclusters: [\xe9]\n")
	for name, decode := range map[string]func(string, []byte) error{
		"snapshot": func(f string, d []byte) error { _, err := DecodeSnapshot(f, d); return err },
		"request":  func(f string, d []byte) error { _, err := DecodeRequest(f, d); return err },
		"cases":    func(f string, d []byte) error { _, err := DecodeCases(f, d); return err },
	} {
		for _, c := range []struct {
			data      []byte
			line, col int
		}{{utf16, 1, 1}, {latin1, 2, 12}} {
			err := decode("in.yaml", c.data)
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Line != c.line || errs[0].Col != c.col || !strings.Contains(errs[0].Msg, "not UTF-8") {
				t.Errorf("%s %q: %v, want not UTF-8 at %d:%d", name, c.data, err, c.line, c.col)
			}
		}
	}
	if err := yamldoc.CheckUTF8([]byte("é: ü\n")); err != nil {
		t.Errorf("UTF-8 refused: %v", err)
	}
}

// TestAliasExpansionBound: a case file whose aliases repeat one large
// lb_config thousands of times is refused at the first alias, before any
// case is validated; a few aliases are fine.
func TestAliasExpansionBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("- name: x\n  lb_config: &l {models: {")
	for i := 0; i < 1000; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "m%d: {algorithm: pulsar}", i)
	}
	b.WriteString("}}\n  expect: {valid: true}\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "- name: y%d\n  lb_config: *l\n  expect: {valid: true}\n", i)
	}
	_, err := DecodeCases("c.yaml", []byte(b.String()))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Line != 5 || !strings.Contains(errs[0].Msg, "alias bomb") {
		t.Fatalf("got %v, want an alias-bomb error at line 5", err)
	}
	few := "- name: x\n  lb_config: &l {models: {}}\n  expect: {valid: true}\n- name: y\n  lb_config: *l\n  expect: {valid: true}\n"
	if cases, err := DecodeCases("c.yaml", []byte(few)); err != nil || len(cases) != 2 {
		t.Fatalf("two aliases: %v, %d cases", err, len(cases))
	}
}

func TestSnapshotSchemaAndProvenance(t *testing.T) {
	ok := `{"schema": "lcctl.snapshot/v1", "model": "m", "clusters": [{"cluster_id": "A"}], "provenance": {"anything": [1, 2]}}`
	if s, err := DecodeSnapshot("s.json", []byte(ok)); err != nil || len(s.Clusters) != 1 {
		t.Fatalf("got %v, %v", s, err)
	}
	bad := `{"schema": "lcctl.snapshot/v2", "clusters": []}`
	if _, err := DecodeSnapshot("s.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), `schema: want "lcctl.snapshot/v1"`) {
		t.Errorf("wrong schema: %v", err)
	}
	nested := `{"clusters": [{"cluster_id": "A", "provenance": {}}]}`
	if _, err := DecodeSnapshot("s.json", []byte(nested)); err == nil || !strings.Contains(err.Error(), `unknown field "provenance"`) {
		t.Errorf("provenance inside a cluster: %v", err)
	}
}
