package ui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"model-a":             "model-a",
		"köln/模型":             "köln/模型",
		"m\x1b[2Jx":           `m\x1b[2Jx`,
		"a\tb\nc\x00\x7f":     `a\x09b\x0ac\x00\x7f`,
		"csi\u009b31m":        `csi\u009b31m`,
		"bell\a and \x1b]0;t": `bell\x07 and \x1b]0;t`,
		"\u202egnp.exe":       `\u202egnp.exe`,
		"a\u2066b\u200fc":     `a\u2066b\u200fc`,
		"b\xffd.json":         `b\xffd.json`,
		"caf\xe9 \xe2\x80":    `caf\xe9 \xe2\x80`,
		"\xc0\xaf\x1b":        `\xc0\xaf\x1b`,
		"\ufffd ok":           "\ufffd ok",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPrintableLines keeps the newlines of a multi-line message and
// escapes every other control character.
func TestPrintableLines(t *testing.T) {
	got := PrintableLines("a.yaml:1:1: x\n\x1b]0;t\x07b.yaml: y\tz")
	want := "a.yaml:1:1: x\n\\x1b]0;t\\x07b.yaml: y\\x09z"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := PrintableLines("a\xff\nb"); got != `a\xff`+"\nb" {
		t.Fatalf("invalid UTF-8: got %q", got)
	}
	if s := "plain\ntext"; PrintableLines(s) != s {
		t.Fatalf("plain text changed: %q", PrintableLines(s))
	}
}

func TestEchoLabel(t *testing.T) {
	short := strings.Repeat("a", MaxEchoedLabel)
	if got := EchoLabel(short); got != short {
		t.Errorf("a %d-byte value was shortened: %q", len(short), got)
	}
	// A 3-byte character straddles byte 200: the cut goes back before it.
	v := strings.Repeat("a", MaxEchoedLabel-1) + "€" + strings.Repeat("b", 1000)
	got := EchoLabel(v)
	if want := strings.Repeat("a", MaxEchoedLabel-1) + "… (1202 bytes)"; got != want || !utf8.ValidString(got) {
		t.Errorf("EchoLabel = %q, want %q", got, want)
	}
}

// FuzzPrintable: Printable's result is valid UTF-8 without a character it
// escapes, and text it leaves alone is returned as it is.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"model-a", "m\x1b[2J", "\xff\xfe", "\u202e", "caf\xe9", "\xe2\x80\xae"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Printable(s)
		if !utf8.ValidString(got) || strings.IndexFunc(got, isControl) >= 0 {
			t.Fatalf("Printable(%q) = %q", s, got)
		}
		if printable(s) != (got == s) {
			t.Fatalf("Printable(%q) = %q: changed %v, want %v", s, got, got != s, !printable(s))
		}
	})
}
