package lb_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
)

// literalExceptions are the production lines that hold a registry name as
// a quoted string and are not a second home of the lb-config field: the
// same word in another vocabulary, or the key of another document's JSON
// schema (a struct tag cannot name a constant). Keyed by file and name.
var literalExceptions = map[[2]string]string{
	{"internal/lb/config.go", "request_algorithms"}:     "the top-level Config field of the same name (a second struct tag)",
	{"internal/lb/hash.go", "seed"}:                     "a tag of Stargate's hash input format, fixed by upstream",
	{"internal/lb/trace.go", "max_queued"}:              "the trace phase's queue slack (max_queued or fallback_max_queued), docs/explain.md",
	{"internal/cli/migrate.go", "max_queued"}:           "migrate's JSON report echoes --max-queued, docs/migrate.md",
	{"internal/cli/simulate.go", "seed"}:                "simulate's --seed flag (the simulation's master seed)",
	{"internal/sim/scenario.go", "seed"}:                "scenario keys: the simulation seed and the consistent-hash policy's seed",
	{"internal/sim/report/report.go", "seed"}:           "the simulation seed in simulate's report",
	{"internal/sim/result.go", "last_cluster_affinity"}: "simulate's JSON result, docs/simulate.md",
	{"internal/migrate/render_yaml.go", "n"}:            "a YAML 1.1 boolean word that must be quoted",
}

// TestFieldNamesHaveOneHome fails when an lb-config field name appears as
// a quoted string on more than two production lines (its struct tag in
// config.go and its registry row), apart from literalExceptions: every
// other use must go through the registry (lb.FieldX.Name), so a rename or
// a new field is one edit. It is the Go form of
// `git grep -n '"NAME"' -- '*.go' ':!*_test.go'` for every registry name.
func TestFieldNamesHaveOneHome(t *testing.T) {
	root := testutil.RepoRoot(t)
	lines := map[string][]string{} // name → "file:line"
	quoted := map[string]string{}
	for _, f := range lb.Fields() {
		quoted[f.Name] = `"` + f.Name + `"`
	}
	used := map[[2]string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for i, line := range strings.Split(string(data), "\n") {
			for name, q := range quoted {
				if !strings.Contains(line, q) {
					continue
				}
				if _, ok := literalExceptions[[2]string{rel, name}]; ok {
					used[[2]string{rel, name}] = true
					continue
				}
				lines[name] = append(lines[name], rel+":"+strconv.Itoa(i+1))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(lines))
	for n := range lines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if len(lines[n]) > 2 {
			t.Errorf("%q appears on %d production lines, at most 2 (struct tag, registry row); use lb.Field…Name:\n\t%s",
				n, len(lines[n]), strings.Join(lines[n], "\n\t"))
		}
	}
	for k, why := range literalExceptions {
		if !used[k] {
			// Logged, not failed: another change may remove the line.
			t.Logf("exception %s %q (%s) no longer matches a line: remove it", k[0], k[1], why)
		}
	}
}
