package migrate

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// splice is one byte-range replacement in the input: [start, end) becomes
// text. A zero-width splice inserts.
type splice struct {
	start, end int
	text       string
	seq        int
}

// splices collects the edits of one rewrite and applies them to the input
// in one pass, refusing overlapping ranges.
type splices struct {
	list []splice
}

func (s *splices) add(start, end int, text string) {
	s.list = append(s.list, splice{start: start, end: end, text: text, seq: len(s.list)})
}

// apply returns data with every splice applied. Splices are ordered by
// start, then end, then insertion order; two splices overlap when one
// starts before the previous one ends, which is a rewriter bug reported as
// an error rather than a corrupt file.
func (s *splices) apply(data []byte) ([]byte, error) {
	l := slices.Clone(s.list)
	slices.SortStableFunc(l, func(a, b splice) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		if c := cmp.Compare(a.end, b.end); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	size, pos := len(data), 0
	for _, e := range l {
		if e.start < pos || e.end < e.start || e.end > len(data) {
			return nil, fmt.Errorf("internal error: overlapping or out-of-range edit [%d,%d) after %d", e.start, e.end, pos)
		}
		size += len(e.text) - (e.end - e.start)
		pos = e.end
	}
	// Allocated at its final size: a growing buffer held up to twice the
	// output (22 MB for 124,000 entries) plus the copies it outgrew.
	out := make([]byte, 0, size)
	pos = 0
	for _, e := range l {
		out = append(out, data[pos:e.start]...)
		out = append(out, e.text...)
		pos = e.end
	}
	return append(out, data[pos:]...), nil
}

// lines indexes the line starts of a text (1-based line numbers).
type lines struct {
	data   []byte
	starts []int
}

func newLines(data []byte) *lines {
	l := &lines{data: data, starts: []int{0}}
	for i, b := range data {
		if b == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// count is the number of lines (a trailing newline starts an empty last
// line, which counts).
func (l *lines) count() int { return len(l.starts) }

// start returns the offset of line n; past the last line it is len(data).
func (l *lines) start(n int) int {
	if n < 1 {
		return 0
	}
	if n > len(l.starts) {
		return len(l.data)
	}
	return l.starts[n-1]
}

// end returns the offset of line n's newline (or len(data) for the last
// line); a "\r" before the newline is part of the line ending.
func (l *lines) end(n int) int {
	if n < 1 {
		n = 1
	}
	if n >= len(l.starts) {
		return len(l.data)
	}
	e := l.starts[n] - 1 // the '\n'
	if e > l.starts[n-1] && l.data[e-1] == '\r' {
		e--
	}
	return e
}

// text returns line n without its line ending.
func (l *lines) text(n int) []byte { return l.data[l.start(n):l.end(n)] }

// lineOf returns the 1-based line holding offset off.
func (l *lines) lineOf(off int) int {
	i, found := slices.BinarySearch(l.starts, off)
	if found {
		return i + 1
	}
	return i
}

// offset converts a 1-based line and a 1-based column counted in
// characters (yaml.v3's positions) to a byte offset.
func (l *lines) offset(line, col int) int {
	off := l.start(line)
	for k := 1; k < col && off < len(l.data) && l.data[off] != '\n'; k++ {
		off += runeLen(l.data, off)
	}
	return off
}

func runeLen(b []byte, off int) int {
	c := b[off]
	switch {
	case c < 0x80:
		return 1
	case c>>5 == 0x6:
		return min(2, len(b)-off)
	case c>>4 == 0xE:
		return min(3, len(b)-off)
	case c>>3 == 0x1E:
		return min(4, len(b)-off)
	}
	return 1
}

// linePrefix returns the run of spaces and tabs that starts the line
// holding off.
func linePrefix(data []byte, off int) string {
	s := bytes.LastIndexByte(data[:off], '\n') + 1
	e := s
	for e < len(data) && (data[e] == ' ' || data[e] == '\t') {
		e++
	}
	return string(data[s:e])
}

// newline returns the file's line ending: "\r\n" when it uses CRLF.
func newline(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
