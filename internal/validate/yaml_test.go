package validate_test

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// TestYAML covers lb-config.md §7.4: YAML is mapped onto the JSON data
// model with the YAML 1.2 core schema and then checked like JSON.
func TestYAML(t *testing.T) {
	cases := []ruleCase{
		{name: "yes is a string", file: "c.yaml", src: "models:\n  m:\n    algorithm: pulsar\n    seed: yes\n", valid: true},
		{name: "yes is not a boolean", file: "c.yaml", src: "models:\n  m:\n    algorithm: wait-and-widen\n    ignore_queue_time: yes\n", want: []want{{validate.CodeBoolField, 4, 24, `models["m"].ignore_queue_time`, `invalid type: string "yes", expected a boolean`}}},
		{name: "True is a boolean", file: "c.yaml", src: "models:\n  m:\n    algorithm: wait-and-widen\n    ignore_queue_time: True\n", valid: true},
		{name: "2.0 is a float", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, max_queued: 2.0}\n", want: []want{{validate.CodeUnsignedField, 2, 46, `models["m"].max_queued`, "invalid type: floating point `2.0`, expected u64"}}},
		{name: "-0 is the integer 0", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, max_queued: -0}\n", valid: true},
		{name: "hex and octal integers", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, max_queued: 0x10, n: 0o7}\n", valid: true},
		{name: "underscores are not integers", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, max_queued: 1_000}\n", want: []want{{validate.CodeUnsignedField, 2, 46, `models["m"].max_queued`, `invalid type: string "1_000"`}}},
		{name: "quoted number is a string", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, max_queued: \"5\"}\n", want: []want{{validate.CodeUnsignedField, 2, 46, `models["m"].max_queued`, `invalid type: string "5", expected u64`}}},
		{name: "integer beyond i64 is the nearest float", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, n: -9223372036854775809}\n", want: []want{{validate.CodeUnsignedField, 2, 37, `models["m"].n`, "floating point `-9.223372036854776e18`, expected usize"}}},
		{name: "hex beyond u64 is the nearest float", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, n: 0x10000000000000001}\n", want: []want{{validate.CodeUnsignedField, 2, 37, `models["m"].n`, "floating point `1.8446744073709552e19`, expected usize"}}},
		{name: "long integer as a number field", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, cache_affinity_input_tokens_scale: 99999999999999999999999}\n", want: []want{{validate.CodeScaleRange, 2, 69, `models["m"].cache_affinity_input_tokens_scale`, "got 100000000000000000000000"}}},
		{name: "~ is null", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, max_queued: ~}\n", valid: true},
		{name: "empty value is null", file: "c.yaml", src: "models:\n  m:\n", want: []want{{validate.CodeEntryType, 2, 5, `models["m"]`, "must be an algorithm name or detailed config object"}}},
		{name: ".nan names the field", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, cache_affinity_input_tokens_scale: .nan}\n", want: []want{{validate.CodeYAMLSpecialFloat, 2, 69, `models["m"].cache_affinity_input_tokens_scale`, "cache_affinity_input_tokens_scale"}}},
		{name: "!!binary", file: "c.yaml", src: "models:\n  m: !!binary cHVsc2Fy\n", want: []want{{validate.CodeYAMLTag, 2, 6, `models["m"]`, "!!binary"}}},
		{name: "!!str on a number", file: "c.yaml", src: "models:\n  m: {algorithm: pulsar, seed: !!str 42}\n", valid: true},
		{name: "!!int mismatch", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, n: !!int two}\n", want: []want{{validate.CodeYAMLTag, 2, 37, `models["m"].n`, "does not match its tag !!int"}}},
		{name: "!!float makes an integer a float", file: "c.yaml", src: "models:\n  m: {algorithm: wait-and-widen, n: !!float 2}\n", want: []want{{validate.CodeUnsignedField, 2, 37, `models["m"].n`, "floating point `2.0`"}}},
		{name: "duplicates follow D2, not yaml.v3's refusal", file: "c.yaml", src: "models:\n  m: pulsar\n  m: random\n", valid: true, want: []want{{validate.CodeDuplicateKey, 2, 3, `models["m"]`, "D2"}}},
		{name: "anchors and aliases expand", file: "c.yaml", src: "models:\n  a: &e {algorithm: pulsar, seed: s, rendezvous_weight: max-input-tps}\n  b: *e\n", valid: true},
		{name: "merge keys expand", file: "c.yaml", src: "models:\n  a: &e {algorithm: pulsar, rendezvous_weight: max-input-tps}\n  b: {<<: *e, seed: b}\n", valid: true},
		{name: "merge conflicts are refused", file: "c.yaml", src: "models:\n  a: &e {algorithm: pulsar}\n  b: {<<: *e, algorithm: random}\n", want: []want{{validate.CodeYAMLMerge, 3, 7, `models["b"].algorithm`, "algorithm"}}},
		{name: "a key repeated inside one merged mapping is a repeated key (D3)", file: "c.yaml", src: "models:\n  a: &e {algorithm: pulsar, algorithm: random}\n  b: {<<: *e}\n", valid: true, want: []want{{validate.CodeDuplicateKey, 2, 10, `models["a"].algorithm`, "D3"}, {validate.CodeDuplicateKey, 2, 10, `models["b"].algorithm`, "D3"}}},
		{name: "two merged mappings setting one key conflict", file: "c.yaml", src: "models:\n  a: &e {algorithm: pulsar}\n  c: &f {algorithm: random}\n  b: {<<: [*e, *f]}\n", want: []want{{validate.CodeYAMLMerge, 4, 16, `models["b"].algorithm`, "more than one mapping"}}},
		{name: "collection key", file: "c.yaml", src: "models:\n  ? [a, b]\n  : pulsar\n", want: []want{{validate.CodeYAMLKey, 2, 5, "models", "JSON object keys are strings"}}},
		{name: "integer key is its text", file: "c.yaml", src: "models:\n  1: pulsar\n", valid: true},
		{name: "two documents", file: "c.yaml", src: "default: random\n---\ndefault: pulsar\n", want: []want{{validate.CodeYAMLMultiDoc, 2, 1, "", "more than one document"}}},
		{name: "recursive alias", file: "c.yaml", src: "models: &m\n  m: *m\n", want: []want{{validate.CodeYAMLAlias, 2, 6, "", "recursive alias"}}},
		{name: "syntax error has a line", file: "c.yaml", src: "models:\n  m: [pulsar\n", want: []want{{validate.CodeSyntax, 2, 0, "", "did not find expected ',' or ']'"}}},
		{name: "tab-indented JSON is read as JSON", file: "c.json", src: "{\n\t\"models\": {\n\t\t\"m\": \"random\"\n\t}\n}\n", valid: true},
		{name: "sniffed JSON", file: "-", src: "  {\"default\": \"random\"}", valid: true},
		{name: "sniffed YAML", file: "-", src: "default: random", valid: true, want: []want{{validate.CodeYAMLInput, 1, 1, "", "YAML"}}},
	}
	runRuleCases(t, cases)
}

func TestYAMLAliasBomb(t *testing.T) {
	src := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		src += n + ": &" + n + " ["
		for i := range 10 {
			if i > 0 {
				src += ", "
			}
			src += "*" + prev
		}
		src += "]\n"
		prev = n
	}
	r := validate.File("bomb.yaml", []byte(src))
	if !r.Unreadable() || !hasCode(r, validate.CodeYAMLAlias) {
		t.Fatalf("alias bomb not refused:\n%s", dump(r.Diagnostics))
	}
	// A document that uses aliases moderately stays fine.
	ok := "x: &x {algorithm: pulsar, rendezvous_weight: max-input-tps}\n"
	r = validate.File("ok.yaml", []byte("models:\n  a: &x {algorithm: pulsar, rendezvous_weight: max-input-tps}\n  b: *x\n  c: *x\n"+ok[:0]))
	if !r.Valid() {
		t.Fatalf("aliases refused:\n%s", dump(r.Diagnostics))
	}
}

// TestAlgorithmConfigFromNode decodes entries embedded in a larger YAML
// file, as the engine does for conformance cases.
func TestAlgorithmConfigFromNode(t *testing.T) {
	var doc struct {
		Good yaml.Node `yaml:"good"`
		Bad  yaml.Node `yaml:"bad"`
		Name yaml.Node `yaml:"name"`
	}
	src := `
good:
  algorithm: pulsar-multiregion
  seed: s1
  n: 0
  cache_affinity_virtual_nodes: 0
  max_queue_time_floor_ms: 100
  max_queue_time_ceil_ms: 900
  request_algorithms:
    pulsar: {algorithm: pulsar, seed: inner}
bad:
  algorithm: pulsar
  last_cluster_affinity: true
name: wait-and-widen
`
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	ac, diags := validate.AlgorithmConfigFromNode(&doc.Good, "case.yaml")
	if ac == nil {
		t.Fatalf("rejected:\n%s", dump(diags))
	}
	if ac.Algorithm != lb.PulsarWaitAndWiden || ac.Spelling != "pulsar-multiregion" || ac.Seed != "s1" || ac.N != 1 || ac.CacheAffinityVirtualNodes != 1 || !ac.HasQueueSLO() {
		t.Errorf("config = %+v", ac)
	}
	if inner := ac.RequestAlgorithms[lb.Pulsar]; inner == nil || inner.Seed != "inner" {
		t.Errorf("model-level entry = %+v", inner)
	}
	ac, diags = validate.AlgorithmConfigFromNode(&doc.Bad, "case.yaml")
	errs := 0
	for _, d := range diags {
		if d.Severity == validate.SeverityError {
			errs++
			if d.Code != validate.CodeUnsupportedField || d.Line != 13 || d.Col != 3 || d.Path != "config.last_cluster_affinity" {
				t.Errorf("bad entry: unexpected error %s", d)
			}
		}
	}
	if ac != nil || errs != 1 {
		t.Errorf("bad entry: config %+v, diagnostics:\n%s", ac, dump(diags))
	}
	ac, _ = validate.AlgorithmConfigFromNode(&doc.Name, "case.yaml")
	if ac == nil || ac.Algorithm != lb.WaitAndWiden || ac.TTFTBucketSizeMs != 20 || ac.NextBucketUnlockFactor != 0.25 || ac.CacheAffinityVirtualNodes != 150 || ac.N != 2 {
		t.Errorf("string entry defaults = %+v", ac)
	}
}

// TestYAMLOffsets checks byte offsets on long and non-ASCII lines (columns
// count characters): every plain scalar's offset points at its text.
func TestYAMLOffsets(t *testing.T) {
	var b strings.Builder
	b.WriteString("# é\nmodels: {")
	for i := range 300 {
		fmt.Fprintf(&b, "\"mödel-%d\": {algorithm: pulsar, seed: sé%d}, ", i, i)
	}
	b.WriteString("x: &a random, y: *a}\nrequest_algorithms:\n  pulsar: {algorithm: pulsar, seed: ünï}\n")
	data := []byte(b.String())
	r := validate.File("c.yaml", data)
	if r.Doc.Root == nil {
		t.Fatalf("not decoded:\n%s", dump(r.Diagnostics))
	}
	checkYAMLOffsets(t, r.Doc.Root, data)
	last := r.Doc.Root.Get("models").Get("mödel-299").Get("seed")
	if got := string(data[last.Start.Offset : int(last.Start.Offset)+len("sé299")]); got != "sé299" {
		t.Errorf("offset of the last seed points at %q", got)
	}
}

// TestYAMLOffsetsLineBreaks: yaml.v3 counts lines at LF, CR LF, a lone CR,
// NEL, LS and PS; byte offsets must follow the same lines.
func TestYAMLOffsetsLineBreaks(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n", "\r", "\u0085", "\u2028", "\u2029"} {
		data := []byte("models:" + nl + "  m: {algorithm: pulsar, seed: \"ä\"}" + nl + "  n: random" + nl)
		r := validate.File("c.yaml", data)
		if r.Doc.Root == nil {
			t.Fatalf("%q: not decoded:\n%s", nl, dump(r.Diagnostics))
		}
		checkYAMLOffsets(t, r.Doc.Root, data)
		n := r.Doc.Root.Get("models").Get("n")
		if n.Start.Line != 3 || string(data[n.Start.Offset:n.Start.Offset+6]) != "random" {
			t.Errorf("%q: models.n at %d:%d offset %d", nl, n.Start.Line, n.Start.Col, n.Start.Offset)
		}
	}
}
