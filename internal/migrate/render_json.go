package migrate

import (
	"bytes"
	"strings"

	"github.com/lcctl/lcctl/internal/validate"
)

// jsonRenderer splices the planner's changes into a JSON file. Unchanged
// values keep their bytes; a changed object keeps its untouched members
// and the separators between them; new values are rendered in the file's
// own style: its line ending, its indentation unit (spaces or tabs), its
// spacing after ':' and, for one-line objects, after ','.
type jsonRenderer struct {
	data  []byte
	out   splices
	nl    string
	unit  string
	colon string
	comma string
}

func renderJSON(data []byte, root *node) ([]byte, error) {
	r := &jsonRenderer{data: data, nl: newline(data)}
	r.detect(root.orig)
	if err := r.walk(root, "", false); err != nil {
		return nil, err
	}
	return r.out.apply(data)
}

// detect reads the file's style from its first objects; defaults are two
// spaces, ": " and ", " (or ":" and "," for files written without spaces).
func (r *jsonRenderer) detect(root *validate.Value) {
	var walk func(v *validate.Value)
	walk = func(v *validate.Value) {
		if v.Kind == validate.KindArray {
			for _, it := range v.Items() {
				walk(it)
			}
			return
		}
		if v.Kind != validate.KindObject || len(v.Members) == 0 {
			return
		}
		first := v.Members[0]
		if r.colon == "" {
			r.colon = r.colonOf(first)
		}
		between := r.data[v.Start.Offset+1 : first.KeyStart.Offset]
		if bytes.ContainsRune(between, '\n') {
			if r.unit == "" {
				outer := linePrefix(r.data, int(v.Start.Offset))
				inner := linePrefix(r.data, int(first.KeyStart.Offset))
				if len(inner) > len(outer) && strings.HasPrefix(inner, outer) {
					r.unit = inner[len(outer):]
				}
			}
		} else if r.comma == "" && len(v.Members) > 1 {
			if c := string(r.data[first.Value.End:v.Members[1].KeyStart.Offset]); strings.Trim(c, " \t") == "," {
				r.comma = c
			}
		}
		for _, m := range v.Members {
			walk(m.Value)
		}
	}
	walk(root)
	if r.colon == "" {
		r.colon = ": "
	}
	if r.comma == "" {
		r.comma = ", "
		if r.colon == ":" {
			r.comma = ","
		}
	}
	if r.unit == "" {
		r.unit = "  "
	}
}

// colonOf returns the bytes between m's key and its value when they are a
// single ':' with spaces or tabs around it on one line, "" otherwise.
func (r *jsonRenderer) colonOf(m validate.Member) string {
	c := string(r.data[m.KeyEnd:m.Value.Start.Offset])
	if strings.Count(c, ":") == 1 && strings.Trim(c, " \t:") == "" && !strings.ContainsAny(c, "\r\n") {
		return c
	}
	return ""
}

// walk renders the changes below n. indent is the whitespace that starts
// the line of n's key; multiline reports whether n's parent object lays
// its members out one per line (new objects then do the same).
func (r *jsonRenderer) walk(n *node, indent string, multiline bool) error {
	o := n.orig
	if n.replaced {
		r.out.add(int(o.Start.Offset), int(o.End), r.value(n, indent, multiline))
		return nil
	}
	switch n.kind {
	case validate.KindObject:
		return r.object(n, multiline)
	case validate.KindArray:
		for _, it := range n.items {
			if err := r.walk(it, linePrefix(r.data, int(it.orig.Start.Offset)), multiline); err != nil {
				return err
			}
		}
	}
	return nil
}

// object splices member removals and appended members into one object.
func (r *jsonRenderer) object(n *node, parentML bool) error {
	o := n.orig
	open, close := int(o.Start.Offset), int(o.End)-1
	k := len(o.Members)
	kept, added, err := n.split("object")
	if err != nil {
		return err
	}
	ml := parentML
	if k > 0 {
		ml = bytes.ContainsRune(r.data[open:o.Members[0].KeyStart.Offset], '\n')
	}
	// The members first, so that splices at one offset apply inner ones
	// first (they apply in the order added).
	for _, m := range n.members {
		if m.orig == nil || m.val == nil {
			continue // new, or an input leaf no edit reached
		}
		if err := r.walk(m.val, linePrefix(r.data, int(m.orig.KeyStart.Offset)), ml); err != nil {
			return err
		}
	}
	// Removals: each run of removed members goes with the separators that
	// follow it, or, at the end of the object, with the one before it.
	allGone := removeRuns(kept,
		func(i int) int { return int(o.Members[i].KeyStart.Offset) },
		func(i int) int { return int(o.Members[i].Value.End) },
		func(from, to int) { r.out.add(from, to, "") })
	colon := r.colon
	if k > 0 {
		if c := r.colonOf(o.Members[0]); c != "" {
			colon = c
		}
	}
	if len(added) > 0 || allGone {
		var b strings.Builder
		if k == 0 || allGone {
			// Rebuild the inside of the object.
			outer := linePrefix(r.data, open)
			inner := outer + r.unit
			if ml {
				for i, m := range added {
					if i > 0 {
						b.WriteString(",")
					}
					b.WriteString(r.nl + inner)
					r.member(&b, m, colon, inner, true)
				}
				if len(added) > 0 {
					b.WriteString(r.nl + outer)
				}
			} else {
				for i, m := range added {
					if i > 0 {
						b.WriteString(r.comma)
					}
					r.member(&b, m, colon, inner, false)
				}
			}
			r.out.add(open+1, close, b.String())
		} else {
			last := o.Members[k-1]
			var sep string
			switch {
			case k >= 2:
				sep = string(r.data[o.Members[k-2].Value.End:last.KeyStart.Offset])
			case ml:
				sep = "," + string(r.data[open+1:o.Members[0].KeyStart.Offset])
			default:
				sep = r.comma
			}
			inner := linePrefix(r.data, int(last.KeyStart.Offset))
			if !ml {
				inner = linePrefix(r.data, open) + r.unit
			}
			for _, m := range added {
				b.WriteString(sep)
				r.member(&b, m, colon, inner, ml)
			}
			r.out.add(int(last.Value.End), int(last.Value.End), b.String())
		}
	}
	return nil
}

// member renders `"key": value` for a new member whose line starts with
// indent.
func (r *jsonRenderer) member(b *strings.Builder, m *member, colon, indent string, ml bool) {
	b.Write(jsonString(m.key))
	b.WriteString(colon)
	b.WriteString(r.value(m.val, indent, ml))
}

// value renders a new value. Objects are laid out one member per line
// (indented one unit deeper than indent) when ml is set, on one line
// otherwise.
func (r *jsonRenderer) value(n *node, indent string, ml bool) string {
	switch n.kind {
	case validate.KindObject:
		if len(n.members) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{")
		inner := indent + r.unit
		for i, m := range n.members {
			if ml {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(r.nl + inner)
			} else if i > 0 {
				b.WriteString(r.comma)
			}
			r.member(&b, m, r.colon, inner, ml)
		}
		if ml {
			b.WriteString(r.nl + indent)
		}
		b.WriteString("}")
		return b.String()
	case validate.KindArray:
		var b strings.Builder
		b.WriteString("[")
		for i, it := range n.items {
			if i > 0 {
				b.WriteString(r.comma)
			}
			b.WriteString(r.value(it, indent, false))
		}
		b.WriteString("]")
		return b.String()
	}
	return string(n.jsonText())
}
