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

// TestSimulateTemplateNamesEveryField: every field the scenario decoder
// knows, in every section, appears in the template (set or commented), so
// the template cannot fall behind a new scenario field. The decoder's own
// "unknown field ... (known: ...)" list is the reference.
func TestSimulateTemplateNamesEveryField(t *testing.T) {
	t.Parallel()
	sections := map[string]string{
		"top level": "clusters: [{id: a}]\nzz_unknown: 1\n",
		"clusters":  "clusters: [{id: a, zz_unknown: 1}]\n",
		"workload":  "clusters: [{id: a}]\nworkload: {zz_unknown: 1}\n",
		"gateway":   "clusters: [{id: a}]\ngateway: {zz_unknown: 1}\n",
		"router":    "clusters: [{id: a}]\nrouter: {zz_unknown: 1}\n",
		"compare":   "clusters: [{id: a}]\ncompare: {zz_unknown: 1}\n",
	}
	for section, doc := range sections {
		_, err := sim.ParseScenario("s.yaml", []byte(doc))
		if err == nil {
			t.Fatalf("%s: an unknown field was accepted", section)
		}
		msg := err.Error()
		i := strings.Index(msg, "(known: ")
		if i < 0 {
			t.Fatalf("%s: no list of known fields in %q", section, msg)
		}
		list := msg[i+len("(known: "):]
		list = list[:strings.IndexByte(list, ')')]
		for _, name := range strings.Split(list, ", ") {
			if !strings.Contains(simulateTemplate, name+":") {
				t.Errorf("%s field %q is not in the template", section, name)
			}
		}
	}
}
