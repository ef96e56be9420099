package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jsonPieces hands a compact JSON document over to put (streamJSON's) in
// pieces, so that a document of hundreds of megabytes (check metrics on
// 200,000 models, migrate on 124,000 entries: docs/performance.md) is
// never encoded whole. Each piece is encoding/json's encoding of a value
// without HTML escaping (jsonobj.Encode); the long slices are handed over
// one element at a time through one reused buffer, and the objects around
// them are encoded with those members empty and cut at their places
// (object), so the concatenated pieces are byte for byte the encoding of
// the whole value.
type jsonPieces struct {
	put func([]byte) error
	buf bytes.Buffer
	enc *json.Encoder
}

func newJSONPieces(put func([]byte) error) *jsonPieces {
	p := &jsonPieces{put: put}
	p.enc = json.NewEncoder(&p.buf)
	p.enc.SetEscapeHTML(false)
	return p
}

// value hands over the encoding of v. The piece is encoded into the
// reused buffer: put must not keep it.
func (p *jsonPieces) value(v any) error {
	p.buf.Reset()
	if err := p.enc.Encode(v); err != nil {
		return err
	}
	return p.put(bytes.TrimSuffix(p.buf.Bytes(), []byte("\n")))
}

// raw hands over b as it is.
func (p *jsonPieces) raw(b string) error {
	switch b { // the frequent ones, without a conversion each
	case ",":
		return p.put(comma)
	case "null":
		return p.put(null)
	}
	return p.put([]byte(b))
}

var comma, null = []byte(","), []byte("null")

// array hands over a JSON array of n elements, elem(i) handing over the
// i-th one (through value, raw or object).
func (p *jsonPieces) array(n int, elem func(i int) error) error {
	if err := p.raw("["); err != nil {
		return err
	}
	for i := range n {
		if i > 0 {
			if err := p.raw(","); err != nil {
				return err
			}
		}
		if err := elem(i); err != nil {
			return err
		}
	}
	return p.raw("]")
}

// streamedMember is a member of an object that jsonPieces.object hands
// over on its own: the object is encoded with a stand-in value for the
// member (a nil slice or pointer, a struct without its long lists; the
// member must not be omitted: no omitempty), and stream hands over the
// real value in its place.
type streamedMember struct {
	key    string
	stream func() error
}

// object hands over v, an object whose streamed members (in document
// order, each a top-level member of v) hold stand-in values in v's
// encoding: the encoding is cut around each of those values and the
// member's stream runs in its place. Errors: encoding/json's, put's,
// stream's, or a member that is not there (a bug).
func (p *jsonPieces) object(v any, members ...streamedMember) error {
	var b bytes.Buffer // not p.buf: the streams reuse that
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	obj := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	from := 0
	for _, m := range members {
		start, end, err := topLevelValue(obj, from, m.key)
		if err != nil {
			return err
		}
		if err := p.put(obj[from:start]); err != nil {
			return err
		}
		if err := m.stream(); err != nil {
			return err
		}
		from = end
	}
	return p.put(obj[from:])
}

// topLevelValue returns where the value of obj's top-level member key
// starts and ends, searching from offset from (0, or just past an
// earlier member's value). obj is a compact JSON object as encoding/json
// writes it; nested values and strings are skipped, so a member of the
// same name deeper down, or the name inside a string, is never taken for
// it.
func topLevelValue(obj []byte, from int, key string) (start, end int, err error) {
	want, err := json.Marshal(key)
	if err != nil {
		return 0, 0, err
	}
	want = append(want, ':')
	depth := 0
	if from > 0 {
		depth = 1
	}
	start = -1
	inString, escaped := false, false
	for i := from; i < len(obj); i++ {
		c := obj[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if start >= 0 && depth == 1 && (c == ',' || c == '}') {
			return start, i, nil // the value ends before its object's next comma or end
		}
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			// A key of the top-level object starts right after its
			// '{' or a comma at depth 1.
			if start < 0 && depth == 1 && i > 0 && (obj[i-1] == '{' || obj[i-1] == ',') && bytes.HasPrefix(obj[i:], want) {
				start = i + len(want)
				i = start - 1
				continue
			}
			inString = true
		}
	}
	return 0, 0, fmt.Errorf("encoding a JSON document: no member %q to stream", key)
}
