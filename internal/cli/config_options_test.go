package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/live/livetest"
	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/testutil"
)

// validate, explain, snapshot and preflight run from their options
// structs, without cobra.
func TestConfigCommandsWithoutCobra(t *testing.T) {
	ctx := context.Background()
	ex := filepath.Join(testutil.RepoRoot(t), "examples")
	cfg := filepath.Join(ex, "lb-config", "wait-and-widen.json")

	env, out, _ := testEnv("", OutputJSON)
	v := &validateOptions{cmdInput: cmdInput{args: []string{cfg}}, InputFormat: "auto", FailOn: []string{"lc2001"}}
	if err := runValidated(ctx, env, v, runValidate); err != nil || !strings.Contains(out.String(), `"valid": true`) {
		t.Errorf("validate: %v %q", err, out)
	}
	for _, bad := range []struct {
		o    validateOptions
		want string
	}{
		{validateOptions{cmdInput: given("fail-on"), InputFormat: "auto"}, "--fail-on is empty"},
		{validateOptions{InputFormat: "auto", FailOn: []string{"LC99"}}, `--fail-on "LC99": not a diagnostic code`},
		{validateOptions{InputFormat: "toml"}, `invalid --input-format "toml"`},
		{validateOptions{cmdInput: cmdInput{args: []string{"-", "-"}}, InputFormat: "auto"}, "standard input (-) can be given only once"},
	} {
		if err := bad.o.validate(env); !usageErr(err, bad.want) {
			t.Errorf("validate %+v: %v, want %q", bad.o, err, bad.want)
		}
	}

	env, out, _ = testEnv("", OutputJSON)
	e := &explainOptions{cmdInput: given("model", "input-tokens"), Elapsed: "0", Chart: "auto", Model: "model-a", InputTokens: "2000",
		Config: filepath.Join(ex, "explain", "pwaw-sessions.lb-config.yaml"), Snapshot: filepath.Join(ex, "explain", "returning-k1.snapshot.yaml")}
	if err := runValidated(ctx, env, e, runExplain); err != nil || !strings.Contains(out.String(), `"schema": "lcctl.explain/v1"`) {
		t.Errorf("explain: %v %q", err, out.String()[:min(out.Len(), 300)])
	}
	textEnv, _, _ := testEnv("", OutputText)
	if err := (&explainOptions{Elapsed: "0", Chart: "sometimes"}).validate(env); err != nil {
		t.Errorf("explain -o json --chart sometimes: %v (JSON output reads no --chart)", err)
	}
	for _, bad := range []struct {
		o    explainOptions
		want string
	}{
		{explainOptions{Check: true, Elapsed: "0"}, "--check needs --case FILE"},
		{explainOptions{Width: 10, Elapsed: "0"}, "--width 10"},
		{explainOptions{Elapsed: "soon"}, "soon"},
		{explainOptions{Elapsed: "0", Compare: "config="}, "--compare config=FILE: the file name is empty"},
		{explainOptions{Elapsed: "0", Chart: "sometimes"}, `--chart "sometimes": want auto, always or never`},
		{explainOptions{cmdInput: given("model"), Case: "cases.yaml"}, "--case takes the request from the case file; --model cannot be combined with it"},
	} {
		if err := bad.o.validate(textEnv); !usageErr(err, bad.want) {
			t.Errorf("explain %+v: %v, want %q", bad.o, err, bad.want)
		}
	}

	pylon := livetest.Start(t, pylonValues(10000, 2, 4000))
	lf := liveFlags{pylons: []string{"cluster-a=" + pylon.URL}, metricPrefix: live.DefaultPrefix, aggregation: string(live.AggregationN1),
		backendLabel: "instance", lookback: live.DefaultLookback, timeout: 10 * time.Second}
	env, out, _ = testEnv("", OutputText)
	if err := runValidated(ctx, env, &snapshotOptions{live: lf, model: "company/model"}, runSnapshot); err != nil || !strings.Contains(out.String(), "cluster-a") {
		t.Errorf("snapshot: %v %q", err, out)
	}
	if err := (&snapshotOptions{live: lf}).validate(env); !usageErr(err, "--model is required") {
		t.Errorf("snapshot without --model: %v", err)
	}
	lf.at = "1796242500"
	if err := (&snapshotOptions{live: lf, model: "m"}).validate(env); !usageErr(err, "--at needs --prometheus") {
		t.Errorf("snapshot --at without --prometheus: %v", err)
	}

	env, out, _ = testEnv("", OutputJSON)
	p := &preflightOptions{cmdInput: given("stage", "config"), Stage: 1, Config: cfg, StargatePrefix: metrics.DefaultStargatePrefix, Timeout: metrics.DefaultTimeout, conn: &connFlags{}}
	if err := runValidated(ctx, env, p, runPreflight); err != nil || !strings.Contains(out.String(), `"schema": "lcctl.checks/v1"`) {
		t.Errorf("preflight: %v %q", err, out)
	}
	for _, bad := range []struct {
		o    preflightOptions
		want string
	}{
		{preflightOptions{Stage: 1, Config: cfg, Timeout: time.Second, conn: &connFlags{}}, "--stage is required"},
		{preflightOptions{cmdInput: given("stage", "config"), Stage: 1, Config: " ", Timeout: time.Second, conn: &connFlags{}}, "--config is empty"},
		{preflightOptions{cmdInput: given("stage"), Stage: 4, Config: cfg, Timeout: time.Second, conn: &connFlags{}}, "--stage must be 1, 2 or 3"},
		{preflightOptions{cmdInput: given("stage"), Stage: 2, Timeout: time.Second, conn: &connFlags{}}, "nothing to check"},
		{preflightOptions{cmdInput: given("stage"), Stage: 2, Config: cfg, Wait: waitOptions{Wait: true}, Timeout: time.Second, conn: &connFlags{}}, "--wait-timeout and --wait-interval must be positive"},
	} {
		if err := bad.o.validate(env); !usageErr(err, bad.want) {
			t.Errorf("preflight %+v: %v, want %q", bad.o, err, bad.want)
		}
	}
}
