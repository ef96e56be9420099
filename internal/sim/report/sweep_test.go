package report

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func TestSweepValueText(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 200000: "200000", 2e6: "2000000", -3: "-3", 0.25: "0.25", 1.5e6 + 0.5: "1.5000005e+06", 1e300: "1e+300"} {
		if got := SweepValueText(v); got != want {
			t.Errorf("SweepValueText(%v) = %q, want %q", v, got, want)
		}
	}
}

// The x axis of a sweep chart labels integer ticks as integers, on a log
// axis (gonum's LogTicks prints 1e+06) as on a linear one.
func TestIntegerTicks(t *testing.T) {
	for _, tk := range []plot.Ticker{plot.LogTicks{Prec: -1}, plot.DefaultTicks{}} {
		var labels []string
		for _, x := range (integerTicks{tk}).Ticks(1e5, 2e6) {
			if x.Label != "" {
				labels = append(labels, x.Label)
			}
		}
		all := strings.Join(labels, " ")
		if len(labels) == 0 || strings.Contains(all, "e+") {
			t.Errorf("%T: labels %q", tk, all)
		}
	}
}
