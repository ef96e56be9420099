package validate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// field renders a config whose models["m"] entry has algorithm alg and one
// more member `"name": value` on line 5:
//
//	{
//	  "models": {
//	    "m": {
//	      "algorithm": "ALG",
//	      "NAME": VALUE
//	    }
//	  }
//	}
//
// The key starts at column 7 and the value at column len(name)+11.
func field(alg, name, value string) string {
	return fmt.Sprintf("{\n  \"models\": {\n    \"m\": {\n      \"algorithm\": %q,\n      %q: %s\n    }\n  }\n}\n", alg, name, value)
}

func keyCol() int              { return 7 }
func valCol(name string) int   { return len(name) + 11 }
func fpath(name string) string { return `models["m"].` + name }

type want struct {
	code      validate.Code
	line, col int
	path      string
	text      string // a substring of the message (Stargate's text)
}

type ruleCase struct {
	name  string
	file  string // default "c.json"
	src   string
	valid bool
	want  []want // diagnostics that must be present (code, position, path)
}

// TestRules has, for every V rule, inputs Stargate accepts and rejects;
// rejected ones assert the code, line, column, path and Stargate's text.
// Accepted ones assert that the rule's code is absent.
func TestRules(t *testing.T) {
	cases := []ruleCase{
		// V1: JSON syntax (serde_json rules).
		{name: "V1 accept", src: `{"models": {}}`, valid: true},
		{name: "V1 unterminated", src: `{"models": {}`, want: []want{{validate.CodeSyntax, 1, 14, "", "EOF while parsing an object"}}},
		{name: "V1 trailing comma", src: "{\n  \"default\": \"random\",\n}", want: []want{{validate.CodeSyntax, 3, 1, "", "trailing comma"}}},
		{name: "V1 comment", src: "{\n  // no comments\n}", want: []want{{validate.CodeSyntax, 2, 3, "", "key must be a string"}}},
		{name: "V1 leading zero", src: `{"models": {"m": {"algorithm": "wait-and-widen", "n": 01}}}`, want: []want{{validate.CodeSyntax, 1, 56, "", "invalid number"}}},
		{name: "V1 out of range", src: `{"models": {"m": {"algorithm": "random", "max_input_work_seconds": 1e309}}}`, want: []want{{validate.CodeSyntax, 1, 68, "", "number out of range"}}},
		{name: "V1 NaN", src: `{"models": {"m": {"algorithm": "random", "max_input_work_seconds": NaN}}}`, want: []want{{validate.CodeSyntax, 1, 68, "", "expected value"}}},
		{name: "V1 trailing characters", src: `{} {}`, want: []want{{validate.CodeSyntax, 1, 4, "", "trailing characters"}}},
		{name: "V1 BOM", src: "\uFEFF{}", want: []want{{validate.CodeSyntax, 1, 1, "", "byte-order mark"}}},
		{name: "V1 lone leading surrogate", src: `{"models": {"\ud800": "random"}}`, want: []want{{validate.CodeSyntax, 1, 20, "", "unexpected end of hex escape"}}},
		{name: "V1 lone trailing surrogate", src: `{"models": {"\udc00": "random"}}`, want: []want{{validate.CodeSyntax, 1, 20, "", "lone leading surrogate in hex escape"}}},
		{name: "V1 control character", src: "{\"models\": {\"a\tb\": \"random\"}}", want: []want{{validate.CodeSyntax, 1, 15, "", "control character"}}},
		{name: "V1 depth 127 ok", src: `{"models": {"m": {"algorithm": "random", "x": ` + strings.Repeat("[", 124) + strings.Repeat("]", 124) + `}}}`, want: []want{{validate.CodeUnsupportedField, 1, 42, fpath("x"), "random config does not support field(s): x"}}},
		{name: "V1 depth 128", src: `{"models": {"m": {"algorithm": "random", "x": ` + strings.Repeat("[", 125) + strings.Repeat("]", 125) + `}}}`, want: []want{{validate.CodeSyntax, 1, 171, "", "recursion limit exceeded"}}},
		// serde_json's " at line L column C": the byte after the one it
		// was looking at (bytes, not characters; at the end of the input
		// the last byte's column).
		{name: "V1 serde position at EOF", src: `{"a`, want: []want{{validate.CodeSyntax, 1, 4, "", "EOF while parsing a string at line 1 column 3"}}},
		{name: "V1 serde position in bytes", src: `{"é":1,}`, want: []want{{validate.CodeSyntax, 1, 8, "", "trailing comma at line 1 column 9"}}},
		{name: "V1 serde position after a newline", src: "{\n\"a\":1,\n", want: []want{{validate.CodeSyntax, 3, 1, "", "EOF while parsing a value at line 3 column 0"}}},
		{name: "V1 EOF after a comma in an object", src: `{"a":1,`, want: []want{{validate.CodeSyntax, 1, 8, "", "EOF while parsing a value at line 1 column 7"}}},
		{name: "V1 EOF after a comma in a list", src: `[1,`, want: []want{{validate.CodeSyntax, 1, 4, "", "EOF while parsing a value at line 1 column 3"}}},
		{name: "V1 out of range found at the end of the number", src: `{"x":1e400}`, want: []want{{validate.CodeSyntax, 1, 6, "", "number out of range at line 1 column 10"}}},
		{name: "V1 empty", src: "", want: []want{{validate.CodeSyntax, 1, 1, "", "EOF while parsing a value"}}},

		// V2: the top level.
		{name: "V2 accept empty array", src: `[]`, valid: true, want: []want{{validate.CodePositional, 1, 1, "", "positional"}}},
		{name: "V2 accept positional", src: `["random", {}, {"m": "pulsar"}]`, valid: true},
		{name: "V2 string", src: `"power-of-n"`, want: []want{{validate.CodeTopLevelType, 1, 1, "", `invalid type: string "power-of-n", expected struct LoadBalancerConfig`}}},
		{name: "V2 four elements", src: `["random", {}, {}, {}]`, want: []want{{validate.CodeTopLevelType, 1, 20, "[3]", "trailing characters"}}},

		// V3: unknown top-level field.
		{name: "V3 accept", src: `{"default": "random", "request_algorithms": {}, "models": {}}`, valid: true},
		{name: "V3 case", src: `{"Models": {}}`, want: []want{{validate.CodeUnknownTopLevelField, 1, 2, "Models", "unknown field `Models`, expected one of `default`, `request_algorithms`, `models`"}}},
		{name: "V3 all reported", src: "{\n  \"a\": 1,\n  \"b\": 2\n}", want: []want{
			{validate.CodeUnknownTopLevelField, 2, 3, "a", "unknown field `a`"},
			{validate.CodeUnknownTopLevelField, 3, 3, "b", "unknown field `b`"},
		}},

		// V4: repeated top-level field (D1).
		{name: "V4 accept", src: `{"default": "random", "models": {}}`, valid: true},
		{name: "V4 repeated", src: `{"default": "random", "default": "pulsar"}`, want: []want{{validate.CodeDuplicateTopLevel, 1, 23, "default", "duplicate field `default`"}}},

		// V5: default.
		{name: "V5 accept alias", src: `{"default": "powerOfN"}`, valid: true, want: []want{{validate.CodeDeprecatedName, 1, 13, "default", `"powerOfN" is a deprecated spelling of power-of-n`}}},
		{name: "V5 accept one-key object", src: `{"default": {"pulsar": null}}`, valid: true, want: []want{{validate.CodeDefaultObjectForm, 1, 13, "default", `{"pulsar": null}`}}},
		{name: "V5 case", src: `{"default": "Pulsar"}`, want: []want{{validate.CodeDefault, 1, 13, "default", "unknown variant `Pulsar`"}}},
		{name: "V5 null", src: `{"default": null}`, want: []want{{validate.CodeDefault, 1, 13, "default", "expected value"}}},
		{name: "V5 detailed", src: `{"default": {"algorithm": "pulsar"}}`, want: []want{{validate.CodeDefault, 1, 14, "default", "unknown variant `algorithm`"}}},
		{name: "V5 one-key with value", src: `{"default": {"pulsar": {}}}`, want: []want{{validate.CodeDefault, 1, 24, "default", "invalid type: map, expected unit"}}},
		{name: "V5 second key", src: `{"default": {"pulsar": null, "x": 1}}`, want: []want{{validate.CodeDefault, 1, 30, "default", "expected value"}}},

		// V6: request_algorithms maps.
		{name: "V6 accept", src: `{"request_algorithms": {"round-robin": "round-robin"}}`, valid: true},
		{name: "V6 bad key", src: `{"request_algorithms": {"round_robin": "round-robin"}}`, want: []want{{validate.CodeRequestAlgorithms, 1, 25, `request_algorithms["round_robin"]`, "unknown variant `round_robin`"}}},
		{name: "V6 not a map", src: `{"request_algorithms": []}`, want: []want{{validate.CodeRequestAlgorithms, 1, 24, "request_algorithms", "invalid type: sequence, expected a map"}}},
		{name: "V6 null in entry", src: field("pulsar", "request_algorithms", "null"), want: []want{{validate.CodeRequestAlgorithms, 5, valCol("request_algorithms"), fpath("request_algorithms"), "invalid type: null, expected a map"}}},

		// V7: models.
		{name: "V7 accept", src: `{"models": {"m": "random"}}`, valid: true},
		{name: "V7 array", src: `{"models": []}`, want: []want{{validate.CodeModelsType, 1, 12, "models", "invalid type: sequence, expected a map"}}},
		{name: "V7 null", src: `{"models": null}`, want: []want{{validate.CodeModelsType, 1, 12, "models", "invalid type: null, expected a map"}}},

		// V8: entry type.
		{name: "V8 accept object", src: `{"models": {"m": {"algorithm": "random"}}}`, valid: true},
		{name: "V8 null", src: `{"models": {"m": null}}`, want: []want{{validate.CodeEntryType, 1, 18, `models["m"]`, "load-balancer model config must be an algorithm name or detailed config object"}}},
		{name: "V8 number in request_algorithms", src: `{"request_algorithms": {"random": 1}}`, want: []want{{validate.CodeEntryType, 1, 35, `request_algorithms["random"]`, "must be an algorithm name or detailed config object"}}},

		// V9: string entries.
		{name: "V9 accept alias", src: `{"models": {"m": "groq-multiregion"}}`, valid: true},
		// serde lists every accepted name: per variant, the kebab-case
		// name and its aliases sorted (serde_derive VARIANTS).
		{name: "V9 expected list", src: `{"models": {"m": "Pulsar"}}`, want: []want{{validate.CodeEntryName, 1, 18, `models["m"]`, "unknown variant `Pulsar`, expected one of `power-of-n`, `power-of-two`, `powerOf2`, `powerOfN`, `powerof2`, `powerofn`, `groq-multiregion`, `wait-and-widen`, `round-robin`, `random`, `pulsar`, `pulsar-multiregion`, `pulsar-wait-and-widen`"}}},
		{name: "V9 underscore", src: `{"models": {"m": "power_of_n"}}`, want: []want{{validate.CodeEntryName, 1, 18, `models["m"]`, "unknown variant `power_of_n`"}}},
		{name: "V9 shadowed value still parsed (D2)", src: `{"models": {"m": "bogus", "m": "pulsar"}}`, want: []want{
			{validate.CodeDuplicateKey, 1, 13, `models["m"]`, "D2"},
			{validate.CodeEntryName, 1, 18, `models["m"]`, "unknown variant `bogus`"},
		}},

		// V10: algorithm of a detailed entry.
		{name: "V10 accept", src: `{"models": {"m": {"seed": "x", "algorithm": "pulsar"}}}`, valid: true},
		{name: "V10 missing", src: `{"models": {"m": {"seed": "x"}}}`, want: []want{{validate.CodeEntryAlgorithm, 1, 18, `models["m"]`, "missing field `algorithm`"}}},
		{name: "V10 not a string", src: field("random", "x", "1")[:0] + `{"models": {"m": {"algorithm": 5}}}`, want: []want{{validate.CodeEntryAlgorithm, 1, 32, `models["m"].algorithm`, "invalid type: integer `5`"}}},
		{name: "V10 unknown", src: `{"models": {"m": {"algorithm": "pulsar2"}}}`, want: []want{{validate.CodeEntryAlgorithm, 1, 32, `models["m"].algorithm`, "unknown variant `pulsar2`"}}},

		// V11: booleans.
		{name: "V11 accept null", src: field("wait-and-widen", "ignore_queue_time", "null"), valid: true},
		{name: "V11 string", src: field("wait-and-widen", "ignore_queue_time", `"true"`), want: []want{{validate.CodeBoolField, 5, valCol("ignore_queue_time"), fpath("ignore_queue_time"), `invalid type: string "true", expected a boolean`}}},
		{name: "V11 number", src: field("pulsar", "consider_kv_free_tokens", "1"), want: []want{{validate.CodeBoolField, 5, valCol("consider_kv_free_tokens"), fpath("consider_kv_free_tokens"), "invalid type: integer `1`, expected a boolean"}}},

		// V12: seed.
		{name: "V12 accept empty", src: field("pulsar", "seed", `""`), valid: true},
		{name: "V12 number", src: field("pulsar", "seed", "7"), want: []want{{validate.CodeStringField, 5, valCol("seed"), fpath("seed"), "invalid type: integer `7`, expected a string"}}},

		// V13: unsigned integers (lb-config.md §7.2).
		{name: "V13 accept max", src: field("wait-and-widen", "max_queued", "18446744073709551615"), valid: true},
		{name: "V13 accept null", src: field("wait-and-widen", "max_queued", "null"), valid: true},
		{name: "V13 negative", src: field("wait-and-widen", "max_queued", "-1"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "invalid value: integer `-1`, expected u64"}}},
		{name: "V13 fraction", src: field("wait-and-widen", "max_queued", "2.0"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "invalid type: floating point `2.0`, expected u64"}}},
		{name: "V13 exponent", src: field("wait-and-widen", "n", "1e3"), want: []want{{validate.CodeUnsignedField, 5, valCol("n"), fpath("n"), "invalid type: floating point `1000.0`, expected usize"}}},
		{name: "V13 minus zero", src: field("wait-and-widen", "max_queued", "-0"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "invalid type: floating point `-0.0`, expected u64"}}},
		{name: "V13 too large", src: field("wait-and-widen", "cache_affinity_wait_ms", "18446744073709551616"), want: []want{{validate.CodeUnsignedField, 5, valCol("cache_affinity_wait_ms"), fpath("cache_affinity_wait_ms"), "invalid type: floating point `1.8446744073709552e19`, expected u64"}}},
		// serde_json renders floats in messages with ryu (JsonUnexpected):
		// plain below 1e16 and from 1e-5, scientific otherwise.
		{name: "V13 float 1e15 plain", src: field("wait-and-widen", "max_queued", "1e15"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "floating point `1000000000000000.0`, expected u64"}}},
		{name: "V13 float 1e16 scientific", src: field("wait-and-widen", "max_queued", "1E16"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "floating point `1e16`, expected u64"}}},
		{name: "V13 float 1e-5 plain", src: field("wait-and-widen", "max_queued", "0.00001"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "floating point `0.00001`, expected u64"}}},
		{name: "V13 float 1e-7 scientific", src: field("wait-and-widen", "max_queued", "1e-7"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "floating point `1e-7`, expected u64"}}},
		{name: "V13 below i64", src: field("wait-and-widen", "n", "-9223372036854775809"), want: []want{{validate.CodeUnsignedField, 5, valCol("n"), fpath("n"), "floating point `-9.223372036854776e18`, expected usize"}}},
		{name: "V13 i64 min", src: field("wait-and-widen", "n", "-9223372036854775808"), want: []want{{validate.CodeUnsignedField, 5, valCol("n"), fpath("n"), "invalid value: integer `-9223372036854775808`, expected usize"}}},
		{name: "V13 fraction digits", src: field("wait-and-widen", "max_queued", "123456.789"), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), "floating point `123456.789`, expected u64"}}},
		{name: "V11 float", src: field("wait-and-widen", "ignore_queue_time", "2.5e20"), want: []want{{validate.CodeBoolField, 5, valCol("ignore_queue_time"), fpath("ignore_queue_time"), "invalid type: floating point `2.5e20`, expected a boolean"}}},
		{name: "V13 string", src: field("pulsar-wait-and-widen", "fallback_max_queued", `"5"`), want: []want{{validate.CodeUnsignedField, 5, valCol("fallback_max_queued"), fpath("fallback_max_queued"), `invalid type: string "5", expected u64`}}},
		{name: "V13 string quoted like Rust's Debug", src: field("wait-and-widen", "max_queued", `"e\u0301\u00ad\t\"x\u0000"`), want: []want{{validate.CodeUnsignedField, 5, valCol("max_queued"), fpath("max_queued"), `invalid type: string "e\u{301}\u{ad}\t\"x\0", expected u64`}}},
		{name: "V13 sample_count null", src: field("power-of-n", "sample_count", "null"), want: []want{{validate.CodeUnsignedField, 5, valCol("sample_count"), fpath("sample_count"), "invalid type: null, expected usize"}}},

		// V14: numbers.
		{name: "V14 accept integer literal", src: field("pulsar-wait-and-widen", "cache_affinity_input_tokens_scale", "0"), valid: true},
		{name: "V14 accept minus zero", src: field("random", "max_input_work_seconds", "-0"), valid: true},
		{name: "V14 string", src: field("random", "max_input_work_seconds", `"5"`), want: []want{{validate.CodeNumberField, 5, valCol("max_input_work_seconds"), fpath("max_input_work_seconds"), `invalid type: string "5", expected f64`}}},

		// V15: enums.
		{name: "V15 accept comparator", src: field("power-of-n", "comparator", `"num-requests-queued"`), valid: true},
		{name: "V15 accept weight", src: field("pulsar", "rendezvous_weight", `"last-mean-input-tps"`), valid: true},
		{name: "V15 comparator underscore", src: field("power-of-n", "comparator", `"num_requests_queued"`), want: []want{{validate.CodeEnumField, 5, valCol("comparator"), fpath("comparator"), "unknown variant `num_requests_queued`, expected one of `ttft`"}}},
		{name: "V15 comparator null on pwaw", src: field("pulsar-wait-and-widen", "comparator", "null"), want: []want{{validate.CodeEnumField, 5, valCol("comparator"), fpath("comparator"), "invalid type: null"}}},
		{name: "V15 null message", src: field("power-of-n", "comparator", "null"), want: []want{{validate.CodeEnumField, 5, valCol("comparator"), fpath("comparator"), "invalid type: null, expected string or map"}}},
		{name: "V15 number", src: field("pulsar", "rendezvous_weight", "1"), want: []want{{validate.CodeEnumField, 5, valCol("rendezvous_weight"), fpath("rendezvous_weight"), "invalid type: integer `1`, expected string or map"}}},
		// serde's derived enums, read from the entry's serde_json::Value,
		// also take the externally tagged one-key map (unit value null or {}).
		{name: "V15 accept one-key comparator", src: field("power-of-n", "comparator", `{"queue-time": null}`), valid: true, want: []want{{validate.CodeEnumObjectForm, 5, valCol("comparator"), fpath("comparator"), `{"queue-time": null}`}}},
		{name: "V15 accept one-key weight with {}", src: field("pulsar", "rendezvous_weight", `{"last-mean-input-tps": {}}`), valid: true, want: []want{{validate.CodeEnumObjectForm, 5, valCol("rendezvous_weight"), fpath("rendezvous_weight"), `Stargate reads it as "last-mean-input-tps"`}}},
		{name: "V15 accept one-key after D3", src: field("wait-and-widen", "comparator", `{"ttft": 1, "ttft": null}`), valid: true},
		{name: "V15 empty map", src: field("power-of-n", "comparator", `{}`), want: []want{{validate.CodeEnumField, 5, valCol("comparator"), fpath("comparator"), "invalid value: map, expected map with a single key"}}},
		{name: "V15 two keys", src: field("pulsar", "rendezvous_weight", `{"max-input-tps": null, "last-mean-input-tps": null}`), want: []want{{validate.CodeEnumField, 5, valCol("rendezvous_weight"), fpath("rendezvous_weight"), "invalid value: map, expected map with a single key"}}},
		{name: "V15 one-key unknown name", src: field("power-of-n", "comparator", `{"fastest": 1}`), want: []want{{validate.CodeEnumField, 5, valCol("comparator") + 1, fpath("comparator"), "unknown variant `fastest`, expected one of `ttft`"}}},
		{name: "V15 one-key value", src: field("power-of-n", "comparator", `{"ttft": true}`), want: []want{{validate.CodeEnumField, 5, valCol("comparator") + 9, fpath("comparator"), "invalid type: boolean `true`, expected unit"}}},
		{name: "V20 one-key comparator", src: field("pulsar-wait-and-widen", "comparator", `{"ttft": null}`), want: []want{{validate.CodePWAWComparator, 5, keyCol(), fpath("comparator"), "comparator is not supported for pulsar-wait-and-widen"}}},
		{name: "V15 weight", src: field("pulsar", "rendezvous_weight", `"max_input_tps"`), want: []want{{validate.CodeEnumField, 5, valCol("rendezvous_weight"), fpath("rendezvous_weight"), "unknown variant `max_input_tps`, expected `last-mean-input-tps` or `max-input-tps`"}}},

		// V16: sample_count range.
		{name: "V16 accept 64", src: field("power-of-n", "sample_count", "64"), valid: true},
		{name: "V16 accept 1", src: field("power-of-n", "sample_count", "1"), valid: true},
		{name: "V16 zero", src: field("power-of-n", "sample_count", "0"), want: []want{{validate.CodeSampleCountRange, 5, valCol("sample_count"), fpath("sample_count"), "power-of-n sample_count must be between 1 and 64, got 0"}}},
		{name: "V16 65", src: field("powerOf2", "sample_count", "65"), want: []want{{validate.CodeSampleCountRange, 5, valCol("sample_count"), fpath("sample_count"), "power-of-n sample_count must be between 1 and 64, got 65"}}},

		// V17: scale range.
		{name: "V17 accept 1.0", src: field("wait-and-widen", "cache_affinity_input_tokens_scale", "1.0"), valid: true},
		{name: "V17 1.5", src: field("wait-and-widen", "cache_affinity_input_tokens_scale", "1.5"), want: []want{{validate.CodeScaleRange, 5, valCol("cache_affinity_input_tokens_scale"), fpath("cache_affinity_input_tokens_scale"), "cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got 1.5"}}},
		{name: "V17 negative", src: field("pulsar-wait-and-widen", "cache_affinity_input_tokens_scale", "-0.1"), want: []want{{validate.CodeScaleRange, 5, valCol("cache_affinity_input_tokens_scale"), fpath("cache_affinity_input_tokens_scale"), "got -0.1"}}},
		{name: "V17 integer 2", src: field("wait-and-widen", "cache_affinity_input_tokens_scale", "2"), want: []want{{validate.CodeScaleRange, 5, valCol("cache_affinity_input_tokens_scale"), fpath("cache_affinity_input_tokens_scale"), "got 2"}}},

		// V18: fields not allowed for the algorithm.
		{name: "V18 accept", src: field("pulsar", "seed", `"s"`), valid: true},
		{name: "V18 seed on random", src: field("random", "seed", `"x"`), want: []want{{validate.CodeUnsupportedField, 5, keyCol(), fpath("seed"), "random config does not support field(s): seed"}}},
		{name: "V18 null value", src: field("pulsar", "max_queued", "null"), want: []want{{validate.CodeUnsupportedField, 5, keyCol(), fpath("max_queued"), "pulsar config does not support field(s): max_queued"}}},
		{name: "V18 foreign key not typed", src: field("pulsar", "max_queued", "-1"), want: []want{{validate.CodeUnsupportedField, 5, keyCol(), fpath("max_queued"), "pulsar config does not support field(s): max_queued"}}},
		{name: "V18 alias prints canonical", src: field("groq-multiregion", "consider_kv_free_tokens", "true"), want: []want{{validate.CodeUnsupportedField, 5, keyCol(), fpath("consider_kv_free_tokens"), "wait-and-widen config does not support field(s): consider_kv_free_tokens"}}},
		{name: "V18 sorted list", src: `{"models":{"m":{"algorithm":"random","sample_count":4,"comparator":"ttft"}}}`, want: []want{{validate.CodeUnsupportedField, 1, 38, `models["m"].sample_count`, "random config does not support field(s): comparator, sample_count"}}},
		{name: "V18 last_cluster_affinity on pulsar", src: field("pulsar", "last_cluster_affinity", "true"), want: []want{{validate.CodeUnsupportedField, 5, keyCol(), fpath("last_cluster_affinity"), "pulsar config does not support field(s): last_cluster_affinity"}}},
		{name: "V18 in a discarded entry", src: `{"request_algorithms":{"random":{"algorithm":"random","request_algorithms":{"pulsar":{"algorithm":"pulsar","bogus":1}}}}}`, want: []want{{validate.CodeUnsupportedField, 1, 108, `request_algorithms["random"].request_algorithms["pulsar"].bogus`, "pulsar config does not support field(s): bogus"}}},

		// V19: key/algorithm mismatch on active request_algorithms entries.
		{name: "V19 accept alias key", src: `{"request_algorithms": {"pulsar-multiregion": "pulsar-wait-and-widen"}}`, valid: true},
		{name: "V19 accept discarded mismatch", src: `{"request_algorithms":{"random":{"algorithm":"random","request_algorithms":{"pulsar":"random"}}}}`, valid: true},
		{name: "V19 top level", src: `{"request_algorithms": {"pulsar": "pulsar-wait-and-widen"}}`, want: []want{{validate.CodeKeyMismatch, 1, 25, `request_algorithms["pulsar"]`, "request_algorithms key pulsar does not match configured algorithm pulsar-wait-and-widen"}}},
		{name: "V19 model level", src: field("pulsar", "request_algorithms", `{"random": "round-robin"}`), want: []want{{validate.CodeKeyMismatch, 5, valCol("request_algorithms") + 1, `models["m"].request_algorithms["random"]`, "request_algorithms key random does not match configured algorithm round-robin"}}},

		// V20: comparator on active pulsar-wait-and-widen.
		{name: "V20 accept discarded", src: `{"request_algorithms":{"random":{"algorithm":"random","request_algorithms":{"pulsar-wait-and-widen":{"algorithm":"pulsar-wait-and-widen","comparator":"ttft","max_queue_time_floor_ms":1,"max_queue_time_ceil_ms":2}}}}}`, valid: true},
		{name: "V20 model", src: field("pulsar-wait-and-widen", "comparator", `"ttft"`), want: []want{{validate.CodePWAWComparator, 5, keyCol(), fpath("comparator"), "comparator is not supported for pulsar-wait-and-widen"}}},

		// V21: pulsar-wait-and-widen-only fields on active wait-and-widen.
		{name: "V21 accept null", src: field("wait-and-widen", "band_widen_interval_ms", "null"), valid: true},
		{name: "V21 accept on pwaw", src: field("pulsar-wait-and-widen", "fallback_max_queued", "2"), valid: true},
		{name: "V21 band", src: field("wait-and-widen", "band_widen_interval_ms", "100"), want: []want{{validate.CodePulsarOnlyField, 5, keyCol(), fpath("band_widen_interval_ms"), "band_widen_interval_ms is supported only for pulsar-wait-and-widen, not wait-and-widen"}}},
		{name: "V21 fallback", src: field("groq-multiregion", "fallback_max_queued", "0"), want: []want{{validate.CodePulsarOnlyField, 5, keyCol(), fpath("fallback_max_queued"), "fallback_max_queued"}}},
	}
	runRuleCases(t, cases)
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.file
			if file == "" {
				file = "c.json"
			}
			r := validate.File(file, []byte(tc.src))
			if r.Valid() != tc.valid {
				t.Fatalf("valid = %v, want %v:\n%s", r.Valid(), tc.valid, dump(r.Diagnostics))
			}
			for _, w := range tc.want {
				found := false
				for _, d := range r.Diagnostics {
					if d.Code == w.code && d.Line == w.line && d.Col == w.col && d.Path == w.path && strings.Contains(d.Message, w.text) {
						found = true
					}
				}
				if !found {
					t.Errorf("missing %s at %d:%d path %q containing %q; got:\n%s", w.code, w.line, w.col, w.path, w.text, dump(r.Diagnostics))
				}
			}
			if tc.valid {
				return
			}
			// Every error names its path and position.
			for _, d := range r.Errors() {
				yamlSyntax := d.Code == validate.CodeSyntax && strings.HasPrefix(d.Message, "YAML syntax error")
				if d.Line == 0 || (d.Col == 0 && !yamlSyntax) {
					t.Errorf("error without position: %s", d)
				}
			}
		})
	}
}

// TestRuleCodeAbsentWhenAccepted checks that accepted inputs of each rule
// do not carry that rule's error code (a rule that fires on everything
// would pass the tests above).
func TestRuleCodeAbsentWhenAccepted(t *testing.T) {
	for code, src := range map[validate.Code]string{
		validate.CodeUnsignedField:    field("wait-and-widen", "max_queued", "0"),
		validate.CodeUnsupportedField: field("wait-and-widen", "last_cluster_affinity", "false"),
		validate.CodeKeyMismatch:      `{"request_algorithms": {"powerofn": "power-of-two"}}`,
		validate.CodePWAWComparator:   field("wait-and-widen", "comparator", `"ttft"`),
		validate.CodePulsarOnlyField:  field("pulsar-wait-and-widen", "band_widen_interval_ms", "0"),
		validate.CodeScaleRange:       field("wait-and-widen", "cache_affinity_input_tokens_scale", "0.0"),
		validate.CodeSampleCountRange: field("power-of-n", "sample_count", "2"),
		validate.CodeEnumField:        field("wait-and-widen", "comparator", `"utilization"`),
	} {
		r := validate.File("c.json", []byte(src))
		if hasCode(r, code) || !r.Valid() {
			t.Errorf("%s: %s\n%s", code, src, dump(r.Diagnostics))
		}
	}
}

// TestDuplicateKeys covers D1–D5 and W15.
func TestDuplicateKeys(t *testing.T) {
	cases := []ruleCase{
		{name: "D2 models last wins", src: `{"models":{"m":"pulsar","m":"random"}}`, valid: true, want: []want{{validate.CodeDuplicateKey, 1, 12, `models["m"]`, "D2"}}},
		{name: "D2 alias keys at the top level, last wins", src: `{"request_algorithms":{"power-of-n":"random","power-of-two":"power-of-n"}}`, valid: true, want: []want{{validate.CodeDuplicateKey, 1, 24, `request_algorithms["power-of-n"]`, "D2"}}},
		{name: "D2 alias keys, the loser is not router-checked but the winner is", src: `{"request_algorithms":{"power-of-two":"power-of-n","power-of-n":"random"}}`, want: []want{{validate.CodeKeyMismatch, 1, 52, `request_algorithms["power-of-n"]`, "request_algorithms key power-of-n does not match configured algorithm random"}}},
		{name: "D3 inside an entry the last occurrence wins", src: `{"models":{"m":{"algorithm":"pulsar","algorithm":"random"}}}`, valid: true, want: []want{{validate.CodeDuplicateKey, 1, 17, `models["m"].algorithm`, "D3"}}},
		{name: "D3 shadowed occurrence is not checked", src: `{"models":{"m":{"algorithm":"wait-and-widen","max_queued":-1,"max_queued":2}}}`, valid: true},
		{name: "D4 byte order decides alias-equal keys inside an entry", src: `{"models":{"m":{"algorithm":"random","request_algorithms":{"power-of-two":"power-of-n","power-of-n":"random"}}}}`, valid: true, want: []want{{validate.CodeDuplicateKey, 1, 88, `models["m"].request_algorithms["power-of-n"]`, "D4"}}},
		{name: "D1 top level", src: `{"models":{},"models":{}}`, want: []want{{validate.CodeDuplicateTopLevel, 1, 14, "models", "duplicate field `models`"}}},
	}
	runRuleCases(t, cases)
	r := validate.File("c.json", []byte(`{"models":{"m":"pulsar","m":"random"}}`))
	if got := r.Config.Models["m"].Algorithm; got != lb.Random {
		t.Errorf("D2 winner = %v, want random", got)
	}
	r = validate.File("c.json", []byte(`{"models":{"m":{"algorithm":"random","request_algorithms":{"power-of-two":"power-of-n","power-of-n":"random"}}}}`))
	if got := r.Config.Models["m"].RequestAlgorithms[lb.PowerOfN]; got == nil || got.Algorithm != lb.PowerOfN || got.Spelling != "" {
		t.Errorf("D4 winner = %+v, want the power-of-two entry (a power-of-n config)", got)
	}
}

// TestUnsupportedFieldsAllListed: V18 lists every unsupported field in
// Stargate's message, however many; the hint explains the first few.
func TestUnsupportedFieldsAllListed(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"models":{"m":{"algorithm":"random"`)
	var names []string
	for i := range 50 {
		fmt.Fprintf(&b, `,"k%02d":1`, i)
		names = append(names, fmt.Sprintf("k%02d", i))
	}
	b.WriteString("}}}")
	r := validate.File("c.json", []byte(b.String()))
	errs := r.Errors()
	if len(errs) != 1 || errs[0].Code != validate.CodeUnsupportedField {
		t.Fatalf("want one V18 error:\n%s", dump(r.Diagnostics))
	}
	if want := "random config does not support field(s): " + strings.Join(names, ", "); errs[0].Message != want {
		t.Errorf("message = %q\nwant %q", errs[0].Message, want)
	}
	if !strings.Contains(errs[0].Hint, "40 more not explained here") {
		t.Errorf("hint = %q", errs[0].Hint)
	}
}
