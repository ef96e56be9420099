package lb_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

func mustConfig(t *testing.T, src string) *lb.Config {
	t.Helper()
	r := validate.File("cfg.json", []byte(src))
	if !r.Valid() {
		t.Fatalf("config invalid: %v", r.Diagnostics)
	}
	return r.Config
}

func method(v string) lb.OptionalString { return lb.OptionalString{Value: v, Set: true} }

// lb-config.md §14 header examples.
func TestResolveHeaderTable(t *testing.T) {
	cfg := mustConfig(t, `{"default":"power-of-n","request_algorithms":{"round-robin":"round-robin"},"models":{"m":"pulsar"}}`)
	for _, tc := range []struct {
		model  string
		method lb.OptionalString
		want   lb.Algorithm
		code   string
	}{
		{"other", lb.OptionalString{}, lb.PowerOfN, ""},
		{"other", method("ROUND_ROBIN"), lb.RoundRobin, ""},
		{"m", method("  Pulsar "), lb.Pulsar, ""},
		{"m", method("round_robin"), lb.RoundRobin, ""},
		{"m", method("power-of-n"), 0, "unavailable"},
		{"other", method("power of n"), 0, "unknown_method"},
		{"other", method(""), 0, "unknown_method"},
		{" m ", lb.OptionalString{}, lb.Pulsar, ""},
	} {
		got, res, err := cfg.Resolve(tc.model, tc.method)
		if tc.code != "" {
			var re *lb.RoutingError
			if !errors.As(err, &re) || re.Code != tc.code || re.Status != 400 {
				t.Errorf("%q %q: err %v, want %s", tc.model, tc.method.Value, err, tc.code)
			}
			continue
		}
		if err != nil || got.Algorithm != tc.want || res.Algorithm != tc.want {
			t.Errorf("%q %q: %v %v, want %v", tc.model, tc.method.Value, got, err, tc.want)
		}
	}
	got, res, err := cfg.Resolve("m", method("pulsar;seed=a"))
	if err != nil || got.Algorithm != lb.Pulsar || got.Seed != "a" || len(res.Parameters) != 1 {
		t.Fatalf("expression: %+v %+v %v", got, res, err)
	}
	// x-stargate-last-cluster-id blank is absent, never a 400.
	r, err := lb.RequestFromHeaders(headers(map[string]string{"x-request-id": "1", "x-model": "m", "x-input-tokens": "5", "x-stargate-last-cluster-id": "  "}))
	if err != nil || r.LastClusterID != "" {
		t.Fatalf("blank hint: %+v %v", r, err)
	}
}

// E3 order, E6, and session.md S19 (override without the flag).
func TestResolveOrder(t *testing.T) {
	cfg := mustConfig(t, `{"default":"random","request_algorithms":{"pulsar":{"algorithm":"pulsar","seed":"top"},"wait-and-widen":"wait-and-widen"},
	 "models":{"model-a":{"algorithm":"wait-and-widen","seed":"seed-1","cache_affinity_backend_selection_count":1,"last_cluster_affinity":true,
	   "request_algorithms":{"pulsar-wait-and-widen":{"algorithm":"pulsar-wait-and-widen"},"pulsar":{"algorithm":"pulsar","seed":"model"}}}}}`)
	c, res, err := cfg.Resolve("model-a", method("pulsar"))
	if err != nil || c.Seed != "model" || res.Source != "E3.2 model request_algorithms" {
		t.Fatalf("E3.2: %+v %+v %v", c, res, err)
	}
	c, res, err = cfg.Resolve("other", method("pulsar"))
	if err != nil || c.Seed != "top" || res.Source != "E3.2 request_algorithms" {
		t.Fatalf("default set: %+v %v", res, err)
	}
	c, _, err = cfg.Resolve("model-a", method("wait-and-widen"))
	if err != nil || c.Seed != "seed-1" || !c.LastClusterAffinity {
		t.Fatalf("E3.1 must use the model's own entry: %+v %v", c, err)
	}
	if _, _, err := cfg.Resolve("model-a", method("random")); err == nil {
		t.Fatal("default must not be offered to a model with an entry")
	}
	// S19: the override has no flag, so the hint is ignored.
	c, _, err = cfg.Resolve("model-a", method("pulsar-wait-and-widen"))
	if err != nil || c.LastClusterAffinity {
		t.Fatalf("S19: %+v %v", c, err)
	}
	snap := &lb.Snapshot{Clusters: []lb.Cluster{{ClusterID: "a", Stats: lb.Stats{MaxInputTPS: 100, LastMeanInputTPS: 100}}, {ClusterID: "b", Stats: lb.Stats{MaxInputTPS: 100, LastMeanInputTPS: 100}}}}
	d := lb.NewEngine(c).Decide(snap, &lb.Request{Model: "model-a", CacheAffinityKey: "k", LastClusterID: "b", HasInputTokens: true}, nil, lb.Options{})
	if d.Session != lb.SessionNone {
		t.Fatalf("S19 classified: %v", d.Session)
	}
	// E6: no config file.
	var none *lb.Config
	for _, a := range lb.Algorithms {
		if c, _, err := none.Resolve("x", method(a.String())); err != nil || c.Algorithm != a {
			t.Fatalf("E6 %v: %v", a, err)
		}
	}
	// {} is restrictive.
	empty := mustConfig(t, `{}`)
	if _, _, err := empty.Resolve("x", method("pulsar")); err == nil {
		t.Fatal("{} must only offer power-of-n")
	}
}

func TestResolveExpressions(t *testing.T) {
	cfg := mustConfig(t, `{"default":"pulsar-wait-and-widen","request_algorithms":{"wait-and-widen":"wait-and-widen","power-of-n":"power-of-n"}}`)
	for _, tc := range []struct {
		v    string
		code string
	}{
		{"pulsar-wait-and-widen;band_widen_interval_ms=100;fallback_max_queued=2; consider_kv_free_tokens=true", ""},
		{"wait-and-widen;cache_affinity_input_tokens_scale=0.5;n=3;seed=\"abc\"", ""},
		{"wait-and-widen;max_queue_time_floor_ms=100;max_queue_time_ceil_ms=200", ""},
		{"power-of-n;sample_count=64;comparator=queue-time", ""},
		{"wait-and-widen;max_queue_time_floor_ms=100", "inert_combination"},
		{"wait-and-widen;n=0", "inert_value"},
		{"wait-and-widen;cache_affinity_virtual_nodes=2000", "invalid_value"},
		{"power-of-n;sample_count=0", "invalid_value"},
		{"wait-and-widen;cache_affinity_input_tokens_scale=1.5", "invalid_value"},
		{"wait-and-widen;bogus=1", "unknown_parameter"},
		{"wait-and-widen;band_widen_interval_ms=1", "not_applicable"},
		{"pulsar-wait-and-widen;comparator=ttft", "not_applicable"},
		{"wait-and-widen;last_cluster_affinity=true", "unknown_parameter"},
		{"wait-and-widen;n=1,n=2", "malformed_expression"},
		{"wait-and-widen;n", "malformed_expression"},
		{"wait-and-widen;n=1;n=2", "malformed_expression"},
		{"wait-and-widen;N=1", "malformed_expression"},
		{"wait-and-widen;n = 1", "malformed_expression"},
		{"wait-and-widen;next_bucket_unlock_factor=0.1234", "malformed_expression"},
		{"bogus;n=1", "unknown_method"},
		{"pulsar;seed=x", "unavailable"},
		{"wait-and-widen;ignore_queue_time=?1", "malformed_expression"},
		{"wait-and-widen;ignore_queue_time=yes", "invalid_value"},
	} {
		c, _, err := cfg.Resolve("m", method(tc.v))
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.v, err)
			}
			continue
		}
		var re *lb.RoutingError
		if !errors.As(err, &re) || re.Code != tc.code {
			t.Errorf("%s: got %v (%+v), want %s", tc.v, err, c, tc.code)
		}
	}
	c, _, _ := cfg.Resolve("m", method("pulsar-wait-and-widen;band_widen_interval_ms=100;fallback_max_queued=2; consider_kv_free_tokens=true"))
	if c.BandWidenIntervalMs == nil || *c.BandWidenIntervalMs != 100 || c.FallbackMaxQueued != 2 || !c.ConsiderKVFreeTokens {
		t.Fatalf("overlay: %+v", c)
	}
	// The base config is not modified by an overlay.
	d, _, _ := cfg.Resolve("m", lb.OptionalString{})
	if d.BandWidenIntervalMs != nil {
		t.Fatal("overlay leaked into the base config")
	}
}

func headers(m map[string]string) lb.HeaderSource {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

// lb-config.md §11 H1–H10.
func TestRequestFromHeaders(t *testing.T) {
	base := func() map[string]string {
		return map[string]string{"x-request-id": "r", "x-model": " model-a ", "x-input-tokens": "+0012"}
	}
	r, err := lb.RequestFromHeaders(headers(base()))
	if err != nil || r.Model != "model-a" || r.InputTokens != 12 || !r.HasInputTokens || r.Priority != 0 {
		t.Fatalf("base: %+v %v", r, err)
	}
	for _, tc := range []struct {
		k, v string
		bad  bool
	}{
		{"x-input-tokens", "-1", true}, {"x-input-tokens", "1 2", true}, {"x-input-tokens", "", true},
		{"x-input-tokens", "18446744073709551616", true}, {"x-input-tokens", " 18446744073709551615 ", false},
		{"x-priority", "4294967296", true}, {"x-priority", "4294967295", false}, {"x-priority", " ", true},
		{"x-request-slo-ms", "abc", true}, {"x-max-wait-ms", "0", false},
		{"x-model", "  ", true}, {"x-model", "mödel", true}, {"x-request-id", "", true},
		{"x-cache-affinity-key", "\t", false}, {"x-routing-key", "ü", false},
	} {
		h := base()
		h[tc.k] = tc.v
		_, err := lb.RequestFromHeaders(headers(h))
		if (err != nil) != tc.bad {
			t.Errorf("%s=%q: err %v", tc.k, tc.v, err)
		}
	}
	h := base()
	h["x-cache-affinity-key"] = "  k1 "
	h["x-routing-key"] = "ü"
	h["x-max-wait-ms"] = "70000"
	r, _ = lb.RequestFromHeaders(headers(h))
	if r.CacheAffinityKey != "k1" || r.RoutingKey != "" || !r.MaxWaitMs.Set || r.MaxWaitMs.Value != 70000 {
		t.Fatalf("normalised: %+v", r)
	}
	delete(h, "x-request-id")
	if _, err := lb.RequestFromHeaders(headers(h)); err == nil {
		t.Fatal("x-request-id is required")
	}
}

// With several bad headers the error names the first in Stargate's parse
// order (http_proxy/request.rs parse_proxy_request_inputs): x-request-id,
// x-input-tokens, x-model, x-routing-method, x-priority, x-max-wait-ms,
// x-request-slo-ms. Every pair of bad headers is tried.
func TestRequestFromHeadersErrorOrder(t *testing.T) {
	order := []struct{ name, bad, code string }{
		{"x-request-id", " ", "invalid_header"},
		{"x-input-tokens", "-1", "invalid_header"},
		{"x-model", "", "invalid_header"},
		{"x-routing-method", "sticky", "unknown_method"},
		{"x-priority", "4294967296", "invalid_header"},
		{"x-max-wait-ms", "soon", "invalid_header"},
		{"x-request-slo-ms", "1.5", "invalid_header"},
	}
	good := map[string]string{"x-request-id": "r", "x-input-tokens": "1", "x-model": "m", "x-routing-method": "pulsar",
		"x-priority": "1", "x-max-wait-ms": "10", "x-request-slo-ms": "100"}
	if _, err := lb.RequestFromHeaders(headers(good)); err != nil {
		t.Fatalf("all good: %v", err)
	}
	for i, first := range order {
		for _, later := range order[i+1:] {
			h := maps.Clone(good)
			h[first.name], h[later.name] = first.bad, later.bad
			_, err := lb.RequestFromHeaders(headers(h))
			var re *lb.RoutingError
			if !errors.As(err, &re) || re.Header != first.name || re.Code != first.code || re.Status != 400 {
				t.Errorf("bad %s and %s: got %v, want the %s error first", first.name, later.name, err, first.name)
			}
		}
		// A missing required header fails at the same position.
		if i < 3 {
			h := maps.Clone(good)
			delete(h, first.name)
			h[order[i+1].name] = order[i+1].bad
			if _, err := lb.RequestFromHeaders(headers(h)); err == nil || !strings.Contains(err.Error(), first.name) {
				t.Errorf("missing %s with a bad %s: %v", first.name, order[i+1].name, err)
			}
		}
	}
	// Blank and non-visible method names are unknown_method at the header
	// stage too; an expression is left to Config.Resolve.
	for _, m := range []string{"  ", "pülsar"} {
		h := maps.Clone(good)
		h["x-routing-method"], h["x-priority"] = m, "x"
		var re *lb.RoutingError
		if _, err := lb.RequestFromHeaders(headers(h)); !errors.As(err, &re) || re.Code != "unknown_method" {
			t.Errorf("method %q: %v", m, err)
		}
	}
	h := maps.Clone(good)
	h["x-routing-method"] = "pulsar;seed=a"
	if r, err := lb.RequestFromHeaders(headers(h)); err != nil || r.RoutingMethod.Value != "pulsar;seed=a" {
		t.Errorf("expression: %+v %v", r.RoutingMethod, err)
	}
}

// The proxy step checks x-input-tokens before x-model, like the header
// parser.
func TestStepHeaderOrder(t *testing.T) {
	e := lb.NewEngine(nil)
	snap := &lb.Snapshot{Clusters: []lb.Cluster{{ClusterID: "A"}}}
	st := e.Step(snap, &lb.Request{Model: " "}, nil, lb.Options{})
	if st.Outcome != lb.OutcomeError || st.Code != "missing_input_tokens" {
		t.Fatalf("both missing: %v %s", st.Outcome, st.Code)
	}
	st = e.Step(snap, &lb.Request{Model: " ", HasInputTokens: true}, nil, lb.Options{})
	if st.Outcome != lb.OutcomeError || st.Code != "missing_model" {
		t.Fatalf("model missing: %v %s", st.Outcome, st.Code)
	}
}

// wait-and-widen.md E22: configuration validation and normalisation, as
// the engine receives it from internal/validate.
func TestWWE22ConfigNormalisation(t *testing.T) {
	for _, tc := range []struct {
		src, err string
	}{
		{`{"algorithm":"wait-and-widen","cache_affinity_input_tokens_scale":1.1}`, "cache_affinity_input_tokens_scale must be between 0.0 and 1.0"},
		{`{"algorithm":"wait-and-widen","cache_affinity_input_tokens_scale":-0.1}`, "cache_affinity_input_tokens_scale must be between 0.0 and 1.0"},
		{`{"algorithm":"wait-and-widen","fallback_max_queued":0}`, "fallback_max_queued"},
		{`{"algorithm":"wait-and-widen","band_widen_interval_ms":0}`, "band_widen_interval_ms"},
		{`{"algorithm":"power-of-n","last_cluster_affinity":true}`, "last_cluster_affinity"},
	} {
		c, diags := validate.AlgorithmConfigFromBytes("c.json", []byte(tc.src))
		msg := ""
		for _, d := range diags {
			msg += d.Message
		}
		if c != nil || !strings.Contains(msg, tc.err) {
			t.Errorf("%s: config %v, diagnostics %q", tc.src, c, msg)
		}
	}
	for _, ok := range []string{`{"algorithm":"wait-and-widen","cache_affinity_input_tokens_scale":0.0}`, `{"algorithm":"wait-and-widen","cache_affinity_input_tokens_scale":1.0}`} {
		if c, _ := validate.AlgorithmConfigFromBytes("c.json", []byte(ok)); c == nil {
			t.Errorf("%s rejected", ok)
		}
	}
	c, _ := validate.AlgorithmConfigFromBytes("c.json", []byte(`{"algorithm":"wait-and-widen","cache_affinity_virtual_nodes":0,"cache_affinity_backend_selection_count":0,"n":0,"max_queue_time_floor_ms":100,"max_queue_time_ceil_ms":300,"cache_affinity_wait_ms":500}`))
	if c == nil || c.CacheAffinityVirtualNodes != 1 || c.CacheAffinityBackendSelectionCount != 0 || c.N != 1 {
		t.Fatalf("normalisation: %+v", c)
	}
	// k 0 disables the affinity branch: no wait for a keyed request; the
	// queue limit without an SLO is the ceiling (300 ms).
	s := &lb.Snapshot{Clusters: []lb.Cluster{{ClusterID: "a", Stats: lb.Stats{LastMeanInputTPS: 100, QueueTimeEstimateMsByPriority: []lb.PriorityEstimate{{0, 300}}}},
		{ClusterID: "b", Stats: lb.Stats{LastMeanInputTPS: 100, QueueTimeEstimateMsByPriority: []lb.PriorityEstimate{{0, 301}}}}}}
	d := lb.NewEngine(c).Decide(s, &lb.Request{Model: "m", CacheAffinityKey: "k", HasInputTokens: true}, nil, lb.Options{Trace: true})
	if d.Kind != lb.KindSelected || d.ClusterID != "a" || d.AffinityOrder != nil || d.Trace.Phases[0].QueueLimitMs != 300 {
		t.Fatalf("decision: %+v", d)
	}
}
