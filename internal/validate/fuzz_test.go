package validate_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// FuzzFile feeds arbitrary bytes to the decoder and the rules, as JSON and
// as YAML. Seeds: every upstream example in ../shared/examples/lb-config,
// the repository's examples and a few edge cases. Crashers found are kept
// under testdata/fuzz/FuzzFile and run by plain `go test`.
func FuzzFile(f *testing.F) {
	var seeds []string
	for _, data := range testutil.LBConfigFiles(f) {
		seeds = append(seeds, string(data))
	}
	seeds = append(seeds,
		`[]`, `["pulsar-wait-and-widen",{},{"m":"random"}]`, `{"default":{"pulsar":null}}`,
		`{"models":{"m":{"algorithm":"pulsar","algorithm":"random"}}}`,
		`{"models":{"m":{"algorithm":"wait-and-widen","max_queued":-0,"n":1e3}}}`,
		"a: &a [*a]\n", "m: &m {<<: *m}\n", "x: !!binary AAAA\n", "{\"a\":\"\\ud800\"}",
	)
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, asYAML bool) {
		format := validate.FormatJSON
		if asYAML {
			format = validate.FormatYAML
		}
		r := validate.FileAs("fuzz", data, format)
		checkResult(t, r, data)
		e := validate.CheckErrors(validate.Decode("fuzz", data, format))
		checkErrorsParity(t, r, e)
		checkEntriesParity(t, e, validate.CheckEntries(validate.Decode("fuzz", data, format)))
	})
}

// checkEntriesParity asserts that CheckEntries (n) gives what CheckErrors
// (e) gives without any typed config.
func checkEntriesParity(t *testing.T, e, n *validate.Result) {
	t.Helper()
	if got, want := dump(n.Diagnostics), dump(e.Diagnostics); got != want {
		t.Fatalf("CheckEntries diagnostics:\n%s\nCheckErrors diagnostics:\n%s", got, want)
	}
	if n.Config != nil || n.Counts != e.Counts || n.Valid() != e.Valid() || len(n.Entries) != len(e.Entries) {
		t.Fatalf("CheckEntries: config %v, counts %+v, valid %v, %d entries; CheckErrors: counts %+v, valid %v, %d entries",
			n.Config, n.Counts, n.Valid(), len(n.Entries), e.Counts, e.Valid(), len(e.Entries))
	}
	for i, x := range n.Entries {
		y := e.Entries[i]
		if x.Config != nil {
			t.Fatalf("CheckEntries entry %d has a config", i)
		}
		if x.Role != y.Role || x.Path != y.Path || x.Model != y.Model || x.Key != y.Key || x.KeyAlgorithm != y.KeyAlgorithm ||
			x.Active != y.Active || x.Shadowed != y.Shadowed || x.Algorithm != y.Algorithm || x.Spelling != y.Spelling ||
			x.StringForm != y.StringForm || x.Parsed != y.Parsed || x.NoSLO != y.NoSLO || x.Bounded != y.Bounded {
			t.Fatalf("entry %d differs: CheckEntries %+v, CheckErrors %+v", i, x, y)
		}
	}
}

// checkErrorsParity asserts that CheckErrors (e) gives what Check (r)
// gives except the warnings and infos: the same errors, entries and
// config.
func checkErrorsParity(t *testing.T, r, e *validate.Result) {
	t.Helper()
	if got, want := dump(e.Errors()), dump(r.Errors()); got != want {
		t.Fatalf("CheckErrors errors:\n%s\nCheck errors:\n%s", got, want)
	}
	for _, d := range e.Diagnostics {
		if d.Severity != validate.SeverityError && !slices.ContainsFunc(r.Diagnostics, func(x validate.Diagnostic) bool { return x == d }) {
			t.Fatalf("CheckErrors kept a %s Check does not have: %s", d.Severity, d)
		}
	}
	if e.Counts.Errors != r.Counts.Errors || e.Valid() != r.Valid() || !reflect.DeepEqual(e.Config, r.Config) {
		t.Fatalf("CheckErrors: %d errors, valid %v, config %+v; Check: %d, %v, %+v", e.Counts.Errors, e.Valid(), e.Config, r.Counts.Errors, r.Valid(), r.Config)
	}
	if len(e.Entries) != len(r.Entries) {
		t.Fatalf("CheckErrors: %d entries, Check: %d", len(e.Entries), len(r.Entries))
	}
	for i, x := range e.Entries {
		y := r.Entries[i]
		if x.Role != y.Role || x.Path != y.Path || x.Model != y.Model || x.Key != y.Key || x.KeyAlgorithm != y.KeyAlgorithm ||
			x.Active != y.Active || x.Shadowed != y.Shadowed || x.Algorithm != y.Algorithm || x.Spelling != y.Spelling ||
			x.StringForm != y.StringForm || x.Parsed != y.Parsed || x.NoSLO != y.NoSLO || x.Bounded != y.Bounded ||
			!reflect.DeepEqual(x.Config, y.Config) {
			t.Fatalf("entry %d differs: CheckErrors %+v, Check %+v", i, x, y)
		}
	}
}

// checkResult asserts the invariants every Result must keep, whatever the
// input.
func checkResult(t *testing.T, r *validate.Result, data []byte) {
	t.Helper()
	if r.Valid() != (r.Config != nil) {
		t.Fatalf("Valid() = %v but Config = %v", r.Valid(), r.Config)
	}
	if r.Valid() && r.Counts.Errors != 0 {
		t.Fatal("valid result with errors")
	}
	for _, d := range r.Diagnostics {
		info, ok := validate.LookupCode(d.Code)
		if !ok {
			t.Fatalf("unregistered code %s", d.Code)
		}
		if info.Severity != d.Severity || info.Rule != d.Rule {
			t.Fatalf("%s: severity/rule %v/%q differ from the registry %v/%q", d.Code, d.Severity, d.Rule, info.Severity, info.Rule)
		}
		if d.Message == "" {
			t.Fatalf("%s without a message", d.Code)
		}
		if d.Offset > len(data) {
			t.Fatalf("%s at offset %d beyond the input (%d bytes)", d.Code, d.Offset, len(data))
		}
	}
	if r.Doc == nil || r.Doc.Root == nil {
		return
	}
	if r.Doc.Format == validate.FormatJSON {
		if !json.Valid(data) {
			t.Fatalf("decoded as JSON, but encoding/json rejects it: %q", data)
		}
		checkSpans(t, r.Doc.Root, data)
	} else {
		checkYAMLOffsets(t, r.Doc.Root, data)
	}
	if r.Config != nil {
		for id, ac := range r.Config.Models {
			if ac == nil || ac.Algorithm == 0 {
				t.Fatalf("model %q without an algorithm", id)
			}
		}
	}
}

// checkYAMLOffsets verifies that the byte offset of each YAML value and key
// points at its text: a plain scalar's first word starts there, an alias
// value at its `*`.
func checkYAMLOffsets(t *testing.T, v *validate.Value, data []byte) {
	t.Helper()
	at := func(what string, off int, n *yaml.Node) {
		if n == nil || off < 0 {
			return
		}
		if off > len(data) {
			t.Fatalf("%s offset %d beyond the input", what, off)
		}
		rest := string(data[off:])
		switch {
		case n.Kind == yaml.AliasNode:
			if !strings.HasPrefix(rest, "*") {
				t.Fatalf("%s alias at offset %d: %q", what, off, rest[:min(len(rest), 20)])
			}
		case n.Kind == yaml.ScalarNode && n.Style == 0 && n.Value != "" && n.Line > 0:
			// yaml.v3 places a node with an anchor or a tag (also the
			// non-specific "!") at its first property.
			if strings.HasPrefix(rest, "&") || strings.HasPrefix(rest, "!") {
				return
			}
			if n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
				t.Fatalf("%s %q with properties at %d:%d has offset %d, where the text is %q", what, n.Value, n.Line, n.Column, off, rest[:min(len(rest), 20)])
			}
			// A plain scalar may be folded over lines: compare its first word.
			word := n.Value
			if i := strings.IndexAny(word, " \t\n"); i >= 0 {
				word = word[:i]
			}
			if !strings.HasPrefix(rest, word) {
				t.Fatalf("%s %q at %d:%d has offset %d, where the text is %q", what, n.Value, n.Line, n.Column, off, rest[:min(len(rest), 20)])
			}
		}
	}
	node := v.Node
	if node != nil && node.Kind != yaml.AliasNode && (int(v.Start.Line) != node.Line || int(v.Start.Col) != node.Column) {
		// A value reached through an alias starts at the alias.
		node = &yaml.Node{Kind: yaml.AliasNode}
	}
	at("value", int(v.Start.Offset), node)
	for _, m := range v.Members {
		if m.KeyNode != nil && int(m.KeyStart.Line) == m.KeyNode.Line && int(m.KeyStart.Col) == m.KeyNode.Column {
			at("key", int(m.KeyStart.Offset), m.KeyNode)
		}
		checkYAMLOffsets(t, m.Value, data)
	}
	for _, it := range v.Items() {
		checkYAMLOffsets(t, it, data)
	}
}

// checkSpans verifies that each JSON value's byte span holds its literal.
func checkSpans(t *testing.T, v *validate.Value, data []byte) {
	t.Helper()
	if v.Start.Offset < 0 || int(v.End) > len(data) || v.Start.Offset >= v.End {
		t.Fatalf("bad span [%d,%d) for %v", v.Start.Offset, v.End, v.Kind)
	}
	src := string(data[v.Start.Offset:v.End])
	switch v.Kind {
	case validate.KindNumber, validate.KindBool, validate.KindNull:
		if src != v.Text {
			t.Fatalf("span %q != text %q", src, v.Text)
		}
	case validate.KindString:
		var s string
		if err := json.Unmarshal([]byte(src), &s); err != nil || s != v.Text {
			t.Fatalf("string span %q decodes to %q (%v), want %q", src, s, err, v.Text)
		}
	case validate.KindObject:
		if !strings.HasPrefix(src, "{") || !strings.HasSuffix(src, "}") {
			t.Fatalf("object span %q", src)
		}
		for _, m := range v.Members {
			var k string
			if err := json.Unmarshal(data[m.KeyStart.Offset:m.KeyEnd], &k); err != nil || k != m.Key {
				t.Fatalf("key span %q, want %q", data[m.KeyStart.Offset:m.KeyEnd], m.Key)
			}
			checkSpans(t, m.Value, data)
		}
	case validate.KindArray:
		if !strings.HasPrefix(src, "[") || !strings.HasSuffix(src, "]") {
			t.Fatalf("array span %q", src)
		}
		for _, it := range v.Items() {
			checkSpans(t, it, data)
		}
	}
}

// FuzzAlgorithmConfig fuzzes the single-entry decoder the engine uses for
// conformance `config:` blocks (AlgorithmConfigFromNode, through YAML
// text). Seeds: every config block of ../shared/conformance.
func FuzzAlgorithmConfig(f *testing.F) {
	for _, cases := range loadCases(f) {
		for _, c := range cases {
			if c.Config.Kind == 0 {
				continue
			}
			out, err := yaml.Marshal(&c.Config)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(out)
		}
	}
	f.Add([]byte(`{"algorithm": "pulsar-wait-and-widen", "comparator": "ttft", "request_algorithms": {"pulsar": "random"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var node yaml.Node
		if err := yaml.Unmarshal(data, &node); err != nil {
			return
		}
		ac, diags := validate.AlgorithmConfigFromNode(&node, "case.yaml")
		errs := 0
		for _, d := range diags {
			if _, ok := validate.LookupCode(d.Code); !ok {
				t.Fatalf("unregistered code %s", d.Code)
			}
			if d.Severity == validate.SeverityError {
				errs++
			}
		}
		if (ac == nil) != (errs > 0) {
			t.Fatalf("config %v with %d errors", ac, errs)
		}
		if ac != nil && (ac.Algorithm == 0 || (ac.Algorithm == lb.PowerOfN && (ac.SampleCount < 1 || ac.SampleCount > 64))) {
			t.Fatalf("accepted config out of range: %+v", ac)
		}
	})
}

// FuzzNode fuzzes validate.Node, the reader of conformance `lb_config:`
// values (JSON text embedded in YAML, read with serde_json's -0). Seeds:
// the lb_config of every config-only conformance case.
func FuzzNode(f *testing.F) {
	for _, cases := range loadCases(f) {
		for _, c := range cases {
			if c.LBConfig.Kind == 0 {
				continue
			}
			out, err := yaml.Marshal(&c.LBConfig)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(out)
		}
	}
	f.Add([]byte(`{"models": {"m": {"algorithm": "wait-and-widen", "max_queued": -0, "comparator": {"ttft": {}}}}}`))
	f.Add([]byte("models: &m\n  m: *m\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var node yaml.Node
		if err := yaml.Unmarshal(data, &node); err != nil || node.Kind == 0 {
			return
		}
		r := validate.Node(&node, data, "case.yaml")
		checkResult(t, r, data)
	})
}
