package migrate

import (
	"fmt"
	"strings"
)

// DiffContext is the number of unchanged lines shown around each change
// in UnifiedDiff, as in `diff -u`.
const DiffContext = 3

// maxEditDistance bounds one Myers search (D, in lines). Migrations change
// a few lines per entry, and the search splits the file around its middle
// snake, so real diffs stay far below it; past it a subproblem is replaced
// wholesale, still a correct diff, to keep time bounded (O((N+M)·D)) on
// huge, totally different inputs.
const maxEditDistance = 4000

// UnifiedDiff returns the differences between a and b as a unified diff
// (the format of `diff -u` and `git diff`, without timestamps) with
// DiffContext lines of context, labelled oldName and newName. It returns
// "" when a and b are equal. A last line without a newline is marked
// "\ No newline at end of file". Line endings are compared as part of the
// line, so a CRLF/LF change shows.
func UnifiedDiff(oldName, newName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	x, y := splitLines(string(a)), splitLines(string(b))
	ops := groupChanges(diffLines(x, y))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	// Walk the edit script and cut it into hunks.
	type line struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int // index in x (for ' ' and '-')
		bi   int // index in y (for ' ' and '+')
	}
	var script []line
	ai, bi := 0, 0
	for _, op := range ops {
		switch op {
		case opEqual:
			script = append(script, line{' ', x[ai], ai, bi})
			ai++
			bi++
		case opDelete:
			script = append(script, line{'-', x[ai], ai, bi})
			ai++
		case opInsert:
			script = append(script, line{'+', y[bi], ai, bi})
			bi++
		}
	}
	for i := 0; i < len(script); {
		if script[i].kind == ' ' {
			i++
			continue
		}
		// Hunk from the change at i, with context before it, extended
		// while the next change is within 2×context lines.
		start := max(i-DiffContext, 0)
		end := i
		for {
			for end < len(script) && script[end].kind != ' ' {
				end++
			}
			next := end
			for next < len(script) && script[next].kind == ' ' {
				next++
			}
			if next < len(script) && next-end <= 2*DiffContext {
				end = next
				continue
			}
			end = min(end+DiffContext, len(script))
			break
		}
		h := script[start:end]
		oldStart, newStart := h[0].ai, h[0].bi
		oldN, newN := 0, 0
		for _, l := range h {
			if l.kind != '+' {
				oldN++
			}
			if l.kind != '-' {
				newN++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oldStart, oldN), hunkRange(newStart, newN))
		for _, l := range h {
			out.WriteByte(l.kind)
			if strings.HasSuffix(l.text, "\n") {
				out.WriteString(l.text)
			} else {
				out.WriteString(l.text)
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// hunkRange renders "start,count" with 1-based start; an empty range names
// the line before it, as diff does.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// groupChanges puts, within every run of changed lines, the deletions
// before the insertions, as diff -u shows them. A run replaces a block of
// old lines by a block of new lines whatever the order inside it, so the
// script stays correct and as short.
func groupChanges(ops []diffOp) []diffOp {
	for i := 0; i < len(ops); {
		if ops[i] == opEqual {
			i++
			continue
		}
		j, dels := i, 0
		for ; j < len(ops) && ops[j] != opEqual; j++ {
			if ops[j] == opDelete {
				dels++
			}
		}
		for k := i; k < j; k++ {
			if k-i < dels {
				ops[k] = opDelete
			} else {
				ops[k] = opInsert
			}
		}
		i = j
	}
	return ops
}

// splitLines cuts s after each "\n"; the last line may lack one.
func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type diffOp uint8

const (
	opEqual diffOp = iota
	opDelete
	opInsert
)

// diffLines returns a shortest edit script from x to y (Myers' O(ND)
// algorithm in linear space, after stripping the common prefix and
// suffix).
func diffLines(x, y []string) []diffOp {
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []diffOp
	for range pre {
		ops = append(ops, opEqual)
	}
	ops = append(ops, myers(x[pre:len(x)-suf], y[pre:len(y)-suf])...)
	for range suf {
		ops = append(ops, opEqual)
	}
	return ops
}

// myers returns a shortest edit script from a to b with Myers' linear-space
// refinement: find the middle snake of an optimal path by searching
// forwards and backwards at once, then solve the two halves recursively
// (each with diffLines, which strips common ends first). Memory is
// O(len(a)+len(b)); past maxEditDistance differences in one search the
// subproblem is replaced wholesale, which is still a correct diff.
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(n, m)
	}
	maxD := (n + m + 1) / 2
	off := maxD + 1
	size := 2*maxD + 3
	v1 := make([]int, size)
	v2 := make([]int, size)
	for i := range v1 {
		v1[i], v2[i] = -1, -1
	}
	v1[off+1], v2[off+1] = 0, 0
	delta := n - m
	front := delta%2 != 0 // the forward path meets the reverse one
	k1start, k1end, k2start, k2end := 0, 0, 0, 0
	for d := 0; d < maxD && d <= maxEditDistance; d++ {
		// Forward.
		for k1 := -d + k1start; k1 <= d-k1end; k1 += 2 {
			i := off + k1
			var x1 int
			if k1 == -d || (k1 != d && v1[i-1] < v1[i+1]) {
				x1 = v1[i+1]
			} else {
				x1 = v1[i-1] + 1
			}
			y1 := x1 - k1
			for x1 < n && y1 < m && a[x1] == b[y1] {
				x1++
				y1++
			}
			v1[i] = x1
			switch {
			case x1 > n:
				k1end += 2 // ran off the right
			case y1 > m:
				k1start += 2 // ran off the bottom
			case front:
				j := off + delta - k1
				if j >= 0 && j < size && v2[j] != -1 && x1 >= n-v2[j] {
					return split(a, b, x1, y1)
				}
			}
		}
		// Reverse.
		for k2 := -d + k2start; k2 <= d-k2end; k2 += 2 {
			i := off + k2
			var x2 int
			if k2 == -d || (k2 != d && v2[i-1] < v2[i+1]) {
				x2 = v2[i+1]
			} else {
				x2 = v2[i-1] + 1
			}
			y2 := x2 - k2
			for x2 < n && y2 < m && a[n-x2-1] == b[m-y2-1] {
				x2++
				y2++
			}
			v2[i] = x2
			switch {
			case x2 > n:
				k2end += 2
			case y2 > m:
				k2start += 2
			case !front:
				j := off + delta - k2
				if j >= 0 && j < size && v1[j] != -1 {
					x1 := v1[j]
					y1 := x1 - (j - off)
					if x1 >= n-x2 {
						return split(a, b, x1, y1)
					}
				}
			}
		}
	}
	return replaceAll(n, m)
}

// split solves the two halves around the middle snake's point (x, y).
func split(a, b []string, x, y int) []diffOp {
	return append(diffLines(a[:x], b[:y]), diffLines(a[x:], b[y:])...)
}

func replaceAll(n, m int) []diffOp {
	ops := make([]diffOp, 0, n+m)
	for range n {
		ops = append(ops, opDelete)
	}
	for range m {
		ops = append(ops, opInsert)
	}
	return ops
}
