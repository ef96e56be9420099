package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// TestValidateColour checks that text output is styled on a terminal and
// plain with --no-color, NO_COLOR, or a non-terminal stdout, with the same
// words either way.
func TestValidateColour(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(file, []byte(`{"models":{"m":"Pulsar"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(tty bool, env map[string]string, args ...string) (string, int) {
		var out, errb bytes.Buffer
		s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, OutTTY: tty, ErrTTY: tty,
			Getenv: func(k string) string { return env[k] }}
		code := Main(context.Background(), append(args, "validate", file), s)
		return out.String(), code
	}
	styled, code := run(true, map[string]string{"TERM": "xterm-256color"})
	if code != ExitFindings || !strings.Contains(styled, "\x1b[") {
		t.Fatalf("terminal output not styled (exit %d):\n%q", code, styled)
	}
	plainWant := stripANSI(styled)
	for name, c := range map[string]struct {
		tty  bool
		env  map[string]string
		args []string
	}{
		"--no-color": {true, map[string]string{"TERM": "xterm"}, []string{"--no-color"}},
		"NO_COLOR":   {true, map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, nil},
		"TERM=dumb":  {true, map[string]string{"TERM": "dumb"}, nil},
		"pipe":       {false, map[string]string{"TERM": "xterm"}, nil},
	} {
		got, code := run(c.tty, c.env, c.args...)
		if code != ExitFindings || strings.Contains(got, "\x1b[") {
			t.Errorf("%s: exit %d, output styled:\n%q", name, code, got)
		}
		if got != plainWant {
			t.Errorf("%s: plain output differs from the styled text:\n%s\nwant:\n%s", name, got, plainWant)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < '@' || s[j] > '~') {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestValidateUnreadableSubdirectory: a subdirectory that cannot be read is
// reported as an unreadable input (LC1000, exit 2) while the other files of
// the directory are still checked; it used to abort the run as a usage
// error before any file was checked.
func TestValidateUnreadableSubdirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits do not stop root from reading the directory")
	}
	dir := t.TempDir()
	for _, p := range []string{"ok", "private"} {
		if err := os.Mkdir(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p, "a.json"), []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	private := filepath.Join(dir, "private")
	if err := os.Chmod(private, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(private, 0o755) })
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := Main(context.Background(), []string{"validate", dir}, s)
	if code != ExitUsage {
		t.Errorf("exit %d, want %d\n%s%s", code, ExitUsage, out.String(), errb.String())
	}
	for _, want := range []string{filepath.Join(dir, "ok", "a.json") + " (json) valid", "LC1000 V1 " + private, "permission denied"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The unreadable directory given itself: reported the same way.
	out.Reset()
	errb.Reset()
	code = Main(context.Background(), []string{"validate", private, filepath.Join(dir, "ok")}, s)
	if code != ExitUsage || !strings.Contains(out.String(), "LC1000 V1 "+private) || !strings.Contains(out.String(), "a.json (json) valid") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// TestValidateExamplesGlob runs what an operator types in a clone,
// `lcctl validate examples/*`: every lb-config among the examples gets its
// per-file result, the other inputs (snapshots, scenarios, Helm values, a
// folder of scrapes) are listed as skipped, and the exit code is 1 exactly
// because mistakes.yaml has errors.
func TestValidateExamplesGlob(t *testing.T) {
	args, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "examples", "*"))
	if err != nil || len(args) == 0 {
		t.Fatalf("glob examples/*: %v %v", args, err)
	}
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := Main(context.Background(), append([]string{"--output", "json", "validate"}, args...), s)
	var rep validateReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, stderr %s, output not JSON: %v\n%s", code, errb.String(), err, out.String())
	}
	if code != ExitFindings {
		t.Errorf("exit %d, want 1 (mistakes.yaml has errors); stderr: %s", code, errb.String())
	}
	checked := map[string]bool{}
	for _, f := range rep.Files {
		base := filepath.Base(f.File)
		checked[base] = true
		if !f.Readable {
			t.Errorf("%s: unreadable", f.File)
		}
		if (f.Errors > 0) != (base == "mistakes.yaml") {
			t.Errorf("%s: %d errors", f.File, f.Errors)
		}
	}
	lbConfigs, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "examples", "lb-config", "*"))
	explainConfigs, _ := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "examples", "explain", "*.lb-config.yaml"))
	for _, f := range append(lbConfigs, explainConfigs...) {
		if !checked[filepath.Base(f)] {
			t.Errorf("%s was not checked", f)
		}
	}
	if len(rep.Files) != len(lbConfigs)+len(explainConfigs) {
		t.Errorf("%d files checked, want the %d lb-configs", len(rep.Files), len(lbConfigs)+len(explainConfigs))
	}
	skipped := map[string]string{}
	for _, s := range rep.Skipped {
		skipped[filepath.ToSlash(s.File)] = s.Reason
	}
	for suffix, reason := range map[string]string{
		"examples/explain/rank1-full.snapshot.yaml": "routing snapshot",
		"examples/scenarios/saturated-rank1.yaml":   "simulation scenario",
		"examples/gateway/values-stage2.yaml":       "Helm values",
		"examples/metrics":                          "no .json/.yaml/.yml files",
	} {
		found := false
		for f, r := range skipped {
			if strings.HasSuffix(f, suffix) {
				found = true
				if !strings.Contains(r, reason) {
					t.Errorf("%s skipped as %q, want %q", f, r, reason)
				}
			}
		}
		if !found {
			t.Errorf("%s not listed as skipped: %v", suffix, skipped)
		}
	}
}

// TestOtherInputKind: only files that decode cleanly as another lcctl
// input are skipped; anything that could be an lb-config, broken or not,
// is checked.
func TestOtherInputKind(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"snapshot", "model: m\nclusters:\n  - cluster_id: A\n    stats: {last_mean_input_tps: 1, max_input_tps: 1, num_running_queries: 0, max_engine_concurrency: 1}\n", "routing snapshot"},
		{"scenario", "name: s\nclusters:\n  - {id: a}\nworkload: {session_rate: 1, duration_s: 10}\n", "simulation scenario"},
		{"values", "llmApiGateway:\n  config: {}\n", "Helm values"},
		{"lb-config", `{"default": "pulsar"}`, ""},
		{"lb-config next to a foreign key", "models: {}\nclusters: []\n", ""},
		{"empty mapping", "{}", ""},
		{"misspelt lb-config", `{"modls": {"m": "pulsar"}}`, ""},
		{"positional lb-config", `["pulsar"]`, ""},
		{"syntax error", "models: [", ""},
		{"two documents", "model: m\n---\nmodel: n\n", ""},
		{"scalar", "pulsar", ""},
		{"snapshot with a typo", "model: m\nclusterz: []\n", ""},
	} {
		got := otherInputKind(c.name+".yaml", []byte(c.data))
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzOtherInputKind: never a panic, and a mapping with an lb-config field
// at its top level is never skipped.
func FuzzOtherInputKind(f *testing.F) {
	for _, seed := range []string{
		"model: m\nclusters:\n  - cluster_id: A\n",
		"name: s\nclusters:\n  - {id: a}\nworkload: {session_rate: 1}\n",
		"llmApiGateway: {config: {}}\n",
		`{"models": {"m": "pulsar"}}`,
		"- name: c\n  config: {}\n",
		"&a [*a]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		kind := otherInputKind("fuzz.yaml", data)
		if kind == "" {
			return
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 {
			t.Fatalf("skipped as %q, but it is not one YAML document (%v)", kind, err)
		}
		if top := doc.Content[0]; top.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(top.Content); i += 2 {
				switch top.Content[i].Value {
				case "default", "request_algorithms", "models":
					t.Fatalf("skipped as %q with the lb-config field %q", kind, top.Content[i].Value)
				}
			}
		}
	})
}

// TestFileNamesAreEscaped: a file name holding terminal escape sequences
// reaches neither stdout nor stderr raw, in validate's skip error and
// migrate's diff and report.
func TestFileNamesAreEscaped(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "a\x1b[31mRED\x1b[0m\nb.yaml")
	if err := os.WriteFile(snap, []byte("model: m\nclusters:\n  - cluster_id: A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		code := Main(context.Background(), args, s)
		return out.String(), errb.String(), code
	}
	out, errs, code := run("validate", dir)
	if code != ExitUsage || strings.ContainsAny(out+errs, "\x1b") || !strings.Contains(errs, `a\x1b[31mRED\x1b[0m\x0ab.yaml`) {
		t.Errorf("validate: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	cfg := filepath.Join(dir, "c\x1b]0;pwned\x07.json")
	if err := os.WriteFile(cfg, []byte(`{"models": {"m": "pulsar-wait-and-widen"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = run("migrate", "--strategy", "bounded", cfg)
	if code != ExitFindings || strings.ContainsAny(out+errs, "\x1b\x07") || !strings.Contains(out, `+++ `+filepath.Join(dir, `c\x1b]0;pwned\x07.json`)) {
		t.Errorf("migrate: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
