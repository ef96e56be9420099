package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/validate"
)

// errLayout marks a YAML layout the rewriter does not edit (a multi-line
// plain scalar, a block scalar, properties where it needs a bare token).
// The caller refuses the file instead of risking a wrong edit.
var errLayout = errors.New("unsupported YAML layout")

func layoutErr(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%w at line %d column %d: %s", errLayout, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// yamlRenderer splices the planner's changes into a YAML file, line by
// line for block mappings and token by token for scalars and flow
// collections, so comments, key order, indentation and quoting outside the
// changed entries stay byte-identical.
type yamlRenderer struct {
	data  []byte
	ln    *lines
	out   splices
	nl    string
	unit  int
	order []*yaml.Node
	index map[*yaml.Node]int // position in order
	after map[*yaml.Node]int // position in order just past the node's subtree
}

func renderYAML(data []byte, doc *yaml.Node, root *node) ([]byte, error) {
	r := &yamlRenderer{data: data, ln: newLines(data), nl: newline(data),
		index: map[*yaml.Node]int{}, after: map[*yaml.Node]int{}}
	r.flatten(doc)
	r.unit = detectYAMLUnit(doc)
	if err := r.walk(root, nil); err != nil {
		return nil, err
	}
	return r.out.apply(data)
}

// flatten lists the nodes in document order (pre-order, keys before their
// values; aliases are not followed).
func (r *yamlRenderer) flatten(n *yaml.Node) {
	r.index[n] = len(r.order)
	r.order = append(r.order, n)
	if n.Kind != yaml.AliasNode {
		for _, c := range n.Content {
			r.flatten(c)
		}
	}
	r.after[n] = len(r.order)
}

// detectYAMLUnit returns the indentation step of the first block mapping
// nested in another (2 when there is none).
func detectYAMLUnit(n *yaml.Node) int {
	var unit int
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if unit > 0 {
			return
		}
		if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
			for i := 0; i+1 < len(n.Content); i += 2 {
				v := n.Content[i+1]
				if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Anchor == "" {
					if d := v.Content[0].Column - n.Content[i].Column; d > 0 {
						unit = d
						return
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	if unit == 0 {
		unit = 2
	}
	return unit
}

func (r *yamlRenderer) pos(n *yaml.Node) int { return r.ln.offset(n.Line, n.Column) }

// slot says where a value sits: the mapping that holds it and the index of
// its member there.
type slot struct {
	parent *yaml.Node // mapping node
	key    *yaml.Node
	value  *yaml.Node
}

func (r *yamlRenderer) walk(n *node, p *slot) error {
	yn := n.orig.Node
	if yn == nil {
		return fmt.Errorf("internal error: YAML value without a node")
	}
	if n.replaced {
		if p == nil {
			return layoutErr(yn, "the document root cannot be replaced")
		}
		return r.replace(n, p)
	}
	switch n.kind {
	case validate.KindObject:
		if yn.Kind != yaml.MappingNode {
			return layoutErr(yn, "object is not a mapping node")
		}
		return r.mapping(n, yn)
	}
	return nil
}

// mapping splices member removals and appended members into one mapping,
// then recurses into the members it keeps.
func (r *yamlRenderer) mapping(n *node, yn *yaml.Node) error {
	o := n.orig
	kept, added, err := n.split("mapping")
	if err != nil {
		return err
	}
	// The members first: an insertion they make at the same offset as this
	// mapping's own appended members (the line after the last member) must
	// come first, and splices at one offset apply in the order added.
	hint := 0
	for _, m := range n.members {
		if m.orig == nil {
			continue
		}
		v, i := memberNode(yn, m.orig.KeyNode, hint)
		hint = i + 1
		if m.val == nil {
			continue // an input leaf no edit reached
		}
		if err := r.walk(m.val, &slot{parent: yn, key: m.orig.KeyNode, value: v}); err != nil {
			return err
		}
	}
	edited := len(added) > 0
	for _, kp := range kept {
		edited = edited || !kp
	}
	if edited {
		for i := range o.Members {
			if o.Members[i].KeyNode == nil || !directChild(yn, o.Members[i].KeyNode) {
				return layoutErr(yn, "mapping with merged (<<) keys")
			}
		}
		var err error
		if yn.Style&yaml.FlowStyle != 0 {
			err = r.flowMapping(n, yn, kept, added)
		} else {
			err = r.blockMapping(n, yn, kept, added)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func directChild(parent, key *yaml.Node) bool {
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i] == key {
			return true
		}
	}
	return false
}

// valueNodeOf returns the value node of key in the mapping parent, nil
// when key is not one of its keys; hint is the member index to try first
// (see memberNode).
func valueNodeOf(parent, key *yaml.Node, hint int) *yaml.Node {
	v, _ := memberNode(parent, key, hint)
	return v
}

// memberNode returns the value node of key in the mapping parent and the
// index of its member (nil and -1 when key is not one of its keys).
// Member hint (key node Content[2*hint]) is tried first: callers visit a
// mapping's members in order, and a scan per member made rendering
// quadratic (124,000 YAML entries took 94 s).
func memberNode(parent, key *yaml.Node, hint int) (*yaml.Node, int) {
	if i := 2 * hint; i >= 0 && i+1 < len(parent.Content) && parent.Content[i] == key {
		return parent.Content[i+1], hint
	}
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i] == key {
			return parent.Content[i+1], i / 2
		}
	}
	return nil, -1
}

// lastContentLine returns the last line of a block-mapping member whose
// key is key and whose value is value: the line before the next node in
// document order (or the end of the file), stepping back over blank lines,
// comment lines and document markers, which stay where they are — unless
// the member ends with a block scalar, whose lines are all content.
func (r *yamlRenderer) lastContentLine(key, value *yaml.Node) int {
	end := r.ln.count()
	if i := r.after[value]; i < len(r.order) {
		end = r.order[i].Line - 1
	}
	if last := r.order[r.after[value]-1]; last.Kind == yaml.ScalarNode && last.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		// A block scalar ends the member: its lines may look like comments
		// or be blank and still be content ("|+" keeps trailing blanks).
		return end
	}
	for l := end; l > key.Line; l-- {
		t := r.ln.text(l)
		s := bytes.TrimLeft(t, " \t")
		switch {
		case isBlank(t), len(s) > 0 && s[0] == '#':
			continue
		case len(t) >= 3 && (bytes.HasPrefix(t, []byte("---")) || bytes.HasPrefix(t, []byte("..."))) && (len(t) == 3 || t[3] == ' ' || t[3] == '\t' || t[3] == '\r'):
			continue
		}
		return l
	}
	return key.Line
}

// blockMapping removes whole member lines and appends new members after
// the last content line of the mapping, at the mapping's key column.
func (r *yamlRenderer) blockMapping(n *node, yn *yaml.Node, kept []bool, added []*member) error {
	o := n.orig
	k := len(o.Members)
	if k == 0 {
		return layoutErr(yn, "empty block mapping")
	}
	col := o.Members[0].KeyNode.Column - 1
	for i := range o.Members {
		if kept[i] {
			continue
		}
		kn := o.Members[i].KeyNode
		start := r.ln.start(kn.Line)
		if !isBlank(r.data[start:r.pos(kn)]) {
			return layoutErr(kn, "key %q does not start its line", kn.Value)
		}
		last := r.lastContentLine(kn, valueNodeOf(yn, kn, i))
		r.out.add(start, r.ln.start(last+1), "")
	}
	if len(added) == 0 {
		return nil
	}
	lk := o.Members[k-1].KeyNode
	last := r.lastContentLine(lk, valueNodeOf(yn, lk, k-1))
	at := r.ln.start(last + 1)
	var b strings.Builder
	for _, m := range added {
		r.blockMember(&b, m.key, m.val, col)
	}
	text := b.String()
	if at == len(r.data) && (len(r.data) == 0 || r.data[len(r.data)-1] != '\n') {
		// The file ends without a newline: keep it that way.
		text = r.nl + strings.TrimSuffix(text, r.nl)
	}
	r.out.add(at, at, text)
	return nil
}

// flowMapping edits a flow mapping the way the JSON renderer edits an
// object: runs of removed members go with their separators, new members
// follow the last one with the separator the mapping already uses.
func (r *yamlRenderer) flowMapping(n *node, yn *yaml.Node, kept []bool, added []*member) error {
	o := n.orig
	open, err := r.bare(yn)
	if err != nil {
		return err
	}
	if r.data[open] != '{' {
		return layoutErr(yn, "flow mapping does not start with {")
	}
	close, err := r.flowEnd(open)
	if err != nil {
		return layoutErr(yn, "%v", err)
	}
	close-- // the '}'
	k := len(o.Members)
	keyStart := make([]int, k)
	valEnd := make([]int, k)
	for i := range o.Members {
		keyStart[i] = r.pos(o.Members[i].KeyNode)
		_, e, err := r.span(valueNodeOf(yn, o.Members[i].KeyNode, i))
		if err != nil {
			return err
		}
		valEnd[i] = e
	}
	allGone := removeRuns(kept,
		func(i int) int { return keyStart[i] },
		func(i int) int { return valEnd[i] },
		func(from, to int) { r.out.add(from, to, "") })
	if len(added) == 0 && !allGone {
		return nil
	}
	jsonish := k > 0 && o.Members[0].KeyNode.Style&yaml.DoubleQuotedStyle != 0
	var b strings.Builder
	if k == 0 || allGone {
		for i, m := range added {
			if i > 0 {
				b.WriteString(", ")
			}
			r.flowMember(&b, m.key, m.val, jsonish)
		}
		r.out.add(open+1, close, b.String())
		return nil
	}
	var sep string
	if k >= 2 {
		sep = string(r.data[valEnd[k-2]:keyStart[k-1]])
	} else if lead := string(r.data[open+1 : keyStart[0]]); strings.ContainsRune(lead, '\n') {
		sep = "," + lead
	} else {
		sep = ", "
	}
	for _, m := range added {
		b.WriteString(sep)
		r.flowMember(&b, m.key, m.val, jsonish)
	}
	r.out.add(valEnd[k-1], valEnd[k-1], b.String())
	return nil
}

// replace rewrites a whole value in its slot.
func (r *yamlRenderer) replace(n *node, p *slot) error {
	vn := p.value
	if vn == nil {
		return fmt.Errorf("internal error: value node not found")
	}
	flow := p.parent.Style&yaml.FlowStyle != 0
	jsonish := p.key.Style&yaml.DoubleQuotedStyle != 0
	newObj := n.kind == validate.KindObject && len(n.members) > 0
	if flow || !newObj {
		var text string
		if newObj {
			var b strings.Builder
			r.flowValue(&b, n, jsonish)
			text = b.String()
		} else {
			text = r.scalarLike(n, vn, jsonish)
		}
		if vn.Kind == yaml.MappingNode && vn.Style&yaml.FlowStyle == 0 || vn.Kind == yaml.SequenceNode && vn.Style&yaml.FlowStyle == 0 {
			// A block collection becomes a scalar: it goes from the colon
			// to the end of the member's last content line.
			colonEnd, err := r.colonEnd(p.key)
			if err != nil {
				return err
			}
			if !isBlank(bytes.ReplaceAll(r.data[colonEnd:r.pos(vn)], []byte("\n"), nil)) {
				return layoutErr(vn, "text between the key and its value")
			}
			last := r.lastContentLine(p.key, vn)
			r.out.add(colonEnd, r.ln.end(last), " "+text)
			return nil
		}
		s, e, err := r.span(vn)
		if err != nil {
			return err
		}
		r.out.add(s, e, text)
		return nil
	}
	// A block slot gets a block mapping: the old value goes, the new
	// members follow on their own lines, one indentation step deeper than
	// the key; a comment after the old value stays on the key's line.
	colonEnd, err := r.colonEnd(p.key)
	if err != nil {
		return err
	}
	if vn.Kind == yaml.MappingNode && vn.Style&yaml.FlowStyle == 0 {
		return layoutErr(vn, "block mapping replaced by a mapping")
	}
	_, e, err := r.span(vn)
	if err != nil {
		return err
	}
	if !isBlank(bytes.ReplaceAll(bytes.ReplaceAll(r.data[colonEnd:r.pos(vn)], []byte("\n"), nil), []byte("\r"), nil)) {
		return layoutErr(vn, "text between the key and its value")
	}
	rest := r.data[e:r.ln.end(r.ln.lineOf(max(e-1, 0)))]
	if t := bytes.TrimLeft(rest, " \t"); len(t) > 0 && t[0] != '#' {
		return layoutErr(vn, "more content after the value on its line")
	}
	r.out.add(colonEnd, e, "")
	var b strings.Builder
	ind := p.key.Column - 1 + r.unit
	for _, m := range n.members {
		r.blockMember(&b, m.key, m.val, ind)
	}
	line := r.ln.lineOf(max(e-1, 0))
	at := r.ln.start(line + 1)
	text := b.String()
	if line >= r.ln.count() || at == len(r.data) && (len(r.data) == 0 || r.data[len(r.data)-1] != '\n') {
		at = len(r.data)
		text = r.nl + strings.TrimSuffix(text, r.nl)
	}
	r.out.add(at, at, text)
	return nil
}

// colonEnd returns the offset just past the ':' that follows key.
func (r *yamlRenderer) colonEnd(key *yaml.Node) (int, error) {
	_, e, err := r.span(key)
	if err != nil {
		return 0, err
	}
	for e < len(r.data) && (r.data[e] == ' ' || r.data[e] == '\t') {
		e++
	}
	if e >= len(r.data) || r.data[e] != ':' {
		return 0, layoutErr(key, "no ':' after the key")
	}
	return e + 1, nil
}

// bare returns the offset of a node's token, past its tag and anchor.
func (r *yamlRenderer) bare(n *yaml.Node) (int, error) {
	off := r.pos(n)
	for off < len(r.data) && (r.data[off] == '!' || r.data[off] == '&') {
		for off < len(r.data) && !isSpaceOrBreak(r.data[off]) {
			off++
		}
		for off < len(r.data) && isSpaceOrBreak(r.data[off]) {
			off++
		}
	}
	if off >= len(r.data) {
		return 0, layoutErr(n, "value token not found")
	}
	return off, nil
}

func isSpaceOrBreak(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// span returns the byte range of a scalar, alias or flow collection
// token. Block collections, block scalars and multi-line plain scalars
// are refused.
func (r *yamlRenderer) span(n *yaml.Node) (int, int, error) {
	s, err := r.bare(n)
	if err != nil {
		return 0, 0, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		if r.data[s] != '*' {
			return 0, 0, layoutErr(n, "alias token not found")
		}
		return s, s + 1 + len(n.Value), nil
	case yaml.MappingNode, yaml.SequenceNode:
		if n.Style&yaml.FlowStyle == 0 {
			return 0, 0, layoutErr(n, "block collection has no token span")
		}
		e, err := r.flowEnd(s)
		if err != nil {
			return 0, 0, layoutErr(n, "%v", err)
		}
		return s, e, nil
	case yaml.ScalarNode:
	default:
		return 0, 0, layoutErr(n, "unexpected node kind")
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if r.data[s] != '"' {
			return 0, 0, layoutErr(n, "double quote not found")
		}
		for i := s + 1; i < len(r.data); i++ {
			switch r.data[i] {
			case '\\':
				i++
			case '"':
				return s, i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if r.data[s] != '\'' {
			return 0, 0, layoutErr(n, "single quote not found")
		}
		for i := s + 1; i < len(r.data); i++ {
			if r.data[i] == '\'' {
				if i+1 < len(r.data) && r.data[i+1] == '\'' {
					i++
					continue
				}
				return s, i + 1, nil
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, 0, layoutErr(n, "block scalar")
	default:
		v := n.Value
		if v == "" || strings.ContainsAny(v, "\r\n") || !bytes.HasPrefix(r.data[s:], []byte(v)) {
			return 0, 0, layoutErr(n, "plain scalar spans lines or is empty")
		}
		e := s + len(v)
		if e < len(r.data) && !isSpaceOrBreak(r.data[e]) && !strings.ContainsRune(",]}:", rune(r.data[e])) {
			return 0, 0, layoutErr(n, "plain scalar continues")
		}
		return s, e, nil
	}
	return 0, 0, layoutErr(n, "unterminated quoted scalar")
}

// flowEnd returns the offset just past the flow collection that opens at
// off, honouring quoted scalars and comments.
func (r *yamlRenderer) flowEnd(off int) (int, error) {
	depth := 0
	prev := byte(0) // previous non-space byte
	for i := off; i < len(r.data); i++ {
		c := r.data[i]
		switch {
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		case (c == '"' || c == '\'') && (prev == 0 || strings.IndexByte("{[,:?", prev) >= 0):
			q := c
			i++
			for ; i < len(r.data); i++ {
				if q == '"' && r.data[i] == '\\' {
					i++
					continue
				}
				if r.data[i] == q {
					if q == '\'' && i+1 < len(r.data) && r.data[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case c == '#' && i > 0 && isSpaceOrBreak(r.data[i-1]):
			for i < len(r.data) && r.data[i] != '\n' {
				i++
			}
			continue
		}
		if !isSpaceOrBreak(c) {
			prev = c
		}
	}
	return 0, fmt.Errorf("unterminated flow collection")
}

// scalarLike renders a new scalar (or empty object) for the slot of the
// old value vn, keeping vn's quoting style for strings.
func (r *yamlRenderer) scalarLike(n *node, vn *yaml.Node, jsonish bool) string {
	if n.kind == validate.KindString && vn.Kind == yaml.ScalarNode && !strings.ContainsAny(n.text, "\r\n") {
		switch {
		case vn.Style&yaml.DoubleQuotedStyle != 0:
			return string(jsonString(n.text))
		case vn.Style&yaml.SingleQuotedStyle != 0:
			return "'" + strings.ReplaceAll(n.text, "'", "''") + "'"
		}
	}
	var b strings.Builder
	r.flowValue(&b, n, jsonish)
	return b.String()
}

// blockMember renders `key: value` lines at indentation ind; nested
// non-empty objects go on the following lines one unit deeper.
func (r *yamlRenderer) blockMember(b *strings.Builder, key string, v *node, ind int) {
	b.WriteString(strings.Repeat(" ", ind))
	b.WriteString(yamlString(key, false))
	b.WriteString(":")
	if v.kind == validate.KindObject && len(v.members) > 0 {
		b.WriteString(r.nl)
		for _, m := range v.members {
			r.blockMember(b, m.key, m.val, ind+r.unit)
		}
		return
	}
	b.WriteString(" ")
	r.flowValue(b, v, false)
	b.WriteString(r.nl)
}

func (r *yamlRenderer) flowMember(b *strings.Builder, key string, v *node, jsonish bool) {
	b.WriteString(yamlString(key, jsonish))
	b.WriteString(": ")
	r.flowValue(b, v, jsonish)
}

// flowValue renders a value in flow style: {k: v, ...}, [a, b], scalars.
func (r *yamlRenderer) flowValue(b *strings.Builder, v *node, jsonish bool) {
	switch v.kind {
	case validate.KindObject:
		b.WriteString("{")
		for i, m := range v.members {
			if i > 0 {
				b.WriteString(", ")
			}
			r.flowMember(b, m.key, m.val, jsonish)
		}
		b.WriteString("}")
	case validate.KindArray:
		b.WriteString("[")
		for i, it := range v.items {
			if i > 0 {
				b.WriteString(", ")
			}
			r.flowValue(b, it, jsonish)
		}
		b.WriteString("]")
	case validate.KindString:
		b.WriteString(yamlString(v.text, jsonish))
	case validate.KindNull, validate.KindInvalid:
		b.WriteString("null")
	default:
		b.WriteString(v.text)
	}
}

var plainSafe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

// yamlString renders s as a plain scalar when it is unambiguously a string
// for every YAML reader (YAML 1.2 core schema, which lcctl uses, and YAML
// 1.1 readers such as older Helm tooling), double-quoted otherwise.
func yamlString(s string, quoted bool) string {
	if !quoted && plainSafe.MatchString(s) {
		switch strings.ToLower(s) {
		case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		default:
			return s
		}
	}
	return string(jsonString(s))
}
