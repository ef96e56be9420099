package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/sim"
)

// TestSimulateTemplateParses: the template is a valid scenario, sets the
// documented defaults it claims, and runs as printed.
func TestSimulateTemplateParses(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, "", "simulate", "--template")
	if code != 0 || out != simulateTemplate {
		t.Fatalf("exit %d %s", code, errs)
	}
	sc, err := sim.ParseScenario("template.yaml", []byte(out))
	if err != nil {
		t.Fatalf("the template is not a valid scenario: %v", err)
	}
	if len(sc.Clusters) != 3 || sc.SLOTTFTMs != 2000 || sc.Workload.DurationS != 300 {
		t.Errorf("parsed %d clusters, slo %v, duration %v", len(sc.Clusters), sc.SLOTTFTMs, sc.Workload.DurationS)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "", "simulate", "--scenario", f, "--max-requests", "300", "--policy", "pulsar", "--progress", "never")
	if code != 0 || !strings.Contains(out, "pulsar") {
		t.Fatalf("running the template: exit %d\n%s%s", code, out, errs)
	}
}
