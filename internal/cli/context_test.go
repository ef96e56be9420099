package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// runWithEnv runs lcctl in-process with the given environment only.
func runWithEnv(t *testing.T, envv map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return envv[k] }}
	code := Main(context.Background(), args, s)
	return code, out.String(), errb.String()
}

const testContexts = `# contexts for the test
current-context: local   # keep this comment
contexts:
  local:
    olric: 127.0.0.1:1
    dial-timeout: 200ms
  prod:
    olric: [127.0.0.1:4, 127.0.0.1:5]
    prometheus: http://user:s3cret@prom:9090
    map-addr: [10.0.0.1:3320=127.0.0.1:13320]
`

func writeContexts(t *testing.T, text string, mode os.FileMode) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "lcctl", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, mode); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// TestContextPrecedence: a real command (store stats, whose connect error
// names the address it dialled) takes --olric over $LCCTL_OLRIC_ADDRS over
// the context over nothing.
func TestContextPrecedence(t *testing.T) {
	t.Parallel()
	dir, _ := writeContexts(t, testContexts, 0o600)
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	code, _, errs := runWithEnv(t, env, "store", "stats")
	if code != ExitFindings || !strings.Contains(errs, "127.0.0.1:1") {
		t.Fatalf("context: exit %d %s", code, errs)
	}
	env["LCCTL_OLRIC_ADDRS"] = "127.0.0.1:2"
	if _, _, errs := runWithEnv(t, env, "store", "stats", "--dial-timeout", "200ms"); !strings.Contains(errs, "127.0.0.1:2") || strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("env over context: %s", errs)
	}
	if _, _, errs := runWithEnv(t, env, "store", "stats", "--olric", "127.0.0.1:3", "--dial-timeout", "200ms"); !strings.Contains(errs, "127.0.0.1:3") {
		t.Errorf("flag over env: %s", errs)
	}
	// --context over $LCCTL_CONTEXT over current-context.
	delete(env, "LCCTL_OLRIC_ADDRS")
	env["LCCTL_CONTEXT"] = "prod"
	code, out, errs := runWithEnv(t, env, "-o", "json", "context", "show", "--resolved")
	var rep contextShowReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Context != "prod" || rep.ChosenBy != "$LCCTL_CONTEXT" {
		t.Fatalf("show: exit %d %s %s", code, out, errs)
	}
	got := map[string]resolvedSetting{}
	for _, r := range rep.Resolved {
		got[r.Key] = r
	}
	if r := got["olric"]; r.Value != "127.0.0.1:4,127.0.0.1:5" || r.From != "context" {
		t.Errorf("olric resolved to %+v", r)
	}
	if r := got["prometheus"]; r.Value != "http://user:xxxxx@prom:9090" {
		t.Errorf("prometheus shown as %+v (the password must be hidden)", r)
	}
	// The real default (not the flag's empty one) and a neutral origin:
	// the setting serves explain, preflight and store alike.
	if r := got["dmap"]; r.From != "default" || r.Value != store.DMapName || r.Detail != "--dmap (explain, preflight, store)" {
		t.Errorf("dmap: %+v", r)
	}
	if !strings.Contains(errs, `context "prod" stores a password in plain text`) {
		t.Errorf("no plain-text password warning: %q", errs)
	}
	// lcctl snapshot takes --prometheus and --cluster-label from the
	// context (its error names the URL it queried).
	sdir, _ := writeContexts(t, "current-context: p\ncontexts:\n  p:\n    prometheus: http://127.0.0.1:1\n    cluster-label: cluster\n", 0o600)
	if code, _, errs := runWithEnv(t, map[string]string{"XDG_CONFIG_HOME": sdir}, "snapshot", "--model", "m"); code == 0 || !strings.Contains(errs, "--prometheus http://127.0.0.1:1") {
		t.Errorf("snapshot from the context: exit %d %s", code, errs)
	}
	code, out, _ = runWithEnv(t, env, "-o", "json", "--context", "local", "context", "show")
	if code != 0 || !strings.Contains(out, `"chosen_by": "--context"`) {
		t.Errorf("--context: %s", out)
	}
}

func TestContextUseKeepsTheFile(t *testing.T) {
	t.Parallel()
	dir, file := writeContexts(t, testContexts, 0o600)
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	if code, out, errs := runWithEnv(t, env, "context", "use", "prod"); code != 0 || !strings.Contains(out, "current context: prod") {
		t.Fatalf("use: exit %d %s %s", code, out, errs)
	}
	got, _ := os.ReadFile(file)
	if want := strings.Replace(testContexts, "current-context: local ", "current-context: prod ", 1); string(got) != want {
		t.Errorf("file after use:\n%s", got)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	code, out, _ := runWithEnv(t, env, "context", "list")
	if code != 0 || !strings.Contains(out, "* prod ") || !strings.Contains(out, "  local") {
		t.Errorf("list: %s", out)
	}
	if code, _, errs := runWithEnv(t, env, "context", "use", "prd"); code != ExitUsage || !strings.Contains(errs, `did you mean "prod"`) {
		t.Errorf("use prd: exit %d %s", code, errs)
	}
}

func TestContextFileProblems(t *testing.T) {
	t.Parallel()
	dir, file := writeContexts(t, testContexts, 0o644)
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	_, _, errs := runWithEnv(t, env, "context", "list")
	if !strings.Contains(errs, "accessible by other users (mode 0644): run chmod 600") {
		t.Errorf("no mode warning: %q", errs)
	}
	bad := "contexts:\n  x:\n    olric: a:1\n    password: hunter2\n"
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runWithEnv(t, env, "store", "stats")
	if code != ExitUsage || !strings.Contains(errs, `line 4: context "x": unknown setting "password" (a context never holds a secret itself`) {
		t.Errorf("password key: exit %d %s", code, errs)
	}
	if code, _, errs := runWithEnv(t, map[string]string{"LCCTL_CONFIG": filepath.Join(dir, "missing.yaml")}, "version"); code != ExitUsage || !strings.Contains(errs, "missing.yaml ($LCCTL_CONFIG)") {
		t.Errorf("missing LCCTL_CONFIG: exit %d %s", code, errs)
	}
	// No file at the default place: commands run as before.
	if code, _, errs := runWithEnv(t, map[string]string{"HOME": t.TempDir()}, "version"); code != 0 || errs != "" {
		t.Errorf("no config file: exit %d %s", code, errs)
	}
	if code, _, errs := runWithEnv(t, map[string]string{"HOME": t.TempDir()}, "--context", "prod", "version"); code != ExitUsage || !strings.Contains(errs, `context "prod" (--context) does not exist: no config file at`) {
		t.Errorf("--context without a file: exit %d %s", code, errs)
	}
}

func TestContextUseThroughSymlinkAndCRLF(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "real.yaml")
	crlf := "contexts:\r\n  local:\r\n    olric: 127.0.0.1:1\r\n"
	if err := os.WriteFile(target, []byte(crlf), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l2.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runWithEnv(t, nil, "context", "use", "local", "--config-file", link)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi, err)
	}
	got, _ := os.ReadFile(target)
	if want := "current-context: local\r\n" + crlf; string(got) != want {
		t.Fatalf("target:\n%q\nwant\n%q", got, want)
	}
}

func TestContextArgumentNamedInError(t *testing.T) {
	t.Parallel()
	_, file := writeContexts(t, testContexts, 0o600)
	for _, sub := range []string{"use", "show"} {
		code, out, errs := runWithEnv(t, nil, "--config-file", file, "context", sub, "nope")
		if code != ExitUsage || !strings.Contains(errs, "the argument of context "+sub) || strings.Contains(errs, "(--context)") {
			t.Errorf("context %s nope: exit %d\n%s%s", sub, code, out, errs)
		}
	}
}

func TestContextRelativePathsFromConfigDir(t *testing.T) {
	t.Parallel()
	dir, file := writeContexts(t, "current-context: c\ncontexts:\n  c:\n    config: lb.yaml\n", 0o600)
	_ = dir
	lb := filepath.Join(filepath.Dir(file), "lb.yaml")
	if err := os.WriteFile(lb, []byte("default: no-such-algorithm\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sf := filepath.Join(testutil.RepoRoot(t), "examples", "explain", "returning-k1.snapshot.yaml")
	code, out, errs := runWithEnv(t, nil, "--config-file", file, "explain", "--snapshot", sf, "--model", "embed")
	if code == ExitOK || !strings.Contains(out+errs, lb) {
		t.Fatalf("exit %d: want the config resolved to %s\n%s%s", code, lb, out, errs)
	}
}
