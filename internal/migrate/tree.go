package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/lcctl/lcctl/internal/validate"
)

// node is the mutable copy of the decoded document the planner edits. It
// mirrors the JSON data model of validate.Value and remembers, for every
// node that existed in the input, the original value, so the renderers can
// splice only what changed into the original bytes and the verifier can
// compare the rewritten file with the intended document.
type node struct {
	kind validate.Kind
	// replaced reports that the node's own content (kind or scalar text)
	// differs from orig: the renderer rewrites the whole value. It sits
	// next to kind, so that both share one word (a node per input value).
	replaced bool
	// text is a scalar's text as validate reads it: a string's decoded
	// text, a number's literal, "true"/"false", "null".
	text    string
	members []*member
	items   []*node
	// orig is the input value this node stands for; nil for a new node.
	orig *validate.Value
}

// member is one key/value pair of an object node.
type member struct {
	key string
	val *node
	// orig is the input member; nil for a member the planner added.
	orig *validate.Member
}

// split divides n's members for the renderers: kept[i] reports whether
// the input member n.orig.Members[i] is still there, added lists the
// members the planner appended, in order. It returns an internal error
// when a new member precedes an existing one or a member is not one of
// n.orig's; what names the container in that message ("object",
// "mapping").
func (n *node) split(what string) (kept []bool, added []*member, err error) {
	o := n.orig
	kept = make([]bool, len(o.Members))
	// Members are usually still in their original order: try the slot
	// after the previous one first, and index o.Members by address only
	// when that fails (a scan per member made rendering quadratic).
	next := 0
	var at map[*validate.Member]int
	for _, m := range n.members {
		if m.orig == nil {
			added = append(added, m)
			continue
		}
		if len(added) > 0 {
			return nil, nil, fmt.Errorf("internal error: a new member precedes an existing one")
		}
		i := -1
		if next < len(o.Members) && &o.Members[next] == m.orig {
			i = next
		} else {
			if at == nil {
				at = make(map[*validate.Member]int, len(o.Members))
				for j := range o.Members {
					at[&o.Members[j]] = j
				}
			}
			if j, ok := at[m.orig]; ok {
				i = j
			}
		}
		next = i + 1
		if i < 0 {
			return nil, nil, fmt.Errorf("internal error: member %q not found in its %s", m.key, what)
		}
		kept[i] = true
	}
	return kept, added, nil
}

// newTree copies v and returns the copy plus the index from the values
// in entries (the entry values the planner edits, see planner.nodeOf) to
// their copies. The value of an object member that is neither an object,
// an array nor in entries is not copied: member.val stays nil and
// member.value reads the input value until an edit asks for it
// (node.get). Such leaves were two thirds of the copy (124,000 entries:
// 300,000 of 425,000 values).
func newTree(v *validate.Value, entries map[*validate.Value]bool) (*node, map[*validate.Value]*node) {
	// The nodes, members and the index are allocated at their final size
	// (one tree per plan, 124,000 entries: appending one by one and
	// growing the map made this a tenth of a run).
	leaf := func(v *validate.Value) bool {
		return v.Kind != validate.KindObject && v.Kind != validate.KindArray && !entries[v]
	}
	var count func(v *validate.Value) int
	count = func(v *validate.Value) int {
		c := 1
		for i := range v.Members {
			if !leaf(v.Members[i].Value) {
				c += count(v.Members[i].Value)
			}
		}
		for _, it := range v.Items() {
			c += count(it)
		}
		return c
	}
	nodes := make([]node, count(v))
	idx := make(map[*validate.Value]*node, len(entries))
	var cp func(v *validate.Value) *node
	cp = func(v *validate.Value) *node {
		n := &nodes[0]
		nodes = nodes[1:]
		*n = node{kind: v.Kind, text: v.Text, orig: v}
		if entries[v] {
			idx[v] = n
		}
		if len(v.Members) > 0 {
			ms := make([]member, len(v.Members))
			n.members = make([]*member, len(v.Members))
			for i := range v.Members {
				m := &v.Members[i]
				ms[i] = member{key: m.Key, orig: m}
				if !leaf(m.Value) {
					ms[i].val = cp(m.Value)
				}
				n.members[i] = &ms[i]
			}
		}
		if len(v.Items()) > 0 {
			n.items = make([]*node, len(v.Items()))
			for i, it := range v.Items() {
				n.items[i] = cp(it)
			}
		}
		return n
	}
	return cp(v), idx
}

// value returns m's value: its node, or, for an input leaf newTree did
// not copy, a node made from the input value for reading (an edit goes
// through node.get, which keeps the node).
func (m *member) value() *node {
	if m.val != nil {
		return m.val
	}
	v := m.orig.Value
	return &node{kind: v.Kind, text: v.Text, orig: v}
}

// get returns the value of the last member named key (serde_json's
// last-wins reading, D3), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != validate.KindObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if m := n.members[i]; m.key == key {
			if m.val == nil {
				m.val = m.value()
			}
			return m.val
		}
	}
	return nil
}

// present reports whether key is set to a non-null value.
func (n *node) present(key string) bool {
	v := n.get(key)
	return v != nil && v.kind != validate.KindNull
}

// remove drops every member named key and reports whether one was found.
func (n *node) remove(key string) bool {
	out := n.members[:0]
	found := false
	for _, m := range n.members {
		if m.key == key {
			found = true
			continue
		}
		out = append(out, m)
	}
	n.members = out
	return found
}

// appendMember adds key: v at the end of the object.
func (n *node) appendMember(key string, v *node) {
	n.members = append(n.members, &member{key: key, val: v})
}

// setScalar replaces a value in place with a scalar.
func (n *node) setScalar(kind validate.Kind, text string) {
	n.kind, n.text = kind, text
	n.members, n.items = nil, nil
	n.replaced = true
}

// become replaces n's content with that of a new node v, keeping n's
// place (and orig) in the tree.
func (n *node) become(v *node) {
	n.kind, n.text, n.members, n.items = v.kind, v.text, v.members, v.items
	n.replaced = true
}

// str, num and obj build new nodes.
func str(s string) *node { return &node{kind: validate.KindString, text: s} }

func num(u uint64) *node { return &node{kind: validate.KindNumber, text: strconv.FormatUint(u, 10)} }

func obj(kv ...any) *node {
	n := &node{kind: validate.KindObject}
	for i := 0; i+1 < len(kv); i += 2 {
		n.appendMember(kv[i].(string), kv[i+1].(*node))
	}
	return n
}

// clone copies a subtree as new nodes (no orig), for values copied from
// one entry into a new one.
func (n *node) clone() *node {
	c := &node{kind: n.kind, text: n.text}
	for _, m := range n.members {
		c.appendMember(m.key, m.value().clone())
	}
	for _, it := range n.items {
		c.items = append(c.items, it.clone())
	}
	return c
}

// jsonText renders the subtree as compact JSON (the JSON data model, for
// reports). Numbers keep their literal when it is JSON; YAML-only literals
// (hex, octal, "+1", ".5") are converted through their value.
//
// The text is copied out at its length: a bytes.Buffer's doubling leaves
// up to half its capacity unused, and one change record keeps two or
// three of these (93,000 change records on 124,000 entries).
func (n *node) jsonText() json.RawMessage {
	var arr [512]byte
	b := bytes.NewBuffer(arr[:0])
	n.writeJSON(b)
	return append(json.RawMessage(nil), b.Bytes()...)
}

func (n *node) writeJSON(b *bytes.Buffer) {
	switch n.kind {
	case validate.KindNull, validate.KindInvalid:
		b.WriteString("null")
	case validate.KindBool:
		b.WriteString(n.text)
	case validate.KindString:
		b.Write(jsonString(n.text))
	case validate.KindNumber:
		b.WriteString(jsonNumber(n))
	case validate.KindObject:
		b.WriteByte('{')
		for i, m := range n.members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(m.key))
			b.WriteByte(':')
			m.value().writeJSON(b)
		}
		b.WriteByte('}')
	case validate.KindArray:
		b.WriteByte('[')
		for i, it := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	}
}

// jsonNumber returns a JSON number for a number node.
func jsonNumber(n *node) string {
	if json.Valid([]byte(n.text)) {
		return n.text
	}
	if o := n.orig; o != nil {
		switch o.Number {
		case validate.NumUint:
			return strconv.FormatUint(o.Uint(), 10)
		case validate.NumInt:
			return strconv.FormatInt(o.Int(), 10)
		default:
			return strconv.FormatFloat(o.Float(), 'g', -1, 64)
		}
	}
	return "null"
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) []byte {
	if plainJSONString(s) {
		// Nothing to escape: the quoted text itself (most keys and
		// values; an encoder per string was a fifth of migrate's
		// allocation on 124,000 entries).
		b := make([]byte, 0, len(s)+2)
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // strings always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// plainJSONString reports that encoding/json writes s as "s": printable
// ASCII without a quote or a backslash (HTML escaping is off).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// removeRuns deletes the members of an object that are not kept (kept[i]
// for member i, which starts at keyStart(i) and whose value ends at
// valEnd(i), byte offsets): each run of removed members is cut together
// with the separators that follow it, or, for a run that ends the object,
// with the separator before it; cut receives each [from, to) span. It
// reports whether every member is removed (false for an empty object), in
// which case the caller rebuilds the object's inside. Shared by the JSON
// and YAML flow renderers.
func removeRuns(kept []bool, keyStart, valEnd func(int) int, cut func(from, to int)) (allGone bool) {
	k := len(kept)
	allGone = k > 0
	for i := 0; i < k; {
		if kept[i] {
			allGone = false
			i++
			continue
		}
		j := i
		for j+1 < k && !kept[j+1] {
			j++
		}
		switch {
		case j < k-1:
			cut(keyStart(i), keyStart(j+1))
		case i > 0:
			cut(valEnd(i-1), valEnd(j))
		}
		i = j + 1
	}
	return allGone
}
