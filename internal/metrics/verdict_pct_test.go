package metrics

import "testing"

// TestPct: one decimal, and a non-zero share never rounds to 0.0 % or
// 100.0 %.
func TestPct(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		p    *float64
		want string
	}{
		{nil, "n/a"},
		{f(0), "0.0%"},
		{f(19.0 / 50970), "<0.1%"},
		{f(0.0005), "0.1%"},
		{f(0.823), "82.3%"},
		{f(0.99996), ">99.9%"},
		{f(1), "100.0%"},
	} {
		if got := Pct(c.p); got != c.want {
			t.Errorf("Pct(%v) = %q, want %q", c.p, got, c.want)
		}
	}
}
