package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// A flag the command would not act on is a usage error (exit 2) naming
// it, never a run that ignores it.
func TestIgnoredFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "y.json")
	if err := os.WriteFile(plain, []byte(`{"default": "pulsar-wait-and-widen"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sf := filepath.Join(testutil.RepoRoot(t), "examples", "explain", "returning-k1.snapshot.yaml")
	olric := []string{"store", "--olric", "127.0.0.1:1"}
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		msg   string
	}{
		{"evict verbose dry run", "", append(olric, "evict", "--cluster", "cluster-a", "--verbose"), "--verbose prints the outcome of each deletion, so it needs --yes"},
		{"evict verbose json", "", append(olric, "-o", "json", "evict", "--cluster", "cluster-a", "--verbose", "--yes"), "--verbose is for text output"},
		{"migrate data-key plain", "", []string{"migrate", "--strategy", "bounded", "--data-key", "x", plain}, `--data-key "x": the file is not a Kubernetes manifest`},
		{"validate data-key plain", "", []string{"validate", "--data-key", "x", plain}, `--data-key "x": the file is not a Kubernetes manifest`},
		{"explain data-key plain", "", []string{"explain", "--config", plain, "--data-key", "x", "--snapshot", sf, "--model", "m"}, `--data-key "x": the file is not a Kubernetes manifest`},
		{"migrate empty values-key", "", []string{"migrate", "--strategy", "bounded", "--values-key", "", plain}, "--values-key is empty"},
		{"validate empty values-key", "", []string{"validate", "--values-key", "", plain}, "--values-key is empty"},
		{"explain empty values-key", "", []string{"explain", "--config", plain, "--values-key", "", "--snapshot", sf, "--model", "m"}, "--values-key is empty"},
		{"migrate empty data-key", "", []string{"migrate", "--strategy", "bounded", "--data-key=", plain}, "--data-key is empty"},
		{"validate empty data-key", "", []string{"validate", "--data-key", "", plain}, "--data-key is empty"},
		{"explain empty data-key", "", []string{"explain", "--config", plain, "--data-key", "", "--snapshot", sf, "--model", "m"}, "--data-key is empty"},
		{"values-key and data-key", "", []string{"validate", "--values-key", "router.lbConfig", "--data-key", "x", plain}, "give one of them"},
		{"algorithm-config values-key", "", []string{"explain", "--algorithm-config", plain, "--values-key", "a.b", "--snapshot", sf, "--model", "m"}, "--algorithm-config is one algorithm's settings object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := runCLI(t, tc.stdin, tc.args...)
			if code != ExitUsage || !strings.Contains(out+errs, tc.msg) {
				t.Errorf("lcctl %s: exit %d, want 2 saying %q\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), code, tc.msg, out, errs)
			}
		})
	}
	// The same flags where they mean something still work.
	if code, out, errs := runCLI(t, twoConfigs, "validate", "--data-key", "lb-config.yaml", "-"); code != 0 {
		t.Errorf("--data-key on a manifest: exit %d\n%s%s", code, out, errs)
	}
}
