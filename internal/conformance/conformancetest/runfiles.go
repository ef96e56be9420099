// Package conformancetest runs conformance case files in Go tests. It is
// kept apart from internal/conformance so that the testing package is not
// linked into lcctl (internal/cli uses conformance.Evaluate).
package conformancetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/conformance"
	"github.com/lcctl/lcctl/internal/formats"
)

// RunCaseFiles is a test helper: it evaluates every case of dir/*.yaml
// (formats.md case files) with conformance.Evaluate, one subtest per case, and fails t
// on any mismatch; it also fails when fewer than minCases cases were found,
// so a moved or emptied folder cannot pass silently. The tests of this
// package and of internal/lb run the shared and upstream-derived sets
// through it.
func RunCaseFiles(t *testing.T, dir string, minCases int) {
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
				r := conformance.Evaluate(c)
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
