package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/ui"
)

// writeManyModels writes an lb-config of n pulsar-wait-and-widen models
// without a queue SLO (every one a change for migrate) and returns its
// path.
func writeManyModels(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("{\n  \"default\": \"power-of-n\",\n  \"models\": {\n")
	for i := range n {
		sep := ","
		if i == n-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    \"org/model-%05d\": {\"algorithm\": \"pulsar-wait-and-widen\", \"seed\": \"s-%d\"}%s\n", i, i, sep)
	}
	b.WriteString("  }\n}\n")
	path := filepath.Join(dir, "lb.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// failAfter takes the first n bytes written to it, then fails every
// write with err.
type failAfter struct {
	n   int
	err error
	got bytes.Buffer
}

func (w *failAfter) Write(p []byte) (int, error) {
	if w.got.Len()+len(p) <= w.n {
		return w.got.Write(p)
	}
	k := w.n - w.got.Len()
	w.got.Write(p[:k])
	return k, w.err
}

// TestMigrateOutputFailsMidStream: when standard output fails part way
// (a full disk, a closed pipe) migrate exits 1 and says so on stderr,
// text and JSON, with and without --write; what reached the output is
// never a whole JSON document, and with --write stderr still says what
// was written. check metrics -o json (also streamed) does the same.
func TestMigrateOutputFailsMidStream(t *testing.T) {
	for _, errOut := range []error{syscall.ENOSPC, syscall.EPIPE} {
		for _, c := range []struct {
			name string
			args []string
		}{
			{"text", nil}, {"json", []string{"-o", "json"}},
			{"write-text", []string{"--write"}}, {"write-json", []string{"--write", "-o", "json"}},
		} {
			t.Run(fmt.Sprintf("%s/%v", c.name, errOut), func(t *testing.T) {
				path := writeManyModels(t, t.TempDir(), 2000)
				before, _ := os.ReadFile(path)
				out := &failAfter{n: 100 << 10, err: errOut}
				var errb bytes.Buffer
				s := &ui.Streams{In: strings.NewReader(""), Out: out, Err: &errb, Getenv: func(string) string { return "" }}
				args := append([]string{"migrate", "--strategy", "bounded"}, c.args...)
				code := cli.Main(context.Background(), append(args, path), s)
				if code != cli.ExitFindings {
					t.Errorf("exit %d, want 1; stderr:\n%s", code, tail(errb.String()))
				}
				if !strings.Contains(errb.String(), errOut.Error()) {
					t.Errorf("stderr does not name the write error %q:\n%s", errOut, tail(errb.String()))
				}
				if out.got.Len() != out.n {
					t.Errorf("%d bytes reached the output, want the first %d", out.got.Len(), out.n)
				}
				if json.Valid(out.got.Bytes()) {
					t.Error("the output is a whole JSON document")
				}
				after, _ := os.ReadFile(path)
				if written := !bytes.Equal(before, after); written != strings.HasPrefix(c.name, "write") {
					t.Errorf("file rewritten: %v", written)
				}
				if c.name == "write-text" && !strings.Contains(errb.String(), "migrated: 2000 changes written") {
					t.Errorf("stderr does not say what was written:\n%s", tail(errb.String()))
				}
			})
		}
	}
	t.Run("check-metrics-json", func(t *testing.T) {
		path := writeModelsScrape(t, t.TempDir(), 2000)
		out := &failAfter{n: 100 << 10, err: syscall.EPIPE}
		var errb bytes.Buffer
		s := &ui.Streams{In: strings.NewReader(""), Out: out, Err: &errb, Getenv: func(string) string { return "" }}
		code := cli.Main(context.Background(), []string{"check", "metrics", "--stargate", path, "-o", "json"}, s)
		if code == cli.ExitOK || !strings.Contains(errb.String(), "broken pipe") || json.Valid(out.got.Bytes()) {
			t.Errorf("exit %d, %d bytes out, stderr:\n%s", code, out.got.Len(), tail(errb.String()))
		}
	})
}

// tail is the end of a long stderr, for failure messages.
func tail(s string) string { return s[max(0, len(s)-2000):] }

// TestMigrateClosedPipe runs lcctl (this test binary, as testscript runs
// it) with its standard output a pipe that the reader closes after 100
// bytes, as `lcctl migrate -o json FILE | head -c 100` does: lcctl must
// not exit 0. It ends by SIGPIPE, as Go programs do on a write to a
// closed standard output, which shells report as status 141 (nothing is
// printed: the signal is the report); it never finishes the document.
func TestMigrateClosedPipe(t *testing.T) {
	dir := t.TempDir()
	path := writeManyModels(t, dir, 5000)
	lcctl := filepath.Join(dir, "lcctl")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, lcctl); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-o", "json"}, nil} {
		cmd := exec.Command(lcctl, append(append([]string{"migrate", "--strategy", "bounded"}, args...), path)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 100)
		if _, err := io.ReadFull(stdout, head); err != nil {
			t.Fatal(err)
		}
		stdout.Close()
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%v: lcctl exited 0 after its output was closed (%v); stderr:\n%s", args, err, tail(errb.String()))
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && !(ws.Signaled() && ws.Signal() == syscall.SIGPIPE) && ws.ExitStatus() != cli.ExitFindings {
			t.Errorf("%v: %v, want SIGPIPE or exit 1; stderr:\n%s", args, err, tail(errb.String()))
		}
	}
}
