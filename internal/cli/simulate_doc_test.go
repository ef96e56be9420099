package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// TestSimulateSeedsDocExample: the --seeds 10 example in docs/simulate.md
// (the differences table and the verdict) is what the program prints for
// the command written above it, so the example follows the program.
func TestSimulateSeedsDocExample(t *testing.T) {
	t.Parallel()
	root := testutil.RepoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "`lcctl simulate --scenario examples/scenarios/saturated-rank1.yaml --compare --seeds 10`"
	_, after, ok := strings.Cut(string(doc), cmd)
	if !ok {
		t.Fatalf("docs/simulate.md no longer shows %s", cmd)
	}
	_, block, ok := strings.Cut(after, "```\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok || block == "" {
		t.Fatalf("no code block after %s", cmd)
	}
	code, out, errs := runLcctlStdin(t, "", nil, "simulate", "--scenario", filepath.Join(root, "examples", "scenarios", "saturated-rank1.yaml"), "--compare", "--seeds", "10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, block) {
		t.Errorf("docs/simulate.md's --seeds 10 example differs from the program's output; the block:\n%s\nthe program:\n%s", block, out)
	}
}

// TestShippedScenariosListed: docs/simulate.md's "Shipped scenarios"
// paragraph names every file of examples/scenarios, and only those
// (batched.yaml was missing).
func TestShippedScenariosListed(t *testing.T) {
	root := testutil.RepoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "simulate.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(doc), "\nShipped scenarios (`examples/scenarios/`):")
	if !ok {
		t.Fatal(`docs/simulate.md has no "Shipped scenarios" paragraph`)
	}
	para, _, _ = strings.Cut(para, "\n\n")
	files, err := filepath.Glob(filepath.Join(root, "examples", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		if name := filepath.Base(f); !strings.Contains(para, "`"+name+"`") {
			t.Errorf("docs/simulate.md's shipped scenarios do not name %s:\n%s", name, para)
		}
	}
	if n := strings.Count(para, ".yaml`"); n != len(files) {
		t.Errorf("docs/simulate.md names %d shipped scenarios, examples/scenarios has %d:\n%s", n, len(files), para)
	}
}
