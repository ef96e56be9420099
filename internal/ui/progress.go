package ui

import (
	"fmt"
	"sync"
)

// Progress is the one progress line of lcctl (store scan, evict and
// stats, simulate): one line on stderr, redrawn in place with "\r" and
// erase-to-end-of-line, cut to the terminal width so it never wraps. It
// draws only when stderr is a terminal that can erase a line (not
// TERM=dumb); it never uses colour, so NO_COLOR output is the same.
// Otherwise, or when Force is not set and those conditions fail, Show and
// Clear do nothing. Safe for concurrent use.
type Progress struct {
	s      *Streams
	active bool
	mu     sync.Mutex
	drawn  bool
}

// NewProgress returns the progress line for s's stderr.
func NewProgress(s *Streams) *Progress {
	return &Progress{s: s, active: ProgressWanted(s)}
}

// NewProgressForced draws even when stderr is not a terminal (simulate
// --progress always); never draws when force is false and ProgressWanted
// says no.
func NewProgressForced(s *Streams, force bool) *Progress {
	p := NewProgress(s)
	p.active = p.active || force
	return p
}

// ProgressWanted reports whether a progress line can be drawn on s's
// stderr: a terminal other than TERM=dumb.
func ProgressWanted(s *Streams) bool { return s.ErrTTY && s.Env("TERM") != "dumb" }

// Active reports whether Show draws.
func (p *Progress) Active() bool { return p.active }

// Show replaces the line with the formatted text, cut to one column less
// than the terminal's width (80 when unknown).
func (p *Progress) Show(format string, args ...any) {
	if !p.active {
		return
	}
	w := p.s.ErrWidth()
	if w <= 0 {
		w = 80
	}
	line := Truncate(fmt.Sprintf(format, args...), w-1)
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.s.Err, "\r"+line+"\x1b[K")
	p.drawn = true
}

// Clear erases the line if anything was drawn.
func (p *Progress) Clear() {
	if !p.active {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.s.Err, "\r\x1b[K")
		p.drawn = false
	}
}
