package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty or whitespace-only scrape is a failed scrape check, not "✔ can
// be scraped: 0 families" (exit 0); NaN/±Inf counter samples are a failed
// check, not silently dropped and reported as "no … series".
func TestScrapeFindings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.prom", "")
	blank := write("blank.prom", " \n\t\n")
	nan := write("nan.prom", "# TYPE stargate_routing_session_selections_total counter\n"+
		`stargate_routing_session_selections_total{model="m",algorithm="pulsar-wait-and-widen",routing_key="k",selection="primary",session_state="returning"} NaN`+"\n"+
		`stargate_routing_session_selections_total{model="m",algorithm="pulsar-wait-and-widen",routing_key="k",selection="fallback",session_state="returning"} -Inf`+"\n")
	gnan := write("gnan.prom", "# TYPE llm_api_gateway_last_cluster_lookups_total counter\n"+
		`llm_api_gateway_last_cluster_lookups_total{result="hit"} +Inf`+"\n")
	for _, src := range []string{empty, blank} {
		for _, args := range [][]string{
			{"check", "metrics", "--stargate", src},
			{"check", "metrics", "--gateway", src},
			{"preflight", "--stage", "1", "--stargate-metrics", src},
		} {
			code, out, errOut := runLcctlStdin(t, "", nil, args...)
			if code != 1 || !strings.Contains(out, "✖") || !strings.Contains(out, "the scrape is empty") || strings.Contains(out, "0 families") {
				t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
			}
		}
	}
	for _, args := range [][]string{
		{"check", "metrics", "--stargate", nan},
		{"preflight", "--stage", "1", "--stargate-metrics", nan},
		{"preflight", "--stage", "3", "--stargate-metrics", nan},
		{"check", "metrics", "--gateway", gnan},
	} {
		code, out, errOut := runLcctlStdin(t, "", nil, args...)
		if code != 1 || !strings.Contains(out, "✖ counter samples are valid numbers") || !strings.Contains(out, "NaN, +Inf, -Inf or negative") {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	code, out, _ := runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", nan, "-o", "json")
	if code != 1 || !strings.Contains(out, `"invalid_samples": 2`) || !strings.Contains(out, `"stargate-metrics.samples"`) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
}

// The breaker's scrape: 30 returning and 970 "Returning". The 970 are in
// no count (total 30, not 1000), the labels check fails naming the value
// and the series, and a family with only such series says why it shows
// no series.
func TestScrapeUndocumentedLabelValues(t *testing.T) {
	dir := t.TempDir()
	head := "# TYPE stargate_routing_session_selections_total counter\n"
	good := `stargate_routing_session_selections_total{model="m",algorithm="wait-and-widen",session_state="returning",selection="primary"} 30` + "\n"
	bad := `stargate_routing_session_selections_total{model="m",algorithm="wait-and-widen",session_state="Returning",selection="primary"} 970` + "\n"
	ws, only := filepath.Join(dir, "ws.prom"), filepath.Join(dir, "only.prom")
	if os.WriteFile(ws, []byte(head+good+bad), 0o644) != nil || os.WriteFile(only, []byte(head+bad), 0o644) != nil {
		t.Fatal("write")
	}
	code, out, errOut := runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", ws)
	if code != 1 || !strings.Contains(out, "✖ label values are documented ones") || !strings.Contains(out, `session_state="Returning"`) ||
		!strings.Contains(out, "30 classified") || strings.Contains(out, "1000 classified") || strings.Contains(out, "share 3.0%") {
		t.Errorf("text: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", ws, "-o", "json")
	if code != 1 || !strings.Contains(out, `"invalid_samples": 1`) || !strings.Contains(out, `"total": 30`) || !strings.Contains(out, `"value": "Returning"`) ||
		!strings.Contains(out, `"stargate-metrics.labels"`) {
		t.Errorf("json: exit %d\n%s", code, out)
	}
	code, out, _ = runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", only)
	if code != 1 || !strings.Contains(out, "left out: 1 sample with an undocumented label value") {
		t.Errorf("only undocumented: exit %d\n%s", code, out)
	}
}
