package yamldoc

import (
	"errors"
	"testing"
)

// A syntax error yaml.v3 marks at the end of the stream is reported on the
// line of the construct left open (docs/validate.md), never past the last
// line; errors inside the input keep their line.
func TestEndOfStreamErrorLine(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int
	}{
		{"sequence, newline", "x: [1,\n", 1},
		{"sequence, no newline", "x: [1,", 1},
		{"sequence without comma", "x: [1\n", 1},
		{"mapping", "x: {a: 1,\n", 1},
		{"second line, blank lines after", "a: 1\nx: [1,\n  2,\n\n\n", 2},
		{"nested: the innermost", "x: {a: [1,\n  2\n", 1},
		{"nested on later lines", "x: [\n  {a: [1,\n", 2},
		{"closed collections before", "x: [a, b]\ny: {c: 1}\nz: [1,\n", 3},
		{"inner closed", "x: [\n  {a: 1},\n  [2],\n", 1},
		{"sequence entry", "a: 1\n- [1,\n", 2},
		{"bracket in a double-quoted scalar", "x: [1, \"a]\",\n", 1},
		{"bracket in a single-quoted scalar", "x: [1,\n 'it''s ]',\n", 1},
		{"escaped quote", "x: [\n \"a\\\"]\",\n", 1},
		{"bracket in a comment", "x: [1, # ]\n", 1},
		{"open bracket in a comment line", "x: [1,\n# c [\n", 1},
		{"bracket in a plain scalar", "x: a[b\ny: 2\nz: [\n", 3},
		{"apostrophe in a plain scalar", "x: don't\ny: [1,\n", 2},
		{"block scalar", "x: |\n  [ 'a\ny: [1,\n", 3},
		{"block scalar in a sequence", "- >-\n  {\n\n  }\n- [1,\n", 5},
		{"CRLF", "a: 1\r\nx: [1,\r\n", 2},
		{"CR alone is a line break", "a: 1\rx: [1,\r", 2},
		{"NEL", "a: 1\u0085x: [1,\n", 2},
		{"LS", "a: 1\u2028x: [1,\n", 2},
		{"unclosed double quote", "x: \"abc\n\n\n", 1},
		{"unclosed single quote", "a: 1\nx: 'ab\n\n", 2},
		{"nothing open: last line", "x: ]\n", 1},
		{"inside the input: kept", "a: 1\nb: [1, 2}\nc: 3\n", 2},
	} {
		_, err := Parse([]byte(c.src))
		var e *Error
		if !errors.As(err, &e) || e.Kind != Syntax || e.Line != c.line {
			t.Errorf("%s (%q): %v, want a syntax error on line %d", c.name, c.src, err, c.line)
		}
	}
}

func TestLineCount(t *testing.T) {
	for src, want := range map[string]int{
		"": 0, "a": 1, "a\n": 1, "a\nb": 2, "\n\n": 2, "a\r\nb\r\n": 2, "a\rb": 2, "a\u2028b\u2029": 2, "a\u0085\n": 2, "\xc2": 1, "\xe2\x80": 1,
	} {
		if got := lineCount([]byte(src)); got != want {
			t.Errorf("lineCount(%q) = %d, want %d", src, got, want)
		}
	}
}

// FuzzUnclosedFlowLine: unclosedFlowLine never panics, gives 0 or a line
// of the input, and a complete line put before the input (one that leaves
// nothing open) moves its answer down by one line.
func FuzzUnclosedFlowLine(f *testing.F) {
	for _, s := range []string{"x: [1,", "x: {a: [1,\n  2\n", "x: \"a\\\n", "x: 'it''s\n", "- |\n  [\n- [\n", "#[\n[", "\r\n{\r", "a\u2028[", "\"\\\u2028", "x: >\n\t[\n"} {
		f.Add([]byte(s))
	}
	const prefix = "x: ['[', \"{\\\"\", {a: b}] # [ {\n"
	f.Fuzz(func(t *testing.T, data []byte) {
		got := unclosedFlowLine(data)
		if got < 0 || got > lineCount(data) {
			t.Fatalf("line %d outside the %d lines of %q", got, lineCount(data), data)
		}
		want := got
		if want > 0 {
			want++
		}
		if shifted := unclosedFlowLine(append([]byte(prefix), data...)); shifted != want {
			t.Fatalf("%q: line %d, after a complete line %d, want %d", data, got, shifted, want)
		}
	})
}
