package ui

import (
	"errors"
	"io"
	"testing"
)

// shortWriter takes at most n bytes per write, with no error, then fails.
type shortWriter struct {
	n     int
	calls int
	fail  error
}

func (w *shortWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.fail != nil {
		return 0, w.fail
	}
	return min(len(p), w.n), nil
}

func TestCheckedWriterKeepsFirstError(t *testing.T) {
	w := &shortWriter{n: 2}
	c := NewCheckedWriter(w)
	if _, err := c.Write(nil); err != nil || w.calls != 0 || c.Err() != nil {
		t.Fatalf("empty write: err %v, %d calls, Err %v; want nothing passed on", err, w.calls, c.Err())
	}
	if n, err := c.Write([]byte("ab")); n != 2 || err != nil || c.Err() != nil {
		t.Fatalf("full write: %d, %v, Err %v", n, err, c.Err())
	}
	if n, err := c.Write([]byte("abc")); n != 2 || !errors.Is(err, io.ErrShortWrite) || !errors.Is(c.Err(), io.ErrShortWrite) {
		t.Fatalf("short write: %d, %v, Err %v; want io.ErrShortWrite", n, err, c.Err())
	}
	w.fail = errors.New("later")
	if _, err := c.Write([]byte("x")); err != w.fail || !errors.Is(c.Err(), io.ErrShortWrite) {
		t.Fatalf("later error %v replaced the first: Err %v", err, c.Err())
	}
	if c.Unwrap() != w {
		t.Fatal("Unwrap is not the underlying writer")
	}
}
