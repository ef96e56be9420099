package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// A YAML file that ends inside a flow collection is reported on the line
// where the collection opened (docs/validate.md) by every command that
// reads YAML, and never on a line past the end of the file, where yaml.v3
// marks the end of the stream.
func TestYAMLEndInsideCollectionLine(t *testing.T) {
	t.Parallel()
	root := testutil.RepoRoot(t)
	snap := filepath.Join(root, "examples/explain/rank1-full.snapshot.yaml")
	scenario := filepath.Join(root, "examples/scenarios/drain.yaml")
	dir := t.TempDir()
	for i, c := range []struct {
		src  string
		line int
	}{
		{"x: [1,", 1},
		{"x: {a: 1,\n", 1},
		{"a: 1\r\nx: [1,\r\n\r\n", 2},
		{"a: 1\nx: [1, \"]\", # ]\n  {b: [2]},\n\n", 2},
		{"a: 'don''t ['\nx: {b: [1,\n", 2},
	} {
		file := filepath.Join(dir, "bad"+strconv.Itoa(i)+".yaml")
		if err := os.WriteFile(file, []byte(c.src), 0o600); err != nil {
			t.Fatal(err)
		}
		at := regexp.MustCompile(regexp.QuoteMeta(file) + `:(\d+)`)
		for _, args := range [][]string{
			{"validate", file},
			{"validate", "-o", "json", file},
			{"migrate", "--strategy", "bounded", file},
			{"preflight", "--stage", "1", "--config", file},
			{"explain", "--snapshot", snap, "--model", "model-a", "--config", file},
			{"explain", "--snapshot", file, "--model", "model-a"},
			{"explain", "--case", file},
			{"simulate", "--scenario", file},
			{"simulate", "--scenario", scenario, "--config", file, "--max-requests", "10"},
		} {
			r := lcctl(t, "", nil, args...)
			found := at.FindAllStringSubmatch(r.out+r.err, -1)
			if args[1] == "-o" {
				found = regexp.MustCompile(`"line": (\d+)`).FindAllStringSubmatch(r.out, -1)
			}
			ok := r.code == ExitUsage && len(found) > 0
			for _, m := range found {
				ok = ok && m[1] == strconv.Itoa(c.line)
			}
			if !ok {
				t.Errorf("%q: lcctl %q: exit %d, want exit 2 and the error on line %d\nstdout:\n%s\nstderr:\n%s", c.src, args, r.code, c.line, r.out, r.err)
			}
		}
	}
}
