package migrate

import (
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

func decodeRoot(t *testing.T, name, text string) *validate.Value {
	t.Helper()
	doc, diags := validate.Decode(name, []byte(text), validate.FormatUnknown)
	if doc.Root == nil {
		t.Fatalf("%s: %q does not decode: %v", name, text, diags)
	}
	return doc.Root
}

// TestDigestSameData checks that the intended tree's digest and the
// decoded document's agree exactly when the two hold the same JSON data,
// which is what verify relies on.
func TestDigestSameData(t *testing.T) {
	same := [][2]string{
		{`{"a": 1, "b": [true, null, "x"]}`, "a: 1\nb: [true, null, x]\n"},
		{`{"models": {"m": {"algorithm": "pulsar"}}}`, "models:\n  m:\n    algorithm: pulsar\n"},
		{`{"k": {}, "l": []}`, "k: {}\nl: []\n"},
	}
	for _, c := range same {
		j, y := decodeRoot(t, "a.json", c[0]), decodeRoot(t, "a.yaml", c[1])
		tj, _ := newTree(j, nil)
		if tj.digest() != valueDigest(j) {
			t.Errorf("%s: the tree copied from a document has another digest than the document", c[0])
		}
		if valueDigest(j) != valueDigest(y) {
			t.Errorf("%q and %q hold the same data but have different digests", c[0], c[1])
		}
	}
	// Each pair differs in one thing a value-by-value comparison looks at.
	differ := [][2]string{
		{`{"a": 1}`, `{"b": 1}`},                                   // key
		{`{"a": 1}`, `{"a": 2}`},                                   // scalar text
		{`{"a": 1}`, `{"a": "1"}`},                                 // kind, same text
		{`{"a": null}`, `{"a": "null"}`},                           // null against its text
		{`{"a": 1, "b": 2}`, `{"b": 2, "a": 1}`},                   // member order
		{`{"a": 1, "a": 1}`, `{"a": 1}`},                           // a repeated key
		{`{"a": {"b": 1}}`, `{"a": {}, "b": 1}`},                   // nesting
		{`{"a": [1, 2]}`, `{"a": [[1], 2]}`},                       // items
		{`{"a": []}`, `{"a": {}}`},                                 // empty array against object
		{`{"ab": "c"}`, `{"a": "bc"}`},                             // where a string ends
		{`{"a": 1.0}`, `{"a": 1}`},                                 // number literal
		{`{"a": "x", "b": ""}`, `{"a": "", "b": "x"}`},             // empty strings
		{`[{"a": 1}]`, `{"a": 1}`},                                 // top-level kind
		{`{"a": true}`, `{"a": "true"}`},                           // boolean against string
		{`{"m": {"x": 4, "y": 300}}`, `{"m": {"x": 4}, "y": 300}`}, // appended member placement
	}
	for _, c := range differ {
		a, b := decodeRoot(t, "a.json", c[0]), decodeRoot(t, "b.json", c[1])
		if valueDigest(a) == valueDigest(b) {
			t.Errorf("%s and %s hold different data but have the same digest", c[0], c[1])
		}
		ta, _ := newTree(a, nil)
		if ta.digest() == valueDigest(b) {
			t.Errorf("the tree of %s has the digest of %s", c[0], c[1])
		}
	}
}

// TestDigestSeesEdits checks that an edit of the intended tree changes its
// digest (a rewrite that lost it would not pass verify).
func TestDigestSeesEdits(t *testing.T) {
	v := decodeRoot(t, "a.json", `{"models": {"m": {"algorithm": "pulsar-wait-and-widen"}}}`)
	entry := v.Get("models").Get("m")
	root, idx := newTree(v, map[*validate.Value]bool{entry: true})
	before := root.digest()
	m := idx[entry]
	m.appendMember(maxQueuedKey, num(4))
	if root.digest() == before {
		t.Fatal("appending a member left the digest unchanged")
	}
	edited := decodeRoot(t, "b.json", `{"models": {"m": {"algorithm": "pulsar-wait-and-widen", "max_queued": 4}}}`)
	if root.digest() != valueDigest(edited) {
		t.Fatal("the edited tree's digest is not the digest of the document it describes")
	}
}
