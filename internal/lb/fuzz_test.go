package lb

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzResolve feeds arbitrary x-routing-method values (method names and
// routing expressions) to Config.Resolve: it never panics, errors are
// RoutingErrors with a known code, and a resolved config drives the engine.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"pulsar", " ROUND_ROBIN ", "pulsar;seed=a", "wait-and-widen;n=3;cache_affinity_input_tokens_scale=0.5",
		"pulsar-wait-and-widen;band_widen_interval_ms=10; fallback_max_queued=1", "power-of-n;sample_count=64;comparator=\"ttft\"",
		"wait-and-widen;max_queue_time_floor_ms=1", "x;y", ";", "pulsar;seed=\"a;b\"", "wait-and-widen;n=-1",
		" pulsar; seed=\"q \\\" r\" ", `wait-and-widen;next_bucket_unlock_factor="0.0625";n="3"`, "pulsar;seed=:eA==:", "power-of-n;sample_count=1.5"} {
		f.Add(s)
	}
	codes := map[string]bool{"unknown_method": true, "unavailable": true, "malformed_expression": true, "unknown_parameter": true,
		"not_applicable": true, "invalid_value": true, "inert_value": true, "inert_combination": true}
	f.Fuzz(func(t *testing.T, method string) {
		var cfg *Config
		c, _, err := cfg.Resolve("m", OptionalString{Value: method, Set: true})
		if err != nil {
			re, ok := err.(*RoutingError)
			if !ok || !codes[re.Code] || re.Status != 400 {
				t.Fatalf("%q: unexpected error %v", method, err)
			}
			return
		}
		if c.CacheAffinityInputTokensScale < 0 || c.CacheAffinityInputTokensScale > 1 {
			t.Fatalf("%q: scale %v accepted", method, c.CacheAffinityInputTokensScale)
		}
		s := snapOf(cl("a", maxTPS(1)), cl("b", full, maxTPS(2)))
		NewEngine(c).Step(s, rq(key("k")), nil, Options{Trace: true, Probabilities: true})
	})
}

// FuzzParseU64Header checks the header integer parser against strconv.
func FuzzParseU64Header(f *testing.F) {
	for _, s := range []string{"0", "+1", " 007 ", "-0", "18446744073709551615", "18446744073709551616", "", "1 2", "0x10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := ParseU64Header("x-input-tokens", raw)
		s, ok := HeaderString(raw)
		digits := strings.TrimPrefix(s, "+")
		want, werr := strconv.ParseUint(digits, 10, 64)
		valid := ok && digits != "" && allDigits(digits) && werr == nil
		if (err == nil) != valid || (valid && v != want) {
			t.Fatalf("%q: got %v %v, want %v valid=%v", raw, v, err, want, valid)
		}
	})
}
