package lb_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/conformance"
	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/testutil"
)

// TestConformanceThroughEngine runs every case of
// ../shared/conformance/*.yaml (read at test time) and of the
// upstream-derived set in internal/conformance/testdata/upstream, so that
// `go test ./internal/lb/...` covers the engine's conformance on its own
// (issue 3's acceptance), not only `go test ./internal/conformance`.
// conformance.Evaluate runs a case through internal/validate (config-only
// and config blocks), internal/formats and this engine's proxy step.
func TestConformanceThroughEngine(t *testing.T) {
	for _, set := range []struct {
		dir string
		min int // a moved or emptied folder must not pass silently
	}{
		{filepath.Join(testutil.SharedDir(t), "conformance"), 90},
		{filepath.Join("..", "conformance", "testdata", "upstream"), 500},
	} {
		files, err := filepath.Glob(filepath.Join(set.dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no conformance files in %s: %v", set.dir, err)
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
				if r := conformance.Evaluate(c); !r.Pass() {
					for _, m := range r.Mismatches {
						t.Errorf("%s:%d %s: %s", f, c.Line, c.Name, m)
					}
				}
			}
		}
		if total < set.min {
			t.Fatalf("only %d cases in %s, want at least %d", total, set.dir, set.min)
		}
		t.Logf("%s: %d cases", set.dir, total)
	}
}
