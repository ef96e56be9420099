package yamldoc

import (
	"errors"
	"strings"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
)

// Bounds on the input syntaxColumn parses a second time. go-yaml's cost
// grows with the square of the nesting depth (40,000 nested `[` in 40 KB
// took 2.5 GB), so deep or large inputs keep yaml.v3's line-only position.
// Real lb-configs are a few KiB and a handful of levels deep.
const (
	syntaxColumnMaxBytes  = 256 << 10
	syntaxColumnMaxDepth  = 64  // open [ and { at once
	syntaxColumnMaxIndent = 256 // leading spaces on a line
)

// columnKinds pairs the yaml.v3 syntax errors whose position go-yaml
// reports reliably with go-yaml's messages for the same problem. Only these
// get a column: for the others (a missing ']', a bad indentation) the two
// parsers often blame different lines or different tokens.
var columnKinds = []struct {
	v3    string
	goccy []string
}{
	{"mapping values are not allowed in this context", []string{"mapping value is not allowed in this context"}},
	{"found character that cannot start any token", []string{"that cannot start any token", "is a reserved character"}},
}

// syntaxColumn finds the position (1-based line, column in characters) of
// a YAML syntax error that yaml.v3 reported as msg on line (1-based, as
// ErrorLine gives it) without a column: yaml.v3 keeps the column of its
// error mark to itself. The
// document is parsed again with github.com/goccy/go-yaml, whose syntax
// errors carry the offending token's position. The position is used only
// when msg is one of columnKinds, go-yaml reports the same kind of problem,
// and on the same line, so the message
// (yaml.v3's) and the position describe one problem. It returns 0, 0 when
// unknown: a different kind of error, an input beyond the bounds above, a
// disagreement, or a panic in go-yaml.
func syntaxColumn(data []byte, line int, msg string) (gotLine, col int) {
	kind := -1
	for i, k := range columnKinds {
		if strings.Contains(msg, k.v3) {
			kind = i
			break
		}
	}
	if kind < 0 || line < 1 || !withinColumnBounds(data) {
		return 0, 0
	}
	defer func() {
		if recover() != nil {
			gotLine, col = 0, 0
		}
	}()
	_, err := goccyparser.ParseBytes(data, 0)
	var se *goccy.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return 0, 0
	}
	same := false
	for _, m := range columnKinds[kind].goccy {
		same = same || strings.Contains(se.Message, m)
	}
	if p := se.Token.Position; same && p.Line == line && p.Column > 0 {
		return p.Line, p.Column
	}
	return 0, 0
}

// withinColumnBounds reports whether data is small and shallow enough for
// go-yaml (see the bounds above). Brackets inside quoted strings count as
// nesting too, which can only make the check stricter.
func withinColumnBounds(data []byte) bool {
	if len(data) > syntaxColumnMaxBytes {
		return false
	}
	depth, indent, lineStart := 0, 0, true
	for _, b := range data {
		switch {
		case b == '\n':
			indent, lineStart = 0, true
			continue
		case lineStart && b == ' ':
			if indent++; indent > syntaxColumnMaxIndent {
				return false
			}
			continue
		case b == '[' || b == '{':
			if depth++; depth > syntaxColumnMaxDepth {
				return false
			}
		case b == ']' || b == '}':
			depth--
		}
		lineStart = false
	}
	return true
}
