package cli

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/metrics"
)

func init() {
	// --watch refuses intervals under 1s; the tests (internal and
	// cli_test, one binary) watch faster.
	minWatchInterval = 20 * time.Millisecond
}

// A piped watch writes what `check metrics -o json` prints, as one line,
// and its text line says what that document says: an error with bytes
// that are not UTF-8 shows them as U+FFFD one by one, as the JSON does,
// and a model's bidi control is escaped.
func TestWatchLinesFollowTheDocument(t *testing.T) {
	share := 0.5
	rep := MetricsReport{
		Schema: SchemaID("metrics"), Window: metrics.Totals,
		Stargate: &metrics.StargateReport{Rows: []metrics.ModelSelections{{Model: "a\u202eb", ReturningPrimaryShare: &share}}},
		Errors:   []string{"fetch http://h/m: HTTP status 503 bad \xff\xe2\x80 only"},
		Verdicts: checks.ToJSON(&checks.Report{}, "check metrics", 0, false),
	}
	var doc, line bytes.Buffer
	if err := writeJSON(&doc, "metrics", &rep); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONLine(&line, "metrics", &rep); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, doc.Bytes()); err != nil {
		t.Fatal(err)
	}
	if compact.WriteByte('\n'); !bytes.Equal(line.Bytes(), compact.Bytes()) {
		t.Errorf("JSON line\n%s\nis not the document\n%s", line.Bytes(), compact.Bytes())
	}
	var decoded MetricsReport
	if err := json.Unmarshal(doc.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 20, 51, 10, 0, time.UTC)
	want := "2026-12-01T20:51:10Z | stargate a\\u202eb to-last 50.0% | error: fetch http://h/m: HTTP status 503 bad \ufffd\ufffd\ufffd only | verdicts ok (0 ok, 0 failed, 0 warnings)"
	if got, fromJSON := watchLine(now, &rep), watchLine(now, &decoded); got != want || fromJSON != want {
		t.Errorf("watch line\n%q\nfrom the JSON\n%q\nwant\n%q", got, fromJSON, want)
	}
}
