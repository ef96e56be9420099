package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/store/storetest"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// runLcctlStdin runs lcctl in-process with injected streams.
func runLcctlStdin(t *testing.T, stdin string, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb,
		Getenv: func(k string) string { return env[k] }}
	code = cli.Main(context.Background(), args, s)
	return code, out.String(), errb.String()
}

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

func metricsFixture(name string) string { return fixture("internal", "metrics", "testdata", name) }

// serveFixtures serves each fixture at /<name>; /sequence/<a>,<b> serves a
// then b on successive requests (for --interval).
func serveFixtures(t *testing.T) *httptest.Server {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		if seq, ok := strings.CutPrefix(name, "sequence/"); ok {
			names := strings.Split(seq, ",")
			name = names[min(int(hits.Add(1))-1, len(names)-1)]
		}
		data, err := os.ReadFile(metricsFixture(name))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type jsonChecks struct {
	Schema  string `json:"schema"`
	Stage   int    `json:"stage"`
	Success bool   `json:"success"`
	Groups  []struct {
		Name   string `json:"name"`
		Checks []struct {
			ID      string `json:"id"`
			Subject string `json:"subject"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
		} `json:"checks"`
	} `json:"groups"`
}

func (j jsonChecks) status(id, subject string) string {
	for _, g := range j.Groups {
		for _, c := range g.Checks {
			if c.ID == id && c.Subject == subject {
				return c.Status
			}
		}
	}
	return "missing"
}

// TestPreflightStage2Acceptance is the acceptance command: stage 2
// with an lb config, the upstream chart values plus a stage-2 override, a
// real Olric cluster and the gateway metrics over HTTP.
func TestPreflightStage2Acceptance(t *testing.T) {
	c := storetest.Start(t, 1, 1)
	srv := serveFixtures(t)
	shared := testutil.SharedDir(t)
	args := []string{"preflight", "--stage", "2",
		"--config", fixture("internal", "preflight", "testdata", "flag-off.json"),
		"--gateway-values", filepath.Join(shared, "examples", "gateway", "chart-values-2026-08-22.yaml"),
		"--gateway-values", fixture("internal", "gateway", "testdata", "values-stage2.yaml"),
		"--olric", c.AddrList(),
		"--gateway-metrics", srv.URL + "/gateway-healthy.prom",
		"--stargate-metrics", srv.URL + "/stargate-flag-off.prom"}
	code, out, errOut := runLcctlStdin(t, "", nil, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"lb config (Stargate)\n--------------------\n", "✔ Olric is reachable", "✔ hint DMap is readable and writable",
		"✔ gateway lookups return hits", "✔ Stargate classifies no sessions", "Status check results are ✔"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runLcctlStdin(t, "", nil, append(args, "-o", "json")...)
	var j jsonChecks
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	if j.Schema != "lcctl.checks/v1" || j.Stage != 2 || !j.Success || j.status("olric.dmap-rw", "") != "ok" {
		t.Errorf("json report %+v", j)
	}
}

func TestPreflightFailuresAndHints(t *testing.T) {
	srv := serveFixtures(t)
	// Step 3 before step 2: gateway store off, Stargate sees only new sessions.
	code, out, _ := runLcctlStdin(t, "", nil, "preflight", "--stage", "3",
		"--config", fixture("internal", "preflight", "testdata", "flag-on.json"),
		"--gateway-env", fixture("internal", "preflight", "testdata", "gateway-off.env"),
		"--gateway-metrics", srv.URL+"/gateway-store-off.prom",
		"--stargate-metrics", srv.URL+"/stargate-step3-before-step2.prom")
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"✖ gateway last-cluster store flag fits the stage",
		"✖ returning sessions reach Stargate [meta/llama-3.1-8b-instruct]",
		"hint: the gateway store is not on or not working (step 3 before step 2)",
		"○ Olric is reachable\n    skipped: no --olric addresses given",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// An unreachable metrics URL is a failed check, not an input error.
	code, out, _ = runLcctlStdin(t, "", nil, "preflight", "--stage", "2", "--gateway-metrics", srv.URL+"/missing.prom")
	if code != 1 || !strings.Contains(out, "✖ gateway metrics can be scraped") || !strings.Contains(out, "HTTP status 404") {
		t.Errorf("missing URL: exit %d\n%s", code, out)
	}
	// Warnings fail only with --strict.
	args := []string{"preflight", "--stage", "1", "--gateway-env", fixture("internal", "preflight", "testdata", "gateway-on.env")}
	if code, out, _ := runLcctlStdin(t, "", nil, args...); code != 0 || !strings.Contains(out, "‼ gateway last-cluster store flag fits the stage") {
		t.Errorf("warning without --strict: exit %d\n%s", code, out)
	}
	if code, _, _ := runLcctlStdin(t, "", nil, append(args, "--strict")...); code != 1 {
		t.Errorf("warning with --strict: exit %d", code)
	}
	// Olric addresses from the environment.
	code, out, _ = runLcctlStdin(t, "", map[string]string{"LCCTL_OLRIC_ADDRS": "127.0.0.1:1"}, "preflight", "--stage", "2", "--dial-timeout", "200ms")
	if code != 1 || !strings.Contains(out, "✖ Olric is reachable") {
		t.Errorf("LCCTL_OLRIC_ADDRS: exit %d\n%s", code, out)
	}
}

func TestPreflightUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"preflight"}, "--stage is required: 1, 2 or 3"},
		{[]string{"preflight", "--stage", "2"}, "nothing to check: give at least one of --config"},
		{[]string{"preflight", "--stage", "2", "--config", ""}, "--config is empty (an unset variable?)"},
		{[]string{"preflight", "--stage", "2", "--gateway-values", fixture("examples", "gateway", "values-stage2.yaml"), "--gateway-values", " "}, "--gateway-values is empty"},
		{[]string{"preflight", "--stage", "1", "--olric", "127.0.0.1:1"}, "nothing was checked at stage 1: every check was skipped (no --config given; no --gateway-env FILE or --gateway-values FILE given; no --gateway-metrics given; no --stargate-metrics given)"},
		{[]string{"preflight", "--stage", "4"}, "--stage must be 1, 2 or 3"},
		{[]string{"preflight", "--stage", "1", "--gateway-env", "a.env", "--gateway-values", "v.yaml"}, "mutually exclusive"},
		{[]string{"preflight", "--stage", "1", "--config", "missing.json"}, "--config: failed to read missing.json"},
		{[]string{"preflight", "--stage", "1", "--gateway-env", fixture("internal", "gateway", "testdata", "values-broken.yaml")}, "expected '=' after llmApiGateway"},
		{[]string{"preflight", "--stage", "1", "--gateway-values", fixture("internal", "gateway", "testdata", "values-broken.yaml")}, "not valid YAML"},
		{[]string{"preflight", "--stage", "1", "--gateway-metrics", metricsFixture("gateway-malformed.prom")}, "gateway-malformed.prom:3:"},
		{[]string{"preflight", "--stage", "1", "--gateway-metrics", metricsFixture("gateway-healthy.prom"), "--interval", "1s"}, "--interval needs http(s) URLs"},
		{[]string{"preflight", "--stage", "1", "--config", "-", "--gateway-env", "-"}, "only one input can be standard input"},
		{[]string{"preflight", "--stage", "2", "--olric", "not an address"}, "--olric"},
	} {
		code, out, errOut := runLcctlStdin(t, "", nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errOut, tc.msg)
		}
		// A usage error prints no report first (no green summary).
		if out != "" {
			t.Errorf("%v: a usage error printed on stdout:\n%s", tc.args, out)
		}
	}
}

func TestCheckMetrics(t *testing.T) {
	srv := serveFixtures(t)
	// Files: healthy gateway, step 3 before step 2 on Stargate → exit 1.
	code, out, _ := runLcctlStdin(t, "", nil, "check", "metrics", "--gateway", metricsFixture("gateway-healthy.prom"), "--stargate", metricsFixture("stargate-step3-before-step2.prom"))
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"hit ratio 75.8%", "p99 4.93ms", "meta/llama-3.1-8b-instruct  pulsar-wait-and-widen  700/300", "✖ returning sessions reach Stargate [company/model-b]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// stdin, OpenMetrics, healthy → exit 0; --model filters.
	data, err := os.ReadFile(metricsFixture("stargate-healthy.om"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = runLcctlStdin(t, string(data), nil, "check", "metrics", "--stargate", "-", "--model", "company/model-b")
	if code != 0 || strings.Contains(out, "meta/llama") || !strings.Contains(out, "company/model-b") {
		t.Errorf("stdin OpenMetrics with --model: exit %d\n%s", code, out)
	}
	// Two scrapes over HTTP report rates.
	code, out, errOut := runLcctlStdin(t, "", nil, "check", "metrics", "-o", "json", "--interval", "50ms",
		"--gateway", srv.URL+"/sequence/gateway-healthy.prom,gateway-healthy-2.prom")
	var rep struct {
		Schema string `json:"schema"`
		Window struct {
			Mode    string  `json:"mode"`
			Seconds float64 `json:"interval_seconds"`
		} `json:"window"`
		Gateway struct {
			Lookups map[string]float64 `json:"lookups"`
		} `json:"gateway"`
		Stargate *struct{}  `json:"stargate"`
		Verdicts jsonChecks `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if code != 0 || rep.Schema != "lcctl.metrics/v1" || rep.Window.Mode != "rates" || rep.Window.Seconds <= 0 ||
		rep.Gateway.Lookups["hit"] != 400 || rep.Stargate != nil || rep.Verdicts.status("gateway-metrics.lookups", "") != "ok" {
		t.Errorf("rates: exit %d %+v\n%s", code, rep, out)
	}
	// Documented keys are present when empty: errors is [], not omitted.
	if !strings.Contains(out, "\n  \"errors\": [],\n") {
		t.Errorf("no \"errors\": [] in the JSON of a run without scrape errors:\n%s", out)
	}
	// A scrape without the gateway's families: warns (no stage), exit 0;
	// legacy prefix.
	code, out, _ = runLcctlStdin(t, "", nil, "check", "metrics", "--gateway", metricsFixture("stargate-flag-off.prom"))
	if code != 0 || !strings.Contains(out, "‼ gateway exports last-cluster metrics") {
		t.Errorf("no gateway families: exit %d\n%s", code, out)
	}
	code, out, _ = runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", metricsFixture("stargate-legacy-prefix.prom"), "--stargate-prefix", "llm_request_router_")
	if code != 0 || !strings.Contains(out, "meta/llama-3.1-8b-instruct") {
		t.Errorf("legacy prefix: exit %d\n%s", code, out)
	}
	// Olric errors fail.
	code, out, _ = runLcctlStdin(t, "", nil, "check", "metrics", "--gateway", srv.URL+"/gateway-olric-errors.prom")
	if code != 1 || !strings.Contains(out, "✖ no lookup or write error/timeout surge") {
		t.Errorf("olric errors: exit %d\n%s", code, out)
	}
	// An unreachable URL exits 1 with the error on stderr.
	code, out, errOut = runLcctlStdin(t, "", nil, "check", "metrics", "--gateway", srv.URL+"/missing.prom")
	if code != 1 || !strings.Contains(errOut, "HTTP status 404") || !strings.Contains(out, "✖ gateway metrics can be scraped") {
		t.Errorf("missing URL: exit %d %q\n%s", code, errOut, out)
	}
	// In JSON the failed source fails the verdicts too, next to a source
	// that was read.
	code, out, _ = runLcctlStdin(t, "", nil, "--output", "json", "check", "metrics", "--gateway", srv.URL+"/missing.prom", "--stargate", metricsFixture("stargate-healthy.prom"))
	var failed struct {
		Gateway  *struct{} `json:"gateway"`
		Stargate *struct{} `json:"stargate"`
		Errors   []string  `json:"errors"`
		Verdicts struct {
			Success bool `json:"success"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(out), &failed); err != nil || code != 1 || failed.Verdicts.Success || len(failed.Errors) != 1 || failed.Gateway != nil || failed.Stargate == nil {
		t.Errorf("missing URL in JSON: exit %d, err %v, %+v\n%s", code, err, failed, out)
	}
	// Usage and input errors exit 2.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"check", "metrics"}, "give --stargate, --gateway or both"},
		{[]string{"check", "metrics", "--gateway", "-", "--stargate", "-"}, "only one metrics source can be standard input"},
		{[]string{"check", "metrics", "--gateway", metricsFixture("gateway-malformed.prom")}, "gateway-malformed.prom:3:"},
		{[]string{"check", "metrics", "--stargate", metricsFixture("nope.prom")}, "nope.prom"},
		{[]string{"check", "metrics", "--stargate", metricsFixture("stargate-healthy.prom"), "--interval", "1s"}, "--interval needs http(s) URLs"},
		{[]string{"check"}, "missing subcommand"},
	} {
		code, _, errOut := runLcctlStdin(t, "", nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, errOut, tc.msg)
		}
	}
}

// TestInterruptedSaysSo: a command stopped by Ctrl-C (the context
// cancelled) reported only "context canceled"; it now says it was
// interrupted, and exits 1.
func TestInterruptedSaysSo(t *testing.T) {
	srv := serveFixtures(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"check", "metrics", "--gateway", srv.URL + "/gateway-healthy.prom", "--interval", "1h"}, s)
	}()
	cancel()
	if code := <-done; code != cli.ExitFindings {
		t.Errorf("exit %d, want %d", code, cli.ExitFindings)
	}
	if got := errb.String(); got != "lcctl: interrupted\n" {
		t.Errorf("stderr %q", got)
	}
}

// TestScrapedLabelsCannotReachTheTerminal: a label value with an escape
// sequence (a model called "m\x1b[2Jx") was printed raw by check metrics
// and preflight, clearing the operator's screen; it is shown escaped.
func TestScrapedLabelsCannotReachTheTerminal(t *testing.T) {
	data, err := os.ReadFile(metricsFixture("stargate-healthy.prom"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte(`model="meta/llama-3.1-8b-instruct"`), []byte("model=\"m\x1b[2Jx\""))
	scrape := filepath.Join(t.TempDir(), "escape.prom")
	if err := os.WriteFile(scrape, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "metrics", "--stargate", scrape},
		{"preflight", "--stage", "3", "--stargate-metrics", scrape},
	} {
		_, out, errs := runLcctlStdin(t, "", nil, args...)
		if strings.ContainsRune(out+errs, 0x1b) {
			t.Errorf("%v: an ESC byte reached the output:\n%s", args, out)
		}
		if !strings.Contains(out, `m\x1b[2Jx`) {
			t.Errorf("%v: the model is not shown escaped:\n%s", args, out)
		}
	}
}

// TestPreflightOlricOffNamesItsInputs: chart values (replicaCount 3) with
// an override that turns the feature on and Olric off. The warning names
// each value that decided it where it was read, in text and in JSON
// details; it used to say "not set (gateway default)" of settings both
// files set, and the values check put the chart's defaults to the file.
func TestPreflightOlricOffNamesItsInputs(t *testing.T) {
	chart := filepath.Join(testutil.SharedDir(t), "examples", "gateway", "chart-values-2026-08-22.yaml")
	over := fixture("internal", "gateway", "testdata", "values-olric-off-override.yaml")
	args := []string{"preflight", "--stage", "2", "--gateway-values", chart, "--gateway-values", over}
	detail := "warning " + over + ":8:14: last-cluster hints are on (llmApiGateway.config.lastCluster.enabled=true, " + over + ":6:16) with Olric off (llmApiGateway.olric.enabled=false, " + over + ":8:14) and 3 replicas (llmApiGateway.replicaCount=3, " + chart + ":17:17): each replica keeps its own LRU, so the hit rate drops to about 1/3"
	values := "ttl 10m0s, lookup timeout 20ms, local max entries 100000 (chart default)"
	code, out, errOut := runLcctlStdin(t, "", nil, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"‼ gateway Olric settings are coherent\n    1 warning\n    " + detail + "\n", "✔ gateway last-cluster values are valid\n    " + values + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runLcctlStdin(t, "", nil, append(args, "-o", "json")...)
	var j struct {
		Groups []struct {
			Checks []struct {
				ID      string   `json:"id"`
				Reason  string   `json:"reason"`
				Details []string `json:"details"`
			} `json:"checks"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 {
		t.Fatalf("json: exit %d, %v\n%s", code, err, out)
	}
	found := 0
	for _, g := range j.Groups {
		for _, c := range g.Checks {
			switch c.ID {
			case "gateway.olric-coherent":
				found++
				if len(c.Details) != 1 || c.Details[0] != detail {
					t.Errorf("json details %q, want [%q]", c.Details, detail)
				}
			case "gateway.settings-valid":
				found++
				if c.Reason != values {
					t.Errorf("json reason %q, want %q", c.Reason, values)
				}
			}
		}
	}
	if found != 2 {
		t.Errorf("json has %d of the 2 gateway checks:\n%s", found, out)
	}
}
