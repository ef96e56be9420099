// Package ui holds the I/O streams every command writes to and the styling
// helpers (lipgloss) that degrade to plain text when output is not a
// terminal, when NO_COLOR is set, or when --no-color is given.
package ui

import (
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/charmbracelet/x/term"
	"github.com/mattn/go-isatty"
)

// Streams is the set of standard streams a command uses. Commands never
// touch os.Stdin/os.Stdout/os.Stderr directly, so they run in tests without
// a terminal.
type Streams struct {
	// In is standard input (file arguments of "-" read from it).
	In io.Reader
	// Out receives results (text or JSON).
	Out io.Writer
	// Err receives errors, progress and diagnostics meant for humans.
	Err io.Writer
	// OutTTY and ErrTTY report whether Out and Err are terminals.
	OutTTY, ErrTTY bool
	// Getenv reads the environment (NO_COLOR, LCCTL_OLRIC_ADDRS, ...);
	// nil means os.Getenv.
	Getenv func(string) string
}

// SystemStreams returns the process's standard streams with terminal
// detection done once.
func SystemStreams() *Streams {
	return &Streams{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
		Getenv: os.Getenv,
	}
}

// Env returns the value of the environment variable name through Getenv.
func (s *Streams) Env(name string) string {
	if s.Getenv == nil {
		return os.Getenv(name)
	}
	return s.Getenv(name)
}

// Width returns the width of the terminal stdout is, in columns: the
// terminal's size when Out is one, else $COLUMNS when it is a positive
// number, else 0 (unknown: the caller picks its default).
func (s *Streams) Width() int { return s.width(s.Out, s.OutTTY) }

// ErrWidth is Width for stderr (progress lines).
func (s *Streams) ErrWidth() int { return s.width(s.Err, s.ErrTTY) }

func (s *Streams) width(w io.Writer, tty bool) int {
	if c, ok := w.(*CheckedWriter); ok {
		w = c.w
	}
	if f, ok := w.(*os.File); ok && tty {
		if cols, _, err := term.GetSize(f.Fd()); err == nil && cols > 0 {
			return cols
		}
	}
	if n, err := strconv.Atoi(s.Env("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

func isTerminal(f *os.File) bool {
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

// CheckedWriter is an io.Writer that passes every write to an underlying
// writer and keeps the first error it returned (a short write without an
// error counts as io.ErrShortWrite). cli.Main puts one in front of
// stdout, so that a command whose text output is lost (a full disk,
// /dev/full, a closed descriptor) cannot end with exit 0: after the
// command ran, Main reports Err on stderr and exits 1. It is safe for
// concurrent use.
type CheckedWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

// NewCheckedWriter returns a CheckedWriter writing to w.
func NewCheckedWriter(w io.Writer) *CheckedWriter { return &CheckedWriter{w: w} }

// Write writes p to the underlying writer and returns what it returned,
// keeping the error if it is the first one. An empty p is not passed on
// (nothing can be lost; /dev/full refuses even a write of 0 bytes).
func (c *CheckedWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

// Err is the first error a write returned, or nil when every write
// succeeded.
func (c *CheckedWriter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Unwrap returns the underlying writer (for terminal detection and
// styling, which need the *os.File itself).
func (c *CheckedWriter) Unwrap() io.Writer { return c.w }
