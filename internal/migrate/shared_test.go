package migrate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// TestSharedExamples migrates every real upstream config of
// ../shared/examples/lb-config with both strategies and checks the outcome
// against expected.tsv: files without a no-SLO entry are left alone, the
// accepted no-SLO files migrate to files that validate without a W1
// warning and are idempotent, and the rejected ones are never written
// (M12/M16).
func TestSharedExamples(t *testing.T) {
	dir, rows := testutil.LBConfigExamples(t)
	// Outcomes for the no-SLO files, per strategy, where they are not the
	// plain "changes pending" of an accepted file.
	special := map[string]map[Strategy]Status{
		// request_algorithms["pulsar-wait-and-widen"]: M7.
		"docs-lb-configuration-request-algorithms.json": {Pulsar: StatusRefused},
		// V19 on the top-level alias key stays whatever the target (M12).
		"test-unit-legacy-names-short.json": {Bounded: StatusInvalid, Pulsar: StatusInvalid},
		// V20 comparator: bounded keeps it (M12); pulsar drops it.
		"test-unit-pulsar-wait-and-widen-comparator.json": {Bounded: StatusInvalid},
	}
	for _, row := range rows {
		name, verdict, noSLO := row.Name, row.Verdict, row.NoSLO
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []Strategy{Bounded, Pulsar} {
			t.Run(name+"/"+s.String(), func(t *testing.T) {
				opts := DefaultOptions()
				opts.Strategy = s
				res, err := Migrate(name, data, opts)
				if err != nil {
					t.Fatal(err)
				}
				want := StatusUnchanged
				switch {
				case special[name][s] != "":
					want = special[name][s]
				case noSLO:
					want = StatusPending
				case verdict == "n/a":
					if res.Status == StatusUnreadable {
						want = StatusUnreadable
					}
				}
				if res.Status != want {
					t.Fatalf("status %s, want %s; notes %v errors %v", res.Status, want, res.Notes, res.Errors)
				}
				if res.Status != StatusPending {
					if string(res.Output) != string(data) {
						t.Fatal("output differs from input although nothing may be written")
					}
					return
				}
				checkMigrated(t, name, res, opts)
				for _, d := range validate.File(name, res.Output).Diagnostics {
					if d.Code == validate.CodeNoSLO {
						t.Errorf("migrated file still has the W1 warning: %s", d)
					}
				}
			})
		}
	}
}
