package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/lcctl/lcctl/internal/jsonobj"
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
// its changes one by one (putSlice) and its diff in chunks.
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
	// The changes go through jsonPieces: one encoder and buffer for all
	// of them (93,000 on 124,000 entries), not a new encoder, buffer and
	// comma-prefixed copy for each.
	if err := putSlice(newJSONPieces(put), changes); err != nil {
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
