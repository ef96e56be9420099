package validate

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
)

// File decodes and validates one lb-config file. name decides the format
// (DetectFormat; "-" or "" is standard input) and is used in diagnostics.
// It never panics; the Result's Config is nil when any error was found.
func File(name string, data []byte) *Result {
	return FileAs(name, data, FormatUnknown)
}

// FileAs is File with the format forced (FormatUnknown = detect).
func FileAs(name string, data []byte, format Format) *Result {
	doc, diags := Decode(name, data, format)
	return Check(doc, diags)
}

// Check validates a decoded document. pre are diagnostics already found
// while decoding (they are kept, and any error among them makes the
// result invalid). Rules: lb-config.md §3–§9.
func Check(doc *Document, pre []Diagnostic) *Result {
	return check(doc, pre, false, false)
}

// CheckErrors is Check for a caller that reads only the errors, Entries
// and Config (migrate, which reports no validation warnings): the operator
// warnings and infos of lb-config.md §9 (W rules) are neither formatted
// nor kept, so Diagnostics holds the errors and the pre diagnostics only.
// Entries, Config, Counts.Errors and Valid are exactly Check's. On
// 124,000 entries the per-entry warnings were a third of migrate's memory.
func CheckErrors(doc *Document, pre []Diagnostic) *Result {
	return check(doc, pre, true, false)
}

// CheckEntries is CheckErrors without the typed configs, for a caller
// that reads only the errors and the entries (migrate plans from the
// value tree and the entries' flags): Result.Config and every
// Entry.Config are nil; everything else is exactly CheckErrors'. On
// 124,000 entries the configs were 31 MB of migrate's peak.
func CheckEntries(doc *Document, pre []Diagnostic) *Result {
	return check(doc, pre, true, true)
}

func check(doc *Document, pre []Diagnostic, errorsOnly, noConfig bool) *Result {
	r := &Result{File: doc.File, Format: doc.Format, Doc: doc}
	c := &checker{file: doc.File, errorsOnly: errorsOnly, noConfig: noConfig}
	c.diags = append(c.diags, pre...)
	if doc.Format == FormatYAML && doc.Root != nil {
		c.add(CodeYAMLInput, doc.Root.Start, "", "", nil,
			"the file is YAML; Stargate reads only JSON (--lb-config-path), so lcctl checked it as the JSON it maps to",
			"deploy the JSON form of this config")
	}
	if doc.Root != nil {
		c.check(doc.Root)
	}
	r.finish(c)
	return r
}

func (r *Result) finish(c *checker) {
	sortDiagnostics(c.diags)
	r.Diagnostics = c.diags
	r.Entries = c.entries
	r.Counts = CountDiagnostics(r.Diagnostics)
	if r.Counts.Errors == 0 && r.Doc != nil && r.Doc.Root != nil && !c.noConfig {
		r.Config = c.config()
	}
}

// config assembles the typed config from the winning entries.
func (c *checker) config() *lb.Config {
	cfg := &lb.Config{Default: lb.PowerOfN, RequestAlgorithms: map[lb.Algorithm]*lb.AlgorithmConfig{}, Models: make(map[string]*lb.AlgorithmConfig, len(c.models))}
	if d := c.defaultEntry; d != nil && d.Algorithm != 0 {
		cfg.Default, cfg.DefaultSpelling = d.Algorithm, d.Spelling
	}
	for _, e := range c.topRA {
		if e.Config != nil {
			cfg.RequestAlgorithms[e.KeyAlgorithm] = e.Config
		}
	}
	for _, e := range c.models {
		if e.Config != nil {
			cfg.Models[e.Model] = e.Config
		}
	}
	return cfg
}

// Node validates a whole lb-config given as a YAML node, e.g. the
// `lb_config:` value of a conformance case (formats.md). src is the text
// the node was parsed from (for byte offsets; may be nil) and file the name
// used in diagnostics. The node is read with the YAML rules of lb-config.md
// §7.4; no W17 info is added, since the caller chose YAML.
//
// One exception: when the node is written as JSON text (a flow mapping or
// sequence, as every lb_config of ../shared/conformance is), it stands for
// the JSON file Stargate reads, so a plain -0 in it is serde_json's float
// -0.0 (rejected for unsigned fields, lb-config.md §7.2 and §14 example 50)
// rather than the YAML integer 0. Every other JSON number reads the same
// under the YAML 1.2 core schema.
//
// src that is not valid UTF-8 is ignored (byte offsets unknown; lines and
// columns kept): yaml.v3 also reads UTF-16 with a byte-order mark,
// transcoding it before parsing, so src's bytes are then not the text the
// node's positions count in. (Fuzz crasher
// testdata/fuzz/FuzzNode/11ba52126104cb5a.)
func Node(node *yaml.Node, src []byte, file string) *Result {
	if !utf8.Valid(src) {
		src = nil
	}
	body := node
	for body.Kind == yaml.DocumentNode && len(body.Content) > 0 {
		body = body.Content[0]
	}
	root, diags := convertYAMLNodeAs(node, src, file, "", body.Style&yaml.FlowStyle != 0)
	doc := &Document{File: file, Format: FormatYAML, Source: src, Root: root, YAML: node}
	r := &Result{File: file, Format: FormatYAML, Doc: doc}
	c := &checker{file: file}
	c.diags = append(c.diags, diags...)
	if root != nil {
		c.check(root)
	}
	r.finish(c)
	return r
}

// AlgorithmConfigFromNode decodes one algorithm entry — a detailed object
// or a name string, as under `models` — given as a YAML node (for example
// the `config:` block of a conformance case). The entry is treated as an
// active models entry: V8–V18 apply, V20/V21 too, and its own
// request_algorithms are model-level (V19). Diagnostics use file and the
// path "config". The config is nil when any error was found; warnings and
// infos are returned with a non-nil config.
func AlgorithmConfigFromNode(node *yaml.Node, file string) (*lb.AlgorithmConfig, []Diagnostic) {
	v, diags := convertYAMLNode(node, nil, file, "config")
	if v == nil {
		return nil, diags
	}
	return algorithmConfig(v, file, diags)
}

// AlgorithmConfigFromBytes is AlgorithmConfigFromNode for a standalone
// entry in JSON or YAML text (format detected as for File).
func AlgorithmConfigFromBytes(name string, data []byte) (*lb.AlgorithmConfig, []Diagnostic) {
	doc, diags := Decode(name, data, FormatUnknown)
	if doc.Root == nil {
		return nil, diags
	}
	return algorithmConfig(doc.Root, doc.File, diags)
}

func algorithmConfig(v *Value, file string, pre []Diagnostic) (*lb.AlgorithmConfig, []Diagnostic) {
	c := &checker{file: file}
	c.diags = append(c.diags, pre...)
	e := &Entry{Role: RoleModel, Path: "config", Model: "", Value: v, Active: true}
	c.entry(e, v.Start)
	c.models = append(c.models, e)
	c.unreachableModelLevel()
	sortDiagnostics(c.diags)
	if CountDiagnostics(c.diags).Errors > 0 {
		return nil, c.diags
	}
	return e.Config, c.diags
}

// ReadFailure is the Result for an input that could not be read at all
// (missing, unreadable, a directory, over the size limit): one LC1000
// diagnostic with Stargate's "failed to read lb config file" wording (V1).
func ReadFailure(name string, err error) *Result {
	file := displayName(name)
	msg := err.Error()
	if !strings.HasPrefix(msg, "failed to read lb config file") {
		msg = "failed to read lb config file: " + strings.TrimPrefix(msg, "failed to read ")
	}
	doc := &Document{File: file}
	r := &Result{File: file, Doc: doc}
	r.Diagnostics = []Diagnostic{newDiag(CodeRead, file, Pos{Offset: -1}, "", "", msg)}
	r.Counts = CountDiagnostics(r.Diagnostics)
	return r
}

// NoSLOEntries runs the rules over a decoded document and returns its
// no-SLO pulsar-wait-and-widen entries (M1 within the M16 scope; see
// Result.NoSLO). It is the detection `lcctl migrate` and `lcctl preflight`
// share: it works on files that fail validation for other reasons, and
// each Entry carries the Value (JSON spans, YAML node) to rewrite.
func NoSLOEntries(doc *Document) []*Entry {
	return Check(doc, nil).NoSLO()
}
