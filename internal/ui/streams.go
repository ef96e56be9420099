// Package ui holds the I/O streams every command writes to and the styling
// helpers (lipgloss) that degrade to plain text when output is not a
// terminal, when NO_COLOR is set, or when --no-color is given.
package ui

import (
	"io"
	"os"
	"strconv"

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
