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

// literalExceptions are the production lines that hold an lb-config field
// name as a quoted string and are not a home of the lb-config field but
// the one home of another fact that has the same name. Keyed by file and
// name, each excuses one line and must still match one (a stale entry
// fails the test).
var literalExceptions = map[[2]string]string{
	// The simulator's master seed: the scenario key, the --seed flag and
	// the report key all take it from sim.SeedKey.
	{"internal/sim/scenario.go", "seed"}:     "sim.SeedKey, the one home of the simulation's master seed",
	{"internal/migrate/render_yaml.go", "n"}: "a YAML 1.1 boolean spelling a plain scalar must not take",
	// The top-level default and models are also ordinary words of other
	// vocabularies and documents.
	{"internal/cli/context_cmd.go", "default"}: "a setting's origin in context show --resolved (flag, env, context, default)",
	{"internal/live/live.go", "default"}:       "live.OriginDefault, a snapshot value's origin",
	{"internal/metrics/report.go", "models"}:   "check metrics' JSON key: the models seen in the scrape",
	{"internal/cli/check_json.go", "models"}:   "the same check metrics JSON key, where the report streams it",
	{"internal/metrics/verdict.go", "models"}:  "the English plural of model (plural.Noun)",
	{"internal/sim/result.go", "models"}:       "simulate's JSON key: the route of each workload model",
	{"internal/sim/scenario.go", "models"}:     "the scenario's workload model mix",
}

// TestFieldNamesHaveOneHome fails when an lb-config field name is quoted
// on more production lines than it has homes, apart from
// literalExceptions. A line counts when it holds "NAME" or "NAME, (a
// struct tag with options). A registry row's name has one home, the json
// tag of its AlgorithmConfig field (the row takes its Name from it); a
// top-level field (lb.TopLevelFields) has two, the tag of lb.Config's
// field and lb.TopLevelDefault / lb.TopLevelModels (request_algorithms:
// the tags of AlgorithmConfig's and Config's maps). Every other use goes
// through lb.Field…Name or those constants, so a rename or a new field is
// one edit. It is a stricter Go form of
// `git grep -n '"NAME"' -- '*.go' ':!*_test.go'` for every such name.
func TestFieldNamesHaveOneHome(t *testing.T) {
	root := testutil.RepoRoot(t)
	homes := map[string]int{}
	for _, f := range lb.Fields() {
		homes[f.Name] = 1
	}
	for _, name := range lb.TopLevelFields {
		homes[name] = 2
	}
	lines := map[string][]string{} // name → "file:line"
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
			for name := range homes {
				if !strings.Contains(line, `"`+name+`"`) && !strings.Contains(line, `"`+name+`,`) {
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
	names := make([]string, 0, len(homes))
	for n := range homes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if len(lines[n]) > homes[n] {
			t.Errorf("%q is quoted on %d production lines, at most %d (its struct tag%s); use lb.Field…Name or lb.TopLevel…:\n\t%s",
				n, len(lines[n]), homes[n], map[bool]string{true: "s or constant"}[homes[n] == 2], strings.Join(lines[n], "\n\t"))
		}
		if len(lines[n]) == 0 {
			t.Errorf("%q is on no production line: its struct tag should be one", n)
		}
	}
	for k, why := range literalExceptions {
		if !used[k] {
			t.Errorf("exception %s %q (%s) no longer matches a line: remove it", k[0], k[1], why)
		}
	}
}
