package cli_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/lb"
)

func TestParseHeaderLine(t *testing.T) {
	ok := map[string]cli.HeaderLine{
		"x-model: model-a":     {Name: "x-model", Value: " model-a"},
		"X-Priority:3":         {Name: "X-Priority", Value: "3"},
		" x-a : b:c ":          {Name: "x-a", Value: " b:c "},
		"x-k:":                 {Name: "x-k", Value: ""},
		"x-k: caf\xc3\xa9":     {Name: "x-k", Value: " café"},
		"x-k: \xff\xfe":        {Name: "x-k", Value: " \xff\xfe"},
		"x-k:\ttab\t":          {Name: "x-k", Value: "\ttab\t"},
		"!#$%&'*+-.^_`|~09: v": {Name: "!#$%&'*+-.^_`|~09", Value: " v"},
	}
	for in, want := range ok {
		got, err := cli.ParseHeaderLine(in)
		if err != nil || got != want {
			t.Errorf("ParseHeaderLine(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"x-model", "", ": v", "  : v", "bad name: v", "x(y): v", "x-k: a\nb", "x-k: a\rb", "x-k: \x00", "x-k: \x7f", "x\xff: v"} {
		if _, err := cli.ParseHeaderLine(in); err == nil {
			t.Errorf("ParseHeaderLine(%q): want an error", in)
		}
	}
}

func TestParseElapsed(t *testing.T) {
	ok := map[string]time.Duration{"0": 0, "250": 250 * time.Millisecond, "250ms": 250 * time.Millisecond, "1.5s": 1500 * time.Millisecond,
		"123.75": 123750 * time.Microsecond, " 2m ": 2 * time.Minute, "0.0000004": 0, "0.0000006": 1, "+5": 5 * time.Millisecond,
		"1e3": time.Second, ".5": 500 * time.Microsecond, "3us": 3 * time.Microsecond}
	for in, want := range ok {
		if got, err := cli.ParseElapsed(in); err != nil || got != want {
			t.Errorf("ParseElapsed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "-1", "-5ms", "NaN", "nan", "inf", "+Inf", "1e400", "999999999h", "5 ms", "ms", "0x10", "1_000", "9223372036854.775808"} {
		if d, err := cli.ParseElapsed(in); err == nil {
			t.Errorf("ParseElapsed(%q) = %v; want an error", in, d)
		} else if !strings.Contains(err.Error(), "--elapsed") {
			t.Errorf("ParseElapsed(%q): error %q does not name the flag", in, err)
		}
	}
}

func TestParseExcludeList(t *testing.T) {
	got, err := cli.ParseExcludeList([]string{"A, B", "B,C"})
	if err != nil || strings.Join(got, "|") != "A|B|C" {
		t.Fatalf("got %v, %v; want A B C (trimmed, repeats dropped)", got, err)
	}
	for _, in := range []string{"", "A,", ",A", "A,,B", " , "} {
		if _, err := cli.ParseExcludeList([]string{in}); err == nil {
			t.Errorf("ParseExcludeList(%q): want an error", in)
		}
	}
}

func FuzzParseHeaderLine(f *testing.F) {
	for _, s := range []string{"x-model: m", "x:", ":", "a b: c", "x-k: \xff", "x-k:\t\t", "x-k: a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := cli.ParseHeaderLine(s)
		if err != nil {
			if !strings.Contains(err.Error(), "header") {
				t.Fatalf("error %q does not say it is about a header", err)
			}
			return
		}
		if h.Name == "" || strings.ContainsAny(h.Name, " \t:()<>@,;\\\"/[]?={}") {
			t.Fatalf("accepted name %q", h.Name)
		}
		for i := 0; i < len(h.Value); i++ {
			if b := h.Value[i]; (b < 0x20 && b != '\t') || b == 0x7f {
				t.Fatalf("accepted control byte in %q", h.Value)
			}
		}
		if !strings.HasSuffix(s, ":"+h.Value) {
			t.Fatalf("value %q is not the text after the first colon of %q", h.Value, s)
		}
	})
}

func FuzzParseElapsed(f *testing.F) {
	for _, s := range []string{"0", "250", "250ms", "1.5s", "-1", "NaN", "1e400", "9223372036854ms", "+.5", "1e-400", "5h5m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := cli.ParseElapsed(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseElapsed(%q) = %v < 0", s, d)
		}
		back, err := cli.ParseElapsed(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseElapsed(%q) = %v does not round-trip through %q: %v, %v", s, d, d.String(), back, err)
		}
	})
}

func FuzzParseExcludeList(f *testing.F) {
	f.Add("A,B", "B")
	f.Add(",", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		ids, err := cli.ParseExcludeList([]string{a, b})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if id == "" || id != strings.TrimSpace(id) || seen[id] || strings.Contains(id, ",") {
				t.Fatalf("bad id %q in %v", id, ids)
			}
			seen[id] = true
		}
	})
}

// baseHeaders is the minimal header set Stargate accepts (H1, H2, H4).
func baseHeaders(extra ...string) cli.HeaderLines {
	h := cli.HeaderLines{{Name: "x-request-id", Value: "req-1"}, {Name: "x-model", Value: "model-a"}, {Name: "x-input-tokens", Value: "128"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h = append(h, cli.HeaderLine{Name: extra[i], Value: extra[i+1]})
	}
	return h
}

func withoutHeader(h cli.HeaderLines, name string) cli.HeaderLines {
	var out cli.HeaderLines
	for _, x := range h {
		if !strings.EqualFold(x.Name, name) {
			out = append(out, x)
		}
	}
	return out
}

func mustRequest(t *testing.T, h cli.HeaderLines) lb.Request {
	t.Helper()
	r, err := h.Request()
	if err != nil {
		t.Fatalf("headers %q: unexpected 400: %v", h, err)
	}
	return r
}

func want400(t *testing.T, h cli.HeaderLines, header string) {
	t.Helper()
	_, err := h.Request()
	var re *lb.RoutingError
	if !errors.As(err, &re) || re.Status != 400 || re.Header != header {
		t.Fatalf("headers %q: want a 400 on %s, got %v", h, header, err)
	}
}

// lb-config.md H1–H10 through the header list explain builds from -H and
// the convenience flags (first value of a repeated header wins).
func TestHRules(t *testing.T) {
	// H1 x-request-id: required, trimmed, non-blank.
	want400(t, withoutHeader(baseHeaders(), "x-request-id"), "x-request-id")
	for _, v := range []string{"", "  ", "\t", "r\xffq"} {
		want400(t, append(withoutHeader(baseHeaders(), "x-request-id"), cli.HeaderLine{Name: "x-request-id", Value: v}), "x-request-id")
	}
	// H2 x-model: required, trimmed; names are case-insensitive.
	want400(t, withoutHeader(baseHeaders(), "x-model"), "x-model")
	for _, v := range []string{"", "  ", "mod\u00e9l"} {
		want400(t, append(withoutHeader(baseHeaders(), "x-model"), cli.HeaderLine{Name: "X-Model", Value: v}), "x-model")
	}
	if r := mustRequest(t, append(withoutHeader(baseHeaders(), "x-model"), cli.HeaderLine{Name: "X-MODEL", Value: "  model-b\t"})); r.Model != "model-b" {
		t.Errorf("x-model: got %q, want trimmed model-b", r.Model)
	}
	// H3, H8, H10: optional strings; blank or not visible ASCII = absent.
	for v, want := range map[string]string{" k ": "k", "": "", "   ": "", "k\xe9": "", "k\u00e9": "", "a b": "a b", "k\x7f": ""} {
		r := mustRequest(t, baseHeaders("x-routing-key", v, "x-cache-affinity-key", v, "x-stargate-last-cluster-id", v))
		if r.RoutingKey != want || r.CacheAffinityKey != want || r.LastClusterID != want {
			t.Errorf("optional %q: got %q/%q/%q, want %q", v, r.RoutingKey, r.CacheAffinityKey, r.LastClusterID, want)
		}
	}
	// H4 x-input-tokens: required u64 with Rust's FromStr rules.
	want400(t, withoutHeader(baseHeaders(), "x-input-tokens"), "x-input-tokens")
	for _, v := range []string{"", " ", "-1", "-0", "1.0", "1e3", "0x10", "1 2", "+", "++1", "abc", "1_000", "18446744073709551616", "\xff1", "１２"} {
		want400(t, append(withoutHeader(baseHeaders(), "x-input-tokens"), cli.HeaderLine{Name: "x-input-tokens", Value: v}), "x-input-tokens")
	}
	for v, want := range map[string]uint64{" 12 ": 12, "+12": 12, "007": 7, "0": 0, "\t5\t": 5, "18446744073709551615": math.MaxUint64} {
		if r := mustRequest(t, append(withoutHeader(baseHeaders(), "x-input-tokens"), cli.HeaderLine{Name: "x-input-tokens", Value: v})); !r.HasInputTokens || r.InputTokens != want {
			t.Errorf("x-input-tokens %q: got %d, want %d", v, r.InputTokens, want)
		}
	}
	// H5 x-priority: optional u32, default 0.
	if r := mustRequest(t, baseHeaders()); r.Priority != 0 {
		t.Errorf("default priority %d", r.Priority)
	}
	if r := mustRequest(t, baseHeaders("x-priority", "4294967295")); r.Priority != math.MaxUint32 {
		t.Errorf("u32 max priority: %d", r.Priority)
	}
	for _, v := range []string{"", "  ", "4294967296", "-1", "high", "1.5"} {
		want400(t, baseHeaders("x-priority", v), "x-priority")
	}
	// H6, H7: optional u64; 0 is a value, not absent.
	if r := mustRequest(t, baseHeaders("x-request-slo-ms", "900", "x-max-wait-ms", " 0 ")); r.RequestSLOMs != lb.Some(900) || r.MaxWaitMs != lb.Some(0) {
		t.Errorf("slo/max-wait: %+v %+v", r.RequestSLOMs, r.MaxWaitMs)
	}
	for _, v := range []string{"", "bad", "-5", "18446744073709551616"} {
		want400(t, baseHeaders("x-request-slo-ms", v), "x-request-slo-ms")
		want400(t, baseHeaders("x-max-wait-ms", v), "x-max-wait-ms")
	}
	// H9 x-routing-method is kept raw for the resolution (E3).
	if r := mustRequest(t, baseHeaders("x-routing-method", " ROUND_ROBIN ")); !r.RoutingMethod.Set || r.RoutingMethod.Value != " ROUND_ROBIN " {
		t.Errorf("method: %+v", r.RoutingMethod)
	}
	// Oversized: a 1 MiB key is accepted (no length limit); a 4096-digit
	// number overflows u64.
	big := strings.Repeat("k", 1<<20)
	if r := mustRequest(t, baseHeaders("x-cache-affinity-key", " "+big+" ")); r.CacheAffinityKey != big {
		t.Error("a 1 MiB key must be accepted and trimmed")
	}
	want400(t, append(withoutHeader(baseHeaders(), "x-input-tokens"), cli.HeaderLine{Name: "x-input-tokens", Value: strings.Repeat("9", 4096)}), "x-input-tokens")
}

func TestRepeatedHeadersFirstWins(t *testing.T) {
	h := baseHeaders("x-priority", "3", "X-Priority", "bad", "x-cache-affinity-key", "k1", "x-cache-affinity-key", "k2")
	if r := mustRequest(t, h); r.Priority != 3 || r.CacheAffinityKey != "k1" {
		t.Fatalf("got priority %d key %q; want the first values", r.Priority, r.CacheAffinityKey)
	}
	if h.Count("X-PRIORITY") != 2 {
		t.Fatal("Count is case-insensitive")
	}
	want400(t, baseHeaders("x-priority", "bad", "x-priority", "3"), "x-priority")
	// A blank first value hides a valid second one (HeaderMap::get).
	if r := mustRequest(t, baseHeaders("x-stargate-last-cluster-id", " ", "x-stargate-last-cluster-id", "B")); r.LastClusterID != "" {
		t.Fatalf("blank first last-cluster header: got %q, want absent", r.LastClusterID)
	}
}

func FuzzHeaderRequest(f *testing.F) {
	f.Add("x-model", " m ", "x-priority", "+3", "x-routing-method", "ROUND_ROBIN")
	f.Add("X-Input-Tokens", "", "x-stargate-last-cluster-id", "\xff", "x-routing-method", "a;b=1")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2, n3, v3 string) {
		h := append(baseHeaders(), cli.HeaderLine{Name: n1, Value: v1}, cli.HeaderLine{Name: n2, Value: v2}, cli.HeaderLine{Name: n3, Value: v3})
		r, err := h.Request()
		if err != nil {
			var re *lb.RoutingError
			if !errors.As(err, &re) || re.Status != 400 || re.Code == "" {
				t.Fatalf("error %v is not a 400 RoutingError", err)
			}
			return
		}
		for _, s := range []string{r.Model, r.RoutingKey, r.CacheAffinityKey, r.LastClusterID} {
			if s != strings.Trim(s, " \t") {
				t.Fatalf("field %q is not trimmed", s)
			}
		}
		if r.Model == "" || !r.HasInputTokens {
			t.Fatalf("accepted a request without model or input tokens: %+v", r)
		}
	})
}
