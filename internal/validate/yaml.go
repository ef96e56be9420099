package validate

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/yamldoc"
)

// YAML input is mapped onto the JSON data model (lb-config.md §7.4): one
// document; mappings → objects keyed by the key's text, duplicates kept for
// D1–D4; sequences → arrays; untagged plain scalars typed by the YAML 1.2
// core schema; quoted scalars are strings; anchors and aliases expanded
// within a budget; merge keys expanded when they do not conflict.

// Limits that keep hostile YAML from exhausting memory.
const (
	// aliasExpansionFloor is the number of values aliases may add to any
	// document; larger documents get aliasExpansionFactor × their own node
	// count.
	aliasExpansionFloor  = 10_000
	aliasExpansionFactor = 10
)

// yamlIssue is an lcctl-only YAML error (codes LC11xx) found while
// converting, reported with the node's position.
type yamlIssue struct {
	code Code
	node *yaml.Node
	path string
	msg  string
}

type yamlConverter struct {
	lines  *lineIndex
	issues []yamlIssue
	budget int // values aliases may still add
	limit  int // the initial budget
	active map[*yaml.Node]bool
	// jsonMinusZero reads the plain scalar -0 as serde_json does (the
	// float -0.0) instead of as the YAML integer 0; see Node.
	jsonMinusZero bool
}

var (
	coreInt   = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOct   = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex   = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	coreFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	coreInf   = regexp.MustCompile(`^[-+]?(\.inf|\.Inf|\.INF)$`)
	coreNaN   = regexp.MustCompile(`^(\.nan|\.NaN|\.NAN)$`)
)

// decodeYAML parses data as a single YAML document and converts it. A
// syntax error is returned as *syntaxError (with the line yaml.v3 reports);
// conversion problems come back as diagnostics for file alongside a usable
// tree.
func decodeYAML(data []byte, file string) (doc *yaml.Node, root *Value, issues []Diagnostic, err error) {
	defer func() {
		// The conversion of an untrusted tree must never take the
		// process down either.
		if r := recover(); r != nil {
			doc, root, issues = nil, nil, nil
			err = &syntaxError{msg: fmt.Sprintf("YAML parser failed: %v", r), off: -1}
		}
	}()
	first, perr := yamldoc.Parse(data)
	if perr != nil {
		return nil, nil, nil, yamlSyntaxError(perr, data)
	}
	c := &yamlConverter{lines: newLineIndex(data), active: map[*yaml.Node]bool{}}
	n := countNodes(first, 0)
	c.budget = max(aliasExpansionFloor, aliasExpansionFactor*n)
	c.limit = c.budget
	if len(first.Content) == 0 {
		return nil, nil, nil, &syntaxError{msg: "EOF while parsing a value (the YAML document is empty)", off: len(data)}
	}
	body := first.Content[0]
	if body.Kind == yaml.ScalarNode && body.Value == "" && body.Style == 0 && body.Tag == "!!null" {
		// Only comments, directives or a bare "---".
		return nil, nil, nil, &syntaxError{msg: "EOF while parsing a value (the YAML document is empty)", off: len(data)}
	}
	root, err = c.convert(body, "", 1)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, is := range c.issues {
		issues = append(issues, c.issueDiag(is, file))
	}
	return first, root, issues, nil
}

// convertYAMLNode maps one YAML node (a whole lb-config, or one entry) onto
// the JSON data model with the rules of lb-config.md §7.4, as decodeYAML
// does for a file. src is the text the node was parsed from, used for byte
// offsets; it may be nil (offsets are then -1). It returns the value and
// the lcctl-only YAML diagnostics; a nil value means the node could not be
// converted at all (recursive alias or alias budget).
func convertYAMLNode(node *yaml.Node, src []byte, file, pathPrefix string) (*Value, []Diagnostic) {
	return convertYAMLNodeAs(node, src, file, pathPrefix, false)
}

// convertYAMLNodeAs is convertYAMLNode; jsonMinusZero makes the plain
// scalar -0 the float -0.0 (serde_json's reading) instead of the integer 0.
func convertYAMLNodeAs(node *yaml.Node, src []byte, file, pathPrefix string, jsonMinusZero bool) (*Value, []Diagnostic) {
	c := &yamlConverter{lines: newLineIndex(src), active: map[*yaml.Node]bool{}, jsonMinusZero: jsonMinusZero}
	if node.Kind == yaml.DocumentNode && len(node.Content) > 0 {
		node = node.Content[0]
	}
	c.budget = max(aliasExpansionFloor, aliasExpansionFactor*countNodes(node, 0))
	c.limit = c.budget
	v, err := c.convert(node, pathPrefix, 1)
	var diags []Diagnostic
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			code := se.code
			if code == "" {
				code = CodeSyntax
			}
			line, col := node.Line, node.Column
			if se.node != nil {
				line, col = se.node.Line, se.node.Column
			}
			diags = append(diags, newDiag(code, file, MakePos(-1, line, col), pathPrefix, "", se.msg))
		}
		return nil, diags
	}
	for _, is := range c.issues {
		diags = append(diags, c.issueDiag(is, file))
	}
	return v, diags
}

func (c *yamlConverter) issueDiag(is yamlIssue, file string) Diagnostic {
	pos := MakePos(c.offset(is.node), is.node.Line, is.node.Column)
	return newDiag(is.code, file, pos, is.path, lastField(is.path), is.msg)
}

func countNodes(n *yaml.Node, depth int) int {
	if n == nil || depth > 10_000 {
		return 0
	}
	total := 1
	for _, ch := range n.Content {
		total += countNodes(ch, depth+1)
	}
	return total
}

// yamlSyntaxError turns a yaml.v3 error ("yaml: line 3: did not find
// expected key") into a syntaxError on its line (YAMLErrorLine). The
// column comes from syntaxColumn when it can be trusted, else it is
// unknown.
func yamlSyntaxError(err error, data []byte) error {
	e := yamldoc.SyntaxError(err, data)
	li := newLineIndex(data)
	switch e.Kind {
	case yamldoc.Empty:
		return &syntaxError{msg: "EOF while parsing a value (the YAML document is empty)", off: len(data)}
	case yamldoc.MultiDoc:
		return &syntaxError{msg: "the YAML stream holds more than one document; an lb-config is one document", off: li.offset(e.Line, e.Col), code: CodeYAMLMultiDoc}
	case yamldoc.Panic:
		return &syntaxError{msg: e.Msg, off: -1}
	}
	msg := "YAML syntax error: " + e.Msg
	switch {
	case e.Line > 0 && e.Col > 0:
		return &syntaxError{msg: msg, off: li.offset(e.Line, e.Col), line: e.Line, col: e.Col}
	case e.Line > 0:
		return &syntaxError{msg: msg, off: li.lineStart(e.Line), line: e.Line}
	}
	return &syntaxError{msg: msg, off: -1}
}

func (c *yamlConverter) offset(n *yaml.Node) int {
	if c.lines == nil {
		return -1
	}
	return c.lines.offset(n.Line, n.Column)
}

func (c *yamlConverter) pos(n *yaml.Node) Pos {
	return MakePos(c.offset(n), n.Line, n.Column)
}

func (c *yamlConverter) issue(code Code, n *yaml.Node, path, format string, args ...any) {
	c.issues = append(c.issues, yamlIssue{code: code, node: n, path: path, msg: fmt.Sprintf(format, args...)})
}

// convert maps n (reached at path, nesting depth) to a Value.
func (c *yamlConverter) convert(n *yaml.Node, path string, depth int) (*Value, error) {
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &syntaxError{msg: "YAML alias without an anchor", off: c.offset(n), node: n}
		}
		if c.active[n.Alias] {
			return nil, &syntaxError{msg: fmt.Sprintf("YAML alias *%s refers to a node that contains it (recursive alias)", n.Value), off: c.offset(n), code: CodeYAMLAlias, node: n}
		}
		c.budget -= countNodes(n.Alias, 0)
		if c.budget < 0 {
			return nil, &syntaxError{msg: fmt.Sprintf("YAML aliases expand to too many values (alias bomb?): more than %d values added by *%s and earlier aliases", c.limit, n.Value), off: c.offset(n), code: CodeYAMLAlias, node: n}
		}
		c.active[n.Alias] = true
		v, err := c.convert(n.Alias, path, depth)
		delete(c.active, n.Alias)
		if err != nil {
			return nil, err
		}
		// Report the alias position rather than the anchor's.
		cp := *v
		cp.Start = c.pos(n)
		return &cp, nil
	case yaml.MappingNode:
		if depth >= maxDepth {
			return nil, &syntaxError{msg: "recursion limit exceeded", off: c.offset(n), node: n}
		}
		if err := c.checkCollectionTag(n, "!!map", path); err != nil {
			return nil, err
		}
		return c.mapping(n, path, depth)
	case yaml.SequenceNode:
		if depth >= maxDepth {
			return nil, &syntaxError{msg: "recursion limit exceeded", off: c.offset(n), node: n}
		}
		if err := c.checkCollectionTag(n, "!!seq", path); err != nil {
			return nil, err
		}
		v := &Value{Kind: KindArray, Start: c.pos(n), End: -1, Node: n}
		items := make([]*Value, 0, len(n.Content))
		for i, ch := range n.Content {
			item, err := c.convert(ch, path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
		}
		v.items = &items
		return v, nil
	case yaml.ScalarNode:
		return c.scalar(n, path), nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &Value{Kind: KindNull, Text: "null", Start: c.pos(n), End: -1, Node: n}, nil
		}
		return c.convert(n.Content[0], path, depth)
	}
	return nil, &syntaxError{msg: "unsupported YAML node", off: c.offset(n), node: n}
}

func (c *yamlConverter) checkCollectionTag(n *yaml.Node, want, path string) error {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != want {
		c.issue(CodeYAMLTag, n, path, "YAML tag %s is not supported here (a %s has no JSON form other than %s)", n.Tag, kindWord(n), want)
	}
	return nil
}

func kindWord(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "scalar"
}

// keyText returns the text of a mapping key: a scalar's value, also through
// an alias. ok is false for a collection key.
func keyText(k *yaml.Node) (string, *yaml.Node, bool) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", k, false
	}
	return k.Value, k, true
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && k.Value == "<<" && k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0
}

func (c *yamlConverter) mapping(n *yaml.Node, path string, depth int) (*Value, error) {
	v := &Value{Kind: KindObject, Start: c.pos(n), End: -1, Node: n}
	v.Members = make([]Member, 0, len(n.Content)/2)
	// The explicit keys matter only to a mapping with a merge key: the
	// set is not built for the others (a map per mapping, and one of
	// 124,000 keys for a large models mapping).
	var explicit map[string]bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			explicit = map[string]bool{}
			break
		}
	}
	for i := 0; explicit != nil && i+1 < len(n.Content); i += 2 {
		if !isMergeKey(n.Content[i]) {
			if t, _, ok := keyText(n.Content[i]); ok {
				explicit[t] = true
			}
		}
	}
	// merged maps a merged key to the << that brought it: a key repeated
	// inside one merged mapping stays a repeated key (D2–D4 apply as if it
	// were written here); only keys from different places conflict.
	merged := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if isMergeKey(kn) {
			ms, err := c.merge(vn, path, depth)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if by, ok := merged[m.Key]; explicit[m.Key] || (ok && by != i) {
					c.issue(CodeYAMLMerge, kn, joinPath(path, m.Key), "YAML merge key << brings in %q, which is also set elsewhere in this mapping; lcctl refuses the ambiguity (YAML lets the explicit key win, Stargate's JSON rules let the last occurrence win)", m.Key)
					continue
				}
				merged[m.Key] = i
				v.Members = append(v.Members, m)
			}
			continue
		}
		key, kscalar, ok := keyText(kn)
		if !ok {
			c.issue(CodeYAMLKey, kn, path, "YAML mapping key is a %s; JSON object keys are strings", kindWord(kscalar))
			continue
		}
		if kscalar.Style&yaml.TaggedStyle != 0 && !supportedScalarTag(kscalar.Tag) {
			c.issue(CodeYAMLTag, kn, joinPath(path, key), "YAML tag %s on key %q is not supported", kscalar.Tag, key)
		}
		child, err := c.convert(vn, joinPath(path, key), depth+1)
		if err != nil {
			return nil, err
		}
		v.Members = append(v.Members, Member{Key: key, KeyStart: c.pos(kn), KeyEnd: -1, Value: child, KeyNode: kn})
	}
	return v, nil
}

// merge expands the value of a << key: a mapping, an alias of one, or a
// sequence of them (earlier mappings win over later ones, as YAML's merge
// key type says; a key repeated across them is a conflict).
func (c *yamlConverter) merge(vn *yaml.Node, path string, depth int) ([]Member, error) {
	target := vn
	for target.Kind == yaml.AliasNode && target.Alias != nil {
		target = target.Alias
	}
	var sources []*yaml.Node
	switch target.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{vn}
	case yaml.SequenceNode:
		for _, s := range target.Content {
			t := s
			for t.Kind == yaml.AliasNode && t.Alias != nil {
				t = t.Alias
			}
			if t.Kind != yaml.MappingNode {
				c.issue(CodeYAMLMerge, s, path, "YAML merge key << needs mappings; this sequence holds a %s", kindWord(t))
				return nil, nil
			}
			sources = append(sources, s)
		}
	default:
		c.issue(CodeYAMLMerge, vn, path, "YAML merge key << needs a mapping or a sequence of mappings, not a %s", kindWord(target))
		return nil, nil
	}
	var out []Member
	seen := map[string]int{} // key → index of the source that brought it
	for i, s := range sources {
		mv, err := c.convert(s, path, depth)
		if err != nil {
			return nil, err
		}
		for _, m := range mv.Members {
			if by, ok := seen[m.Key]; ok && by != i {
				c.issue(CodeYAMLMerge, s, joinPath(path, m.Key), "YAML merge key << brings in %q from more than one mapping; lcctl refuses the ambiguity", m.Key)
				continue
			}
			seen[m.Key] = i
			out = append(out, m)
		}
	}
	return out, nil
}

func supportedScalarTag(tag string) bool {
	switch tag {
	case "!!str", "!!int", "!!float", "!!bool", "!!null":
		return true
	}
	return false
}

// scalar types one scalar node (lb-config.md §7.4).
func (c *yamlConverter) scalar(n *yaml.Node, path string) *Value {
	v := &Value{Start: c.pos(n), End: -1, Node: n, Text: n.Value}
	tag := ""
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.Tag
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		tag = "!!str"
	case n.Tag == "!!merge":
		tag = "!!str" // a << used as a value is just text
	}
	s := n.Value
	switch tag {
	case "!!str":
		v.Kind = KindString
		return v
	case "":
		// Untagged plain scalar: YAML 1.2 core schema.
		switch {
		case s == "" || s == "~" || s == "null" || s == "Null" || s == "NULL":
			v.Kind, v.Text = KindNull, "null"
		case s == "true" || s == "True" || s == "TRUE":
			v.Kind, v.Text = KindBool, "true"
		case s == "false" || s == "False" || s == "FALSE":
			v.Kind, v.Text = KindBool, "false"
		case s == "-0" && c.jsonMinusZero:
			v.Kind = KindNumber
			v.setFloat(math.Copysign(0, -1))
		case coreInt.MatchString(s) || coreOct.MatchString(s) || coreHex.MatchString(s):
			c.setInt(v, s, path)
		case coreFloat.MatchString(s):
			c.setFloat(v, s, path)
		case coreInf.MatchString(s) || coreNaN.MatchString(s):
			v.Kind = KindInvalid
			c.issue(CodeYAMLSpecialFloat, n, path, "YAML special float %s in %s has no JSON form; Stargate reads JSON numbers only", s, fieldOrPath(path))
		default:
			v.Kind = KindString
		}
		return v
	case "!!null":
		if s == "" || s == "~" || s == "null" || s == "Null" || s == "NULL" {
			v.Kind, v.Text = KindNull, "null"
			return v
		}
	case "!!bool":
		switch s {
		case "true", "True", "TRUE":
			v.Kind, v.Text = KindBool, "true"
			return v
		case "false", "False", "FALSE":
			v.Kind, v.Text = KindBool, "false"
			return v
		}
	case "!!int":
		if coreInt.MatchString(s) || coreOct.MatchString(s) || coreHex.MatchString(s) {
			c.setInt(v, s, path)
			return v
		}
	case "!!float":
		switch {
		case coreFloat.MatchString(s):
			c.setFloat(v, s, path)
			v.Number = NumFloat
			return v
		case coreInf.MatchString(s) || coreNaN.MatchString(s):
			v.Kind = KindInvalid
			c.issue(CodeYAMLSpecialFloat, n, path, "YAML special float %s in %s has no JSON form; Stargate reads JSON numbers only", s, fieldOrPath(path))
			return v
		}
	default:
		v.Kind = KindInvalid
		c.issue(CodeYAMLTag, n, path, "YAML tag %s in %s is not supported; an lb-config holds only JSON types", n.Tag, fieldOrPath(path))
		return v
	}
	v.Kind = KindInvalid
	c.issue(CodeYAMLTag, n, path, "YAML value %q in %s does not match its tag %s", s, fieldOrPath(path), tag)
	return v
}

// setInt reads a core-schema integer. Values outside u64/i64 become floats,
// like serde_json's reading of long integer literals (§7.2); "-0" is the
// integer 0 in YAML.
func (c *yamlConverter) setInt(v *Value, s, path string) {
	v.Kind = KindNumber
	neg := false
	digits := s
	base := 10
	switch {
	case strings.HasPrefix(s, "0o"):
		digits, base = s[2:], 8
	case strings.HasPrefix(s, "0x"):
		digits, base = s[2:], 16
	case strings.HasPrefix(s, "-"):
		neg, digits = true, s[1:]
	case strings.HasPrefix(s, "+"):
		digits = s[1:]
	}
	mag, err := strconv.ParseUint(digits, base, 64)
	if err == nil {
		switch {
		case !neg || mag == 0:
			v.setUint(mag)
			return
		case mag <= 1<<63:
			v.setInt(-int64(mag-1) - 1)
			return
		}
	}
	// Too large for 64 bits: a float, as serde_json reads such literals.
	f := bigToFloat(digits, base)
	if neg {
		f = -f
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		v.Kind = KindInvalid
		c.issue(CodeYAMLSpecialFloat, v.Node, path, "YAML number %s in %s is out of range for JSON", s, fieldOrPath(path))
		return
	}
	v.setFloat(f)
}

// bigToFloat is the f64 nearest to the integer digits (base 8, 10 or 16),
// +Inf beyond the f64 range; the same reading strconv.ParseFloat gives the
// long JSON literals (an earlier digit-by-digit sum drifted by several
// ULPs on 19-digit values).
func bigToFloat(digits string, base int) float64 {
	i, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return math.NaN()
	}
	f, _ := new(big.Float).SetInt(i).Float64()
	return f
}

func (c *yamlConverter) setFloat(v *Value, s, path string) {
	v.Kind = KindNumber
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && math.IsInf(f, 0) {
		v.Kind = KindInvalid
		c.issue(CodeYAMLSpecialFloat, v.Node, path, "YAML number %s in %s is out of range (number out of range)", s, fieldOrPath(path))
		return
	}
	v.setFloat(f)
}

func fieldOrPath(path string) string {
	if path == "" {
		return "the document"
	}
	return "`" + lastField(path) + "` (" + path + ")"
}

// lineIndex maps 1-based line/column (columns in characters) to byte
// offsets in constant time: ASCII lines by arithmetic, other lines through
// a table of their character offsets built on first use. (Walking the line
// for every node made long lines — minified JSON read as YAML — quadratic:
// 32 s for a 400 KB one-line file.) Lines break where yaml.v3 breaks them:
// LF, CR LF, a lone CR, NEL, LS and PS.
type lineIndex struct {
	data   []byte
	starts []int // offset of each line's first byte
	ends   []int // offset of each line's break, or len(data)
	ascii  []bool
	runes  map[int][]int // line → byte offset of each character
}

func newLineIndex(data []byte) *lineIndex {
	if data == nil {
		return nil
	}
	li := &lineIndex{data: data, starts: []int{0}, ascii: []bool{true}}
	brk := func(at, next int) {
		li.ends = append(li.ends, at)
		li.starts = append(li.starts, next)
		li.ascii = append(li.ascii, true)
	}
	for i := 0; i < len(data); i++ {
		switch b := data[i]; {
		case b == '\n':
			brk(i, i+1)
		case b == '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				brk(i, i+2)
				i++
			} else {
				brk(i, i+1)
			}
		case b == 0xC2 && i+1 < len(data) && data[i+1] == 0x85: // NEL
			brk(i, i+2)
			i++
		case b == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9): // LS, PS
			brk(i, i+3)
			i += 2
		case b >= utf8.RuneSelf:
			li.ascii[len(li.ascii)-1] = false
		}
	}
	li.ends = append(li.ends, len(data))
	return li
}

func (li *lineIndex) lineStart(line int) int {
	if li == nil || line < 1 {
		return -1
	}
	if line > len(li.starts) {
		return len(li.data)
	}
	return li.starts[line-1]
}

// offset is the byte offset of column col of line, clamped to the line's
// end; -1 without source text.
func (li *lineIndex) offset(line, col int) int {
	off := li.lineStart(line)
	if off < 0 || line > len(li.starts) || col <= 1 {
		return off
	}
	end := li.ends[line-1]
	if li.ascii[line-1] {
		return min(off+col-1, end)
	}
	offs, ok := li.runes[line]
	if !ok {
		for i := off; i < end; {
			offs = append(offs, i)
			_, size := decodeRuneAt(li.data, i)
			i += size
		}
		if li.runes == nil {
			li.runes = map[int][]int{}
		}
		li.runes[line] = offs
	}
	if col-1 < len(offs) {
		return offs[col-1]
	}
	return end
}
