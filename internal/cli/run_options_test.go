package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/migrate"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/testutil"
)

// migrate, simulate, check metrics and store evict run from their
// options structs, without cobra.
func TestRunCommandsWithoutCobra(t *testing.T) {
	ctx := context.Background()
	ex := filepath.Join(testutil.RepoRoot(t), "examples")

	file := filepath.Join(t.TempDir(), "lb-config.json")
	if err := os.WriteFile(file, []byte(noSLO), 0o644); err != nil {
		t.Fatal(err)
	}
	env, out, _ := testEnv("", OutputJSON)
	m := &migrateOptions{cmdInput: cmdInput{args: []string{file}}, Strategy: "bounded", MaxQueued: migrate.DefaultMaxQueued, AffinityWaitMs: migrate.DefaultAffinityWaitMs}
	if err := runValidated(ctx, env, m, runMigrate); err != ErrFindings || !strings.Contains(out.String(), `"status": "changes_pending"`) {
		t.Errorf("migrate: %v %q", err, out)
	}
	for _, bad := range []struct {
		o    migrateOptions
		want string
	}{
		{migrateOptions{cmdInput: given("only"), Strategy: "bounded", MaxQueued: 1, AffinityWaitMs: 1}, "--only is empty"},
		{migrateOptions{MaxQueued: 1, AffinityWaitMs: 1}, "--strategy is required"},
		{migrateOptions{Strategy: "bounded", MaxQueued: 1, AffinityWaitMs: 1, Backup: true}, "--backup needs --write"},
		{migrateOptions{cmdInput: cmdInput{args: []string{"-"}}, Strategy: "pulsar", MaxQueued: 1, AffinityWaitMs: 1, Write: true}, "--write cannot rewrite standard input"},
	} {
		if err := bad.o.validate(env); !usageErr(err, bad.want) {
			t.Errorf("migrate %+v: %v, want %q", bad.o, err, bad.want)
		}
	}

	env, out, _ = testEnv("", OutputText)
	if err := runValidated(ctx, env, &simulateOptions{template: true}, runSimulate); err != nil || !strings.Contains(out.String(), "workload:") {
		t.Errorf("simulate --template: %v %q", err, out.String()[:min(out.Len(), 200)])
	}
	env, out, _ = testEnv("", OutputJSON)
	s := &simulateOptions{scenario: filepath.Join(ex, "scenarios", "hot-set.yaml"), policies: []string{"round-robin"}, maxRequests: 200, seeds: 1, progress: "never"}
	if err := runValidated(ctx, env, s, runSimulate); err != nil || !strings.Contains(out.String(), `"schema": "lcctl.simulate/v1"`) {
		t.Errorf("simulate: %v %q", err, out.String()[:min(out.Len(), 300)])
	}
	for _, bad := range []struct {
		o    simulateOptions
		want string
	}{
		{simulateOptions{progress: "auto", seeds: 1}, "--scenario is required"},
		{simulateOptions{scenario: "s.yaml", progress: "auto", seeds: 0}, "--seeds 0"},
		{simulateOptions{cmdInput: given("plot"), scenario: "s.yaml", progress: "auto", seeds: 1}, "--plot: the directory name is empty"},
		{simulateOptions{scenario: "s.yaml", progress: "auto", seeds: 2, sweep: "workload.session_rate=1,2"}, "--sweep and --seeds cannot be combined"},
	} {
		if err := bad.o.validate(env); !usageErr(err, bad.want) {
			t.Errorf("simulate %+v: %v, want %q", bad.o, err, bad.want)
		}
	}

	env, out, _ = testEnv("", OutputJSON)
	c := &checkMetricsOptions{Gateway: filepath.Join(ex, "metrics", "gateway-stage3.prom"), Stargate: filepath.Join(ex, "metrics", "stargate-stage3.prom"),
		StargatePrefix: metrics.DefaultStargatePrefix, Timeout: metrics.DefaultTimeout, LookupTimeout: metrics.DefaultLookupTimeout}
	if err := runValidated(ctx, env, c, runCheckMetrics); err != nil && err != ErrFindings || !strings.Contains(out.String(), `"schema": "lcctl.metrics/v1"`) {
		t.Errorf("check metrics: %v %q", err, out.String()[:min(out.Len(), 300)])
	}
	for _, bad := range []struct {
		o    checkMetricsOptions
		want string
	}{
		{checkMetricsOptions{Timeout: time.Second, LookupTimeout: time.Second}, "give --stargate, --gateway or both"},
		{checkMetricsOptions{Gateway: "g.prom", LookupTimeout: time.Second}, "--timeout and --lookup-timeout must be positive"},
		{checkMetricsOptions{Gateway: "g.prom", Timeout: time.Second, LookupTimeout: time.Second, Watch: true}, "--watch needs http(s) URLs"},
		{checkMetricsOptions{Gateway: "http://g/metrics", Timeout: time.Second, LookupTimeout: time.Second, Watch: true, Interval: time.Millisecond}, "--watch needs at least"},
	} {
		if err := bad.o.validate(env); !usageErr(err, bad.want) {
			t.Errorf("check metrics %+v: %v, want %q", bad.o, err, bad.want)
		}
	}
	w := &checkMetricsOptions{Gateway: "http://g/metrics", Timeout: time.Second, LookupTimeout: time.Second, Watch: true}
	if err := w.validate(env); err != nil || w.Interval != defaultWatchInterval {
		t.Errorf("check metrics --watch: %v, interval %v", err, w.Interval)
	}

	cl := storeCluster(t)
	conn := storeConn{conn: &connFlags{addrs: cl.AddrList(), dmap: testDMap(t), dialTimeout: store.DefaultDialTimeout, requestTimeout: store.DefaultRequestTimeout}}
	env, out, _ = testEnv("", OutputJSON)
	ev := &storeEvictOptions{cmdInput: given("cluster"), storeConn: conn, cluster: "cluster-z", settle: store.DefaultSettleTimeout, sample: 5}
	if err := runValidated(ctx, env, ev, runStoreEvict); err != nil || !strings.Contains(out.String(), `"cluster_seen": false`) {
		t.Errorf("store evict: %v %q", err, out)
	}
	if err := (&storeEvictOptions{storeConn: conn, settle: time.Second}).validate(env); !usageErr(err, "--cluster is required") {
		t.Errorf("store evict without --cluster: %v", err)
	}
	if err := (&storeEvictOptions{cmdInput: given("cluster"), storeConn: conn, cluster: "c", maxRate: -1, settle: time.Second}).validate(env); !usageErr(err, "--max-rate -1") {
		t.Errorf("store evict --max-rate -1: %v", err)
	}
}
