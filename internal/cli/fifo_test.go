package cli_test

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// A named pipe (FIFO) given by name is refused at once, by every command
// that reads a named file: opening one that no process writes to blocked
// forever (`mkfifo f; lcctl validate f`).
func TestNamedPipeRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("named pipes need a Unix system")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"validate", fifo},
		{"migrate", "--strategy", "bounded", fifo},
		{"explain", "--snapshot", fifo, "--model", "m"},
		{"explain", "--case", fifo},
		{"check", "metrics", "--stargate", fifo},
		{"preflight", "--stage", "1", "--config", fifo},
		{"simulate", "--scenario", fifo},
		{"store", "--olric", "127.0.0.1:1", "--password-file", fifo, "stats"},
	} {
		type res struct {
			code int
			err  string
		}
		ch := make(chan res, 1)
		go func() {
			code, out, errOut := runLcctlStdin(t, "", nil, args...)
			ch <- res{code, out + errOut}
		}()
		select {
		case r := <-ch:
			if r.code != 2 || !strings.Contains(r.err, "named pipe") && !strings.Contains(r.err, "not a regular file") {
				t.Errorf("%v: exit %d, output %q; want exit 2 naming the pipe", args, r.code, r.err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%v: still blocked after 5s", args)
		}
	}
}

// The first Ctrl-C (a cancelled context) while a command waits for more
// standard input says what lcctl is waiting for; it used to go unnoticed.
func TestInterruptWhileWaitingForInput(t *testing.T) {
	pr, pw := io.Pipe()
	var errb testutil.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &ui.Streams{In: pr, Out: io.Discard, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, []string{"validate", "-"}, s) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(errb.String(), "interrupted while waiting for standard input") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(errb.String(), "interrupted while waiting for standard input") {
		t.Errorf("stderr %q; want what lcctl waits for", errb.String())
	}
	pw.Close()
	<-done
}
