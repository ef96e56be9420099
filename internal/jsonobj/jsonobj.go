// Package jsonobj encodes Go structs as JSON objects with one member
// whose name is kept elsewhere than the struct: a struct tag cannot name a
// constant, so a document that echoes a fact named in one place (an
// lb-config field of internal/lb's registry, the simulator's seed key)
// tags that field `json:"-"` and has its MarshalJSON insert the member,
// named by the constant, at the place the tag would have put it, and its
// UnmarshalJSON read it back (Unmarshal). The result is byte for byte
// what a tagged field gives.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Member is one name/value pair of a JSON object; Value is encoded as
// encoding/json encodes it.
type Member struct {
	Key   string
	Value any
}

// MarshalAfter encodes v, which must encode as a JSON object, and inserts
// m right after v's member named after. The encoding is encoding/json's
// without HTML escaping (lcctl's JSON writer in internal/cli re-escapes
// nothing, so '<', '>' and '&' stay as they are either way). Errors: v or
// m.Value does not encode, v is not an object, or it has no member named
// after (give a member that omitempty never drops).
func MarshalAfter(v any, after string, m Member) ([]byte, error) {
	return marshal(v, after, m, true)
}

// MarshalBefore is MarshalAfter inserting m right before v's member named
// before (for a member whose predecessor may be omitted).
func MarshalBefore(v any, before string, m Member) ([]byte, error) {
	return marshal(v, before, m, false)
}

func marshal(v any, at string, m Member, after bool) ([]byte, error) {
	obj, err := Encode(v)
	if err != nil {
		return nil, err
	}
	val, err := Encode(m.Value)
	if err != nil {
		return nil, fmt.Errorf("member %q: %w", m.Key, err)
	}
	key, err := Encode(m.Key)
	if err != nil {
		return nil, err
	}
	start, end, err := span(obj, at)
	if err != nil {
		return nil, err
	}
	member := make([]byte, 0, len(key)+len(val)+2)
	member = append(append(append(member, key...), ':'), val...)
	out := make([]byte, 0, len(obj)+len(member)+1)
	switch {
	case after:
		out = append(out, obj[:end]...)
		out = append(append(out, ','), member...)
		return append(out, obj[end:]...), nil
	case obj[start] == '{': // before the first member
		out = append(out, obj[:start+1]...)
		out = append(append(out, member...), ',')
		return append(out, obj[start+1:]...), nil
	default: // before a later member: after the previous one's value
		out = append(out, obj[:start]...)
		out = append(append(out, ','), member...)
		return append(out, obj[start:]...), nil
	}
}

// Encode is json.Marshal without HTML escaping and without the
// Encoder's trailing newline: the encoding of every member MarshalAfter
// and MarshalBefore insert, and of each piece of a JSON document lcctl
// streams (internal/cli's streamJSON). Errors: encoding/json's.
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// span finds the top-level member named name in the compact object obj:
// start is the offset of the byte before its key ('{' or the comma after
// the previous member's value), end the offset just past its value.
func span(obj []byte, name string) (start, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, 0, errors.New("not a JSON object")
	}
	for dec.More() {
		// The offset after the '{' or after the previous value; the
		// byte there is '{' (first member) or the comma.
		start = int(dec.InputOffset())
		if start > 0 && obj[start-1] == '{' {
			start--
		}
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, err
		}
		if tok == name {
			return start, int(dec.InputOffset()), nil
		}
	}
	return 0, 0, fmt.Errorf("no member %q to place the new member by", name)
}

// Unmarshal decodes the JSON object data into v (whose field for m is
// tagged `json:"-"`, so encoding/json skips the member) and the member
// named m.Key, when present, into m.Value, a pointer to that field. It
// is the inverse of MarshalAfter and MarshalBefore. Unknown members are
// ignored as json.Unmarshal ignores them. Errors: data is not a JSON
// object, or a value does not decode into its field.
func Unmarshal(data []byte, v any, m Member) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if tok != m.Key {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if err := dec.Decode(m.Value); err != nil {
			return fmt.Errorf("member %q: %w", m.Key, err)
		}
	}
	return nil
}
