package validate

import (
	"fmt"
	"strings"

	"github.com/lcctl/lcctl/internal/lb"
)

// Code is a stable diagnostic code. LC1xxx are errors (LC10NN reproduces
// Stargate's startup rule VNN of lb-config.md §8; LC11xx are lcctl-only
// YAML errors), LC2xxx warnings (LC20NN is operator warning WNN of §9;
// LC21xx lcctl-only), LC3xxx infos (LC30NN is WNN reported as info). Codes
// never change meaning; docs/diagnostics.md is generated from Registry.
type Code string

// Error codes.
const (
	CodeRead                 Code = "LC1000" // V1: file missing, unreadable or too large
	CodeSyntax               Code = "LC1001" // V1: not JSON/YAML
	CodeTopLevelType         Code = "LC1002" // V2
	CodeUnknownTopLevelField Code = "LC1003" // V3
	CodeDuplicateTopLevel    Code = "LC1004" // V4
	CodeDefault              Code = "LC1005" // V5
	CodeRequestAlgorithms    Code = "LC1006" // V6
	CodeModelsType           Code = "LC1007" // V7
	CodeEntryType            Code = "LC1008" // V8
	CodeEntryName            Code = "LC1009" // V9
	CodeEntryAlgorithm       Code = "LC1010" // V10
	CodeBoolField            Code = "LC1011" // V11
	CodeStringField          Code = "LC1012" // V12
	CodeUnsignedField        Code = "LC1013" // V13
	CodeNumberField          Code = "LC1014" // V14
	CodeEnumField            Code = "LC1015" // V15
	CodeSampleCountRange     Code = "LC1016" // V16
	CodeScaleRange           Code = "LC1017" // V17
	CodeUnsupportedField     Code = "LC1018" // V18
	CodeKeyMismatch          Code = "LC1019" // V19
	CodePWAWComparator       Code = "LC1020" // V20
	CodePulsarOnlyField      Code = "LC1021" // V21

	CodeYAMLMultiDoc     Code = "LC1101"
	CodeYAMLSpecialFloat Code = "LC1102"
	CodeYAMLTag          Code = "LC1103"
	CodeYAMLMerge        Code = "LC1104"
	CodeYAMLAlias        Code = "LC1105"
	CodeYAMLKey          Code = "LC1106"
)

// Warning codes.
const (
	CodeNoSLO               Code = "LC2001" // W1
	CodeHalfSLO             Code = "LC2002" // W2
	CodeSLOOrder            Code = "LC2003" // W3
	CodeDiscarded           Code = "LC2004" // W4
	CodeUnreachable         Code = "LC2005" // W5
	CodeIgnoredVirtualNodes Code = "LC2006" // W6
	CodeNoAffinityGroup     Code = "LC2007" // W7
	CodeNormalised          Code = "LC2008" // W8
	CodeZeroBucket          Code = "LC2009" // W9
	CodeUnlockFactor        Code = "LC2010" // W10
	CodeInputWorkLimit      Code = "LC2011" // W11
	CodeLongWait            Code = "LC2012" // W12
	CodeDeprecatedName      Code = "LC2014" // W14
	CodeDuplicateKey        Code = "LC2015" // W15
	CodeModelKeyBlank       Code = "LC2016" // W16
	CodeManyVirtualNodes    Code = "LC2019" // W19
	CodePositional          Code = "LC2020" // W20
	CodeDefaultObjectForm   Code = "LC2101"
	CodeEnumObjectForm      Code = "LC2102"
)

// Info codes.
const (
	CodeNoSLOBounded   Code = "LC3001" // W1 downgraded by M4
	CodeLastCluster    Code = "LC3013" // W13
	CodeYAMLInput      Code = "LC3017" // W17
	CodeImplicitWeight Code = "LC3018" // W18
)

// CodeInfo documents one code.
type CodeInfo struct {
	// Code is the stable code.
	Code Code
	// Severity is fixed per code.
	Severity Severity
	// Rule is the lb-config.md rule ("V13", "W1"), "" for lcctl-only.
	Rule string
	// Title is a one-line summary.
	Title string
	// Meaning explains when the code is reported and why it matters.
	Meaning string
	// Example is a small config that triggers the code.
	Example string
}

// Registry lists every diagnostic code lcctl reports, in code order. It is
// the single place codes are defined; docs/diagnostics.md is generated from
// it (go test ./internal/validate -run TestDiagnosticsDoc -update).
var Registry = []CodeInfo{
	{CodeRead, SeverityError, "V1", "file cannot be read",
		"The file is missing, unreadable, or larger than the input limit (16 MiB). Stargate fails with `failed to read lb config file: PATH`. `lcctl validate` exits 2.",
		"lcctl validate does-not-exist.json"},
	{CodeSyntax, SeverityError, "V1", "not valid JSON or YAML",
		"The bytes are not one JSON value by serde_json's rules (no BOM, comments, trailing commas or trailing characters; at most 127 nesting levels; numbers within f64 range), or not one YAML document. Binary data, invalid UTF-8 and empty files are reported here. The message contains serde_json's text (`EOF while parsing a value`, `trailing comma`, ...). `lcctl validate` exits 2.",
		example(lb.TopLevelModels, `{"m": "pulsar",}`)},
	{CodeTopLevelType, SeverityError, "V2", "top level is not an object",
		"The top-level value must be an object, or serde's positional array form `[default, request_algorithms, models]` with at most 3 elements (warned by LC2020). Stargate: `invalid type: ..., expected struct LoadBalancerConfig`.",
		`"power-of-n"`},
	{CodeUnknownTopLevelField, SeverityError, "V3", "unknown top-level field",
		"Only `default`, `request_algorithms` and `models` are allowed (case-sensitive). Stargate: ``unknown field `X`, expected one of `default`, `request_algorithms`, `models` ``.",
		`{"Models": {}}`},
	{CodeDuplicateTopLevel, SeverityError, "V4", "repeated top-level field",
		"A top-level key appears twice (rule D1). Stargate: ``duplicate field `X` ``. The repeated value is not examined.",
		example(lb.TopLevelDefault, `"power-of-n"`, lb.TopLevelDefault, `"random"`)},
	{CodeDefault, SeverityError, "V5", "invalid `default`",
		"`default` must be an algorithm name string (exact, case-sensitive; aliases allowed). The only object form Stargate reads is `{\"NAME\": null}`. Stargate: ``unknown variant `X`, expected one of ...`` or `expected value`.",
		example(lb.TopLevelDefault, `"Pulsar"`)},
	{CodeRequestAlgorithms, SeverityError, "V6", "invalid `request_algorithms`",
		"A `request_algorithms` value is not an object, or one of its keys is not an algorithm name. Stargate: `invalid type: ..., expected a map` or ``unknown variant `X` ``.",
		example(raKey, `{"round_robin": "round-robin"}`)},
	{CodeModelsType, SeverityError, "V7", "`models` is not an object",
		"`models` must map model IDs to entries. Stargate: `invalid type: ..., expected a map`. A function-create config (whose `models` is an array) fails here.",
		example(lb.TopLevelModels, `[]`)},
	{CodeEntryType, SeverityError, "V8", "entry is neither a name nor an object",
		"An entry under `models` or `request_algorithms` must be an algorithm name string or a detailed object. Stargate: `load-balancer model config must be an algorithm name or detailed config object`.",
		example(lb.TopLevelModels, `{"m": null}`)},
	{CodeEntryName, SeverityError, "V9", "unknown algorithm name in a string entry",
		"Names are exact and case-sensitive; `_` is not accepted in the file. Stargate: ``unknown variant `X`, expected one of ...``.",
		example(lb.TopLevelModels, `{"m": "power_of_n"}`)},
	{CodeEntryAlgorithm, SeverityError, "V10", "detailed entry without a valid `algorithm`",
		"A detailed object needs an `algorithm` key naming an algorithm. Stargate: ``missing field `algorithm` `` or ``unknown variant `X` ``.",
		modelEntry("", lb.FieldSeed, `"x"`)},
	{CodeBoolField, SeverityError, "V11", "boolean field holds another type",
		"`require_cache_affinity_key`, `require_input_tokens`, `consider_kv_free_tokens`, `ignore_queue_time`, `ignore_input_processing_time` and `last_cluster_affinity` take `true`/`false` (null = absent). Stargate: `invalid type: ..., expected a boolean`.",
		modelEntry("wait-and-widen", lb.FieldIgnoreQueueTime, `"true"`)},
	{CodeStringField, SeverityError, "V12", "`seed` is not a string",
		"`seed` takes any JSON string (null = absent). Stargate: `invalid type: ..., expected a string`.",
		modelEntry("pulsar", lb.FieldSeed, `7`)},
	{CodeUnsignedField, SeverityError, "V13", "unsigned-integer field out of type",
		"u64/usize fields take integer literals 0 … 18446744073709551615 without fraction or exponent; `-0`, `2.0`, `1e3` and larger integers are floats to serde_json. `sample_count` may not be null. Stargate: ``invalid value: integer `-1`, expected u64`` / ``invalid type: floating point `2.0`, expected u64``.",
		modelEntry("wait-and-widen", lb.FieldMaxQueued, `-1`)},
	{CodeNumberField, SeverityError, "V14", "number field holds another type",
		"`max_input_work_seconds`, `next_bucket_unlock_factor` and `cache_affinity_input_tokens_scale` take any JSON number (null = absent). Stargate: `invalid type: ..., expected f64`.",
		modelEntry("random", lb.FieldMaxInputWorkSeconds, `"5"`)},
	{CodeEnumField, SeverityError, "V15", "invalid `comparator` or `rendezvous_weight`",
		"`comparator` takes `ttft`, `queue-time`, `input-work-seconds`, `utilization`, `num-requests-queued`; `rendezvous_weight` takes `max-input-tps`, `last-mean-input-tps`; neither may be null. The one-key object `{\"NAME\": null}` (or `{\"NAME\": {}}`) is read as `\"NAME\"` (LC2102). Stargate: ``unknown variant `X`, expected ...`` / `invalid type: null, expected string or map` / `invalid value: map, expected map with a single key`.",
		modelEntry("pulsar", lb.FieldRendezvousWeight, `"max_input_tps"`)},
	{CodeSampleCountRange, SeverityError, "V16", "power-of-n `sample_count` out of range",
		"`sample_count` must be 1–64. Stargate: `power-of-n sample_count must be between 1 and 64, got N`.",
		modelEntry("power-of-n", lb.FieldSampleCount, `0`)},
	{CodeScaleRange, SeverityError, "V17", "`cache_affinity_input_tokens_scale` out of range",
		"wait-and-widen and pulsar-wait-and-widen need 0.0 ≤ scale ≤ 1.0. Stargate: `cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got X`.",
		modelEntry("wait-and-widen", lb.FieldCacheAffinityInputTokensScale, `1.5`)},
	{CodeUnsupportedField, SeverityError, "V18", "field not allowed for the algorithm",
		"A detailed entry holds keys its algorithm does not accept (lb-config.md §6.7), typos included, whatever their value (null too). Stargate: `ALG config does not support field(s): F1, F2` (ALG canonical, fields byte-sorted). One diagnostic per entry, at the first such key.",
		modelEntry("random", lb.FieldSeed, `"x"`)},
	{CodeKeyMismatch, SeverityError, "V19", "`request_algorithms` key and entry algorithm differ",
		"An active `request_algorithms` entry (top level, or in a `models` entry) must configure the algorithm its key names, aliases resolved. Stargate (router construction): `request_algorithms key KEY does not match configured algorithm ALG`.",
		example(raKey, `{"pulsar": "pulsar-wait-and-widen"}`)},
	{CodePWAWComparator, SeverityError, "V20", "`comparator` on an active pulsar-wait-and-widen entry",
		"pulsar-wait-and-widen parses `comparator` and then refuses it when the router is built. Stargate: `comparator is not supported for pulsar-wait-and-widen`.",
		modelEntry("pulsar-wait-and-widen", lb.FieldComparator, `"ttft"`)},
	{CodePulsarOnlyField, SeverityError, "V21", "pulsar-wait-and-widen-only field on an active wait-and-widen entry",
		"`band_widen_interval_ms` and `fallback_max_queued` are parsed for wait-and-widen and refused when the router is built (Stargate's message names the field; its exact wording is an open point). lcctl: `F is supported only for pulsar-wait-and-widen, not wait-and-widen`.",
		modelEntry("wait-and-widen", lb.FieldBandWidenIntervalMs, `100`)},
	{CodeYAMLMultiDoc, SeverityError, "", "YAML stream with several documents",
		"An lb-config is one document; `---` separates a second one. lcctl-only (Stargate reads JSON).",
		"default: pulsar\n---\ndefault: random"},
	{CodeYAMLSpecialFloat, SeverityError, "", "YAML number with no JSON form",
		"`.inf`, `-.inf`, `.nan` and numbers beyond the f64 range cannot be written in JSON; the message names the field.",
		"models:\n  m: {algorithm: wait-and-widen, cache_affinity_input_tokens_scale: .nan}"},
	{CodeYAMLTag, SeverityError, "", "unsupported YAML tag",
		"Only the core tags `!!str`, `!!int`, `!!float`, `!!bool`, `!!null`, `!!map`, `!!seq` are accepted, and a tagged value must match its tag. `!!binary`, `!!timestamp` and custom tags have no JSON form.",
		"models:\n  m: !!binary cHVsc2Fy"},
	{CodeYAMLMerge, SeverityError, "", "conflicting YAML merge key",
		"A `<<` merge brings in a key that the mapping also sets, or that two merged mappings both set. YAML lets the explicit key win while Stargate's JSON rules let the last occurrence win, so lcctl refuses the ambiguity. Non-conflicting merges are expanded.",
		"base: &b {algorithm: pulsar}\nmodels:\n  m: {<<: *b, algorithm: random}"},
	{CodeYAMLAlias, SeverityError, "", "YAML alias bomb or recursive alias",
		"Aliases are expanded; an alias that contains itself, or aliases that add more than max(10000, 10 × the document's node count) values, are refused. `lcctl validate` exits 2.",
		"a: &a [*a]"},
	{CodeYAMLKey, SeverityError, "", "YAML mapping key is not a scalar",
		"JSON object keys are strings; a sequence or mapping used as a key has no JSON form.",
		"models:\n  ? [a, b]\n  : pulsar"},

	{CodeNoSLO, SeverityWarning, "W1", "no-SLO pulsar-wait-and-widen changes behaviour at the last-cluster upgrade",
		"An active pulsar-wait-and-widen entry (or `default` naming it) lacks one or both queue-SLO bounds (M1). Today an eligible Pulsar rank-1 cluster wins at once with no capacity or queue check (M2); the last-cluster release removes that shortcut, so rank 1 then goes through queue admission with `max_queued` (default 0) and the affinity wait `cache_affinity_wait_ms` (default 0), and requests overflow as soon as rank 1 has no free engine slot (M3). Run `lcctl migrate` to bound the entry or switch it to pulsar.",
		example(lb.TopLevelModels, `{"m": "pulsar-wait-and-widen"}`)},
	{CodeHalfSLO, SeverityWarning, "W2", "only one queue-SLO bound",
		"Exactly one of `max_queue_time_floor_ms`/`max_queue_time_ceil_ms` is set; the queue SLO needs both, so it has no effect.",
		modelEntry("wait-and-widen", lb.FieldMaxQueueTimeFloorMs, `100`)},
	{CodeSLOOrder, SeverityWarning, "W3", "queue-SLO floor above ceil",
		"The bounds are not reordered: the interpolated queue limit shrinks as the request ages.",
		modelEntry("wait-and-widen", lb.FieldMaxQueueTimeFloorMs, `500`, lb.FieldMaxQueueTimeCeilMs, `100`)},
	{CodeDiscarded, SeverityWarning, "W4", "nested `request_algorithms` is discarded",
		"A `request_algorithms` inside a `request_algorithms` entry is parsed and dropped; its entries are never key-checked or used.",
		example(raKey, fmt.Sprintf(`{"random": {"algorithm": "random", %q: {"pulsar": "pulsar"}}}`, raKey))},
	{CodeUnreachable, SeverityWarning, "W5", "`request_algorithms` entry no request can reach",
		"A model-level key equal to the model's own algorithm, or a top-level key equal to `default` when every `models` entry uses that algorithm or has its own entry for it: `x-routing-method` resolves to the set's own config first (E3.1).",
		modelEntry("pulsar", lb.FieldRequestAlgorithms, `{"pulsar": "pulsar"}`)},
	{CodeIgnoredVirtualNodes, SeverityWarning, "W6", "`cache_affinity_virtual_nodes` ignored by pulsar-wait-and-widen",
		"pulsar-wait-and-widen accepts the field but ranks clusters with Pulsar, not a ring.",
		modelEntry("pulsar-wait-and-widen", lb.FieldCacheAffinityVirtualNodes, `100`, lb.FieldMaxQueueTimeFloorMs, `1`, lb.FieldMaxQueueTimeCeilMs, `2`)},
	{CodeNoAffinityGroup, SeverityWarning, "W7", "affinity setting without an affinity group",
		"wait-and-widen with `cache_affinity_wait_ms`, `cache_affinity_input_tokens_scale`, `cache_affinity_virtual_nodes` or `last_cluster_affinity: true` but `cache_affinity_backend_selection_count` unset or 0: there is no affinity group, so the setting has no effect.",
		modelEntry("wait-and-widen", lb.FieldLastClusterAffinity, `true`)},
	{CodeNormalised, SeverityWarning, "W8", "zero value normalised",
		"`n: 0` and `cache_affinity_virtual_nodes: 0` run as 1; `cache_affinity_backend_selection_count: 0` means unset.",
		modelEntry("wait-and-widen", lb.FieldN, `0`)},
	{CodeZeroBucket, SeverityWarning, "W9", "`ttft_bucket_size_ms: 0`",
		"Every distinct TTFT estimate is its own bucket.",
		modelEntry("wait-and-widen", lb.FieldTTFTBucketSizeMs, `0`)},
	{CodeUnlockFactor, SeverityWarning, "W10", "`next_bucket_unlock_factor` outside 0–1",
		"Not range-checked by Stargate: below 0 unlocks at once, above 1 waits longer than the TTFT gap.",
		modelEntry("wait-and-widen", lb.FieldNextBucketUnlockFactor, `2`)},
	{CodeInputWorkLimit, SeverityWarning, "W11", "`max_input_work_seconds` ≤ 0",
		"Input-work admission then rejects nearly every request.",
		modelEntry("power-of-n", lb.FieldMaxInputWorkSeconds, `-1`)},
	{CodeLongWait, SeverityWarning, "W12", "`cache_affinity_wait_ms` ≥ 60000",
		"Routing waits end at 60 s (x-max-wait-ms cap, H7): requests get 503 before the affinity wait ends.",
		modelEntry("pulsar-wait-and-widen", lb.FieldCacheAffinityWaitMs, `60000`, lb.FieldMaxQueued, `4`)},
	{CodeDeprecatedName, SeverityWarning, "W14", "deprecated algorithm spelling",
		"`power-of-two`, `powerOf2`, `powerOfN`, `powerof2`, `powerofn`, `groq-multiregion`, `pulsar-multiregion` are accepted aliases; use the canonical name Stargate prints.",
		example(lb.TopLevelDefault, `"power-of-two"`)},
	{CodeDuplicateKey, SeverityWarning, "W15", "duplicate key: an occurrence is ignored",
		"A repeated key in `models`/`request_algorithms` (D2, also alias-equal keys), inside an entry (D3), or alias-equal keys of an entry's `request_algorithms` (D4): Stargate keeps one occurrence and silently ignores the other.",
		example(lb.TopLevelModels, `{"m": "pulsar", "m": "random"}`)},
	{CodeModelKeyBlank, SeverityWarning, "W16", "unreachable `models` key",
		"The key is empty or has leading/trailing whitespace; `x-model` is trimmed and must be non-blank (H2), so no request matches it.",
		example(lb.TopLevelModels, `{" m": "pulsar"}`)},
	{CodeManyVirtualNodes, SeverityWarning, "W19", "`cache_affinity_virtual_nodes` above 1024",
		"Ring memory grows with the count; routing expressions cap it at 1024.",
		modelEntry("wait-and-widen", lb.FieldCacheAffinityVirtualNodes, `5000`)},
	{CodePositional, SeverityWarning, "W20", "positional top-level array",
		"Stargate accepts `[default, request_algorithms, models]` (serde's sequence form of a struct), but it is unreadable; write the object form.",
		`["pulsar", {}, {}]`},
	{CodeDefaultObjectForm, SeverityWarning, "", "`default` written as a one-key object",
		"Stargate reads `{\"NAME\": null}` as `\"NAME\"` (serde_json's unit-variant form; lb-config.md open point 13). Write the string.",
		example(lb.TopLevelDefault, `{"pulsar": null}`)},
	{CodeEnumObjectForm, SeverityWarning, "", "`comparator` or `rendezvous_weight` written as a one-key object",
		"Stargate reads `{\"NAME\": null}` (and `{\"NAME\": {}}`) as `\"NAME\"`: both fields are serde enums read from the entry's JSON value, which accepts the externally tagged unit-variant form. Write the string.",
		modelEntry("power-of-n", lb.FieldComparator, `{"queue-time": null}`)},

	{CodeNoSLOBounded, SeverityInfo, "W1", "no-SLO pulsar-wait-and-widen already bounded",
		"Like LC2001, but the entry already sets both `max_queued` and `cache_affinity_wait_ms` (M4): after the upgrade rank 1 keeps requests while it has room for that many queued requests and waits that long before widening. `lcctl migrate` leaves it unchanged.",
		modelEntry("pulsar-wait-and-widen", lb.FieldMaxQueued, `4`, lb.FieldCacheAffinityWaitMs, `300`)},
	{CodeLastCluster, SeverityInfo, "W13", "`last_cluster_affinity: true`: gateway first",
		"Stargate uses the last-cluster hint only when the gateway sends `x-stargate-last-cluster-id`. Rollout order: upgrade Stargate with the flag off, enable the gateway (`STARGATE_LAST_CLUSTER_ENABLED=true`), then turn the flag on. Requests without `x-cache-affinity-key` are unaffected (consider `require_cache_affinity_key`).",
		modelEntry("wait-and-widen", lb.FieldCacheAffinityBackendSelectionCount, `1`, lb.FieldLastClusterAffinity, `true`)},
	{CodeYAMLInput, SeverityInfo, "W17", "YAML input",
		"Stargate reads JSON only (`--lb-config-path`); deploy the JSON form of this file.",
		"default: pulsar"},
	{CodeImplicitWeight, SeverityInfo, "W18", "Pulsar weight left at `max-input-tps`",
		"A pulsar or pulsar-wait-and-widen entry without an explicit `rendezvous_weight` ranks clusters by `max_input_tps`, which Pylons must report; string entries and `default` always use it.",
		example(lb.TopLevelModels, `{"m": "pulsar"}`)},
}

var registryIndex = func() map[Code]CodeInfo {
	m := make(map[Code]CodeInfo, len(Registry))
	for _, c := range Registry {
		m[c.Code] = c
	}
	return m
}()

// LookupCode returns the registry entry for c.
func LookupCode(c Code) (CodeInfo, bool) {
	info, ok := registryIndex[c]
	return info, ok
}

// codeInfo is LookupCode for codes known to exist; an unregistered code
// (a programming error caught by TestRegistry) is reported as an error.
func codeInfo(c Code) CodeInfo {
	if info, ok := registryIndex[c]; ok {
		return info
	}
	return CodeInfo{Code: c, Severity: SeverityError}
}

// example renders a diagnostic example: a top-level object whose members
// alternate keys (lb.TopLevelDefault, the registry's request_algorithms,
// lb.TopLevelModels; a key may repeat) and JSON value texts, on one line,
// so the examples follow the names' one home.
func example(members ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(members); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", members[i], members[i+1])
	}
	b.WriteByte('}')
	return b.String()
}

// modelEntry renders the example {models: {"m": {"algorithm": alg,
// NAME: VALUE, …}}} on one line (no algorithm key when alg is ""); fields
// alternates lb registry rows and JSON value texts, so the examples follow
// the registry's names.
func modelEntry(alg string, fields ...any) string {
	var b strings.Builder
	b.WriteString(`{"m": {`)
	sep := ""
	if alg != "" {
		fmt.Fprintf(&b, `"algorithm": %q`, alg)
		sep = ", "
	}
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, `%s%q: %s`, sep, fields[i].(*lb.Field).Name, fields[i+1])
		sep = ", "
	}
	b.WriteString("}}")
	return example(lb.TopLevelModels, b.String())
}
