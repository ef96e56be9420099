package cli_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// errDiskFull is what failingWriter returns once its room is used up.
var errDiskFull = errors.New("disk full (test)")

// failingWriter accepts room bytes, then fails every write with
// errDiskFull (a write that crosses the limit writes what fits).
type failingWriter struct {
	room int
	got  bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= w.room {
		w.room -= len(p)
		return w.got.Write(p)
	}
	n := w.room
	w.got.Write(p[:n])
	w.room = 0
	return n, errDiskFull
}

// outputCommands are commands that write to stdout without any live
// system, with the exit code each has when its output is written: every
// command's lost output must turn into exit 1 (or its own non-zero code)
// and one message on stderr, whatever path it writes by (text, JSON,
// cobra's help).
func outputCommands(t *testing.T) []struct {
	args []string
	ok   int // exit code with a working stdout
} {
	repo := testutil.RepoRoot(t)
	ex := func(p string) string { return filepath.Join(repo, "examples", p) }
	noSLO, err := os.ReadFile(ex("lb-config/no-slo-pulsar-wait-and-widen.json"))
	if err != nil {
		t.Fatal(err)
	}
	pending := filepath.Join(t.TempDir(), "pending.json")
	if err := os.WriteFile(pending, noSLO, 0o644); err != nil {
		t.Fatal(err)
	}
	return []struct {
		args []string
		ok   int
	}{
		{[]string{"validate", ex("lb-config/pulsar.json")}, 0},
		{[]string{"validate", "-o", "json", ex("lb-config/pulsar.json")}, 0},
		{[]string{"migrate", "--strategy", "bounded", pending}, 1}, // changes pending
		{[]string{"version"}, 0},
		{[]string{"version", "-o", "json"}, 0},
		{[]string{"explain-code", "LC2001"}, 0},
		{[]string{"docs"}, 0},
		{[]string{"--help"}, 0},
		{[]string{"store", "key", "--routing-key", "rk", "--model", "m", "--affinity-key", "s"}, 0},
		{[]string{"explain", "--config", ex("explain/pwaw-sessions.lb-config.yaml"), "--snapshot", ex("explain/rank1-full.snapshot.yaml"),
			"--model", "model-a", "--routing-key", "rk-1", "--affinity-key", "session-6", "--input-tokens", "2000"}, 0},
		{[]string{"check", "metrics", "--gateway", ex("metrics/gateway-stage3.prom"), "--stargate", ex("metrics/stargate-stage3.prom")}, 0},
		{[]string{"preflight", "--stage", "1", "--config", ex("lb-config/wait-and-widen.json")}, 0},
	}
}

// TestLostOutputFails: a command whose stdout refuses writes, at the
// first byte or after some of the output, exits 1 (a command that
// exits 1 anyway keeps 1) with one "standard output" message naming the
// write error on stderr; with a working stdout the same commands exit as
// before. Before the one check in cli.Main, text output (validate,
// version, explain-code, migrate's diff, help) was lost with exit 0.
func TestLostOutputFails(t *testing.T) {
	for _, c := range outputCommands(t) {
		name := strings.Join(c.args, " ")
		var out, errb bytes.Buffer
		s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		if code := cli.Main(context.Background(), c.args, s); code != c.ok {
			t.Fatalf("%s: exit %d with a working stdout, want %d\nstderr: %s", name, code, c.ok, errb.String())
		}
		for _, room := range []int{0, out.Len() / 2} {
			fw := &failingWriter{room: room}
			var errb bytes.Buffer
			s := &ui.Streams{In: strings.NewReader(""), Out: fw, Err: &errb, Getenv: func(string) string { return "" }}
			code := cli.Main(context.Background(), c.args, s)
			if code != cli.ExitFindings {
				t.Errorf("%s, stdout full after %d bytes: exit %d, want 1\nstderr: %s", name, room, code, errb.String())
			}
			if n := strings.Count(errb.String(), errDiskFull.Error()); n != 1 {
				t.Errorf("%s, stdout full after %d bytes: stderr names the write error %d times, want once:\n%s", name, room, n, errb.String())
			}
		}
	}
}

// TestLostOutputAfterWrite: migrate --write whose diff cannot be printed
// still writes the file (the report on stderr says so) but exits 1 and
// says the output is incomplete; before, it exited 0.
func TestLostOutputAfterWrite(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "lb-config", "no-slo-pulsar-wait-and-widen.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "a.json")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &failingWriter{}, Err: &errb, Getenv: func(string) string { return "" }}
	code := cli.Main(context.Background(), []string{"migrate", "--strategy", "bounded", "--write", file}, s)
	if code != cli.ExitFindings {
		t.Errorf("exit %d, want 1\nstderr: %s", code, errb.String())
	}
	if n := strings.Count(errb.String(), errDiskFull.Error()); n != 1 {
		t.Errorf("stderr names the write error %d times, want once (the lost diff):\n%s", n, errb.String())
	}
	if got, _ := os.ReadFile(file); bytes.Equal(got, src) {
		t.Error("the file was not migrated")
	}
}
