package ui

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"model-a":             "model-a",
		"köln/模型":             "köln/模型",
		"m\x1b[2Jx":           `m\x1b[2Jx`,
		"a\tb\nc\x00\x7f":     `a\x09b\x0ac\x00\x7f`,
		"csi\u009b31m":        `csi\u009b31m`,
		"bell\a and \x1b]0;t": `bell\x07 and \x1b]0;t`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
