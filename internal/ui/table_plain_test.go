package ui

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// renderPlain lays a table out byte for byte as the lipgloss path does;
// Render uses it above plainTableRows rows.
func TestRenderPlainMatchesLipgloss(t *testing.T) {
	tb := Table{Headers: []string{"MODEL", "ALGORITHM", "N"}, Right: map[int]bool{2: true}, Indent: "  ", MinWidth: map[int]int{1: 12}}
	for i := range plainTableRows {
		tb.Rows = append(tb.Rows, []string{fmt.Sprintf("org/model-%d-模型", i*i), "pulsar", fmt.Sprint(i * 37)})
	}
	tb.Rows = append(tb.Rows[:plainTableRows-1], []string{"short"})
	want := tb.Render(nil) // lipgloss: not above the threshold
	headers := append([]string{}, tb.Headers...)
	headers[1] += strings.Repeat(" ", 12-len(headers[1]))
	if got := tb.renderPlain(NewStyles(io.Discard, false), headers); got != want {
		t.Fatalf("plain layout differs:\n%q\nwant\n%q", got[:300], want[:300])
	}
	tb.Rows = append(tb.Rows, []string{"one more"})
	if got := tb.Render(nil); !strings.HasPrefix(got, "  MODEL") || strings.Count(got, "\n") != plainTableRows+2 {
		t.Fatalf("large table:\n%s", got[:200])
	}
}
