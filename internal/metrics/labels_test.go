package metrics

import (
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/checks"
)

func parseText(t *testing.T, text string) *Scrape {
	t.Helper()
	keep := append(append([]string(nil), GatewayFamilies...), StargateFamilies("")...)
	s, err := Parse("ws.prom", []byte(text), "", keep...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func findResult(t *testing.T, rs []checks.Result, id string) checks.Result {
	t.Helper()
	for _, r := range rs {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no %s in %v", id, rs)
	return checks.Result{}
}

// A session_state or selection outside the documented set is in no state
// and no total: it is counted as invalid and named by a failed check.
func TestUndocumentedStargateLabelValues(t *testing.T) {
	for _, tc := range []struct {
		name, bad, label, value string
		total, returning        float64
	}{
		{"state case", `session_state="Returning",selection="primary"} 970`, "session_state", "Returning", 30, 30},
		{"selection", `session_state="returning",selection="weird"} 970`, "selection", "weird", 30, 30},
		{"state absent", `selection="primary"} 970`, "session_state", "", 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "# TYPE stargate_routing_session_selections_total counter\n" +
				`stargate_routing_session_selections_total{model="m",algorithm="wait-and-widen",session_state="returning",selection="primary"} 30` + "\n" +
				`stargate_routing_session_selections_total{model="m",algorithm="wait-and-widen",` + tc.bad + "\n"
			r := BuildStargateReport("ws.prom", Totals, ExtractStargate(parseText(t, text), ""), "")
			m, ok := r.Model("m")
			if !ok {
				t.Fatal("no row for m")
			}
			if m.Total != tc.total || m.State(StateReturning).Total() != tc.returning {
				t.Errorf("total %v returning %v, want %v and %v", m.Total, m.State(StateReturning).Total(), tc.total, tc.returning)
			}
			if len(m.States) != 1 {
				t.Errorf("states %v: an undocumented state must not be a state", m.States)
			}
			if r.InvalidSamples != 1 || r.InvalidLabels.Samples != 1 || len(r.InvalidLabels.Examples) != 1 {
				t.Fatalf("invalid %d, labels %+v", r.InvalidSamples, r.InvalidLabels)
			}
			if e := r.InvalidLabels.Examples[0]; e.Label != tc.label || e.Value != tc.value || !strings.Contains(e.Series, "stargate_routing_session_selections_total{") {
				t.Errorf("example %+v", e)
			}
			vs := StargateSessionVerdicts(r, nil, VerdictOptions{Stage: 3})
			res := findResult(t, vs, CheckStargateLabels)
			if res.Status != checks.StatusFail || !strings.Contains(res.Reason, tc.label) || !strings.Contains(res.Reason, `"`+tc.value+`"`) && tc.value != "" {
				t.Errorf("labels verdict %+v", res)
			}
			for _, v := range vs {
				if v.ID == CheckStargateSamples {
					t.Errorf("a label problem is not a bad number: %+v", v)
				}
			}
		})
	}
}

// The gateway's result labels: an unknown lookup or write result is left
// out of the attempts and totals.
func TestUndocumentedGatewayResults(t *testing.T) {
	text := "# TYPE llm_api_gateway_last_cluster_lookups_total counter\n" +
		`llm_api_gateway_last_cluster_lookups_total{result="hit"} 80` + "\n" +
		`llm_api_gateway_last_cluster_lookups_total{result="miss"} 20` + "\n" +
		`llm_api_gateway_last_cluster_lookups_total{result="Hit"} 900` + "\n" +
		"# TYPE llm_api_gateway_last_cluster_writes_total counter\n" +
		`llm_api_gateway_last_cluster_writes_total{result="ok"} 50` + "\n" +
		`llm_api_gateway_last_cluster_writes_total{result="skipped"} 5` + "\n" +
		"# TYPE llm_api_gateway_last_cluster_lookup_duration_seconds histogram\n" +
		`llm_api_gateway_last_cluster_lookup_duration_seconds_bucket{result="hit",le="+Inf"} 80` + "\n" +
		`llm_api_gateway_last_cluster_lookup_duration_seconds_count{result="hit"} 80` + "\n" +
		`llm_api_gateway_last_cluster_lookup_duration_seconds_sum{result="hit"} 0.1` + "\n" +
		`llm_api_gateway_last_cluster_lookup_duration_seconds_bucket{result="HIT",le="+Inf"} 900` + "\n" +
		`llm_api_gateway_last_cluster_lookup_duration_seconds_count{result="HIT"} 900` + "\n" +
		`llm_api_gateway_last_cluster_lookup_duration_seconds_sum{result="HIT"} 1` + "\n"
	r := BuildGatewayReport("gw.prom", Totals, ExtractGateway(parseText(t, text)))
	if r.LookupsTotal != 100 || r.Attempted != 100 || r.WritesTotal != 50 || r.Latency.Count != 80 {
		t.Errorf("lookups %v attempted %v writes %v latency count %v", r.LookupsTotal, r.Attempted, r.WritesTotal, r.Latency.Count)
	}
	approx(t, "hit ratio", r.HitRatio, 0.8)
	if r.InvalidLabels.Samples != 3 || r.InvalidSamples != 3 {
		t.Fatalf("invalid %d, labels %+v", r.InvalidSamples, r.InvalidLabels)
	}
	res := findResult(t, GatewayVerdicts(r, VerdictOptions{Stage: 2}), CheckGatewayLabels)
	if res.Status != checks.StatusFail || !strings.Contains(res.Reason, `result="Hit"`) {
		t.Errorf("labels verdict %+v", res)
	}
	if d := strings.Join(res.Details, "\n"); !strings.Contains(d, `result="skipped" (expected ok, error)`) || !strings.Contains(d, `result="HIT"`) {
		t.Errorf("details %s", d)
	}
}

// Over an interval, both scrapes' series are counted and named once.
func TestUndocumentedLabelsSince(t *testing.T) {
	text := func(v int) string {
		return "# TYPE stargate_routing_session_selections_total counter\n" +
			`stargate_routing_session_selections_total{model="m",algorithm="a",session_state="new",selection="primary"} 30` + "\n" +
			`stargate_routing_session_selections_total{model="m",algorithm="a",session_state="NEW",selection="primary"} ` + strings.Repeat("9", v) + "\n"
	}
	before := ExtractStargate(parseText(t, text(1)), "")
	after := ExtractStargate(parseText(t, text(2)), "")
	d := after.Since(before)
	if d.InvalidLabels.Samples != 2 || len(d.InvalidLabels.Examples) != 1 {
		t.Errorf("since: %+v", d.InvalidLabels)
	}
}
