package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/lcctl/lcctl/internal/jsonobj"
	"github.com/lcctl/lcctl/internal/migrate"
)

// writeMigrateJSON writes report exactly as writeJSON(w, "migrate",
// report) would, without ever holding the whole encoded document: on
// 124,000 models it is 154 MB indented (93,000 changes and a 28 MB diff),
// and encoding it at once (then stamping and indenting copies of it)
// took about 950 MB. The report is encoded without its files, each file
// without its changes and diff, and the pieces are streamed in their
// places: each change on its own and the diff in chunks
// (docs/performance.md, migrate).
func writeMigrateJSON(w io.Writer, report migrateReport) error {
	files := report.Files
	report.Files = nil
	head, err := jsonobj.Encode(report)
	if err != nil {
		return fmt.Errorf("encoding the %s JSON document: %w", SchemaID("migrate"), err)
	}
	before, after, err := cutMember(head, "files", "null")
	if err != nil {
		return err
	}
	return streamJSON(w, "migrate", func(put func([]byte) error) error {
		if err := put(before); err != nil {
			return err
		}
		if files == nil {
			return put(append([]byte("null"), after...))
		}
		if err := put([]byte("[")); err != nil {
			return err
		}
		for i, fr := range files {
			if i > 0 {
				if err := put([]byte(",")); err != nil {
					return err
				}
			}
			if err := putFileReport(put, fr); err != nil {
				return err
			}
		}
		if err := put([]byte("]")); err != nil {
			return err
		}
		return put(after)
	})
}

// putFileReport hands over one file's report as encoding/json writes it,
// its changes one by one (appendChangeJSON) and its diff in chunks.
func putFileReport(put func([]byte) error, fr migrateFileReport) error {
	changes, diff := fr.Changes, fr.Diff
	fr.Changes, fr.Diff = nil, ""
	b, err := jsonobj.Encode(fr)
	if err != nil {
		return err
	}
	toChanges, rest, err := cutMember(b, "changes", "null")
	if err != nil {
		return err
	}
	toDiff, end, err := cutMember(rest, "diff", `""`)
	if err != nil {
		return err
	}
	if err := put(toChanges); err != nil {
		return err
	}
	if changes == nil {
		err = put([]byte("null"))
	} else {
		p := newJSONPieces(put)
		err = p.array(len(changes), func(i int) error {
			p.buf.Reset()
			if err := appendChangeJSON(&p.buf, &changes[i]); err != nil {
				return err
			}
			return p.put(p.buf.Bytes())
		})
	}
	if err != nil {
		return err
	}
	if err := put(toDiff); err != nil {
		return err
	}
	if err := putString(put, diff); err != nil {
		return err
	}
	return put(end)
}

// stringChunk is how much of a long string putString encodes at once
// (bytes, cut after a newline).
const stringChunk = 1 << 20

// putString hands over s as a JSON string, encoded a chunk at a time.
// encoding/json escapes a string rune by rune, and a chunk ends after a
// newline (never inside a UTF-8 sequence), so the pieces are byte for
// byte its encoding of the whole.
func putString(put func([]byte) error, s string) error {
	if err := put([]byte(`"`)); err != nil {
		return err
	}
	for len(s) > 0 {
		n := len(s)
		if n > stringChunk {
			n = stringChunk
			if i := bytes.LastIndexByte([]byte(s[:n]), '\n'); i >= 0 {
				n = i + 1
			} else if j := bytes.IndexByte([]byte(s[n:]), '\n'); j >= 0 {
				n += j + 1
			} else {
				n = len(s)
			}
		}
		b, err := jsonobj.Encode(s[:n])
		if err != nil {
			return err
		}
		if err := put(b[1 : len(b)-1]); err != nil {
			return err
		}
		s = s[n:]
	}
	return put([]byte(`"`))
}

// cutMember splits the compact encoding b of an object around the value
// placeholder of its member key: before ends with `"key":`, after starts
// just past placeholder. A key and colon outside a string cannot appear
// inside an encoded string (its quotes would be escaped), so the first
// match is the member. Errors: the member is not there (a bug).
func cutMember(b []byte, key, placeholder string) (before, after []byte, err error) {
	pat := []byte(`"` + key + `":` + placeholder)
	i := bytes.Index(b, pat)
	if i < 0 {
		return nil, nil, fmt.Errorf("encoding the %s JSON document: no %q member", SchemaID("migrate"), key)
	}
	cut := i + len(key) + 3
	return b[:cut], b[cut+len(placeholder):], nil
}

// appendChangeJSON appends to buf the encoding jsonobj.Encode(c) gives
// (encoding/json's, without HTML escaping), written out field by field:
// 93,000 changes through encoding/json's reflection took about a fifth
// of `migrate -o json` on 124,000 entries. Strings are escaped as
// encoding/json escapes them (appendJSONString); a RawMessage is compacted (json.Compact) as
// encoding/json does, and a nil one is null, like nil slices.
// TestAppendChangeJSONIsEncodingJSON compares the two. Errors: a
// RawMessage that is not valid JSON (encoding/json refuses it too).
func appendChangeJSON(buf *bytes.Buffer, c *migrate.Change) error {
	str := func(key, s string) {
		buf.WriteString(key)
		buf.Write(appendJSONString(buf.AvailableBuffer(), s))
	}
	raw := func(key string, m json.RawMessage) error {
		buf.WriteString(key)
		if m == nil {
			buf.WriteString("null")
			return nil
		}
		return json.Compact(buf, m)
	}
	fields := func(key string, fs []migrate.Field) error {
		buf.WriteString(key)
		if fs == nil {
			buf.WriteString("null")
			return nil
		}
		buf.WriteByte('[')
		for i := range fs {
			if i > 0 {
				buf.WriteByte(',')
			}
			str(`{"name":`, fs[i].Name)
			if err := raw(`,"value":`, fs[i].Value); err != nil {
				return err
			}
			buf.WriteByte('}')
		}
		buf.WriteByte(']')
		return nil
	}
	str(`{"path":`, c.Path)
	str(`,"rule":`, c.Rule)
	str(`,"action":`, c.Action)
	str(`,"algorithm_before":`, c.AlgorithmBefore)
	str(`,"algorithm_after":`, c.AlgorithmAfter)
	if err := raw(`,"before":`, c.Before); err != nil {
		return err
	}
	if err := raw(`,"after":`, c.After); err != nil {
		return err
	}
	if err := fields(`,"added_fields":`, c.AddedFields); err != nil {
		return err
	}
	if err := fields(`,"removed_fields":`, c.RemovedFields); err != nil {
		return err
	}
	str(`,"reason":`, c.Reason)
	buf.WriteString(`,"lost":`)
	if c.Lost == nil {
		buf.WriteString("null")
	} else {
		buf.WriteByte('[')
		for i, l := range c.Lost {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(appendJSONString(buf.AvailableBuffer(), l))
		}
		buf.WriteByte(']')
	}
	buf.WriteByte('}')
	return nil
}

// appendJSONString appends s encoded as encoding/json encodes a string
// without HTML escaping: '"' and '\\' with a backslash; \b, \f, \n, \r
// and \t by their letters, other bytes below 0x20 as \u00XX; a byte
// that is not part of valid UTF-8 as \ufffd; U+2028 and U+2029 as
// \u2028 and \u2029; everything else as it is.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	run := 0 // s[run:i] is yet to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[run:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			run = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[run:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[run:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		run = i
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}
