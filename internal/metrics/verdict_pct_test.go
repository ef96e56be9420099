package metrics

import (
	"testing"

	"github.com/lcctl/lcctl/internal/checks"
)

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

// TestSessionClassificationSkipsWithoutValidSamples: a scrape whose only
// samples are NaN or +Inf does not pass "Stargate session
// classification" (it said ✔ beside "✖ counter samples are valid
// numbers").
func TestSessionClassificationSkipsWithoutValidSamples(t *testing.T) {
	r := StargateReport{Metric: "stargate_routing_session_selections_total", Source: "nan.prom", InvalidSamples: 2}
	for _, res := range StargateSessionVerdicts(r, nil, VerdictOptions{}) {
		if res.ID == CheckStargateSessions && res.Status == checks.StatusOK {
			t.Errorf("%s passed with no valid sample: %s", res.Title, res.Reason)
		}
	}
}
