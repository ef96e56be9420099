//go:build unix

package readlimit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRefusesNamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(fifo)
	var nf *NotFileError
	if !errors.As(err, &nf) || nf.Name != fifo {
		t.Fatalf("Open(fifo) = %v, want a NotFileError", err)
	}
	if !strings.Contains(err.Error(), "give - and redirect it to standard input (< "+fifo+")") {
		t.Errorf("Open(fifo): %v, want the hint to give -", err)
	}
	// Where - is not taken, the error does not suggest it.
	if _, err := OpenNoStdin(fifo); !errors.As(err, &nf) || !nf.NoStdin || strings.Contains(err.Error(), "give -") || !strings.Contains(err.Error(), "name a regular file") {
		t.Errorf("OpenNoStdin(fifo) = %v, want a NotFileError that does not suggest -", err)
	}
	// A regular file and the process's own descriptors open.
	reg := filepath.Join(t.TempDir(), "r")
	if err := os.WriteFile(reg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{reg, "/dev/null"} {
		f, err := Open(name)
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		f.Close()
	}
	for name, want := range map[string]bool{"/dev/stdin": true, "/dev/fd/63": true, "/proc/self/fd/3": true, "/dev/fd/": false, "/dev/fd/x": false, "/tmp/fd/3": false} {
		if got := ownDescriptor(name); got != want {
			t.Errorf("ownDescriptor(%q) = %v, want %v", name, got, want)
		}
	}
}
