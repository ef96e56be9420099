// Package manifest finds lb-configs inside the files operators keep them
// in: Kubernetes manifests (a ConfigMap, a `kind: List`, a multi-document
// stream as `kubectl get -o yaml` and `helm template` print it) and Helm
// values files (the lb-config under a key). It maps positions in the
// embedded text back to the manifest file, and rewrites an embedded
// lb-config in place, leaving every other byte of the manifest as it was.
//
// Stargate reads its lb-config from the file given to --lb-config-path;
// in a cluster that file is a ConfigMap data entry mounted as a volume, so
// the text Stargate reads is the decoded string value of that entry
// (lb-config.md §2). This package extracts exactly that string.
//
// It knows nothing about the lb-config rules: the caller validates or
// migrates Embedded.Text and maps the positions it gets back with Map.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// MaxDocuments bounds the documents of one stream (a `helm template` of a
// large chart prints a few hundred).
const MaxDocuments = 10000

// Options say where to look.
type Options struct {
	// ValuesKey is the key path of the lb-config in a Helm values file,
	// keys separated by dots ("stargate.lbConfig"); "" reads the file as
	// Kubernetes manifests. The value under it is a string (JSON or YAML
	// text, usually a block scalar) or a mapping (the lb-config written
	// as YAML in the values file).
	ValuesKey string
	// DataKey, when set, keeps only the ConfigMap data entries with this
	// key (lcctl's --data-key), for a ConfigMap holding several
	// lb-configs; Extract fails with ErrNoConfig, listing the keys found,
	// when no entry has it. Ignored with ValuesKey.
	DataKey string
}

// Embedded is one lb-config found in a manifest or values file.
type Embedded struct {
	// Source says where it sits: `ConfigMap ns/name data["lb-config.json"]`
	// or `values key stargate.lbConfig`.
	Source string
	// Key is the data key or the last values key; its extension (.json,
	// .yaml) tells the format of Text when present.
	Key string
	// Text is the lb-config as Stargate reads it: the decoded string
	// value, or for a mapping under a values key its lines with the
	// indentation removed.
	Text []byte
	// Exact is true when every line of Text is a line of the manifest
	// shifted right by Indent columns, so that Map gives the exact
	// position; false maps every position to the start of the value.
	Exact bool
	// Line and Col are the 1-based position of the value in the manifest
	// (the block scalar indicator, the opening quote, the first key).
	Line, Col int
	// Offset is the 0-based byte offset of the value in the manifest.
	Offset int
	// NotWritable says why Replace refuses ("" when it can rewrite).
	NotWritable string

	firstLine  int   // manifest line (1-based) of Text's first line
	indent     int   // spaces removed from each line
	lineStarts []int // manifest byte offset of each Text line's first byte
	textStarts []int // Text byte offset of each of its lines
	start, end int   // manifest byte range Replace rewrites
	crlf       bool  // the region's lines end in \r\n
	mapping    bool  // the value is a YAML mapping, not a string
	index      int   // position among the results of Extract
}

// ErrNoConfig is wrapped by Extract when the input is a manifest (or
// values file) but holds no lb-config.
var ErrNoConfig = errors.New("no lb-config found")

// IsManifest reports whether data's first YAML document is a Kubernetes
// object: a mapping with apiVersion and kind (JSON too, as kubectl -o json
// prints it). Anything that does not parse is not a manifest.
func IsManifest(data []byte) bool {
	// A file without the text "apiVersion" or "kind" has neither key,
	// unless a double-quoted scalar spells it with an escape (every escape
	// and line continuation starts with a backslash; folded plain and
	// single-quoted keys gain a space). Deciding that without parsing keeps
	// a large lb-config from being decoded as a YAML node tree once more
	// just to learn it is not a manifest (124,000 models: 0.8 s of CPU).
	if !bytes.Contains(data, []byte(`\`)) && (!bytes.Contains(data, []byte("apiVersion")) || !bytes.Contains(data, []byte("kind"))) {
		return false
	}
	doc, err := yamldoc.NewStream(data).Next()
	if err != nil {
		return false
	}
	root := body(doc)
	return root != nil && root.Kind == yaml.MappingNode && scalar(get(root, "apiVersion")) != "" && scalar(get(root, "kind")) != ""
}

// Extract finds the lb-configs in data, a Kubernetes manifest stream, or
// a Helm values file when opts.ValuesKey is set. Positions and offsets
// refer to data. The error says what and where: a YAML syntax error (with
// its line), too many documents, or ErrNoConfig with what was seen.
//
// In a manifest, every ConfigMap (top level or in a List's items) is
// searched; a data entry is an lb-config when its key names one
// (lb-config, lb_config or lbconfig in it, any case) or when its text is a
// JSON/YAML mapping with a `default`, `request_algorithms` or `models`
// key — the three top-level fields Stargate accepts (lb-config.md §3).
func Extract(data []byte, opts Options) ([]*Embedded, error) {
	lt := newLines(data)
	dec := yamldoc.NewStream(data)
	var out []*Embedded
	var seen []string
	for n := 0; ; n++ {
		if n >= MaxDocuments {
			return nil, fmt.Errorf("more than %d YAML documents", MaxDocuments)
		}
		doc, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML: %w", err)
		}
		root := body(doc)
		if root == nil {
			continue
		}
		if derr := duplicateKey(root, 0); derr != nil {
			return nil, fmt.Errorf("not valid YAML: %w", derr)
		}
		if opts.ValuesKey != "" {
			if n > 0 {
				return nil, fmt.Errorf("line %d: a values file is one YAML document; this is document %d", doc.Line, n+1)
			}
			e, err := fromValues(root, opts.ValuesKey, data, lt)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
			continue
		}
		found, what := fromObject(root, data, lt, 0)
		out = append(out, found...)
		seen = append(seen, what...)
	}
	if opts.DataKey != "" && opts.ValuesKey == "" && len(out) > 0 {
		var kept []*Embedded
		var keys []string
		for _, e := range out {
			if e.Key == opts.DataKey {
				kept = append(kept, e)
			}
			keys = append(keys, strconvQuote(e.Key))
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%w: no lb-config under data key %q (the lb-configs found are under %s)", ErrNoConfig, opts.DataKey, strings.Join(keys, ", "))
		}
		out = kept
	}
	if len(out) == 0 {
		if opts.ValuesKey != "" {
			return nil, fmt.Errorf("%w: the file is empty", ErrNoConfig)
		}
		if len(seen) == 0 {
			return nil, fmt.Errorf("%w: the stream holds no Kubernetes object", ErrNoConfig)
		}
		return nil, fmt.Errorf("%w in %s; lcctl reads a ConfigMap data entry whose key names an lb-config (lb-config.json) or whose text has a default, request_algorithms or models field", ErrNoConfig, summarise(seen))
	}
	for i, e := range out {
		e.index = i
	}
	return out, nil
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// duplicateKey returns the first mapping key (at any level) that repeats
// an earlier key of its mapping, as a *yamldoc.Error at the repeated
// key's line and column: Kubernetes' YAML decoder (sigs.k8s.io/yaml,
// strict) and yaml.v3's decoding into a map refuse such a document, and
// which copy a lenient reader keeps is not defined.
func duplicateKey(n *yaml.Node, depth int) error {
	if n == nil || depth > 200 {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		first := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				continue
			}
			if f, ok := first[k.Value]; ok {
				return &yamldoc.Error{Kind: yamldoc.Syntax, Line: k.Line, Col: k.Column,
					Msg: fmt.Sprintf("duplicate key %q (first at line %d:%d); Kubernetes refuses a mapping with a repeated key", k.Value, f.Line, f.Column)}
			}
			first[k.Value] = k
		}
	}
	for _, c := range n.Content {
		if err := duplicateKey(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// summarise lists the first objects seen and how many more.
func summarise(seen []string) string {
	show := plural.Shown(len(seen), 4)
	if len(seen) <= show {
		return strings.Join(seen, ", ")
	}
	return strings.Join(seen[:show], ", ") + fmt.Sprintf(" and %d more objects", len(seen)-show)
}

// fromObject searches one Kubernetes object (and a List's items) and
// returns the lb-configs found and a description of each object seen.
func fromObject(obj *yaml.Node, data []byte, lt *lines, depth int) ([]*Embedded, []string) {
	if obj.Kind != yaml.MappingNode || depth > 2 {
		return nil, nil
	}
	kind := scalar(get(obj, "kind"))
	meta := get(obj, "metadata")
	name := scalar(get(meta, "name"))
	if ns := scalar(get(meta, "namespace")); ns != "" && name != "" {
		name = ns + "/" + name
	}
	label := kind
	if name != "" {
		label += " " + name
	}
	switch {
	case kind == "List" || strings.HasSuffix(kind, "List") && get(obj, "items") != nil:
		var out []*Embedded
		var seen []string
		if items := get(obj, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, it := range items.Content {
				f, s := fromObject(it, data, lt, depth+1)
				out = append(out, f...)
				seen = append(seen, s...)
			}
		}
		return out, seen
	case kind != "ConfigMap":
		if kind == "" {
			return nil, nil
		}
		return nil, []string{label}
	}
	dm := get(obj, "data")
	if dm == nil || dm.Kind != yaml.MappingNode {
		return nil, []string{label + " (no data)"}
	}
	var out []*Embedded
	var keys []string
	for i := 0; i+1 < len(dm.Content); i += 2 {
		k, v := dm.Content[i], dm.Content[i+1]
		keys = append(keys, k.Value)
		if v.Kind == yaml.AliasNode && v.Alias != nil && v.Alias.Kind == yaml.ScalarNode {
			// An alias (copy: *cfg) has the anchored entry's text; its
			// positions are that text's, and it cannot be rewritten on
			// its own.
			t := v.Alias
			if !(namesConfig(k.Value) || looksLikeConfig(t.Value)) {
				continue
			}
			e := fromScalar(t, data, lt)
			e.Key = k.Value
			e.Source = fmt.Sprintf("%s data[%q] (alias *%s of line %d)", label, k.Value, v.Value, t.Line)
			e.NotWritable = fmt.Sprintf("data[%q] is a YAML alias (*%s) of the entry anchored &%s at line %d; lcctl does not rewrite aliased entries: write the text in place of the alias, or change the anchored text by hand", k.Value, v.Value, t.Anchor, t.Line)
			out = append(out, e)
			continue
		}
		if v.Kind != yaml.ScalarNode || !(namesConfig(k.Value) || looksLikeConfig(v.Value)) {
			continue
		}
		e := fromScalar(v, data, lt)
		e.Key = k.Value
		e.Source = fmt.Sprintf("%s data[%q]", label, k.Value)
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, []string{fmt.Sprintf("%s (data keys: %s)", label, strings.Join(keys, ", "))}
	}
	return out, []string{label}
}

// namesConfig reports whether a data key names an lb-config.
func namesConfig(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "lb-config") || strings.Contains(k, "lb_config") || strings.Contains(k, "lbconfig")
}

// looksLikeConfig reports whether text is a mapping with one of
// Stargate's three top-level fields.
func looksLikeConfig(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" || len(t) > 1<<24 {
		return false
	}
	doc, err := yamldoc.NewStream([]byte(t)).Next()
	if err != nil {
		return false
	}
	root := body(doc)
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	for _, k := range lb.TopLevelFields {
		if get(root, k) != nil {
			return true
		}
	}
	return false
}

// fromValues finds the value under a dotted key path of a values file.
func fromValues(root *yaml.Node, path string, data []byte, lt *lines) (*Embedded, error) {
	keys := strings.Split(path, ".")
	n := root
	for i, k := range keys {
		if k == "" {
			return nil, fmt.Errorf("values key %q: empty key in the path", path)
		}
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%w: values key %q: %s (line %d) is not a mapping", ErrNoConfig, path, strings.Join(keys[:i], "."), n.Line)
		}
		next := get(n, k)
		if next == nil {
			where := "the top level"
			if i > 0 {
				where = strings.Join(keys[:i], ".")
			}
			return nil, fmt.Errorf("%w: values key %q: %s has no key %q (keys: %s)", ErrNoConfig, path, where, k, strings.Join(keysOf(n), ", "))
		}
		n = next
	}
	var e *Embedded
	switch n.Kind {
	case yaml.ScalarNode:
		e = fromScalar(n, data, lt)
	case yaml.MappingNode:
		e = fromMapping(n, data, lt)
	default:
		return nil, fmt.Errorf("values key %q (line %d): want an lb-config (a mapping, or JSON/YAML text), got a %s", path, n.Line, kindName(n))
	}
	e.Key = keys[len(keys)-1]
	e.Source = "values key " + path
	return e, nil
}

func keysOf(n *yaml.Node) []string {
	var ks []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		ks = append(ks, n.Content[i].Value)
	}
	if len(ks) > 8 {
		ks = append(ks[:8], "...")
	}
	return ks
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "mapping"
}

// fromScalar reads a string value. A literal block scalar (|) whose lines
// are the value's lines, indented, maps exactly and can be rewritten;
// any other style maps every position to the value's start.
func fromScalar(v *yaml.Node, data []byte, lt *lines) *Embedded {
	e := &Embedded{Text: []byte(v.Value), Line: v.Line, Col: v.Column, Offset: lt.offset(v.Line, v.Column)}
	if v.Style&yaml.LiteralStyle == 0 {
		e.NotWritable = "the lb-config is not a literal block scalar (key: |); lcctl rewrites only those: write the entry as `key: |` followed by the indented text, or apply the change by hand"
		if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			// JSON has no block scalars: the advice is a YAML copy.
			e.NotWritable = "the manifest is JSON, where an lb-config is a quoted string that lcctl does not rewrite: migrate a YAML copy (kubectl get cm NAME -o yaml > cm.yaml; lcctl migrate --write cm.yaml) and apply that, or apply the change to the JSON by hand"
		}
		return e
	}
	header := lt.text(v.Line)
	col := v.Column - 1
	if v.Anchor != "" {
		// yaml.v3 puts an anchored node at its &anchor: the indicator
		// follows it.
		a := col + 1 + len(v.Anchor)
		for a < len(header) && (header[a] == ' ' || header[a] == '\t') {
			a++
		}
		if col >= 0 && col < len(header) && header[col] == '&' && a < len(header) {
			col = a
			e.Col = a + 1
			e.Offset = lt.offset(v.Line, e.Col)
		}
	}
	if col < 0 || col >= len(header) || header[col] != '|' {
		e.NotWritable = "lcctl could not find the block scalar's | indicator"
		return e
	}
	// Only the chomping indicator is accepted; an explicit indentation
	// indicator (|2) makes the content's indentation differ from the
	// first line's.
	ind := strings.TrimRight(strings.SplitN(string(header[col+1:]), "#", 2)[0], " \t\r")
	if ind != "" && ind != "-" && ind != "+" {
		e.NotWritable = "the block scalar has an indentation indicator (" + ind + "); lcctl rewrites only | , |- and |+"
		return e
	}
	first := v.Line + 1
	indent := -1
	for l := first; l <= lt.count(); l++ {
		if t := lt.text(l); !isBlank(t) {
			indent = leading(t)
			break
		}
	}
	if indent <= 0 {
		e.NotWritable = "the block scalar is empty"
		return e
	}
	e.setRegion(data, lt, first, indent, func(l int) bool { return leading(lt.text(l)) < indent })
	got := strings.TrimRight(string(e.Text), "\n")
	if got != strings.TrimRight(v.Value, "\n") {
		// The lines are not the value (tabs, an unusual layout): keep
		// the decoded value and the value's position.
		*e = Embedded{Text: []byte(v.Value), Line: v.Line, Col: v.Column, Offset: lt.offset(v.Line, v.Column),
			NotWritable: "lcctl could not match the block scalar's lines to its value"}
		return e
	}
	e.Text = []byte(v.Value)
	if v.Anchor != "" {
		e.NotWritable = fmt.Sprintf("the entry carries the YAML anchor &%s, which aliases (*%s) may copy; lcctl does not rewrite anchored entries: remove the anchor and aliases, or apply the change by hand", v.Anchor, v.Anchor)
		return e
	}
	if ind == "+" {
		e.NotWritable = "the block scalar keeps its trailing blank lines (|+); lcctl rewrites only | and |-"
	}
	return e
}

// fromMapping reads an lb-config written as a YAML block mapping under a
// values key: its lines without their indentation, checked to decode to
// the same value.
func fromMapping(m *yaml.Node, data []byte, lt *lines) *Embedded {
	e := &Embedded{Line: m.Line, Col: m.Column, Offset: lt.offset(m.Line, m.Column), mapping: true}
	fallback := func(why string) *Embedded {
		out, err := yaml.Marshal(m)
		if err != nil {
			out = nil
		}
		*e = Embedded{Line: m.Line, Col: m.Column, Offset: lt.offset(m.Line, m.Column), mapping: true, Text: out,
			NotWritable: why}
		return e
	}
	if hasAlias(m, 0) {
		return fallback("the lb-config uses YAML anchors or aliases; lcctl rewrites only plain block mappings")
	}
	if m.Style&yaml.FlowStyle != 0 || m.Column < 2 || leading(lt.text(m.Line)) != m.Column-1 {
		return fallback("the lb-config is not a block mapping on lines of its own; lcctl rewrites only those")
	}
	indent := m.Column - 1
	e.setRegion(data, lt, m.Line, indent, func(l int) bool {
		t := lt.text(l)
		return leading(t) < indent
	})
	var a, b any
	if !sameValue(m, e.Text, &a, &b) || !reflect.DeepEqual(a, b) {
		return fallback("lcctl could not match the mapping's lines to its value")
	}
	return e
}

// hasAlias reports whether the subtree holds an anchor, alias or merge
// key (which the line-based reading cannot follow).
func hasAlias(n *yaml.Node, depth int) bool {
	if n == nil || depth > 200 {
		return true
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" || n.Tag == "!!merge" {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c, depth+1) {
			return true
		}
	}
	return false
}

// setRegion takes the lines from first on, while blank or not ending the
// region (stop), drops the trailing blank lines, and sets Text (the lines
// without indent columns), the position tables and the byte range.
func (e *Embedded) setRegion(data []byte, lt *lines, first, indent int, stop func(int) bool) {
	last := first - 1
	for l := first; l <= lt.count(); l++ {
		t := lt.text(l)
		if isBlank(t) {
			continue
		}
		if stop(l) {
			break
		}
		last = l
	}
	var text bytes.Buffer
	e.lineStarts, e.textStarts = nil, nil
	for l := first; l <= last; l++ {
		t := lt.text(l)
		if bytes.HasSuffix(t, []byte("\r")) {
			t = t[:len(t)-1]
			e.crlf = true
		}
		e.textStarts = append(e.textStarts, text.Len())
		s := lt.start(l)
		if len(t) >= indent {
			e.lineStarts = append(e.lineStarts, s+indent)
			text.Write(t[indent:])
		} else {
			e.lineStarts = append(e.lineStarts, s+len(t))
		}
		text.WriteByte('\n')
	}
	e.Text = text.Bytes()
	e.Exact = last >= first
	e.firstLine, e.indent = first, indent
	e.start = lt.start(first)
	e.end = lt.start(last + 1)
	if last+1 > lt.count() {
		e.end = len(data)
	}
}

// Map turns a position in Text (1-based line and column, 0-based byte
// offset; line 0 = unknown) into one in the manifest. Inexact embeddings
// and unknown positions map to the value's own position. A column of 0
// (unknown) stays 0 on an exact line.
func (e *Embedded) Map(line, col, offset int) (int, int, int) {
	if !e.Exact || line < 1 || line > len(e.lineStarts) {
		return e.Line, e.Col, e.Offset
	}
	mline := e.firstLine + line - 1
	mcol := col
	if col > 0 {
		mcol = col + e.indent
	}
	moff := -1
	if offset >= 0 {
		i := len(e.textStarts) - 1
		for i > 0 && e.textStarts[i] > offset {
			i--
		}
		moff = e.lineStarts[i] + offset - e.textStarts[i]
	}
	return mline, mcol, moff
}

// Replace returns data with this lb-config's text replaced by text,
// indented as the original, and every byte outside the embedded lines
// unchanged. data must be the input Extract read e from. It refuses
// (error) an embedding with NotWritable set, and checks its own result:
// the new manifest must hold the same lb-configs, in the same places,
// with only this one changed to text.
func (e *Embedded) Replace(data []byte, text []byte, opts Options) ([]byte, error) {
	if e.NotWritable != "" {
		return nil, errors.New(e.NotWritable)
	}
	if !e.Exact {
		return nil, errors.New("the lb-config's lines are not known")
	}
	before, err := Extract(data, opts)
	if err != nil || e.index >= len(before) || before[e.index].start != e.start {
		return nil, errors.New("the manifest is not the one the lb-config was read from")
	}
	nl := "\n"
	if e.crlf {
		nl = "\r\n"
	}
	pad := strings.Repeat(" ", e.indent)
	var b bytes.Buffer
	body := strings.TrimRight(string(text), "\n")
	if strings.TrimSpace(body) == "" {
		return nil, errors.New("the new lb-config is empty")
	}
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(pad)
			b.WriteString(l)
		}
		b.WriteString(nl)
	}
	if e.end == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
		// The block was the last line of a file without a final newline.
		b.Truncate(b.Len() - len(nl))
	}
	out := make([]byte, 0, len(data)+b.Len())
	out = append(out, data[:e.start]...)
	out = append(out, b.Bytes()...)
	out = append(out, data[e.end:]...)
	after, err := Extract(out, opts)
	if err != nil {
		return nil, fmt.Errorf("the rewritten manifest would not parse (%v)", err)
	}
	if len(after) != len(before) {
		return nil, errors.New("the rewritten manifest would hold a different number of lb-configs")
	}
	for i := range after {
		want := before[i].Text
		if i == e.index {
			want = text
		}
		if after[i].Source != before[i].Source || !sameText(after[i].Text, want) {
			return nil, fmt.Errorf("the rewritten manifest would not hold exactly the intended text at %s", before[i].Source)
		}
	}
	return out, nil
}

// sameText compares lb-config texts ignoring trailing newlines and the
// spaces of blank lines (which a block scalar does not keep).
func sameText(a, b []byte) bool {
	norm := func(s []byte) string {
		ls := strings.Split(strings.TrimRight(string(s), "\n"), "\n")
		for i, l := range ls {
			if strings.TrimSpace(l) == "" {
				ls[i] = ""
			}
		}
		return strings.Join(ls, "\n")
	}
	return norm(a) == norm(b)
}

// body returns the content of a document node.
func body(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil
		}
		return doc.Content[0]
	}
	return doc
}

// get returns the value of key in mapping m, nil when absent.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i].Kind == yaml.ScalarNode {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalar returns a scalar node's value, "" for anything else.
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func isBlank(b []byte) bool { return len(bytes.TrimRight(b, " \r")) == 0 }

func leading(b []byte) int {
	n := 0
	for n < len(b) && b[n] == ' ' {
		n++
	}
	return n
}

// sameValue decodes m into a and text into b, false on any failure.
func sameValue(m *yaml.Node, text []byte, a, b *any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return yamldoc.Decode(m, a) == nil && yamldoc.Unmarshal(text, b) == nil
}
