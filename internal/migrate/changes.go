package migrate

import "encoding/json"

// change is the planner's record of one Change. An M5 bound change, one
// per no-SLO entry, holds only what differs between entries (the path,
// the entry before and after, the added fields: a list shared by every
// bound change); every other change is kept whole in full. The plan of
// 124,000 entries holds 93,000 bound changes while both documents are
// checked, and a Change each (216 bytes) was 20 MB of that peak; the
// Changes are made at the end (changeList), when the trees are gone.
type change struct {
	path          string
	before, after json.RawMessage
	added         []Field
	full          *Change
	// shape says how after is made when it is nil (boundAfter).
	shape afterShape
}

// afterShape is how a bound change's entry after the change follows from
// the entry before it, so that the after text is made only when the
// change list is (a third of the change records' memory at the peak).
type afterShape uint8

const (
	// afterGiven: after is kept (a null bound was removed).
	afterGiven afterShape = iota
	// afterAppended: the object before, with the added fields appended.
	afterAppended
	// afterStringEntry: a string entry that became
	// {"algorithm": <the string>, <the added fields>} (M10).
	afterStringEntry
)

// boundAfter returns the compact JSON of a bound entry after the change:
// what node.jsonText writes for the edited entry, which is before's
// members (or the algorithm name) followed by the added fields.
func boundAfter(c change) json.RawMessage {
	if c.shape == afterGiven {
		return c.after
	}
	var out json.RawMessage
	inner := false // a member is already written
	switch c.shape {
	case afterAppended:
		out = append(out, c.before[:len(c.before)-1]...) // without the '}'
		inner = len(c.before) > 2
	case afterStringEntry:
		out = append(out, `{"algorithm":`...)
		out = append(out, c.before...)
		inner = true
	}
	for _, f := range c.added {
		if inner {
			out = append(out, ',')
		}
		inner = true
		out = append(out, jsonString(f.Name)...)
		out = append(out, ':')
		out = append(out, f.Value...)
	}
	return append(out, '}')
}

// addChange records c.
func (p *planner) addChange(c Change) {
	p.changes = append(p.changes, change{path: c.Path, full: &c})
}

// addBound records the M5 change of the entry at path; after is nil
// unless shape is afterGiven.
func (p *planner) addBound(path string, before, after json.RawMessage, added []Field, shape afterShape) {
	p.changes = append(p.changes, change{path: path, before: before, after: after, added: added, shape: shape})
}

// changeList returns the Changes of the records, in their order (nil for
// nil).
func changeList(cs []change) []Change {
	if cs == nil {
		return nil
	}
	out := make([]Change, len(cs))
	for i, c := range cs {
		if c.full != nil {
			out[i] = *c.full
			continue
		}
		out[i] = Change{Path: c.path, Rule: "M5", Action: "bound",
			AlgorithmBefore: pwaw, AlgorithmAfter: pwaw, Before: c.before, After: boundAfter(c),
			AddedFields: c.added, RemovedFields: []Field{}, Reason: boundedReason, Lost: []string{}}
	}
	return out
}
