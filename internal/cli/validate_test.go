package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
