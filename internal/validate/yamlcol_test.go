package validate_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/validate"
	"github.com/lcctl/lcctl/internal/yamldoc"
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
		{"not a kind both parsers place alike; yaml.v3's 0-based parser line corrected to the sequence's start", "a:\n  - b\n  c: d\n", 2, 0, "did not find expected '-' indicator"},
		{"first line (yaml.v3 names no line)", "default: a: b\n", 1, 10, "mapping values are not allowed"},
		{"parser error: yaml.v3's line 2 is the 0-based line 3", "models: {model-a: {algorithm: pulsar, seed: a\n  b}}\nrequest_algorithms: {x: [1, 2}}\n", 3, 0, "did not find expected ',' or ']'"},
		{"parser error on the first line, which yaml.v3 gives no line", "[1, 2}\n", 1, 0, "did not find expected ',' or ']'"},
		{"parser error: a flow mapping on line 5", "models:\n  m:\n    algorithm: wait-and-widen\n    max_queued: four\n  n: {algorithm: pulsar, seed: x: y}\n", 5, 0, "did not find expected ',' or '}'"},
		{"too deep for the second parser", "models: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\nbad: x: y\n", 2, 0, "mapping values are not allowed"},
		{"shallow enough", "models: " + strings.Repeat("[", 60) + strings.Repeat("]", 60) + "\nbad: x: y\n", 2, 6, "mapping values are not allowed"},
		{"too deep indentation", "models:\n" + strings.Repeat(" ", 300) + "a: b: c\n", 2, 0, "mapping values are not allowed"},
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

// TestUTF16Refused: UTF-16 with a byte-order mark is named as such at 1:1,
// not reported as binary data at its first NUL byte.
func TestUTF16Refused(t *testing.T) {
	for _, bom := range []string{"\xff\xfe{\x00}\x00", "\xfe\xff\x00{\x00}"} {
		r := validate.FileAs("u16.json", []byte(bom), validate.FormatUnknown)
		if len(r.Diagnostics) != 1 || r.Diagnostics[0].Line != 1 || r.Diagnostics[0].Col != 1 || !strings.Contains(r.Diagnostics[0].Message, "UTF-16") || !r.Unreadable() {
			t.Errorf("%q: %v", bom, r.Diagnostics)
		}
	}
}

// TestYAMLErrorLine pins the line yaml.v3's errors concern, 1-based.
func TestYAMLErrorLine(t *testing.T) {
	for _, c := range []struct {
		src  string
		line int
		msg  string
	}{
		{"a: 1\nb: [1, 2}\n", 2, "did not find expected ',' or ']'"},             // parser: yaml.v3 says line 1
		{"a: 1\nb: c: d\n", 2, "mapping values are not allowed in this context"}, // scanner: as printed
		{"[1, 2}\n", 1, "did not find expected ',' or ']'"},                      // parser, first line: no line printed
		{"a: b: c\n", 1, "mapping values are not allowed in this context"},       // scanner, first line
		{"a: *nope\n", 0, "unknown anchor 'nope' referenced"},                    // no position
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(c.src), &n)
		if err == nil {
			t.Fatalf("%q parsed", c.src)
		}
		if line, msg := yamldoc.ErrorLine(err); line != c.line || msg != c.msg {
			t.Errorf("%q (%v): line %d %q, want %d %q", c.src, err, line, msg, c.line, c.msg)
		}
	}
}
