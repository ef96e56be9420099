package preflight

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/gateway"
	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/store/storetest"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

func config(t *testing.T, name string) *validate.Result {
	t.Helper()
	p := filepath.Join("testdata", name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return validate.File(p, data)
}

func dotenv(t *testing.T, name string) *gateway.Env {
	t.Helper()
	p := filepath.Join("testdata", name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	env, err := gateway.ParseDotenv(p, data)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func scrape(t *testing.T, name string) *Scrapes {
	t.Helper()
	p := filepath.Join("..", "metrics", "testdata", name)
	s, err := (&metrics.Fetcher{}).Fetch(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return &Scrapes{Source: p, After: s}
}

// status returns the status of the result with id (and subject), failing
// the test when it is missing or present twice.
func status(t *testing.T, r *checks.Report, id, subject string) checks.Status {
	t.Helper()
	var found []checks.Result
	for _, res := range r.Find(id) {
		if res.Subject == subject {
			found = append(found, res)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s[%s]: %d results", id, subject, len(found))
	}
	return found[0].Status
}

func run(t *testing.T, in Inputs) *checks.Report {
	t.Helper()
	r := Run(context.Background(), in)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

const (
	ok   = checks.StatusOK
	fail = checks.StatusFail
	warn = checks.StatusWarn
	skip = checks.StatusSkip
)

func TestNoInputsSkipsEverything(t *testing.T) {
	for stage := 1; stage <= 3; stage++ {
		r := run(t, Inputs{Stage: stage})
		s := r.Summary()
		if s.Skip == 0 || s.OK+s.Warn+s.Fail != 0 {
			t.Errorf("stage %d without inputs: %+v", stage, s)
		}
		for _, res := range r.Results() {
			if res.Reason == "" || !strings.Contains(res.Reason, "--") && !strings.Contains(res.Reason, "given") {
				t.Errorf("stage %d: skip reason %q does not name the missing input", stage, res.Reason)
			}
		}
		if got := len(r.Find(CheckOlricReachable)); (stage >= 2) != (got == 1) {
			t.Errorf("stage %d: %d olric.reachable results", stage, got)
		}
	}
}

func TestConfigChecks(t *testing.T) {
	for _, tc := range []struct {
		file  string
		stage int
		want  map[string]checks.Status
	}{
		{"flag-off.json", 1, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: ok, CheckConfigFlagOff: ok}},
		{"no-slo.json", 1, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: fail, CheckConfigFlagOff: ok}},
		{"no-slo.json", 2, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: warn, CheckConfigFlagOff: ok}},
		{"flag-on.json", 1, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: ok, CheckConfigFlagOff: fail}},
		{"flag-on.json", 2, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: ok, CheckConfigFlagOff: fail}},
		{"flag-on.json", 3, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: ok, CheckConfigFlagOn: ok}},
		{"flag-off.json", 3, map[string]checks.Status{CheckConfigValid: ok, CheckConfigPWAW: ok, CheckConfigFlagOn: warn}},
		{"invalid.json", 1, map[string]checks.Status{CheckConfigValid: fail, CheckConfigPWAW: ok, CheckConfigFlagOff: ok}},
	} {
		r := run(t, Inputs{Stage: tc.stage, Config: config(t, tc.file)})
		got := map[string]checks.Status{}
		for _, res := range r.Group(GroupConfig).Checks {
			got[res.ID] = res.Status
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s stage %d: %v, want %v", tc.file, tc.stage, got, tc.want)
		}
	}
	// Positions of the findings are reported.
	r := run(t, Inputs{Stage: 1, Config: config(t, "flag-on.json")})
	res := r.Find(CheckConfigFlagOff)[0]
	if len(res.Details) != 2 || !strings.HasPrefix(res.Details[0], filepath.Join("testdata", "flag-on.json")+":10:32 models[") {
		t.Errorf("flag-off details %q", res.Details)
	}
	r = run(t, Inputs{Stage: 1, Config: config(t, "no-slo.json")})
	res = r.Find(CheckConfigPWAW)[0]
	if len(res.Details) != 1 || !strings.Contains(res.Details[0], `no-slo.json:3:35 models["meta/llama-3.1-8b-instruct"]`) {
		t.Errorf("pwaw details %q (the bounded entry must not be listed)", res.Details)
	}
	// One entry is counted in the singular.
	if want := "1 no-SLO pulsar-wait-and-widen entry changes behaviour at the upgrade"; res.Reason != want {
		t.Errorf("pwaw reason %q, want %q", res.Reason, want)
	}
	r = run(t, Inputs{Stage: 1, Config: config(t, "bounded.json")})
	res = r.Find(CheckConfigPWAW)[0]
	if want := "1 no-SLO pulsar-wait-and-widen entry already bounded (max_queued and cache_affinity_wait_ms set)"; res.Status != ok || res.Reason != want {
		t.Errorf("bounded: %s %q, want ok %q", res.Status, res.Reason, want)
	}
}

// TestCapDetailsNeverHidesOneLine: a "… and 1 more" line would take the
// place of the one line it hides; folding starts at two hidden lines.
func TestCapDetailsNeverHidesOneLine(t *testing.T) {
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("line %d", i+1)
		}
		return out
	}
	for _, n := range []int{0, maxDetailLines, maxDetailLines + 1} {
		if got := capDetails(lines(n)); !reflect.DeepEqual(got, lines(n)) {
			t.Errorf("%d lines: %q, want every line", n, got)
		}
	}
	got := capDetails(lines(maxDetailLines + 2))
	want := append(lines(maxDetailLines), "… and 2 more")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%d lines: %q, want %q", maxDetailLines+2, got, want)
	}
}

func TestGatewayChecks(t *testing.T) {
	for _, tc := range []struct {
		file      string
		stage     int
		storeDMap string
		want      map[string]checks.Status
	}{
		{"gateway-off.env", 1, "", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: ok, CheckGatewayDMap: ok, CheckGatewayFlag: ok}},
		{"gateway-on.env", 1, "", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: ok, CheckGatewayDMap: ok, CheckGatewayFlag: warn}},
		{"gateway-off.env", 2, "", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: ok, CheckGatewayDMap: ok, CheckGatewayFlag: fail}},
		{"gateway-on.env", 2, "", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: ok, CheckGatewayDMap: ok, CheckGatewayFlag: ok}},
		{"gateway-off.env", 3, "", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: ok, CheckGatewayDMap: ok, CheckGatewayFlag: fail}},
		{"gateway-on.env", 3, "other-dmap", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: ok, CheckGatewayDMap: fail, CheckGatewayFlag: ok}},
		{"gateway-bad.env", 2, "", map[string]checks.Status{CheckGatewaySettings: fail, CheckGatewayOlric: warn, CheckGatewayDMap: fail, CheckGatewayFlag: ok}},
		{"gateway-ports.env", 2, "", map[string]checks.Status{CheckGatewaySettings: ok, CheckGatewayOlric: fail, CheckGatewayDMap: ok, CheckGatewayFlag: ok}},
	} {
		r := run(t, Inputs{Stage: tc.stage, Gateway: dotenv(t, tc.file), StoreDMap: tc.storeDMap})
		got := map[string]checks.Status{}
		for _, res := range r.Group(GroupGateway).Checks {
			got[res.ID] = res.Status
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s stage %d: %v, want %v", tc.file, tc.stage, got, tc.want)
		}
	}
	r := run(t, Inputs{Stage: 2, Gateway: dotenv(t, "gateway-bad.env")})
	d := r.Find(CheckGatewaySettings)[0].Details
	if len(d) != 1 || d[0] != `error `+filepath.Join("testdata", "gateway-bad.env")+`:2:27: invalid STARGATE_LAST_CLUSTER_TTL="30": time: missing unit in duration "30"` {
		t.Errorf("settings details %q", d)
	}
}

func TestUpstreamValuesAtStage2(t *testing.T) {
	dir := filepath.Join(testutil.SharedDir(t), "examples", "gateway")
	var ins []gateway.NamedInput
	for _, p := range []string{filepath.Join(dir, "chart-values-2026-08-22.yaml"), filepath.Join("..", "gateway", "testdata", "values-stage2.yaml")} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, gateway.NamedInput{Name: p, Data: data})
	}
	env, err := gateway.ParseValues(ins...)
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, Inputs{Stage: 2, Gateway: env})
	for _, id := range []string{CheckGatewaySettings, CheckGatewayOlric, CheckGatewayDMap, CheckGatewayFlag} {
		if s := status(t, r, id, ""); s != ok {
			t.Errorf("%s: %s", id, s)
		}
	}
	// The chart defaults alone leave the store off: stage 2 fails there.
	env, _ = gateway.ParseValues(ins[0])
	r = run(t, Inputs{Stage: 2, Gateway: env})
	if s := status(t, r, CheckGatewayFlag, ""); s != fail {
		t.Errorf("chart defaults at stage 2: %s", s)
	}
	// The chart file sets no lastCluster key: its values are the chart's
	// defaults, and said to be (they used to be put to the file).
	if got, want := r.Find(CheckGatewaySettings)[0].Reason, "ttl 10m0s, lookup timeout 20ms, local max entries 100000 (chart default)"; got != want {
		t.Errorf("chart defaults: reason %q, want %q", got, want)
	}
}

// TestGatewayHintForEachBadValue: two bad values get a hint each (the
// check used to give the first one's only), and a non-positive duration
// is told to be above 0, not to have a unit it has.
func TestGatewayHintForEachBadValue(t *testing.T) {
	env, err := gateway.ParseValues(gateway.NamedInput{Name: "v.yaml", Data: []byte("llmApiGateway:\n  config:\n    lastCluster:\n      ttl: 0s\n      lookupTimeout: -5ms\n")})
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, Inputs{Stage: 1, Gateway: env}).Find(CheckGatewaySettings)[0]
	want := "set llmApiGateway.config.lastCluster.ttl to a duration above 0, e.g. 10m (the default); " +
		"set llmApiGateway.config.lastCluster.lookupTimeout to a duration above 0, e.g. 20ms (the default)"
	if res.Status != fail || res.Hint != want || len(res.Details) != 2 {
		t.Errorf("%s %q %q\nwant fail, hint %q", res.Status, res.Reason, res.Hint, want)
	}
	// The same hint twice is given once.
	env, err = gateway.ParseDotenv("e.env", []byte("STARGATE_LAST_CLUSTER_TTL=0s\nSTARGATE_LAST_CLUSTER_TTL=0s\n"))
	if err != nil {
		t.Fatal(err)
	}
	res = run(t, Inputs{Stage: 1, Gateway: env}).Find(CheckGatewaySettings)[0]
	if want := "set STARGATE_LAST_CLUSTER_TTL to a duration above 0, e.g. 10m (the default)"; !strings.HasPrefix(res.Hint, want) || strings.Count(res.Hint, want) != 1 {
		t.Errorf("duplicate hint: %q", res.Hint)
	}
}

// TestGatewayValuesReasonNamesEachOrigin: values a file sets carry their
// position, the others say where their default is from.
func TestGatewayValuesReasonNamesEachOrigin(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"llmApiGateway:\n  config:\n    lastCluster:\n      ttl: 5m\n      lookupTimeout: null\n",
			"ttl 5m0s (v.yaml:4:12), lookup timeout 20ms (gateway default: v.yaml:5:22 renders it empty), local max entries 100000 (chart default)"},
		{"llmApiGateway:\n  config:\n    lastCluster:\n      enabled: true\n",
			"ttl 10m0s, lookup timeout 20ms, local max entries 100000 (chart default)"},
	} {
		env, err := gateway.ParseValues(gateway.NamedInput{Name: "v.yaml", Data: []byte(tc.yaml)})
		if err != nil {
			t.Fatal(err)
		}
		if got := run(t, Inputs{Stage: 2, Gateway: env}).Find(CheckGatewaySettings)[0].Reason; got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.yaml, got, tc.want)
		}
	}
	r := run(t, Inputs{Stage: 1, Gateway: dotenv(t, "gateway-off.env")})
	if got, want := r.Find(CheckGatewaySettings)[0].Reason, "ttl 10m0s, lookup timeout 20ms, local max entries 100000 (not set, gateway default)"; got != want {
		t.Errorf("dotenv defaults: %q, want %q", got, want)
	}
}

func TestMetricsChecks(t *testing.T) {
	// Stage 2: a healthy gateway and a Stargate with the flag off pass.
	r := run(t, Inputs{Stage: 2, GatewayMetrics: scrape(t, "gateway-healthy.prom"), StargateMetrics: scrape(t, "stargate-flag-off.prom")})
	for _, id := range []string{CheckGatewayScrape, metrics.CheckGatewayLookups, metrics.CheckGatewayErrors, CheckStargateScrape, metrics.CheckStargateFlagOff} {
		if s := status(t, r, id, ""); s != ok {
			t.Errorf("stage 2 healthy %s: %s", id, s)
		}
	}
	// Stage 2 with Stargate already classifying: the flag is on too early.
	r = run(t, Inputs{Stage: 2, StargateMetrics: scrape(t, "stargate-healthy.prom")})
	if s := status(t, r, metrics.CheckStargateFlagOff, ""); s != fail {
		t.Errorf("flag on at stage 2: %s", s)
	}
	// Olric errors fail the gateway error and latency checks; the lookup
	// timeout comes from the gateway settings.
	r = run(t, Inputs{Stage: 2, Gateway: dotenv(t, "gateway-on.env"), GatewayMetrics: scrape(t, "gateway-olric-errors.prom")})
	if s := status(t, r, metrics.CheckGatewayErrors, ""); s != fail {
		t.Errorf("olric errors: %s", s)
	}
	if res := r.Find(metrics.CheckGatewayLatency)[0]; res.Status != fail || !strings.Contains(res.Reason, "20ms lookup timeout") {
		t.Errorf("latency: %+v", res)
	}
	// Stage 3, step 3 before step 2: the config's flag-on models have only
	// new sessions.
	r = run(t, Inputs{Stage: 3, Config: config(t, "flag-on.json"), StargateMetrics: scrape(t, "stargate-step3-before-step2.prom"), GatewayMetrics: scrape(t, "gateway-store-off.prom")})
	for _, m := range []string{"meta/llama-3.1-8b-instruct", "company/model-b"} {
		if s := status(t, r, metrics.CheckStargateReturn, m); s != fail {
			t.Errorf("step 3 before 2, %s: %s", m, s)
		}
	}
	if s := status(t, r, metrics.CheckGatewayLookups, ""); s != fail {
		t.Errorf("gateway without lookups at stage 3: %s", s)
	}
	// Stage 3, healthy.
	r = run(t, Inputs{Stage: 3, Config: config(t, "flag-on.json"), StargateMetrics: scrape(t, "stargate-healthy.prom"), GatewayMetrics: scrape(t, "gateway-healthy.prom")})
	if r.Failed(true) {
		t.Errorf("healthy stage 3 failed: %+v", r.Results())
	}
	// A scrape error fails the scrape check and skips the rest silently.
	r = run(t, Inputs{Stage: 3, GatewayMetrics: &Scrapes{Source: "http://x", Err: errors.New("fetch http://x: connection refused")}})
	if s := status(t, r, CheckGatewayScrape, ""); s != fail || len(r.Group(GroupGatewayMetrics).Checks) != 1 {
		t.Errorf("scrape error: %+v", r.Group(GroupGatewayMetrics).Checks)
	}
	// Two scrapes judge the increase.
	before, after := scrape(t, "stargate-healthy.prom"), scrape(t, "stargate-healthy-2.prom")
	after.After.Time = before.After.Time.Add(30 * time.Second)
	after.Before = before.After
	r = run(t, Inputs{Stage: 1, StargateMetrics: after})
	if res := r.Find(metrics.CheckStargateFlagOff)[0]; res.Status != fail || !strings.Contains(res.Reason, "over 30s") {
		t.Errorf("rates: %+v", res)
	}
}

type fakeProber ProbeReport

func (f fakeProber) Probe(context.Context, []string, string) ProbeReport { return ProbeReport(f) }

func TestOlricChecksMapping(t *testing.T) {
	for _, tc := range []struct {
		rep         ProbeReport
		reach, rw   checks.Status
		description string
	}{
		{ProbeReport{Members: []string{"a"}}, ok, ok, "healthy"},
		{ProbeReport{Reach: errors.New("refused")}, fail, skip, "unreachable"},
		{ProbeReport{Members: []string{"a"}, ReadWrite: errors.New("probe write: timeout")}, ok, fail, "read-only"},
	} {
		r := run(t, Inputs{Stage: 2, OlricAddrs: []string{"a:3320"}, Prober: fakeProber(tc.rep)})
		if got := [2]checks.Status{status(t, r, CheckOlricReachable, ""), status(t, r, CheckOlricReadWrite, "")}; got != [2]checks.Status{tc.reach, tc.rw} {
			t.Errorf("%s: %v", tc.description, got)
		}
	}
	// Each address once: a seed that is a member is named only in the
	// details; a seed that is not (a Service) in the reason; an error that
	// names the seed already is not prefixed with it again.
	for _, tc := range []struct {
		seed   string
		rep    ProbeReport
		reason string
	}{
		{"10.0.0.1:3320", ProbeReport{Members: []string{"10.0.0.1:3320"}, Version: "(271 partitions)"}, "1 member (271 partitions)"},
		{"gw:3320", ProbeReport{Members: []string{"10.0.0.1:3320", "10.0.0.2:3320"}}, "2 members, reached through gw:3320"},
		{"10.0.0.1:3320", ProbeReport{Reach: errors.New("cannot connect to Olric: unreachable: 10.0.0.1:3320: dial tcp: connection refused")}, "cannot connect to Olric: unreachable: 10.0.0.1:3320: dial tcp: connection refused"},
		{"10.0.0.1:3320", ProbeReport{Reach: errors.New("members: timeout")}, "10.0.0.1:3320: members: timeout"},
	} {
		r := run(t, Inputs{Stage: 2, OlricAddrs: []string{tc.seed}, Prober: fakeProber(tc.rep)})
		res := r.Find(CheckOlricReachable)[0]
		if res.Reason != tc.reason {
			t.Errorf("reason %q, want %q", res.Reason, tc.reason)
		}
		text := res.Reason + "\n" + strings.Join(res.Details, "\n")
		for _, a := range append([]string{tc.seed}, tc.rep.Members...) {
			if n := strings.Count(text, a); n != 1 {
				t.Errorf("%q names %s %d times, want once", text, a, n)
			}
		}
	}
	// Addresses without a prober: skipped with the reason.
	r := run(t, Inputs{Stage: 2, OlricAddrs: []string{"a:3320"}})
	if res := r.Find(CheckOlricReachable)[0]; res.Status != skip || !strings.Contains(res.Reason, "no Olric client") {
		t.Errorf("no prober: %+v", res)
	}
}

func TestOlricProbeAgainstEmbeddedCluster(t *testing.T) {
	c := storetest.Start(t, 2, 1)
	prober := StoreProber{Options: store.Options{DialTimeout: 2 * time.Second, RequestTimeout: 2 * time.Second}}
	r := run(t, Inputs{Stage: 2, OlricAddrs: c.Addrs(), Prober: prober})
	if s := status(t, r, CheckOlricReachable, ""); s != ok {
		t.Fatalf("reachable: %+v", r.Find(CheckOlricReachable))
	}
	rw := r.Find(CheckOlricReadWrite)[0]
	if rw.Status != ok || !strings.Contains(rw.Reason, gateway.LastClusterDMap) || len(rw.Details) != 4 {
		t.Fatalf("read/write: %+v", rw)
	}
	if got := len(r.Find(CheckOlricReachable)[0].Details); got != 2 {
		t.Errorf("members listed: %d", got)
	}
	// The probe key is removed again: the store's confirm step read it back
	// as absent after the delete.
	if last := rw.Details[len(rw.Details)-1]; !strings.HasPrefix(last, "confirm: ok") {
		t.Errorf("probe steps %q", rw.Details)
	}

	// A stopped cluster is unreachable.
	addrs := c.Addrs()
	c.Stop(1)
	c.Stop(0)
	prober.Options.Attempts = 1
	prober.Options.DialTimeout = 300 * time.Millisecond
	r = run(t, Inputs{Stage: 3, OlricAddrs: addrs, Prober: prober})
	if s := status(t, r, CheckOlricReachable, ""); s != fail {
		t.Errorf("stopped cluster: %+v", r.Find(CheckOlricReachable))
	}
}

func TestDMapNamesAgree(t *testing.T) {
	if gateway.LastClusterDMap != store.DMapName {
		t.Fatalf("gateway %q and store %q disagree on the hint DMap", gateway.LastClusterDMap, store.DMapName)
	}
}
