package readlimit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAll(t *testing.T) {
	data, err := ReadAll(strings.NewReader("12345"), 5)
	if err != nil || string(data) != "12345" {
		t.Fatalf("exactly the limit: %q, %v", data, err)
	}
	data, err = ReadAll(strings.NewReader("123456"), 5)
	tl, ok := errors.AsType[*TooLargeError](err)
	if !ok || data != nil || tl.Size != -1 || tl.Limit != 5 {
		t.Fatalf("one byte over: %q, %#v", data, err)
	}
	if got, want := err.Error(), "larger than lcctl's 5-byte input limit"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	boom := errors.New("boom")
	if _, err := ReadAll(iotest.ErrReader(boom), 5); err != boom {
		t.Errorf("a read error is returned as is, got %v", err)
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = ReadFile(f, 4)
	tl, ok := errors.AsType[*TooLargeError](err)
	if !ok || tl.Size != 10 || tl.Limit != 4 {
		t.Fatalf("regular file over the limit: %#v", err)
	}
	if got, want := err.Error(), "10 bytes is larger than lcctl's 4-byte input limit"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if data, err := ReadFile(f, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("within the limit: %q, %v", data, err)
	}

	zero, err := os.Open("/dev/zero")
	if err != nil {
		t.Fatalf("an endless device is needed for this test: %v", err)
	}
	defer zero.Close()
	_, err = ReadFile(zero, 1<<10)
	if tl, ok := errors.AsType[*TooLargeError](err); !ok || tl.Size != -1 {
		t.Errorf("/dev/zero: %#v", err)
	}
}

func TestCheckSize(t *testing.T) {
	dir := t.TempDir()
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSize(st, 0); err != nil {
		t.Errorf("a directory's size is not its content: %v", err)
	}
}

func TestCause(t *testing.T) {
	_, err := os.Open(filepath.Join(t.TempDir(), "missing"))
	if got := Cause(err); !errors.Is(got, fs.ErrNotExist) || strings.Contains(got.Error(), "missing") {
		t.Errorf("Cause(%v) = %v, want the bare reason", err, got)
	}
	other := errors.New("other")
	if Cause(other) != other {
		t.Error("an error that is not a path error is returned as is")
	}
}
