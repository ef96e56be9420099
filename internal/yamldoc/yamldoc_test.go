package yamldoc

import (
	"errors"
	"io"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, src string
		kind      Kind
		line, col int
		msg       string
	}{
		{"empty", "", Empty, 0, 0, "empty input"},
		{"comments only", "# x\n", Empty, 0, 0, "empty input"},
		{"two documents", "a: 1\n---\nb: 2\n", MultiDoc, 2, 1, "more than one YAML document"},
		{"syntax, column from go-yaml", "models:\n  bad: x: y\n", Syntax, 2, 8, "mapping values are not allowed"},
		{"parser error line corrected", "a: 1\nb: [1, 2}\n", Syntax, 2, 0, "did not find expected ',' or ']'"},
		{"syntax error in the second document", "a: 1\n---\nb: [\n", Syntax, 3, 0, "did not find expected node content"},
		{"latin-1", "a: caf\xe9\n", Encoding, 1, 7, "not UTF-8"},
		{"UTF-16 named", "\xff\xfea\x00", Encoding, 1, 1, "UTF-16"},
	} {
		_, err := Parse([]byte(c.src))
		var e *Error
		if !errors.As(err, &e) || e.Kind != c.kind || e.Line != c.line || e.Col != c.col || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: %#v, want kind %d at %d:%d %q", c.name, err, c.kind, c.line, c.col, c.msg)
		}
	}
	doc, err := Parse([]byte("a: [1, 2]\n"))
	if err != nil || Body(doc).Kind != yaml.MappingNode || Body(doc).Content[1].Line != 1 || Body(doc).Content[1].Column != 4 {
		t.Fatalf("Parse: %v, %v", doc, err)
	}
}

func TestErrorString(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Line: 3, Col: 4, Msg: "m"}, "line 3:4: m"},
		{Error{Line: 3, Msg: "m"}, "line 3: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.e, got, c.want)
		}
	}
}

func TestStream(t *testing.T) {
	s := NewStream([]byte("a: 1\n---\nb: 2\n---\nc: [\n"))
	for i := 0; i < 2; i++ {
		if doc, err := s.Next(); err != nil || Body(doc) == nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
	}
	_, err := s.Next()
	var e *Error
	if !errors.As(err, &e) || e.Kind != Syntax || e.Line != 5 {
		t.Fatalf("third document: %#v", err)
	}
	if _, again := s.Next(); again != err {
		t.Fatalf("after an error: %v", again)
	}
	if _, err := NewStream(nil).Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("empty stream: %v", err)
	}
}

func TestCheckAliases(t *testing.T) {
	ok := "a: &x [1, 2]\nb: *x\n"
	doc, err := Parse([]byte(ok))
	if err != nil || CheckAliases(Body(doc)) != nil {
		t.Fatalf("a few aliases refused: %v %v", err, CheckAliases(Body(doc)))
	}
	// Nine levels of ten aliases each: 10^9 values from 100 nodes.
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	doc, err = Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	e := CheckAliases(Body(doc))
	if e == nil || e.Kind != Aliases || e.Line != 2 || e.Col != 10 {
		t.Fatalf("alias bomb: %#v", e)
	}
}

func TestUnmarshalDecode(t *testing.T) {
	var v map[string]int
	if err := Unmarshal([]byte("a: 1\n"), &v); err != nil || v["a"] != 1 {
		t.Fatalf("Unmarshal: %v %v", v, err)
	}
	var s []int
	err := Unmarshal([]byte("a: 1\n"), &s)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Syntax {
		t.Fatalf("type error: %#v", err)
	}
}

// FuzzParse: Parse never panics, and every error is an *Error with a
// position inside the input (or none): at most its last line, as yaml.v3
// counts lines (lineCount), even for an error at the end of the stream.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "a: 1\n", "a: b: c\n", "[1, 2}\n", "a: &x [1]\nb: *x\n", "---\n---\n", "\t- x\n", "\xff\xfe",
		"a: \"x\x01y\"\n", "x: [1,", "x: {a: 1,\r\n", "a: 1\rx: [1,\r", "x: \"abc\n\n", `{"` + strings.Repeat("k", 1030) + `": [1, {"b": 2}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data)
		if err == nil {
			_ = CheckAliases(Body(doc))
			return
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %T %v is not an *Error", err, err)
		}
		if lines := max(lineCount(data), 1); e.Line < 0 || e.Line > lines || e.Col < 0 {
			t.Fatalf("position %d:%d outside %d lines (%v)", e.Line, e.Col, lines, e)
		}
	})
}
