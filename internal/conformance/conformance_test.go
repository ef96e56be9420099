package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/testutil"
)

// TestSharedConformance runs every case of ../shared/conformance/*.yaml,
// read at test time.
func TestSharedConformance(t *testing.T) {
	runCaseFiles(t, filepath.Join(testutil.SharedDir(t), "conformance"), 90)
}

// TestUpstreamConformance runs the cases derived from Stargate's own
// load-balancer tests (testdata/upstream/*.yaml; each case's `source:`
// names the upstream test it mirrors). They complement the shared set with
// every upstream test, and every sub-assertion, the shared set does not
// mirror.
func TestUpstreamConformance(t *testing.T) {
	runCaseFiles(t, filepath.Join("testdata", "upstream"), 500)
}

// runCaseFiles evaluates every case of dir/*.yaml and fails on any
// mismatch; it also fails when fewer than minCases cases were found, so a
// moved or emptied folder cannot pass silently.
func runCaseFiles(t *testing.T, dir string, minCases int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files in %s: %v", dir, err)
	}
	total := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := formats.DecodeCases(filepath.Base(f), data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			total++
			t.Run(filepath.Base(f)+"/"+c.Name, func(t *testing.T) {
				r := Evaluate(c)
				for _, m := range r.Mismatches {
					t.Errorf("%s:%d: %s", filepath.Base(f), c.Line, m)
				}
			})
		}
	}
	if total < minCases {
		t.Fatalf("only %d cases found in %s", total, dir)
	}
}
