package migrate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRenderLayouts pins rewrites of layouts the golden archives cannot
// hold (no final newline, CRLF YAML) or that exercise one renderer path.
func TestRenderLayouts(t *testing.T) {
	cases := []struct {
		name, file, in, want string
		strategy             Strategy
	}{
		{"json no final newline", "x.json",
			`{"models": {"m": "pulsar-wait-and-widen"}}`,
			`{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "max_queued": 4, "cache_affinity_wait_ms": 300}}}`, Bounded},
		{"yaml no final newline", "x.yaml",
			"models:\n  m: pulsar-wait-and-widen",
			"models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300", Bounded},
		{"yaml append after last line without newline", "x.yaml",
			"models:\n  m:\n    algorithm: pulsar-wait-and-widen",
			"models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300", Bounded},
		{"yaml crlf", "x.yaml",
			"models:\r\n  m: pulsar-wait-and-widen  # c\r\n  n: random\r\n",
			"models:\r\n  m:  # c\r\n    algorithm: pulsar-wait-and-widen\r\n    max_queued: 4\r\n    cache_affinity_wait_ms: 300\r\n  n: random\r\n", Bounded},
		{"yaml value on the next line", "x.yaml",
			"models:\n  m:\n    pulsar-wait-and-widen\n  n: random\n",
			"models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300\n  n: random\n", Bounded},
		{"yaml tagged string entry", "x.yaml",
			"models:\n  m: !!str pulsar-wait-and-widen\n",
			"models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300\n", Bounded},
		{"yaml quoted default keeps its quotes", "x.yaml",
			"default: 'pulsar-multiregion'\nrequest_algorithms: {}\n",
			"default: 'pulsar'\nrequest_algorithms: {pulsar-wait-and-widen: {algorithm: pulsar-wait-and-widen, max_queued: 4, cache_affinity_wait_ms: 300}}\n", Pulsar},
		{"yaml default in the one-key object form", "x.yaml",
			"default:\n  pulsar-wait-and-widen: ~\nmodels: {}\n",
			"default: pulsar\nmodels: {}\nrequest_algorithms:\n  pulsar-wait-and-widen:\n    algorithm: pulsar-wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300\n", Pulsar},
		{"json one-key default object", "x.json",
			`{"default": {"pulsar-wait-and-widen": null}}`,
			`{"default": "pulsar", "request_algorithms": {"pulsar-wait-and-widen": {"algorithm": "pulsar-wait-and-widen", "max_queued": 4, "cache_affinity_wait_ms": 300}}}`, Pulsar},
		{"yaml multi-line flow mapping", "x.yaml",
			"models: {\n  a: pulsar-wait-and-widen,\n  b: {algorithm: pulsar-wait-and-widen, n: 1, seed: x}\n}\n",
			"models: {\n  a: pulsar,\n  b: {algorithm: pulsar, seed: x}\n}\n", Pulsar},
		{"json removing the last members keeps the closing layout", "x.json",
			"{\n  \"models\": {\n    \"m\": {\n      \"algorithm\": \"pulsar-wait-and-widen\",\n      \"seed\": \"s\",\n      \"n\": 1,\n      \"ttft_bucket_size_ms\": 5\n    }\n  },\n  \"request_algorithms\": {\"pulsar-wait-and-widen\": {\"algorithm\": \"pulsar-wait-and-widen\", \"max_queued\": 1, \"cache_affinity_wait_ms\": 2}}\n}\n",
			"{\n  \"models\": {\n    \"m\": {\n      \"algorithm\": \"pulsar\",\n      \"seed\": \"s\"\n    }\n  },\n  \"request_algorithms\": {\"pulsar-wait-and-widen\": {\"algorithm\": \"pulsar-wait-and-widen\", \"max_queued\": 1, \"cache_affinity_wait_ms\": 2}}\n}\n", Pulsar},
		{"json removing the first members", "x.json",
			`{"models": {"m": {"n": 1, "ttft_bucket_size_ms": 5, "algorithm": "pulsar-wait-and-widen"}}}`,
			`{"models": {"m": {"algorithm": "pulsar"}}}`, Pulsar},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Strategy = c.strategy
			if strings.Contains(c.name, "multi-line flow") || strings.Contains(c.name, "removing") {
				opts.NoPreserveHeaderMethod = true
			}
			res, err := Migrate(c.file, []byte(c.in), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusPending {
				t.Fatalf("status %s: %v %v", res.Status, res.Notes, res.Errors)
			}
			if string(res.Output) != c.want {
				t.Fatalf("got\n%q\nwant\n%q\n%s", res.Output, c.want, UnifiedDiff("want", "got", []byte(c.want), res.Output))
			}
			checkMigrated(t, c.file, res, opts)
		})
	}
}

// TestRenderRefusesUnsupportedYAML: layouts the YAML renderer does not
// edit are refused with a reason, never rewritten wrongly; a block scalar
// elsewhere in the file does not stop the rewrite.
func TestRenderRefusesUnsupportedYAML(t *testing.T) {
	opts := DefaultOptions()
	opts.Strategy = Bounded
	in := "models:\n  m: >-\n    pulsar-wait-and-widen\n"
	res, err := Migrate("x.yaml", []byte(in), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusRefused || string(res.Output) != in || !strings.Contains(res.Notes[0].Message, "block scalar") {
		t.Fatalf("status %s notes %v", res.Status, res.Notes)
	}
	in = "models:\n  m: pulsar-wait-and-widen\n  n:\n    algorithm: pulsar\n    seed: |\n      # looks like a comment\n"
	res, err = Migrate("x.yaml", []byte(in), opts)
	if err != nil {
		t.Fatal(err)
	}
	checkMigrated(t, "x.yaml", res, opts)
	// A member ending in a literal block whose last line looks like a
	// comment: new fields go after the whole block.
	in = "models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    seed: |+\n      x\n      # looks like a comment\n\n  n: random\n"
	res, err = Migrate("x.yaml", []byte(in), opts)
	if err != nil {
		t.Fatal(err)
	}
	want := "models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    seed: |+\n      x\n      # looks like a comment\n\n    max_queued: 4\n    cache_affinity_wait_ms: 300\n  n: random\n"
	if string(res.Output) != want {
		t.Fatalf("status %s notes %v\n%s", res.Status, res.Notes, res.Output)
	}
	checkMigrated(t, "x.yaml", res, opts)
}

// jsonString writes what encoding/json writes without HTML escaping, on
// its fast path (nothing to escape) and off it.
func TestJSONStringMatchesEncoder(t *testing.T) {
	ins := []string{"", "pulsar-wait-and-widen", "org/model-1", `a"b`, `a\b`, "<&>", "tab\there", "ü", "\u2028", "\x7f", string([]byte{0xff})}
	for c := range 0x80 {
		ins = append(ins, "x"+string(rune(c))+"y")
	}
	for _, s := range ins {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := string(jsonString(s)), strings.TrimSuffix(b.String(), "\n"); got != want {
			t.Errorf("jsonString(%q) = %s, want %s", s, got, want)
		}
	}
}
