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
// are r's, unwrapped.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
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
