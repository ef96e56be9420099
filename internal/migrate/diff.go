package migrate

import (
	"fmt"
	"strings"
)

// DiffContext is the number of unchanged lines shown around each change
// in UnifiedDiff, as in `diff -u`.
const DiffContext = 3

// maxEditDistance bounds the Myers search (D, in lines). Migrations change
// a few lines per entry; beyond this many differing lines the diff falls
// back to replacing the whole differing middle, which is still a correct
// diff, to keep memory (O(D²)) and time bounded on huge inputs.
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
	ops := diffLines(x, y)
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
// algorithm, after stripping the common prefix and suffix).
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

// myers is the greedy forward Myers search with a trace of the diagonal
// frontiers (window [-d-1, d+1] per step, so memory is O(D²)).
func myers(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(n, m)
	}
	limit := min(n+m, maxEditDistance)
	// v[k] for k in [-limit-1, limit+1], stored at k+off.
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		// Save the frontier as it was before step d: k in [-d-1, d+1].
		w := make([]int, 2*d+3)
		copy(w, v[off-d-1:off+d+2])
		trace = append(trace, w)
		for k := -d; k <= d; k += 2 {
			var xx int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				xx = v[off+k+1]
			} else {
				xx = v[off+k-1] + 1
			}
			yy := xx - k
			for xx < n && yy < m && a[xx] == b[yy] {
				xx++
				yy++
			}
			v[off+k] = xx
			if xx >= n && yy >= m {
				return backtrack(trace, n, m)
			}
		}
	}
	return replaceAll(n, m)
}

func backtrack(trace [][]int, n, m int) []diffOp {
	var rev []diffOp
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		w := trace[d]
		at := func(k int) int { return w[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, opEqual)
			x--
			y--
		}
		if d > 0 {
			if x == px {
				rev = append(rev, opInsert)
			} else {
				rev = append(rev, opDelete)
			}
		}
		x, y = px, py
	}
	ops := make([]diffOp, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
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
