package validate_test

import (
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// TestYAMLSyntaxColumn: a YAML syntax error gets a column (in characters)
// when the second parser agrees on the line, and none when it does not.
func TestYAMLSyntaxColumn(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"mapping value in a plain scalar", "models:\n  m: pulsar\n  bad: x: y\n", 3, 8, "mapping values are not allowed"},
		{"column in characters", "models:\n  m: pulsar\n  bäd: x: y\n", 3, 8, "mapping values are not allowed"},
		{"tab indentation", "models:\n\tm: pulsar\n", 2, 1, "cannot start any token"},
		{"reserved character", "models:\n  m: pulsar\n @x\n", 3, 2, "cannot start any token"},
		{"parsers disagree on the line", "a:\n  - b\n  c: d\n", 1, 0, "did not find expected '-' indicator"},
	} {
		r := validate.FileAs("in.yaml", []byte(c.src), validate.FormatYAML)
		if len(r.Diagnostics) != 1 {
			t.Errorf("%s: %d diagnostics: %v", c.name, len(r.Diagnostics), r.Diagnostics)
			continue
		}
		d := r.Diagnostics[0]
		if d.Code != validate.CodeSyntax || d.Line != c.line || d.Col != c.col || !strings.Contains(d.Message, c.msg) {
			t.Errorf("%s: %s %d:%d %q, want %s %d:%d %q", c.name, d.Code, d.Line, d.Col, d.Message, validate.CodeSyntax, c.line, c.col, c.msg)
		}
	}
}
