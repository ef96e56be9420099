package validate

import (
	"errors"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
)

// syntaxColumnMaxBytes bounds the input syntaxColumn parses a second time:
// go-yaml takes about 0.4 s and 120 MB per MiB, and real lb-configs are a
// few KiB, so larger files keep a line-only position.
const syntaxColumnMaxBytes = 1 << 20

// syntaxColumn finds the column (1-based, in characters) of a YAML syntax
// error that yaml.v3 reported on line without a column: yaml.v3 keeps the
// column of its error mark to itself. The document is parsed again with
// github.com/goccy/go-yaml, whose syntax errors carry the offending
// token's position; the column is used only when that parser also fails,
// on the same line, so the message (yaml.v3's) and the position never
// describe two different problems. 0 means unknown: the input is larger
// than syntaxColumnMaxBytes, or the other parser accepted the text, failed
// on another line, or panicked.
func syntaxColumn(data []byte, line int) (col int) {
	if len(data) > syntaxColumnMaxBytes {
		return 0
	}
	defer func() {
		if recover() != nil {
			col = 0
		}
	}()
	_, err := goccyparser.ParseBytes(data, 0)
	var se *goccy.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return 0
	}
	if p := se.Token.Position; p.Line == line && p.Column > 0 {
		return p.Column
	}
	return 0
}
