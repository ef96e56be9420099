// Package readlimit reads lcctl's inputs — files, standard input, HTTP
// bodies — with a size limit, so that a huge file or an endless device
// (/dev/zero, which os.ReadFile reads until memory runs out) is refused
// instead of read whole. Callers word the errors for their command; the
// limits themselves are theirs (validate.MaxInputBytes,
// sim.MaxScenarioBytes, metrics.MaxScrapeBytes, ...).
package readlimit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// TooLargeError is an input larger than its limit.
type TooLargeError struct {
	// Size is the input's size in bytes when a stat told it before
	// reading (a regular file), -1 when the limit was reached while
	// reading (a pipe, a device, a file that grew).
	Size int64
	// Limit is the limit in bytes.
	Limit int64
}

// Error reads "N bytes is larger than lcctl's L-byte input limit", or
// "larger than lcctl's L-byte input limit" when the size is unknown.
func (e *TooLargeError) Error() string {
	if e.Size >= 0 {
		return fmt.Sprintf("%d bytes is larger than lcctl's %d-byte input limit", e.Size, e.Limit)
	}
	return fmt.Sprintf("larger than lcctl's %d-byte input limit", e.Limit)
}

// ReadAll reads r to its end, but no more than limit+1 bytes: input longer
// than limit bytes is a *TooLargeError (Size -1) and no data. Read errors
// are r's, unwrapped. When r can say its size (an *os.File of a regular
// file: Stat), the buffer is allocated at that size plus one byte, so a
// 35 MB scrape is read into one 35 MB array instead of io.ReadAll's
// doubling (75 MB allocated); the size is only a hint, a file that grows
// or shrinks meanwhile is read as it is.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	size := int64(512)
	if st, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if info, err := st.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > 0 {
			size = min(info.Size(), limit) + 1
		}
	}
	lr := io.LimitReader(r, limit+1)
	data := make([]byte, 0, size)
	for {
		n, err := lr.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grow as append does
		}
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Size: -1, Limit: limit}
	}
	return data, nil
}

// CheckSize refuses, before any reading, a regular file larger than limit
// bytes (a *TooLargeError with its size); anything else passes (its size
// says nothing about what reading it returns).
func CheckSize(st fs.FileInfo, limit int64) error {
	if st.Mode().IsRegular() && st.Size() > limit {
		return &TooLargeError{Size: st.Size(), Limit: limit}
	}
	return nil
}

// ReadFile reads the open file f within limit bytes: CheckSize when f can
// be stat'ed (a failed stat only skips the early check), then ReadAll.
func ReadFile(f *os.File, limit int64) ([]byte, error) {
	if st, err := f.Stat(); err == nil {
		if err := CheckSize(st, limit); err != nil {
			return nil, err
		}
	}
	return ReadAll(f, limit)
}

// Cause returns the reason inside a *fs.PathError (what os.Open, Stat and
// Read return), for messages that name the path themselves: "failed to
// read x.yaml: no such file or directory" rather than "... open x.yaml:
// no such file or directory". Other errors are returned as they are.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// NotFileError is a path named as an input that is a named pipe (FIFO) or
// a socket: opening a FIFO that no process writes to blocks forever (the
// first Ctrl-C went unnoticed), and a socket cannot be opened at all.
type NotFileError struct {
	// Kind is "a named pipe (FIFO)" or "a socket".
	Kind string
	// Name is the path as given.
	Name string
	// NoStdin is set for an input that cannot be given as - (OpenNoStdin).
	NoStdin bool
}

// Error reads "is a named pipe (FIFO), not a file: to read it, give - and
// redirect it to standard input (< NAME)", or for an input that cannot
// be given as - (NoStdin) "is a named pipe (FIFO), not a file: name a
// regular file (save what it gives to one first)".
func (e *NotFileError) Error() string {
	if e.NoStdin {
		return "is " + e.Kind + ", not a file: name a regular file (save what it gives to one first)"
	}
	return "is " + e.Kind + ", not a file: to read it, give - and redirect it to standard input (< " + e.Name + ")"
}

// Open opens a path the user named as an input. A named pipe (FIFO) or a
// socket is refused before it is opened, with a *NotFileError; regular
// files, directories (the caller refuses them) and devices (/dev/zero is
// read within the caller's limit) are opened as usual. The descriptors of
// the process itself (/dev/stdin, /dev/fd/N, /proc/self/fd/N, which is
// how a shell passes `<(command)`) are pipes too, but already open at the
// other end: they are opened as given.
func Open(name string) (*os.File, error) { return open(name, false) }

// OpenNoStdin is Open for an input that cannot be given as - (the
// simulator's scenario, its lb-configs and its trace, and every path named
// inside a scenario): its *NotFileError does not suggest -.
func OpenNoStdin(name string) (*os.File, error) { return open(name, true) }

func open(name string, noStdin bool) (*os.File, error) {
	if !ownDescriptor(name) {
		if st, err := os.Stat(name); err == nil {
			kind := ""
			switch {
			case st.Mode()&fs.ModeNamedPipe != 0:
				kind = "a named pipe (FIFO)"
			case st.Mode()&fs.ModeSocket != 0:
				kind = "a socket"
			}
			if kind != "" {
				return nil, &fs.PathError{Op: "open", Path: name, Err: &NotFileError{Kind: kind, Name: name, NoStdin: noStdin}}
			}
		}
	}
	return os.Open(name)
}

// ownDescriptor reports whether name is one of the process's own open
// descriptors (standard input, process substitution).
func ownDescriptor(name string) bool {
	switch name {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(name, dir); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}
