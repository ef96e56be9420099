package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const originContexts = `contexts:
  a:
    olric: ""
  b:
    olric: 10.0.0.1
    prometheus: http://127.0.0.1:1
    stargate-metrics: ["  "]
  c:
    prometheus: ""
    dmap: "bad name"
`

// An empty or wrong value a context supplied is reported as the
// context's, with its file and line, never as a flag the user gave.
func TestContextValueErrorsNameTheContext(t *testing.T) {
	t.Parallel()
	dir, file := writeContexts(t, originContexts, 0o600)
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"--context", "a", "store", "scan"}, []string{`context "a", setting olric at ` + file + ":3, is empty", "$LCCTL_OLRIC_ADDRS"}, "leave the flag out"},
		{[]string{"--context", "b", "store", "scan"}, []string{`not host:port`, `--olric is context "b", setting olric at ` + file + ":5"}, ""},
		{[]string{"--context", "b", "check", "metrics"}, []string{`context "b", setting stargate-metrics at ` + file + ":7, is empty", "--stargate from the command line"}, ""},
		{[]string{"--context", "c", "snapshot", "--model", "m"}, []string{`context "c", setting prometheus at ` + file + ":9, is empty"}, ""},
		{[]string{"--context", "c", "store", "--olric", "127.0.0.1:1", "scan"}, []string{"--dmap", `--dmap is context "c", setting dmap at ` + file + ":10"}, ""},
	} {
		code, out, errs := runWithEnv(t, env, tc.args...)
		ok := code == ExitUsage && (tc.not == "" || !strings.Contains(errs, tc.not))
		for _, w := range tc.want {
			ok = ok && strings.Contains(errs, w)
		}
		if !ok {
			t.Errorf("lcctl %s: exit %d, want 2 saying %q\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), code, tc.want, out, errs)
		}
	}
	// A value given on the command line is the flag's, not the context's.
	code, _, errs := runWithEnv(t, env, "--context", "b", "store", "--olric", "", "scan")
	if code != ExitUsage || !strings.Contains(errs, "--olric is empty") || strings.Contains(errs, `context "b"`) {
		t.Errorf("--olric '' on the command line: exit %d\n%s", code, errs)
	}
}

func TestWithContextOrigin(t *testing.T) {
	env := &Env{contextFlags: map[string]contextOrigin{"olric": {Context: "p", File: "f.yaml", Key: "olric", Line: 4}}}
	err := withContextOrigin(env, Usagef("--olric: bad"))
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || ee.Err.Error() != `--olric: bad; --olric is context "p", setting olric at f.yaml:4` {
		t.Errorf("got %v", err)
	}
	for _, e := range []error{Usagef("--olric-x: bad"), Usagef("--dmap: bad"), ErrFindings, nil} {
		if got := withContextOrigin(env, e); got != e {
			t.Errorf("%v: changed to %v", e, got)
		}
	}
}

// An unreachable source a context supplied is reported with the same
// ending, though the error does not spell the flag (the store's "cannot
// connect to Olric") or is a failed check of a report.
func TestUnreachableContextValueNamesTheContext(t *testing.T) {
	t.Parallel()
	dir, file := writeContexts(t, `contexts:
  u:
    olric: 127.0.0.1:1
    gateway-metrics: http://127.0.0.1:1/metrics
    stargate-metrics: http://127.0.0.1:1/metrics
`, 0o600)
	env := map[string]string{"XDG_CONFIG_HOME": dir}
	olric := `; --olric is context "u", setting olric at ` + file + ":3"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--context", "u", "store", "--dial-timeout", "200ms", "scan"}, []string{"cannot connect to Olric", olric}},
		{[]string{"--context", "u", "store", "--dial-timeout", "200ms", "get", "--key", "lc:v1:" + strings.Repeat("0", 64)}, []string{"cannot connect to Olric", olric}},
		{[]string{"--context", "u", "check", "metrics"}, []string{`connection refused; --gateway is context "u", setting gateway-metrics at ` + file + ":4", `--stargate is context "u", setting stargate-metrics at ` + file + ":5"}},
		{[]string{"--context", "u", "preflight", "--stage", "2", "--dial-timeout", "200ms"}, []string{olric, `--gateway-metrics is context "u", setting gateway-metrics at ` + file + ":4"}},
	} {
		code, out, errs := runWithEnv(t, env, tc.args...)
		ok := code == ExitFindings
		for _, w := range tc.want {
			ok = ok && strings.Contains(out+errs, w)
		}
		if !ok {
			t.Errorf("lcctl %s: exit %d, want 1 saying %q\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), code, tc.want, out, errs)
		}
	}
	// The same address on the command line is the flag's.
	code, _, errs := runWithEnv(t, env, "--context", "u", "store", "--olric", "127.0.0.1:1", "--dial-timeout", "200ms", "scan")
	if code != ExitFindings || strings.Contains(errs, `context "u"`) {
		t.Errorf("--olric on the command line: exit %d\n%s", code, errs)
	}
}

// preflight's stage-1 note names where the Olric addresses came from: the
// flag, the environment variable or the context setting.
func TestPreflightStage1OlricNoteNamesTheOrigin(t *testing.T) {
	t.Parallel()
	dir, file := writeContexts(t, "contexts:\n  s:\n    olric: 127.0.0.1:1\n", 0o600)
	metricsFile := filepath.Join(t.TempDir(), "empty.prom")
	if err := os.WriteFile(metricsFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"preflight", "--stage", "1", "--stargate-metrics", metricsFile}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, []string{"--olric", "127.0.0.1:1"}, "(--olric)"},
		{map[string]string{"XDG_CONFIG_HOME": t.TempDir(), EnvOlricAddrs: "127.0.0.1:1"}, nil, "($" + EnvOlricAddrs + ")"},
		{map[string]string{"XDG_CONFIG_HOME": dir}, []string{"--context", "s"}, `(context "s", setting olric at ` + file + ":3)"},
	} {
		var args []string
		if tc.args != nil && tc.args[0] == "--context" {
			args = append(append([]string{}, tc.args...), base...)
		} else {
			args = append(append([]string{}, base...), tc.args...)
		}
		_, _, errs := runWithEnv(t, tc.env, args...)
		if want := "the Olric addresses " + tc.want + " are not used at stage 1"; !strings.Contains(errs, want) {
			t.Errorf("lcctl %s: stderr lacks %q:\n%s", strings.Join(args, " "), want, errs)
		}
	}
}
