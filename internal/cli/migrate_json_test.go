package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
