package metrics

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/checks"
)

func approx(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil, want %v", what, want)
	}
	if math.Abs(*got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

func TestGatewayReportHealthy(t *testing.T) {
	r := BuildGatewayReport("gw", Totals, ExtractGateway(load(t, "gateway-healthy.prom")))
	if !r.Present || !r.WritesPresent {
		t.Fatal("families not found")
	}
	want := map[string]float64{"hit": 800, "miss": 250, "error": 2, "timeout": 3, "skipped": 100}
	if !reflect.DeepEqual(r.Lookups, want) {
		t.Errorf("lookups %v, want %v", r.Lookups, want)
	}
	if r.LookupsTotal != 1155 || r.Attempted != 1055 {
		t.Errorf("total %v attempted %v", r.LookupsTotal, r.Attempted)
	}
	approx(t, "hit ratio", r.HitRatio, 800.0/1055)
	approx(t, "failure ratio", r.FailureRatio, 5.0/1055)
	approx(t, "skipped ratio", r.SkippedRatio, 100.0/1155)
	approx(t, "write error ratio", r.WriteErrorRatio, 1.0/1001)
	if r.Latency.Count != 1055 {
		t.Errorf("latency count %v", r.Latency.Count)
	}
	// Merged buckets: le 0.002 → 650+190 = 840, le 0.005 → 798+249+2 = 1049.
	// p99 rank 1044.45 lies in (0.002, 0.005].
	approx(t, "p99", r.Latency.P99, 0.002+0.003*(1044.45-840)/(1049-840))
}

func TestOpenMetricsMatchesText(t *testing.T) {
	text := ExtractGateway(load(t, "gateway-healthy.prom"))
	om := ExtractGateway(load(t, "gateway-healthy.om"))
	if !reflect.DeepEqual(text, om) {
		t.Errorf("OpenMetrics gateway extraction differs:\ntext %+v\nom   %+v", text, om)
	}
	st := ExtractStargate(load(t, "stargate-healthy.prom"), "")
	so := ExtractStargate(load(t, "stargate-healthy.om"), "")
	if !reflect.DeepEqual(st, so) {
		t.Errorf("OpenMetrics Stargate extraction differs:\ntext %+v\nom   %+v", st, so)
	}
}

func TestStargateReport(t *testing.T) {
	r := BuildStargateReport("sg", Totals, ExtractStargate(load(t, "stargate-healthy.prom"), ""), "")
	if !r.Present || len(r.Rows) != 2 || len(r.Models) != 2 {
		t.Fatalf("report %+v", r)
	}
	m, ok := r.Model("meta/llama-3.1-8b-instruct")
	if !ok {
		t.Fatal("model missing")
	}
	if m.RoutingKeys != 2 || m.Total != 1095 {
		t.Errorf("routing keys %d total %v", m.RoutingKeys, m.Total)
	}
	ret := m.State(StateReturning)
	if ret.Primary != 570 || ret.Fallback != 65 {
		t.Errorf("returning %+v", ret)
	}
	approx(t, "returning share", m.ReturningShare, 635.0/1095)
	approx(t, "stickiness", m.ReturningPrimaryShare, 570.0/635)
	approx(t, "stale share", m.StaleShare, 20.0/1095)

	filtered := BuildStargateReport("sg", Totals, ExtractStargate(load(t, "stargate-healthy.prom"), ""), "company/model-b")
	if len(filtered.Models) != 1 || filtered.Models[0].Model != "company/model-b" || filtered.Rows[0].Algorithm != "wait-and-widen" {
		t.Errorf("filtered %+v", filtered.Models)
	}
}

// TestStargateModelVerdict: a --model with no series while other models
// have some is a failure naming the models present and the near miss; a
// known model, or a scrape without the family, is not judged here.
func TestStargateModelVerdict(t *testing.T) {
	snap := ExtractStargate(load(t, "stargate-healthy.prom"), "")
	r := BuildStargateReport("sg", Totals, snap, "company/model-c")
	if want := []string{"company/model-b", "meta/llama-3.1-8b-instruct"}; !slices.Equal(r.ModelsInScrape, want) {
		t.Fatalf("models in scrape %v, want %v (the filter must not hide them)", r.ModelsInScrape, want)
	}
	if len(r.Rows) != 0 {
		t.Fatalf("rows %+v for an unknown model", r.Rows)
	}
	res, missing := StargateModelVerdict(r, "company/model-c")
	if !missing || res.Status != checks.StatusFail || res.ID != CheckStargateModel || res.Subject != "company/model-c" ||
		!strings.Contains(res.Reason, `no stargate_routing_session_selections_total series for model "company/model-c" in sg (models: company/model-b, meta/llama-3.1-8b-instruct); did you mean "company/model-b"?`) {
		t.Errorf("unknown model: %v %+v", missing, res)
	}
	res, _ = StargateModelVerdict(r, "mistral/mixtral")
	if strings.Contains(res.Reason, "did you mean") {
		t.Errorf("far name suggested something: %s", res.Reason)
	}
	if _, missing := StargateModelVerdict(BuildStargateReport("sg", Totals, snap, "company/model-b"), "company/model-b"); missing {
		t.Error("a model in the scrape was reported missing")
	}
	empty := BuildStargateReport("sg", Totals, StargateSnapshot{Name: "x", Selections: map[SelectionKey]float64{}}, "m")
	if _, missing := StargateModelVerdict(empty, "m"); missing || empty.ModelsInScrape == nil {
		t.Errorf("no series at all: missing %v, models %#v (want false and an empty list)", missing, empty.ModelsInScrape)
	}
}

func TestStargatePrefix(t *testing.T) {
	s := load(t, "stargate-legacy-prefix.prom")
	if ExtractStargate(s, "").Present {
		t.Error("default prefix must not match llm_request_router_ series")
	}
	st := ExtractStargate(s, "llm_request_router_")
	if !st.Present || len(st.Selections) != 6 {
		t.Errorf("legacy prefix: %+v", st)
	}
}

func TestSinceGivesIncrease(t *testing.T) {
	before := ExtractGateway(load(t, "gateway-healthy.prom"))
	after := ExtractGateway(load(t, "gateway-healthy-2.prom"))
	d := after.Since(before)
	want := map[string]float64{"hit": 400, "miss": 100, "error": 0, "timeout": 0, "skipped": 30}
	if !reflect.DeepEqual(d.Lookups, want) {
		t.Errorf("lookup increase %v, want %v", d.Lookups, want)
	}
	if d.Writes["ok"] != 300 || d.Writes["error"] != 0 {
		t.Errorf("write increase %v", d.Writes)
	}
	if h := d.Latency["hit"]; h.Count != 400 || h.Buckets[0].Count != 150 {
		t.Errorf("hit histogram increase %+v", h)
	}
	r := BuildGatewayReport("gw", RatesOver(30*time.Second), d)
	if got := r.Window.PerSecond(r.Lookups["hit"]); math.Abs(got-400.0/30) > 1e-9 {
		t.Errorf("hit rate %v", got)
	}

	// A series that went down (process restart) counts from zero: error
	// 300 → 2 gives 2, while hit 50 → 1200 is a plain increase of 1150.
	reset := after.Since(ExtractGateway(load(t, "gateway-olric-errors.prom")))
	if reset.Lookups["hit"] != 1150 || reset.Lookups["error"] != 2 {
		t.Errorf("reset handling: %v", reset.Lookups)
	}
	if reset.Latency["error"].Count != 2 {
		t.Errorf("histogram reset handling: %+v", reset.Latency["error"])
	}

	sb := ExtractStargate(load(t, "stargate-healthy.prom"), "")
	sa := ExtractStargate(load(t, "stargate-healthy-2.prom"), "")
	sd := BuildStargateReport("sg", RatesOver(30*time.Second), sa.Since(sb), "company/model-b")
	m, _ := sd.Model("company/model-b")
	if m.Total != 45 || m.State(StateReturning).Primary != 30 {
		t.Errorf("stargate increase %+v", m)
	}
}

func statuses(rs []checks.Result) map[string]checks.Status {
	out := map[string]checks.Status{}
	for _, r := range rs {
		k := r.ID
		if r.Subject != "" {
			k += "[" + r.Subject + "]"
		}
		out[k] = r.Status
	}
	return out
}

func gatewayVerdicts(t *testing.T, file string, stage int) map[string]checks.Status {
	t.Helper()
	r := BuildGatewayReport(file, Totals, ExtractGateway(load(t, file)))
	rs := GatewayVerdicts(r, VerdictOptions{Stage: stage})
	rep := &checks.Report{Groups: []*checks.Group{{Name: "g", Checks: rs}}}
	if err := rep.Validate(); err != nil {
		t.Fatal(err)
	}
	return statuses(rs)
}

func TestGatewayVerdicts(t *testing.T) {
	const (
		ok   = checks.StatusOK
		warn = checks.StatusWarn
		fail = checks.StatusFail
		skip = checks.StatusSkip
	)
	for _, tc := range []struct {
		file  string
		stage int
		want  map[string]checks.Status
	}{
		{"gateway-healthy.prom", 2, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: ok, CheckGatewayWrites: ok, CheckGatewayErrors: ok, CheckGatewayLatency: ok}},
		{"gateway-healthy.prom", 3, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: ok, CheckGatewayWrites: ok, CheckGatewayErrors: ok, CheckGatewayLatency: ok}},
		{"gateway-healthy.om", 3, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: ok, CheckGatewayWrites: ok, CheckGatewayErrors: ok, CheckGatewayLatency: ok}},
		{"gateway-olric-errors.prom", 2, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: ok, CheckGatewayWrites: ok, CheckGatewayErrors: fail, CheckGatewayLatency: fail}},
		{"gateway-store-off.prom", 2, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: warn, CheckGatewayWrites: warn, CheckGatewayErrors: skip, CheckGatewayLatency: skip}},
		{"gateway-store-off.prom", 3, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: fail, CheckGatewayWrites: fail, CheckGatewayErrors: skip, CheckGatewayLatency: skip}},
		{"gateway-all-skipped.prom", 3, map[string]checks.Status{CheckGatewayPresent: ok, CheckGatewayLookups: warn, CheckGatewayWrites: fail, CheckGatewayErrors: skip, CheckGatewayLatency: skip}},
		{"empty.prom", 2, map[string]checks.Status{CheckGatewayPresent: warn, CheckGatewayLookups: skip, CheckGatewayWrites: skip, CheckGatewayErrors: skip, CheckGatewayLatency: skip}},
		{"empty.prom", 3, map[string]checks.Status{CheckGatewayPresent: fail, CheckGatewayLookups: skip, CheckGatewayWrites: skip, CheckGatewayErrors: skip, CheckGatewayLatency: skip}},
		{"stargate-healthy.prom", 0, map[string]checks.Status{CheckGatewayPresent: warn, CheckGatewayLookups: skip, CheckGatewayWrites: skip, CheckGatewayErrors: skip, CheckGatewayLatency: skip}},
	} {
		got := gatewayVerdicts(t, tc.file, tc.stage)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s stage %d:\n got %v\nwant %v", tc.file, tc.stage, got, tc.want)
		}
	}
	if got := GatewayVerdicts(GatewayReport{}, VerdictOptions{Stage: 1}); got != nil {
		t.Errorf("stage 1 must not judge gateway traffic: %v", got)
	}
}

func TestGatewayVerdictEdges(t *testing.T) {
	base := func(hit, miss, errs, timeouts, ok, werr float64) GatewayReport {
		g := GatewaySnapshot{LookupsPresent: true, WritesPresent: true,
			Lookups: map[string]float64{"hit": hit, "miss": miss, "error": errs, "timeout": timeouts},
			Writes:  map[string]float64{"ok": ok, "error": werr}}
		return BuildGatewayReport("x", Totals, g)
	}
	find := func(rs []checks.Result, id string) checks.Result {
		for _, r := range rs {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("no %s in %v", id, rs)
		return checks.Result{}
	}
	// No hits with enough attempts fails; with few attempts warns.
	if s := find(GatewayVerdicts(base(0, 50, 0, 0, 50, 0), VerdictOptions{Stage: 2}), CheckGatewayLookups).Status; s != checks.StatusFail {
		t.Errorf("no hit in 50 attempts: %s", s)
	}
	if s := find(GatewayVerdicts(base(0, 5, 0, 0, 5, 0), VerdictOptions{Stage: 2}), CheckGatewayLookups).Status; s != checks.StatusWarn {
		t.Errorf("no hit in 5 attempts: %s", s)
	}
	// 2% failures warn, 10% fail, but 10% of 10 only warns.
	if s := find(GatewayVerdicts(base(980, 0, 20, 0, 1000, 0), VerdictOptions{Stage: 2}), CheckGatewayErrors).Status; s != checks.StatusWarn {
		t.Errorf("2%% failures: %s", s)
	}
	if s := find(GatewayVerdicts(base(900, 0, 50, 50, 1000, 0), VerdictOptions{Stage: 2}), CheckGatewayErrors).Status; s != checks.StatusFail {
		t.Errorf("10%% failures: %s", s)
	}
	if s := find(GatewayVerdicts(base(9, 0, 1, 0, 10, 0), VerdictOptions{Stage: 2}), CheckGatewayErrors).Status; s != checks.StatusWarn {
		t.Errorf("10%% of 10: %s", s)
	}
	// Write errors alone fail the errors check; no ok write fails writes.
	rs := GatewayVerdicts(base(100, 0, 0, 0, 0, 100), VerdictOptions{Stage: 2})
	if find(rs, CheckGatewayErrors).Status != checks.StatusFail || find(rs, CheckGatewayWrites).Status != checks.StatusFail {
		t.Errorf("all writes failing: %v", statuses(rs))
	}
	// Latency against the configured timeout: healthy p99 ≈ 4.9 ms warns
	// with an 8 ms timeout and fails with a 4 ms one.
	r := BuildGatewayReport("gw", Totals, ExtractGateway(load(t, "gateway-healthy.prom")))
	if s := find(GatewayVerdicts(r, VerdictOptions{Stage: 2, LookupTimeout: 8 * time.Millisecond}), CheckGatewayLatency).Status; s != checks.StatusWarn {
		t.Errorf("p99 4.9ms vs 8ms: %s", s)
	}
	if s := find(GatewayVerdicts(r, VerdictOptions{Stage: 2, LookupTimeout: 4 * time.Millisecond}), CheckGatewayLatency).Status; s != checks.StatusFail {
		t.Errorf("p99 4.9ms vs 4ms: %s", s)
	}
}

func stargateVerdicts(t *testing.T, file string, models []string, stage int) map[string]checks.Status {
	t.Helper()
	r := BuildStargateReport(file, Totals, ExtractStargate(load(t, file), ""), "")
	rs := StargateSessionVerdicts(r, models, VerdictOptions{Stage: stage})
	rep := &checks.Report{Groups: []*checks.Group{{Name: "s", Checks: rs}}}
	if err := rep.Validate(); err != nil {
		t.Fatal(err)
	}
	return statuses(rs)
}

func TestStargateVerdicts(t *testing.T) {
	const (
		llama = "meta/llama-3.1-8b-instruct"
		mb    = "company/model-b"
	)
	k := func(id, m string) string { return id + "[" + m + "]" }
	for _, tc := range []struct {
		file   string
		models []string
		stage  int
		want   map[string]checks.Status
	}{
		{"stargate-healthy.prom", nil, 3, map[string]checks.Status{
			k(CheckStargateReturn, llama): checks.StatusOK, k(CheckStargateSticky, llama): checks.StatusOK,
			k(CheckStargateReturn, mb): checks.StatusOK, k(CheckStargateSticky, mb): checks.StatusOK}},
		{"stargate-step3-before-step2.prom", nil, 3, map[string]checks.Status{
			k(CheckStargateReturn, llama): checks.StatusFail, k(CheckStargateSticky, llama): checks.StatusSkip,
			k(CheckStargateReturn, mb): checks.StatusFail, k(CheckStargateSticky, mb): checks.StatusSkip}},
		{"stargate-step3-before-step2.prom", nil, 0, map[string]checks.Status{
			k(CheckStargateReturn, llama): checks.StatusFail, k(CheckStargateSticky, llama): checks.StatusSkip,
			k(CheckStargateReturn, mb): checks.StatusFail, k(CheckStargateSticky, mb): checks.StatusSkip}},
		{"stargate-unsticky.prom", nil, 3, map[string]checks.Status{
			k(CheckStargateReturn, llama): checks.StatusOK, k(CheckStargateSticky, llama): checks.StatusWarn}},
		// A model expected from the config but absent from the scrape warns.
		{"stargate-healthy.prom", []string{"other/model"}, 3, map[string]checks.Status{
			k(CheckStargateReturn, "other/model"): checks.StatusWarn, k(CheckStargateSticky, "other/model"): checks.StatusSkip}},
		{"stargate-flag-off.prom", nil, 0, map[string]checks.Status{CheckStargateSessions: checks.StatusOK}},
		{"stargate-flag-off.prom", nil, 3, map[string]checks.Status{CheckStargateReturn: checks.StatusWarn}},
	} {
		got := stargateVerdicts(t, tc.file, tc.models, tc.stage)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v stage %d:\n got %v\nwant %v", tc.file, tc.models, tc.stage, got, tc.want)
		}
	}
}

func TestStargateFlagOff(t *testing.T) {
	for _, tc := range []struct {
		file string
		want checks.Status
	}{
		{"stargate-flag-off.prom", checks.StatusOK},
		{"empty.prom", checks.StatusOK},
		{"stargate-healthy.prom", checks.StatusFail},
		{"stargate-step3-before-step2.prom", checks.StatusFail},
	} {
		r := BuildStargateReport(tc.file, Totals, ExtractStargate(load(t, tc.file), ""), "")
		if got := StargateFlagOffVerdict(r); got.Status != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.file, got.Status, got.Reason, tc.want)
		}
	}
	// Series that did not grow between two scrapes only warn.
	s := ExtractStargate(load(t, "stargate-healthy.prom"), "")
	r := BuildStargateReport("sg", RatesOver(30*time.Second), s.Since(s), "")
	if got := StargateFlagOffVerdict(r); got.Status != checks.StatusWarn {
		t.Errorf("flat series: %s", got.Status)
	}
}

// TestTextRows: at most the limit, the busiest rows (ties by table
// order), listed in table order; every row when they fit.
func TestTextRows(t *testing.T) {
	r := StargateReport{}
	for i, total := range []float64{5, 9, 1, 9, 7} {
		r.Rows = append(r.Rows, ModelSelections{Model: fmt.Sprintf("m%d", i), Total: total})
	}
	rows, omitted := r.TextRows(3)
	var got []string
	for _, m := range rows {
		got = append(got, m.Model)
	}
	if want := []string{"m1", "m3", "m4"}; !slices.Equal(got, want) || omitted != 2 {
		t.Errorf("TextRows(3) = %v, %d omitted; want %v, 2", got, omitted, want)
	}
	if rows, omitted := r.TextRows(5); len(rows) != 5 || omitted != 0 {
		t.Errorf("TextRows(5) = %d rows, %d omitted; want all 5", len(rows), omitted)
	}
}
