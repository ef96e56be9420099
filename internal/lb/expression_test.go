package lb

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// expression.rs test_overlay_preserves_omitted_fields_for_every_algorithm:
// every parameter of every algorithm lands in its field, the base is not
// modified, and an expression that sets one field keeps the others.
func TestExpressionOverlaysEveryParameter(t *testing.T) {
	common := ";require_cache_affinity_key=true;max_input_work_seconds=2.5"
	wait := `;seed=changed;n=3;max_queued=4;ttft_bucket_size_ms=50;next_bucket_unlock_factor="0.0625";ignore_queue_time=true;ignore_input_processing_time=false;max_queue_time_floor_ms=100;max_queue_time_ceil_ms=500;cache_affinity_backend_selection_count=2;cache_affinity_input_tokens_scale=0.5;cache_affinity_wait_ms=20`
	for _, c := range []struct {
		a      Algorithm
		params string
		want   func(*AlgorithmConfig)
	}{
		{RoundRobin, "", nil},
		{Random, "", nil},
		{PowerOfN, ";sample_count=3;comparator=queue-time", func(c *AlgorithmConfig) { c.SampleCount, c.Comparator = 3, CompareQueueTime }},
		{Pulsar, ";seed=changed;consider_kv_free_tokens=true", func(c *AlgorithmConfig) { c.Seed, c.ConsiderKVFreeTokens = "changed", true }},
		{WaitAndWiden, wait + ";comparator=utilization;cache_affinity_virtual_nodes=8", func(c *AlgorithmConfig) {
			setWait(c)
			c.Comparator, c.CacheAffinityVirtualNodes = CompareUtilization, 8
		}},
		{PulsarWaitAndWiden, wait + ";consider_kv_free_tokens=true;band_widen_interval_ms=10;fallback_max_queued=1", func(c *AlgorithmConfig) {
			setWait(c)
			c.ConsiderKVFreeTokens, c.BandWidenIntervalMs, c.FallbackMaxQueued = true, u64p(10), 1
		}},
	} {
		base := DefaultAlgorithmConfig(c.a)
		base.RequireInputTokens = true
		nine := 9.0
		base.MaxInputWorkSeconds = &nine
		want := *cloneConfig(&base)
		want.RequireCacheAffinityKey = true
		two5 := 2.5
		want.MaxInputWorkSeconds = &two5
		if c.want != nil {
			c.want(&want)
		}
		e, err := ParseRoutingExpression(c.a.String() + common + c.params)
		if err != nil {
			t.Fatalf("%s: %v", c.a, err)
		}
		got := cloneConfig(&base)
		if _, err := e.Overlay(got); err != nil {
			t.Fatalf("%s: %v", c.a, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: overlay\n got %+v\nwant %+v", c.a, *got, want)
		}
		if base.RequireCacheAffinityKey || *base.MaxInputWorkSeconds != 9 {
			t.Errorf("%s: the base config changed", c.a)
		}
		e, _ = ParseRoutingExpression(c.a.String() + ";require_input_tokens=false")
		again := cloneConfig(&want)
		if _, err := e.Overlay(again); err != nil {
			t.Fatal(err)
		}
		want.RequireInputTokens = false
		if !reflect.DeepEqual(*again, want) {
			t.Errorf("%s: omitted fields changed\n got %+v\nwant %+v", c.a, *again, want)
		}
	}
}

func setWait(c *AlgorithmConfig) {
	c.Seed, c.N, c.MaxQueued, c.TTFTBucketSizeMs, c.NextBucketUnlockFactor = "changed", 3, 4, 50, 0.0625
	c.IgnoreQueueTime, c.IgnoreInputProcessingTime = true, false
	c.MaxQueueTimeFloorMs, c.MaxQueueTimeCeilMs = u64p(100), u64p(500)
	c.CacheAffinityBackendSelectionCount, c.CacheAffinityInputTokensScale, c.CacheAffinityWaitMs = 2, 0.5, 20
}

// expression.rs test_quoted_numbers_require_plain_finite_content (the
// accepted values) and the number forms of sfv (a decimal is its integer
// times 1000 divided by 1000, so "-0.0" is +0).
func TestExpressionNumberValues(t *testing.T) {
	for _, c := range []struct {
		value string
		want  float64
	}{{`"0.0625"`, 0.0625}, {`"+0.0625"`, 0.0625}, {`"-0.0625"`, -0.0625}, {"0.125", 0.125}, {"-1.5", -1.5}, {"7", 7},
		{"0.1", 0.1}, {"999999999999.999", 999999999999.999}, {`"123456789.123456789"`, 123456789.123456789}, {"-0.0", 0}} {
		e, err := ParseRoutingExpression("wait-and-widen;next_bucket_unlock_factor=" + c.value)
		if err != nil {
			t.Fatalf("%s: %v", c.value, err)
		}
		cfg := DefaultAlgorithmConfig(WaitAndWiden)
		if _, err := e.Overlay(&cfg); err != nil {
			t.Fatalf("%s: %v", c.value, err)
		}
		if got := cfg.NextBucketUnlockFactor; math.Float64bits(got) != math.Float64bits(c.want) {
			t.Errorf("%s: factor %v (%b), want %v", c.value, got, math.Float64bits(got), c.want)
		}
	}
	// Quoted integers and booleans (test_overlay_uses_resolved_base_and_completes_bounds).
	e, err := ParseRoutingExpression(`wait-and-widen;max_queue_time_floor_ms="100";ignore_queue_time="true";n="+7";max_queued="18446744073709551615"`)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultAlgorithmConfig(WaitAndWiden)
	cfg.MaxQueueTimeCeilMs = u64p(500)
	if _, err := e.Overlay(&cfg); err != nil {
		t.Fatal(err)
	}
	if *cfg.MaxQueueTimeFloorMs != 100 || *cfg.MaxQueueTimeCeilMs != 500 || !cfg.IgnoreQueueTime || cfg.N != 7 || cfg.MaxQueued != math.MaxUint64 {
		t.Errorf("quoted values: %+v", cfg)
	}
	for _, v := range []string{`"18446744073709551616"`, `"-0"`, `"1.0"`} {
		e, _ := ParseRoutingExpression("wait-and-widen;max_queued=" + v)
		if _, err := e.Overlay(&cfg); err == nil || err.Message != "max_queued: expected an unsigned integer in range" {
			t.Errorf("max_queued=%s: %v", v, err)
		}
	}
}

// Rejections carry Stargate's answer: class, rule, message, the raw
// header, and the two-key JSON body.
func TestExpressionRejectionCarriesTheRequest(t *testing.T) {
	var cfg *Config
	raw := " pulsar;require_input_tokens=?1 "
	_, _, err := cfg.Resolve("m", OptionalString{Value: raw, Set: true})
	re, ok := err.(*RoutingError)
	if !ok {
		t.Fatalf("%v", err)
	}
	if re.Status != 400 || re.Code != "malformed_expression" || re.Rule != "P4" || re.Requested != raw ||
		re.Message != "P4: require_input_tokens takes true or false, not ?1 or ?0" {
		t.Errorf("got %+v", re)
	}
	if got, want := re.Body(), `{"code":"malformed_expression","error":"P4: require_input_tokens takes true or false, not ?1 or ?0"}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	for _, c := range []struct{ raw, code, rule string }{
		{"pulsar;seed=:eA==:", "malformed_expression", "P2"}, {"pulsar;n=0.0625", "malformed_expression", "RFC 8941"},
		{"fastest;seed=x", "unknown_method", ""}, {"pulsar;widen=2", "unknown_parameter", ""}, {"fastest", "unknown_method", ""},
	} {
		_, _, err := cfg.Resolve("m", OptionalString{Value: c.raw, Set: true})
		re := err.(*RoutingError)
		if re.Code != c.code || re.Rule != c.rule || re.Requested != c.raw {
			t.Errorf("%q: got %+v", c.raw, re)
		}
		if c.rule != "" && !strings.HasPrefix(re.Message, c.rule) && !strings.HasPrefix(re.Message, "RFC 8941 (P1/P2/P4/P8): ") {
			t.Errorf("%q: message %q does not name rule %s", c.raw, re.Message, c.rule)
		}
	}
	// An accepted expression reports each parameter's effect.
	_, res, err := cfg.Resolve("m", OptionalString{Value: "pulsar; seed=x;consider_kv_free_tokens=\"true\"", Set: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []ParamChange{{"seed", "x", "unset", "x"}, {"consider_kv_free_tokens", `"true"`, "false", "true"}}
	if res.Expression == nil || res.Expression.Token != "pulsar" || !reflect.DeepEqual(res.Changes, want) {
		t.Errorf("resolution %+v, changes %+v", res.Expression, res.Changes)
	}
}

func TestRustDebugString(t *testing.T) {
	for in, want := range map[string]string{"seed": `"seed"`, "a\tb": `"a\tb"`, `q"\`: `"q\"\\"`, "\x01": `"\u{1}"`, "it's": `"it's"`} {
		if got := rustDebugString(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// FuzzParseRoutingExpression checks the parser on arbitrary values: it
// never panics; a rejection is malformed_expression (with its rule named
// at the start of the message) or unknown_method and carries the raw value;
// an accepted expression keeps the P-rules (≤ 1024 bytes, no ',', at most
// 32 unique [a-z][a-z0-9_]* keys, a P10 token) and, written back in
// canonical form, parses to the same parameters.
func FuzzParseRoutingExpression(f *testing.F) {
	for _, s := range []string{"pulsar;seed=x", " pulsar; seed=x ", `pulsar;seed="escaped \" quote"`, "wait-and-widen;next_bucket_unlock_factor=0.125",
		`wait-and-widen;next_bucket_unlock_factor="0.0625"`, "pulsar;seed=:eA==:", "pulsar;n=1000000000000.0", "pulsar;a=-999999999999999",
		"pulsar;seed=@1", `pulsar;seed=%"x"`, "pul:sar;seed=x", "pulsar;seed=a*b:c/d", "pulsar;x=?1", "pulsar;;", `pulsar;s="\\"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		e, err := ParseRoutingExpression(raw)
		if err != nil {
			if err.Requested != raw || err.Status != 400 {
				t.Fatalf("%q: %+v", raw, err)
			}
			switch err.Code {
			case "malformed_expression":
				if err.Rule == "" || !strings.HasPrefix(err.Message, err.Rule) && !strings.HasPrefix(err.Message, "RFC 8941 (P1/P2/P4/P8): ") {
					t.Fatalf("%q: rule %q, message %q", raw, err.Rule, err.Message)
				}
			case "unknown_method":
			default:
				t.Fatalf("%q: class %s", raw, err.Code)
			}
			return
		}
		if len(raw) > 1024 || strings.Contains(raw, ",") || len(e.Params) > 32 || !validAlgorithmToken(e.Token) {
			t.Fatalf("%q accepted: %+v", raw, e)
		}
		seen := map[string]bool{}
		var b strings.Builder
		b.WriteString(e.Token)
		for _, p := range e.Params {
			if !validExprKey(p.Key) || seen[p.Key] {
				t.Fatalf("%q: key %q", raw, p.Key)
			}
			seen[p.Key] = true
			fmt.Fprintf(&b, ";%s=%s", p.Key, canonicalExprValue(p.Value))
		}
		again, err := ParseRoutingExpression(b.String())
		if err != nil {
			t.Fatalf("%q: canonical form %q rejected: %v", raw, b.String(), err)
		}
		if len(again.Params) != len(e.Params) {
			t.Fatalf("%q: %d params, canonical %d", raw, len(e.Params), len(again.Params))
		}
		for i := range e.Params {
			p, q := e.Params[i], again.Params[i]
			if p.Key != q.Key || p.Value.Kind != q.Value.Kind || p.Value.Int != q.Value.Int || p.Value.Text != q.Value.Text {
				t.Fatalf("%q: param %d %+v, canonical %+v", raw, i, p, q)
			}
		}
	})
}

// canonicalExprValue writes a value back as RFC 8941 text.
func canonicalExprValue(v ExprValue) string {
	switch v.Kind {
	case ExprInteger:
		return strconv.FormatInt(v.Int, 10)
	case ExprDecimal:
		sign := ""
		n := v.Int
		if n < 0 {
			sign, n = "-", -n
		}
		return fmt.Sprintf("%s%d.%03d", sign, n/1000, n%1000)
	case ExprToken:
		return v.Text
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v.Text) + `"`
}
