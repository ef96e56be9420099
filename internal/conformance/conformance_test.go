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
	files, err := filepath.Glob(filepath.Join(testutil.SharedDir(t), "conformance", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files: %v", err)
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
	if total < 90 {
		t.Fatalf("only %d cases found", total)
	}
}
