package cli

import (
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/checks"
)

// skippedReport is a report whose every check is skipped, one distinct
// reason per check.
func skippedReport(reasons ...string) *checks.Report {
	r := &checks.Report{}
	g := r.Group("g")
	for i, reason := range reasons {
		g.Add(checks.Skip("c"+string(rune('a'+i)), "check", reason))
	}
	return r
}

// TestNothingCheckedNamesEveryReasonUnlessFoldingSavesSome: "and 1 more"
// would hide a reason and save none; two or more are folded.
func TestNothingCheckedNamesEveryReasonUnlessFoldingSavesSome(t *testing.T) {
	four := []string{"no --config given", "no --gateway-env FILE or --gateway-values FILE given", "no --gateway-metrics given", "no --stargate-metrics given"}
	err := nothingChecked(skippedReport(four...), 1)
	if err == nil || exitCode(err) != ExitUsage {
		t.Fatalf("error %v, want a usage error", err)
	}
	if want := "nothing was checked at stage 1: every check was skipped (" + strings.Join(four, "; ") + ")"; err.Error() != want {
		t.Errorf("four reasons:\n got %q\nwant %q", err.Error(), want)
	}
	five := append(four, "no --olric addresses given")
	err = nothingChecked(skippedReport(five...), 2)
	if want := "every check was skipped (" + strings.Join(five[:3], "; ") + "; and 2 more)"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("five reasons: %v, want suffix %q", err, want)
	}
}
