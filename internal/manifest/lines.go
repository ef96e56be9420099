package manifest

import "unicode/utf8"

// lines indexes the line starts of a manifest (lines are 1-based, as
// yaml.v3 counts them; \n ends a line).
type lines struct {
	data   []byte
	starts []int
}

func newLines(data []byte) *lines {
	l := &lines{data: data, starts: []int{0}}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// count is the number of lines.
func (l *lines) count() int { return len(l.starts) }

// start is the byte offset of line n; past the last line it is len(data).
func (l *lines) start(n int) int {
	if n < 1 {
		return 0
	}
	if n > len(l.starts) {
		return len(l.data)
	}
	return l.starts[n-1]
}

// text is line n without its \n.
func (l *lines) text(n int) []byte {
	if n < 1 || n > len(l.starts) {
		return nil
	}
	s, e := l.start(n), l.start(n+1)
	if e > s && l.data[e-1] == '\n' {
		e--
	}
	return l.data[s:e]
}

// offset is the byte offset of 1-based (line, column), columns counted in
// characters as yaml.v3 counts them; -1 when out of range.
func (l *lines) offset(line, col int) int {
	if line < 1 || line > len(l.starts) || col < 1 {
		return -1
	}
	t := l.text(line)
	off := 0
	for c := 1; c < col && off < len(t); c++ {
		_, size := utf8.DecodeRune(t[off:])
		off += size
	}
	return l.start(line) + off
}
