package live

import "testing"

// TestOneLineEscapesLikeUI: text put into a snapshot's YAML comments has
// C1 controls and bidi overrides escaped (a cluster id or backend could
// otherwise reorder or recolour what an operator reads), and YAML's line
// separators become spaces so the comment stays one line.
func TestOneLineEscapesLikeUI(t *testing.T) {
	for in, want := range map[string]string{
		"a\u202eb":   `a\u202eb`,
		"a\u009bc":   `a\u009bc`,
		"a\x1b[31mb": `a\x1b[31mb`,
		"a\nb":       `a\x0ab`,
		"a\u2028b":   "a b",
		"plain":      "plain",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
