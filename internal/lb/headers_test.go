package lb

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// base returns the minimal header set Stargate accepts (H1, H2, H4).
func base(extra ...string) Headers {
	h := Headers{{"x-request-id", "req-1"}, {"x-model", "model-a"}, {"x-input-tokens", "128"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h = append(h, Header{extra[i], extra[i+1]})
	}
	return h
}

func without(h Headers, name string) Headers {
	var out Headers
	for _, x := range h {
		if !strings.EqualFold(x.Name, name) {
			out = append(out, x)
		}
	}
	return out
}

func mustParse(t *testing.T, h Headers) Request {
	t.Helper()
	r, err := ParseRequestHeaders(h)
	if err != nil {
		t.Fatalf("ParseRequestHeaders(%q): unexpected 400: %v", h, err)
	}
	return r
}

func wantErr(t *testing.T, h Headers, header, rule, code string) {
	t.Helper()
	_, err := ParseRequestHeaders(h)
	if err == nil {
		t.Fatalf("ParseRequestHeaders(%q): want 400 on %s (%s), got none", h, header, rule)
	}
	if err.Header != header || err.Rule != rule || err.Code != code {
		t.Fatalf("ParseRequestHeaders(%q): got %s/%s/%s (%v), want %s/%s/%s", h, err.Header, err.Rule, err.Code, err, header, rule, code)
	}
	if err.HTTPStatus() != 400 || !strings.Contains(err.Error(), rule) {
		t.Fatalf("error %q: want HTTP 400 naming %s", err.Error(), rule)
	}
}

func TestH1RequestID(t *testing.T) {
	wantErr(t, without(base(), "x-request-id"), HeaderRequestID, "H1", "missing_request_id")
	for _, v := range []string{"", "   ", "\t", "r\xffq"} {
		wantErr(t, append(without(base(), "x-request-id"), Header{"x-request-id", v}), HeaderRequestID, "H1", "missing_request_id")
	}
}

func TestH2Model(t *testing.T) {
	wantErr(t, without(base(), "x-model"), HeaderModel, "H2", "missing_model")
	for _, v := range []string{"", "  ", "mod\u00e9l"} {
		wantErr(t, append(without(base(), "x-model"), Header{"X-Model", v}), HeaderModel, "H2", "missing_model")
	}
	r := mustParse(t, append(without(base(), "x-model"), Header{"X-MODEL", "  model-b\t"}))
	if r.Model != "model-b" {
		t.Fatalf("model %q: want trimmed model-b (names are case-insensitive)", r.Model)
	}
}

func TestH3RoutingKey(t *testing.T) {
	for v, want := range map[string]string{" tenant-a ": "tenant-a", "": "", "   ": "", "t\xe9nant": "", "t\u00e9nant": "", "a b": "a b"} {
		r := mustParse(t, base("x-routing-key", v))
		if r.RoutingKey != want {
			t.Errorf("x-routing-key %q: got %q, want %q (blank or non-ASCII = absent)", v, r.RoutingKey, want)
		}
	}
}

func TestH4InputTokens(t *testing.T) {
	wantErr(t, without(base(), "x-input-tokens"), HeaderInputTokens, "H4", "missing_input_tokens")
	for _, v := range []string{"", " ", "-1", "-0", "1.0", "1e3", "0x10", "1 2", "+", "++1", "abc", "1_000", "18446744073709551616", "\xff1", "１２"} {
		wantErr(t, append(without(base(), "x-input-tokens"), Header{"x-input-tokens", v}), HeaderInputTokens, "H4", "invalid_input_tokens")
	}
	for v, want := range map[string]uint64{" 12 ": 12, "+12": 12, "007": 7, "0": 0, "\t5\t": 5, "18446744073709551615": math.MaxUint64} {
		r := mustParse(t, append(without(base(), "x-input-tokens"), Header{"x-input-tokens", v}))
		if !r.HasInputTokens || r.InputTokens != want {
			t.Errorf("x-input-tokens %q: got %d (%v), want %d", v, r.InputTokens, r.HasInputTokens, want)
		}
	}
}

func TestH5Priority(t *testing.T) {
	if r := mustParse(t, base()); r.Priority != 0 {
		t.Fatalf("absent x-priority: got %d, want default 0", r.Priority)
	}
	if r := mustParse(t, base("x-priority", "4294967295")); r.Priority != math.MaxUint32 {
		t.Fatalf("x-priority u32 max: got %d", r.Priority)
	}
	for _, v := range []string{"", "  ", "4294967296", "-1", "high", "1.5"} {
		wantErr(t, base("x-priority", v), HeaderPriority, "H5", "invalid_priority")
	}
}

func TestH6H7NumericOptional(t *testing.T) {
	r := mustParse(t, base("x-request-slo-ms", "900", "x-max-wait-ms", " 0 "))
	if r.RequestSLOMs != Some(900) || r.MaxWaitMs != Some(0) {
		t.Fatalf("slo %+v max-wait %+v: want 900 and 0 (0 = no waiting is a value, not absent)", r.RequestSLOMs, r.MaxWaitMs)
	}
	if r := mustParse(t, base()); r.RequestSLOMs.Set || r.MaxWaitMs.Set {
		t.Fatalf("absent headers must stay unset: %+v %+v", r.RequestSLOMs, r.MaxWaitMs)
	}
	for _, v := range []string{"", "bad", "-5", "18446744073709551616"} {
		wantErr(t, base("x-request-slo-ms", v), HeaderRequestSLOMs, "H6", "invalid_request_slo_ms")
		wantErr(t, base("x-max-wait-ms", v), HeaderMaxWaitMs, "H7", "invalid_max_wait_ms")
	}
}

func TestH8CacheAffinityKey(t *testing.T) {
	for v, want := range map[string]string{" key-1 ": "key-1", "": "", " \t ": "", "k\x00": "", "k\x7f": "", "k\u00e9": ""} {
		if r := mustParse(t, base("x-cache-affinity-key", v)); r.CacheAffinityKey != want {
			t.Errorf("x-cache-affinity-key %q: got %q, want %q", v, r.CacheAffinityKey, want)
		}
	}
}

func TestH9RoutingMethod(t *testing.T) {
	ok := map[string]Algorithm{
		"ROUND_ROBIN": RoundRobin, " Pulsar ": Pulsar, "power_of_two": PowerOfN, "powerOf2": PowerOfN, "POWEROFN": PowerOfN,
		"groq_multiregion": WaitAndWiden, "Pulsar_Wait_And_Widen": PulsarWaitAndWiden, "pulsar-multiregion": PulsarWaitAndWiden,
		"random": Random, "\twait-and-widen": WaitAndWiden,
	}
	for v, want := range ok {
		a, req, err := ParseRoutingMethod(v)
		if err != nil || a != want || req != strings.TrimSpace(v) {
			t.Errorf("ParseRoutingMethod(%q) = %v, %q, %v; want %v", v, a, req, err, want)
		}
		r := mustParse(t, base("x-routing-method", v))
		if !r.RoutingMethod.Set || r.RoutingMethod.Value != v {
			t.Errorf("x-routing-method %q not kept raw: %+v", v, r.RoutingMethod)
		}
	}
	for _, v := range []string{"", "   ", "power of n", "sticky", "round--robin", "power-of-n\x00", "pulsar\u00e9"} {
		wantErr(t, base("x-routing-method", v), HeaderRoutingMethod, "H9", "unknown_method")
	}
	if _, req, _ := ParseRoutingMethod("r\xffr"); req != "<invalid-utf8>" {
		t.Errorf("non-ASCII method reported as %q, want <invalid-utf8> as Stargate reports it", req)
	}
}

func TestH10LastClusterID(t *testing.T) {
	for v, want := range map[string]string{" B ": "B", "": "", "  ": "", "B\xff": "", "cluster-\u00e9": ""} {
		if r := mustParse(t, base("x-stargate-last-cluster-id", v)); r.LastClusterID != want {
			t.Errorf("x-stargate-last-cluster-id %q: got %q, want %q (blank = absent, never 400)", v, r.LastClusterID, want)
		}
	}
}

func TestRepeatedHeadersFirstWins(t *testing.T) {
	r := mustParse(t, base("x-priority", "3", "X-Priority", "bad", "x-cache-affinity-key", "k1", "x-cache-affinity-key", "k2"))
	if r.Priority != 3 || r.CacheAffinityKey != "k1" {
		t.Fatalf("repeated headers: got priority %d key %q; want the first values 3, k1", r.Priority, r.CacheAffinityKey)
	}
	wantErr(t, base("x-priority", "bad", "x-priority", "3"), HeaderPriority, "H5", "invalid_priority")
	// A blank first value hides a valid second one (HeaderMap::get).
	if r := mustParse(t, base("x-stargate-last-cluster-id", " ", "x-stargate-last-cluster-id", "B")); r.LastClusterID != "" {
		t.Fatalf("blank first last-cluster header: got %q, want absent", r.LastClusterID)
	}
	if n := base("x-priority", "1", "X-PRIORITY", "2").Count("x-priority"); n != 2 {
		t.Fatalf("Count: got %d, want 2", n)
	}
}

func TestOversizedValues(t *testing.T) {
	big := strings.Repeat("k", 1<<20)
	r := mustParse(t, base("x-cache-affinity-key", " "+big+" ", "x-routing-key", big))
	if r.CacheAffinityKey != big || r.RoutingKey != big {
		t.Fatalf("a 1 MiB key must be accepted and trimmed (Stargate sets no length limit)")
	}
	wantErr(t, append(without(base(), "x-input-tokens"), Header{"x-input-tokens", strings.Repeat("9", 4096)}), HeaderInputTokens, "H4", "invalid_input_tokens")
}

func TestOrderOfChecks(t *testing.T) {
	// Stargate checks x-request-id, then x-input-tokens, then x-model, then
	// the method, then the numeric optionals.
	h := Headers{{"x-priority", "bad"}, {"x-routing-method", "sticky"}}
	wantErr(t, h, HeaderRequestID, "H1", "missing_request_id")
	h = append(h, Header{"x-request-id", "r"})
	wantErr(t, h, HeaderInputTokens, "H4", "missing_input_tokens")
	h = append(h, Header{"x-input-tokens", "1"})
	wantErr(t, h, HeaderModel, "H2", "missing_model")
	h = append(h, Header{"x-model", "m"})
	wantErr(t, h, HeaderRoutingMethod, "H9", "unknown_method")
	h[1].Value = "random"
	wantErr(t, h, HeaderPriority, "H5", "invalid_priority")
}

func TestIsLoadBalancerHeader(t *testing.T) {
	for _, n := range []string{"X-Model", "x-stargate-last-cluster-id", "X-REQUEST-ID"} {
		if !IsLoadBalancerHeader(n) {
			t.Errorf("%s should be a load-balancer header", n)
		}
	}
	for _, n := range []string{"x-stargate-max-wait-ms", "authorization", "x-model2"} {
		if IsLoadBalancerHeader(n) {
			t.Errorf("%s should not be a load-balancer header", n)
		}
	}
}

// refUnsigned is an independent model of Rust's unsigned FromStr on a
// trimmed visible-ASCII value.
func refUnsigned(raw string, max uint64) (uint64, bool) {
	for i := 0; i < len(raw); i++ {
		if b := raw[i]; (b < 0x20 && b != '\t') || b > 0x7e {
			return 0, false
		}
	}
	s := strings.Trim(raw, " \t")
	s = strings.TrimPrefix(s, "+")
	if s == "" || strings.ContainsAny(s, "+-_xXoObB") {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max {
		return 0, false
	}
	return v, true
}

func FuzzParseUnsignedHeader(f *testing.F) {
	for _, s := range []string{"0", "+1", " 12 ", "-0", "18446744073709551615", "18446744073709551616", "4294967296", "+", "1_0", "\t7", "0x1"} {
		f.Add(s, uint64(math.MaxUint64))
		f.Add(s, uint64(math.MaxUint32))
	}
	f.Fuzz(func(t *testing.T, s string, max uint64) {
		got, err := ParseUnsignedHeader(s, max)
		want, ok := refUnsigned(s, max)
		if (err == nil) != ok || (ok && got != want) {
			t.Fatalf("ParseUnsignedHeader(%q, %d) = %d, %v; reference %d, %v", s, max, got, err, want, ok)
		}
	})
}

func FuzzParseRequestHeaders(f *testing.F) {
	f.Add("x-model", " m ", "x-priority", "+3", "x-routing-method", "ROUND_ROBIN")
	f.Add("X-Input-Tokens", "", "x-stargate-last-cluster-id", "\xff", "x-routing-method", "a;b=1")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string) {
		h := append(base(), Header{n1, v1}, Header{n2, v2}, Header{n3, v3})
		r, err := ParseRequestHeaders(h)
		if err != nil {
			if err.Header == "" || err.Code == "" || err.Rule == "" {
				t.Fatalf("incomplete error %+v", err)
			}
			return
		}
		for _, s := range []string{r.Model, r.RoutingKey, r.CacheAffinityKey, r.LastClusterID} {
			if s != strings.Trim(s, " \t") || !visibleASCII(s) {
				t.Fatalf("field %q is not a trimmed visible-ASCII value", s)
			}
		}
		if r.Model == "" || !r.HasInputTokens {
			t.Fatalf("accepted a request without model or input tokens: %+v", r)
		}
	})
}
