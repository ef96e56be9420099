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
// a quoted string and are not a second home of the lb-config field but
// the one home of another fact that has the same name. Keyed by file and
// name, each excuses one line and must still match one (a stale entry
// fails the test).
var literalExceptions = map[[2]string]string{
	// Upstream's hash-input builders (wait_and_widen, pulsar,
	// groq_multiregion) write the tag as a byte literal b"seed" beside
	// b"routing_key" and b"model_id", which are not config fields: it is
	// the hash format's tag, pinned with HASH_VERSION and the golden
	// hashes, not serde's field name, and must not follow a rename.
	{"internal/lb/hash.go", "seed"}: "a tag of Stargate's hash input format (wait-and-widen.md §4.1, pulsar.md §4.2)",
	// The simulator's master seed: the scenario key, the --seed flag and
	// the report key all take it from sim.SeedKey.
	{"internal/sim/scenario.go", "seed"}: "sim.SeedKey, the one home of the simulation's master seed",
	// The top-level default and models (lb.TopLevelFields) are also
	// ordinary words of other vocabularies and documents.
	{"internal/cli/context_cmd.go", "default"}: "a setting's origin in context show --resolved (flag, env, context, default)",
	{"internal/live/live.go", "default"}:       "live.OriginDefault, a snapshot value's origin",
	{"internal/validate/result.go", "default"}: "the JSON name of validate.RoleDefault (entry roles: default, model, request_algorithm, …)",
	{"internal/metrics/report.go", "models"}:   "check metrics' JSON key: the models seen in the scrape",
	{"internal/metrics/verdict.go", "models"}:  "the English plural of model (plural.Noun)",
	{"internal/sim/result.go", "models"}:       "simulate's JSON key: the route of each workload model",
	{"internal/sim/scenario.go", "models"}:     "the scenario's workload model mix",
}

// TestFieldNamesHaveOneHome fails when an lb-config field name (every
// registry row and lb.TopLevelFields) appears as a quoted string on more
// than two production lines (its struct tag in config.go and its registry
// row or constant), apart from literalExceptions: every other use must go
// through the registry (lb.FieldX.Name, lb.TopLevelDefault, …), so a
// rename or a new field is one edit. It is the Go form of
// `git grep -n '"NAME"' -- '*.go' ':!*_test.go'` for every such name.
func TestFieldNamesHaveOneHome(t *testing.T) {
	root := testutil.RepoRoot(t)
	lines := map[string][]string{} // name → "file:line"
	quoted := map[string]string{}
	for _, f := range lb.Fields() {
		quoted[f.Name] = `"` + f.Name + `"`
	}
	for _, name := range lb.TopLevelFields {
		quoted[name] = `"` + name + `"`
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
				// An exception excuses one line: a second quoted name
				// in that file counts like any other.
				if k := [2]string{rel, name}; literalExceptions[k] != "" && !used[k] {
					used[k] = true
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
			t.Errorf("exception %s %q (%s) no longer matches a line: remove it", k[0], k[1], why)
		}
	}
}
