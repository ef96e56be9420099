package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// TestFormatsDocExamples runs the examples of docs/formats.md, so the page
// cannot drift from the decoder: the snapshot explains, the case file
// passes --check, and the two errors it quotes are the ones lcctl prints.
func TestFormatsDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "formats.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) != 2 {
		t.Fatalf("docs/formats.md has %d yaml blocks, want 2 (a snapshot and a case file)", len(blocks))
	}
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap.yaml")
	cases := filepath.Join(dir, "cases.yaml")
	if err := os.WriteFile(snap, []byte(blocks[0][1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cases, []byte(blocks[1][1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runLcctlStdin(t, "", nil, "explain", "--snapshot", snap, "--model", "model-a", "--input-tokens", "10"); code != 0 || !strings.Contains(out, "Dispatch to B") {
		t.Errorf("snapshot example: exit %d, stderr %q\n%s", code, errs, out)
	}
	if code, out, errs := runLcctlStdin(t, "", nil, "explain", "--case", cases, "--check"); code != 0 || !strings.Contains(out, "1 of 1 cases passed") {
		t.Errorf("case example: exit %d, stderr %q\n%s", code, errs, out)
	}

	// The quoted errors, from the file they describe.
	bad := "clusters:\n  - cluster_id: A\n  - cluster_id: B\n    stats: {queue_size: -1, num_runing_queries: 1}\n"
	t.Chdir(dir)
	if err := os.WriteFile("snap.yaml", []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runLcctlStdin(t, "", nil, "explain", "--snapshot", "snap.yaml", "--model", "m")
	quoted := regexp.MustCompile(`(?m)^  (snap\.yaml:\d+:\d+: .*)$`).FindAllStringSubmatch(string(doc), -1)
	if code != 2 || len(quoted) != 2 {
		t.Fatalf("bad snapshot: exit %d (want 2), %d quoted errors in the page (want 2)", code, len(quoted))
	}
	for _, q := range quoted {
		if !strings.Contains(errs, q[1]) {
			t.Errorf("docs/formats.md quotes %q; lcctl printed:\n%s", q[1], errs)
		}
	}
}
