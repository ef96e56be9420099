package ui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// The plain layout is the printf layout the store commands had: two
// spaces between columns, numbers right-aligned, minimum widths kept, no
// trailing blanks.
func TestTablePlainMatchesPrintf(t *testing.T) {
	tab := Table{Headers: []string{"CLUSTER", "ENTRIES", "SHARE"}, Right: map[int]bool{1: true, 2: true}, MinWidth: map[int]int{1: 8, 2: 6},
		Rows: [][]string{{"cluster-a", "149", " 49.5%"}, {"B", "1", "  0.3%"}}}
	var want strings.Builder
	fmt.Fprintf(&want, "%-*s  %8s  %6s\n", 9, "CLUSTER", "ENTRIES", "SHARE")
	fmt.Fprintf(&want, "%-*s  %8d  %6s\n", 9, "cluster-a", 149, " 49.5%")
	fmt.Fprintf(&want, "%-*s  %8d  %6s\n", 9, "B", 1, "  0.3%")
	if got := tab.Render(nil); got != want.String() {
		t.Fatalf("got\n%s\nwant\n%s", got, want.String())
	}
}

// Wide characters take two columns: the second column starts at the same
// terminal column on every line.
func TestTableWideCharacters(t *testing.T) {
	tab := Table{Headers: []string{"MODEL", "N"}, Rows: [][]string{{"模型-中文", "1"}, {"m", "22"}, {"🚀x", "3"}}, Indent: "  "}
	lines := strings.Split(strings.TrimSuffix(tab.Render(nil), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	col := -1
	for _, l := range lines {
		i := strings.LastIndex(l, "  ")
		c := Width(l[:i+2])
		if col >= 0 && c != col {
			t.Fatalf("second column at %d, want %d:\n%s", c, col, strings.Join(lines, "\n"))
		}
		col = c
	}
	if col != 2+9+2 { // indent, "模型-中文" is 9 columns, separator
		t.Fatalf("second column at %d, want 13", col)
	}
}

// With a rule the table fits the width by wrapping cells.
func TestTableRuleFitsWidth(t *testing.T) {
	tab := Table{Headers: []string{"a", "why"}, Rows: [][]string{{"1", strings.Repeat("word ", 30)}}, Rule: true, Width: 40, Indent: " "}
	out := tab.Render(nil)
	if !strings.Contains(out, "─") {
		t.Fatalf("no header rule:\n%s", out)
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if Width(l) > 41 {
			t.Fatalf("line of %d columns > 41: %q", Width(l), l)
		}
	}
}

func TestTruncateWrap(t *testing.T) {
	if got := Truncate("模型模型", 5); got != "模型…" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("abc", 3); got != "abc" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Wrap("aa bb  cc dd", 5); strings.Join(got, "|") != "aa bb|cc dd" {
		t.Errorf("Wrap = %q", got)
	}
	if got := StripANSI("\x1b[1mbold\x1b[0m"); got != "bold" {
		t.Errorf("StripANSI = %q", got)
	}
}

func TestProgress(t *testing.T) {
	env := func(tty bool, vars map[string]string) (*Streams, *bytes.Buffer) {
		var b bytes.Buffer
		return &Streams{Err: &b, ErrTTY: tty, Getenv: func(k string) string { return vars[k] }}, &b
	}
	for _, tc := range []struct {
		tty  bool
		vars map[string]string
	}{
		{false, nil},
		{true, map[string]string{"TERM": "dumb"}},
	} {
		s, b := env(tc.tty, tc.vars)
		p := NewProgress(s)
		p.Show("scanning %d", 1)
		p.Clear()
		if b.Len() != 0 {
			t.Errorf("terminal %v, env %v: drew %q", tc.tty, tc.vars, b.String())
		}
	}
	s, b := env(true, map[string]string{"COLUMNS": "10", "NO_COLOR": "1"})
	p := NewProgress(s)
	p.Show("scanning %s", "a-long-dmap-name")
	if got := b.String(); got != "\rscanning…\x1b[K" {
		t.Errorf("line %q, want it cut to 9 columns", got)
	}
	b.Reset()
	p.Clear()
	p.Clear()
	if got := b.String(); got != "\r\x1b[K" {
		t.Errorf("clear wrote %q", got)
	}
}
