package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/jsonobj"
	"github.com/lcctl/lcctl/internal/migrate"
)

// TestWriteMigrateJSONIsWriteJSON checks that the streamed migrate
// document is byte for byte what writeJSON writes for the same report:
// strings that need escaping (HTML characters, U+2028, a bidi control, a
// quote in a file name) in every part, no file, an empty file report, a
// nil change list and a diff longer than a chunk, with and without
// newlines and with multi-byte characters at the chunk edges.
func TestWriteMigrateJSONIsWriteJSON(t *testing.T) {
	long := strings.Repeat("+ é \"<a&b>\" \u2028 line\n", stringChunk/20)
	noNewline := strings.Repeat("é", stringChunk)
	change := migrate.Change{Path: `models["a<b>\u202e"]`, Rule: "M5", Action: "bound", AlgorithmBefore: "pulsar-wait-and-widen",
		AlgorithmAfter: "pulsar-wait-and-widen", Before: json.RawMessage(`"pulsar-wait-and-widen"`),
		After:       json.RawMessage(`{"algorithm":"pulsar-wait-and-widen","max_queued":4}`),
		AddedFields: []migrate.Field{{Name: "max_queued", Value: json.RawMessage("4")}}, RemovedFields: []migrate.Field{},
		Reason: "keeps <&> \"all\"", Lost: []string{}}
	file := func(name, diff string, changes []migrate.Change) migrateFileReport {
		fr := newMigrateFileReport(name)
		fr.Status, fr.Diff, fr.Changes = "changes_pending", diff, changes
		fr.Notes = append(fr.Notes, migrate.Note{Severity: migrate.SeverityWarning, Message: `"changes":null "diff":"" <x>`})
		return fr
	}
	reports := []migrateReport{
		{Strategy: "bounded", MaxQueued: 4, Only: []string{}, DefaultModels: []string{}},
		{Strategy: "bounded", MaxQueued: 4, Only: []string{`"files":null`}, DefaultModels: []string{},
			Files: []migrateFileReport{}},
		{Strategy: "pulsar", MaxQueued: 7, AffinityWaitMs: 300, Only: []string{"m"}, DefaultModels: []string{}, Write: true,
			Files: []migrateFileReport{
				file(`a"changes":null.json`, long, []migrate.Change{change, change}),
				newMigrateFileReport("empty.json"),
				file("nil.json", noNewline+"\n"+noNewline, nil),
				file("short.yaml", "--- a\n+++ b\n", []migrate.Change{}),
			}},
	}
	for i, r := range reports {
		var want, got bytes.Buffer
		if err := writeJSON(&want, "migrate", r); err != nil {
			t.Fatal(err)
		}
		if err := writeMigrateJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			n := 0
			for n < got.Len() && n < want.Len() && got.Bytes()[n] == want.Bytes()[n] {
				n++
			}
			t.Errorf("report %d: the streamed document differs from writeJSON's at byte %d of %d/%d", i, n, got.Len(), want.Len())
		}
	}
}

// TestAppendChangeJSONIsEncodingJSON: appendChangeJSON writes
// jsonobj.Encode's bytes for any change: strings with quotes,
// backslashes, control bytes, DEL, U+2028/U+2029, bidi controls, invalid
// UTF-8 and multi-byte characters; RawMessages compact, with spaces and
// newlines, nil, or invalid (both refuse it); nil and empty lists.
func TestAppendChangeJSONIsEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pieces := []string{"a", "models[\"m\"]", `\`, "\"", "\x00", "\x1f", "\b\f\n\r\t", "\x7f", "\u2028", "\u2029", "\u202e", "\xff", "\xe2\x80", "é", "→", "<&>", " "}
		str := rapid.Custom(func(t *rapid.T) string {
			if rapid.Bool().Draw(t, "random") {
				return rapid.String().Draw(t, "s")
			}
			return strings.Join(rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 6).Draw(t, "parts"), "")
		})
		raws := []json.RawMessage{nil, json.RawMessage(`"pulsar-wait-and-widen"`), json.RawMessage(`{"algorithm":"p","max_queued":4}`),
			json.RawMessage(" { \"a\" : [1, 2.5e3, null, true] ,\n\"b\":\"x y\" } "), json.RawMessage(`4`), json.RawMessage(`"\u2028<"`)}
		raw := rapid.SampledFrom(raws)
		if rapid.IntRange(0, 20).Draw(t, "invalid") == 0 {
			raw = rapid.SampledFrom([]json.RawMessage{json.RawMessage(`{`), json.RawMessage(`"a`), json.RawMessage(``)})
		}
		fields := rapid.Custom(func(t *rapid.T) []migrate.Field {
			if rapid.IntRange(0, 4).Draw(t, "nil") == 0 {
				return nil
			}
			n := rapid.IntRange(0, 3).Draw(t, "n")
			fs := make([]migrate.Field, n)
			for i := range fs {
				fs[i] = migrate.Field{Name: str.Draw(t, "name"), Value: raw.Draw(t, "value")}
			}
			return fs
		})
		var lost []string
		if rapid.Bool().Draw(t, "lost") {
			lost = rapid.SliceOfN(str, 0, 3).Draw(t, "lost-items")
		}
		c := migrate.Change{Path: str.Draw(t, "path"), Rule: str.Draw(t, "rule"), Action: str.Draw(t, "action"),
			AlgorithmBefore: str.Draw(t, "ab"), AlgorithmAfter: str.Draw(t, "aa"), Before: raw.Draw(t, "before"), After: raw.Draw(t, "after"),
			AddedFields: fields.Draw(t, "added"), RemovedFields: fields.Draw(t, "removed"), Reason: str.Draw(t, "reason"), Lost: lost}
		want, wantErr := jsonobj.Encode(c)
		var got bytes.Buffer
		err := appendChangeJSON(&got, &c)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("error %v, encoding/json's %v", err, wantErr)
		}
		if err == nil && !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("got\n%s\nwant\n%s", got.Bytes(), want)
		}
	})
}
