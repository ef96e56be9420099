package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

func TestParseScenarioDefaults(t *testing.T) {
	sc := mustScenario(t, "clusters: [{id: a}]\n")
	c := sc.Clusters[0]
	if c.Concurrency != 32 || c.QueueCapacity != 256 || c.PrefillTPS != 10000 || c.DecodeTPS != 50 || c.RTTMs != 5 || c.KVCacheTokens != 2_000_000 {
		t.Fatalf("cluster defaults %+v", c)
	}
	w := sc.Workload
	if w.SessionRate != 1 || w.DurationS != 300 || w.Turns.Kind != DistGeometric || w.Turns.Mean != 4 || w.ThinkTimeS.Mean != 5 {
		t.Fatalf("workload defaults %+v", w)
	}
	if !sc.Gateway.Enabled || sc.Gateway.Store != "shared" || sc.Gateway.TTLS != 600 || sc.Gateway.MaxEntries != 100000 {
		t.Fatalf("gateway defaults %+v", sc.Gateway)
	}
	if sc.Router.SnapshotIntervalMs != 100 || sc.Router.RecheckIntervalMs != 25 || sc.Router.MaxAttempts != 3 {
		t.Fatalf("router defaults %+v", sc.Router)
	}
	if sc.Seed != 1 || sc.SLOTTFTMs != 2000 || sc.Name != "test" {
		t.Fatalf("top-level defaults seed %d slo %g name %q", sc.Seed, sc.SLOTTFTMs, sc.Name)
	}
	if !sc.Compare.StickyLeastLoaded.FinishSessions || sc.Compare.ConsistentHash.VirtualNodes != 150 {
		t.Fatal("compare defaults")
	}
	// Explicit zeros are kept, not replaced by defaults.
	sc = mustScenario(t, "clusters: [{id: a, kv_cache_tokens: 0, rtt_ms: 0, queue_capacity: 0}]\nworkload: {payload_share: 0.5}\n")
	if c := sc.Clusters[0]; c.KVCacheTokens != 0 || c.RTTMs != 0 || c.QueueCapacity != 0 {
		t.Fatalf("zeros replaced: %+v", c)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown field", "clusters:\n  - id: a\n    concurency: 3\n", `test.yaml:3:5: clusters[0].concurency: unknown field "concurency"; did you mean "concurrency"?`},
		{"unknown field, nothing close", "clusters:\n  - id: a\n    zzzzzzzzz: 3\n", `unknown field "zzzzzzzzz" (known: `},
		{"wrong type", "clusters:\n  - {id: a, concurrency: lots}\n", `test.yaml:2:26: clusters[0].concurrency: want an integer, got "lots"`},
		{"float for int", "clusters:\n  - {id: a, concurrency: 1.5}\n", `clusters[0].concurrency: want an integer`},
		{"range", "clusters:\n  - {id: a, concurrency: 0}\n", `test.yaml:2:26: clusters[0].concurrency: must be 1–1048576`},
		{"no clusters", "seed: 3\n", `test.yaml:1:1: clusters: at least one cluster is required`},
		{"duplicate id", "clusters: [{id: a}, {id: a}]\n", `test.yaml:1:26: clusters[1].id: duplicate cluster id "a"`},
		{"duplicate key", "seed: 1\nseed: 2\nclusters: [{id: a}]\n", `test.yaml:2:1: seed: duplicate field "seed"`},
		{"bad distribution", "clusters: [{id: a}]\nworkload:\n  turns: {distribution: poisson, mean: 3}\n", `test.yaml:3:25: workload.turns.distribution: want one of`},
		{"distribution field missing", "clusters: [{id: a}]\nworkload:\n  turns: {distribution: lognormal, mean: 3}\n", `workload.turns: lognormal distribution needs sigma`},
		{"distribution unknown field", "clusters: [{id: a}]\nworkload:\n  turns: {distribution: geometric, avg: 3}\n", `test.yaml:3:36: workload.turns.avg: unknown field "avg"`},
		{"turns below 1", "clusters: [{id: a}]\nworkload:\n  turns: 0\n", `test.yaml:3:10: workload.turns: must be ≥ 1`},
		{"negative share", "clusters: [{id: a}]\nworkload: {payload_share: -0.1}\n", `workload.payload_share: must be 0–1`},
		{"event cluster", "clusters: [{id: a}]\nevents: [{at_s: 1, cluster: z, action: drain}]\n", `test.yaml:2:29: events[0].cluster: unknown cluster "z"`},
		{"event action", "clusters: [{id: a}]\nevents: [{at_s: 1, cluster: a, action: explode}]\n", `events[0].action: want drain, fail or restore`},
		{"store", "clusters: [{id: a}]\ngateway: {store: redis}\n", `test.yaml:2:18: gateway.store: want shared or local`},
		{"compare name", "clusters: [{id: a}]\ncompare: {policies: [wait-and-widen]}\n", `test.yaml:2:22: compare.policies[0]: unknown comparison policy "wait-and-widen"`},
		{"policy one of", "clusters: [{id: a}]\npolicies: [{name: p}]\n", `policies[0]: give exactly one of`},
		{"policy name escape", "clusters: [{id: a}]\npolicies: [{name: \"p\\e[31m\\u202e\", config: random}]\n", `test.yaml:2:19: policies[0].name: must be valid UTF-8 without control or bidirectional formatting characters, got "p\x1b[31m\u202e"`},
		{"policy name C1", "clusters: [{id: a}]\npolicies: [{name: \"p\\x9b\", config: random}]\n", `policies[0].name: must be valid UTF-8 without control`},
		{"generator beside trace", "clusters: [{id: a}]\nworkload: {trace: t.csv, session_rate: 5, max_requests: 10}\n", `test.yaml:2:40: workload.session_rate: not used with workload.trace`},
		{"bursts beside trace", "clusters: [{id: a}]\nworkload:\n  trace: t.csv\n  bursts: [{start_s: 1, duration_s: 1}]\n", `test.yaml:4:11: workload.bursts: not used with workload.trace`},
		{"policy duplicate", "clusters: [{id: a}]\npolicies: [{name: p, config: random}, {name: p, config: random}]\n", `policies[1].name: duplicate policy name "p"`},
		{"not a mapping", "- a\n- b\n", `test.yaml:1:1: want a mapping, got a list`},
		{"syntax", "clusters: [\n", `test.yaml:1: invalid YAML: did not find expected node content`},
		{"two documents", "clusters: [{id: a}]\n---\nseed: 2\n", `more than one YAML document`},
		{"empty", "", `empty scenario`},
		{"unbounded", "clusters: [{id: a}]\nworkload: {duration_s: 0}\n", `workload: unbounded workload`},
		{"cluster id bytes", "clusters: [{id: \"a\\tb\"}]\n", `clusters[0].id: must be 1–256 printable ASCII bytes`},
		{"nan", "clusters: [{id: a, rtt_ms: .nan}]\n", `clusters[0].rtt_ms: want a finite number`},
		// Times and token counts beyond int64 nanoseconds used to wrap
		// silently (a warm-up of 1e300 s measured everything, a TTL of
		// 1e300 s expired every entry at once, a 1e300-token input was
		// negative); huge workloads, bursts and windows ran for hours.
		{"huge duration", "clusters: [{id: a}]\nworkload: {duration_s: 1e12, session_rate: 0.000001}\n", `test.yaml:2:24: workload.duration_s: must be 0–1e+08`},
		{"huge warm-up", "clusters: [{id: a}]\nwarmup_s: 1e300\nworkload: {duration_s: 10}\n", `test.yaml:2:11: warmup_s: must be 0–1e+08`},
		{"huge ttl", "clusters: [{id: a}]\ngateway: {ttl_s: 1e300}\nworkload: {duration_s: 10}\n", `test.yaml:2:18: gateway.ttl_s: must be > 0 and at most 1e+08`},
		{"huge event time", "clusters: [{id: a}]\nevents: [{at_s: 1e300, cluster: a, action: fail}]\n", `events[0].at_s: must be 0–1e+08`},
		{"huge slo", "clusters: [{id: a}]\nslo_ttft_ms: 1e300\n", `slo_ttft_ms: must be > 0 and at most 1e+11`},
		{"huge input", "clusters: [{id: a}]\nworkload: {first_input_tokens: 1e300}\n", `test.yaml:2:32: workload.first_input_tokens: must be at most 1.099511627776e+12`},
		{"huge mean output", "clusters: [{id: a}]\nworkload: {output_tokens: {distribution: exponential, mean: 1e15}}\n", `workload.output_tokens.mean: must be at most`},
		{"huge think time", "clusters: [{id: a}]\nworkload: {think_time_s: {distribution: uniform, min: 0, max: 1e10}}\n", `workload.think_time_s.max: must be at most 1e+08`},
		{"huge prefix", "clusters: [{id: a}]\nworkload: {hot_set: {prefixes: 1, share: 1, prefix_tokens: 9223372036854775807}}\n", `workload.hot_set.prefix_tokens: must be 0–1099511627776`},
		{"tiny burst", "clusters: [{id: a}]\nworkload: {bursts: [{start_s: 0, duration_s: 1e-12, every_s: 1e-12}]}\n", `workload.bursts[0].duration_s: must be 0.001–1e+08`},
		{"burst windows", "clusters: [{id: a}]\nworkload: {duration_s: 100000000, session_rate: 0.00001, bursts: [{start_s: 0, duration_s: 0.001, every_s: 0.001}]}\n", `workload.bursts: the bursts repeat 1e+11 times`},
		{"huge workload", "clusters: [{id: a}]\nworkload: {duration_s: 100000, session_rate: 10000000}\n", `test.yaml:2:11: workload: about 4e+12 requests per policy`},
		{"huge workload wraps int64", "clusters: [{id: a}]\nrouter: {snapshot_interval_ms: 10000}\nworkload: {duration_s: 100000000, session_rate: 10000000, turns: {distribution: geometric, mean: 1000000}}\n", `workload: about 9.22e+18 requests per policy`},
		{"snapshots", "clusters: [{id: a}]\nrouter: {snapshot_interval_ms: 1}\nworkload: {duration_s: 1000000, session_rate: 0.01}\n", `router.snapshot_interval_ms: the arrival window (1e+06 s) takes 1e+09 snapshots`},
		{"alias bomb", "a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nclusters: [{id: a}]\n", `unknown field "a"`},
	}
	for _, c := range cases {
		_, err := ParseScenario("test.yaml", []byte(c.yaml))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %T is not an InputError", c.name, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, err, c.want)
		}
	}
}

// TestPolicyEntriesDecodeWithValidate: algorithm entries go through
// internal/validate, with positions in the scenario file.
func TestPolicyEntriesDecodeWithValidate(t *testing.T) {
	sc := mustScenario(t, `
clusters: [{id: a}]
compare:
  pulsar_wait_and_widen: {seed: s, cache_affinity_wait_ms: 50, band_widen_interval_ms: 10}
policies:
  - name: mine
    config: {algorithm: wait-and-widen, cache_affinity_backend_selection_count: 2, last_cluster_affinity: true}
  - name: ch
    consistent_hash: {seed: x, virtual_nodes: 7}
`)
	pols, err := ResolvePolicies(sc, Selection{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pols) != 2 || pols[0].Default.Algorithm != lb.WaitAndWiden || pols[0].Default.CacheAffinityBackendSelectionCount != 2 || !pols[0].Default.LastClusterAffinity {
		t.Fatalf("scenario policies %+v", pols)
	}
	if pols[1].Kind != KindConsistentHash || pols[1].Seed != "x" || pols[1].ConsistentHash.VirtualNodes != 7 {
		t.Fatalf("consistent hash %+v", pols[1])
	}
	set, err := ResolvePolicies(sc, Selection{Compare: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != len(ComparisonNames) {
		t.Fatalf("%d comparison policies", len(set))
	}
	for _, p := range set {
		if p.Name == PolicyPulsarWaitAndWidenOn {
			c := p.Default
			if c.CacheAffinityWaitMs != 50 || c.Seed != "s" || c.BandWidenIntervalMs == nil || *c.BandWidenIntervalMs != 10 || !c.LastClusterAffinity {
				t.Fatalf("pww on: %+v", c)
			}
		}
		if p.Name == PolicyWaitAndWidenOff {
			c := p.Default
			if c.CacheAffinityWaitMs != 300 || c.CacheAffinityBackendSelectionCount != 1 || c.CacheAffinityInputTokensScale != 0.1 || c.LastClusterAffinity {
				t.Fatalf("ww off defaults: %+v", c)
			}
		}
	}
	for _, bad := range []struct{ yaml, want string }{
		{"clusters: [{id: a}]\ncompare:\n  wait_and_widen: {max_queued: -1}\n", "test.yaml:3:32: compare.wait_and_widen.max_queued"},
		{"clusters: [{id: a}]\ncompare:\n  pulsar: {algorithm: random}\n", "test.yaml:3:23: compare.pulsar.algorithm: must be pulsar here"},
		{"clusters: [{id: a}]\npolicies:\n  - name: x\n    config: {algorithm: pulsar, last_cluster_affinity: true}\n", "test.yaml:4:33: policies[0].config.last_cluster_affinity"},
	} {
		sc := mustScenario(t, bad.yaml)
		_, err := ResolvePolicies(sc, Selection{Compare: true})
		if err == nil {
			_, err = ResolvePolicies(sc, Selection{})
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("got %v, want %s", err, bad.want)
		}
	}
	if _, err := ResolvePolicies(sc, Selection{Names: []string{"nope"}}); err == nil {
		t.Error("unknown policy name accepted")
	} else if strings.Contains(err.Error(), "did you mean") {
		t.Errorf("nothing is close to nope, got %v", err)
	}
	if _, err := ResolvePolicies(sc, Selection{ConfigFiles: []string{"nope.json"}}); err == nil || !strings.Contains(err.Error(), "--config: failed to read nope.json") {
		t.Errorf("a missing --config file: %v", err)
	}
	if _, err := ResolvePolicies(sc, Selection{Names: []string{"wait-and-widen/lc-onn"}}); err == nil || !strings.Contains(err.Error(), `unknown policy "wait-and-widen/lc-onn"; did you mean "wait-and-widen/lc-on"?`) {
		t.Errorf("got %v, want the nearest policy name", err)
	}
}

// TestConfigFilePolicy loads upstream lb-config examples as policies.
func TestConfigFilePolicy(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "lc-on.json")
	os.WriteFile(good, []byte(`{"default":"power-of-n","models":{"chat-model":{"algorithm":"pulsar-wait-and-widen","seed":"x","last_cluster_affinity":true}}}`), 0o644)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"default":"power-of-m"}`), 0o644)
	sc := mustScenario(t, "clusters: [{id: a}]\nworkload: {models: [{name: chat-model}, {name: other}]}\n")
	pols, err := ResolvePolicies(sc, Selection{ConfigFiles: []string{good}})
	if err != nil {
		t.Fatal(err)
	}
	p := pols[0]
	if p.Name != "lc-on.json" || p.configFor("chat-model").Algorithm != lb.PulsarWaitAndWiden || p.configFor("other").Algorithm != lb.PowerOfN {
		t.Fatalf("policy %+v", p)
	}
	if got := p.Algorithm([]string{"chat-model", "other"}); got != "mixed" {
		t.Fatalf("algorithm %q", got)
	}
	if _, err := ResolvePolicies(sc, Selection{ConfigFiles: []string{bad}}); err == nil || !strings.Contains(err.Error(), "bad.json:1:") {
		t.Fatalf("bad config: %v", err)
	}
}

// TestConfigFileRoutes: each workload model is reported with the entry
// that routes it; a model without a `models` entry runs `default`, with
// the close key suggested.
func TestConfigFileRoutes(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pulsar.json")
	os.WriteFile(f, []byte(`{"default":"power-of-n","models":{"chat-modle":{"algorithm":"pulsar-wait-and-widen","seed":"x"},"other":{"algorithm":"pulsar","seed":"y"}}}`), 0o644)
	sc := mustScenario(t, "clusters: [{id: a}]\nworkload: {models: [{name: chat-model}, {name: other}, {name: zzz}]}\n")
	// Named with the extension: no clash with the comparison policy "pulsar".
	pols, err := ResolvePolicies(sc, Selection{Compare: true, ConfigFiles: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	p := pols[len(pols)-1]
	if p.Name != "pulsar.json" || !p.LBConfig {
		t.Fatalf("policy %q, LBConfig %v", p.Name, p.LBConfig)
	}
	got := p.Routes([]string{"chat-model", "other", "zzz"})
	want := []ModelRoute{
		{Model: "chat-model", Algorithm: "power-of-n", Entry: EntryDefault, DidYouMean: "chat-modle"},
		{Model: "other", Algorithm: "pulsar", Entry: EntryModels},
		{Model: "zzz", Algorithm: "power-of-n", Entry: EntryDefault},
	}
	if len(got) != len(want) {
		t.Fatalf("routes %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("route %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, q := range pols[:len(pols)-1] {
		if q.Routes([]string{"chat-model"}) != nil {
			t.Errorf("%s: routes for a policy not from an lb-config", q.Name)
		}
	}
}

// TestLastClusterAffinityApplies: the flag is true or false for the
// policies whose algorithm reads it (wait-and-widen,
// pulsar-wait-and-widen) and nil for every other policy, Stargate
// algorithm or comparison policy alike.
func TestLastClusterAffinityApplies(t *testing.T) {
	sc := mustScenario(t, "clusters: [{id: a}]\n")
	pols, err := ResolvePolicies(sc, Selection{Compare: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		PolicyWaitAndWidenOff: "false", PolicyWaitAndWidenOn: "true",
		PolicyPulsarWaitAndWidenOff: "false", PolicyPulsarWaitAndWidenOn: "true",
		PolicyPulsar: "null", PolicyPowerOfN: "null", PolicyRoundRobin: "null", PolicyRandom: "null",
		PolicyConsistentHash: "null", PolicyStickyLeastLoaded: "null",
	}
	for _, p := range pols {
		got := "null"
		if v := p.LastClusterAffinity([]string{"model"}); v != nil {
			got = map[bool]string{true: "true", false: "false"}[*v]
		}
		if got != want[p.Name] {
			t.Errorf("%s: last_cluster_affinity %s, want %s", p.Name, got, want[p.Name])
		}
	}
	// A config mixing algorithms has the flag when one of the models'
	// entries reads it.
	mixed := Policy{Kind: KindEngine, Default: &lb.AlgorithmConfig{Algorithm: lb.PowerOfN},
		Models: map[string]*lb.AlgorithmConfig{"m": {Algorithm: lb.WaitAndWiden, LastClusterAffinity: true}}}
	if v := mixed.LastClusterAffinity([]string{"m", "n"}); v == nil || !*v {
		t.Errorf("mixed config: %v", v)
	}
	if v := mixed.LastClusterAffinity([]string{"n"}); v != nil {
		t.Errorf("power-of-n only: %v, want nil", *v)
	}
}

func TestExampleScenariosParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	if len(files) < 4 {
		t.Fatalf("only %d example scenarios", len(files))
	}
	for _, f := range files {
		sc, err := LoadScenario(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, err := ResolvePolicies(sc, Selection{Compare: true}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestTraceErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"0,a,1\n", "t.csv:1:6: output_tokens: missing field output_tokens"},
		{"x,a,1,1\n", "t.csv:1:1: time_ms: want a number"},
		{"5,a,1,1\n4,a,1,1\n", "t.csv:2:1: time_ms: time goes backwards"},
		{"0,,1,1\n", "t.csv:1:3: session: empty session"},
		{"0,a,-1,1\n", "t.csv:1:5: input_tokens: want a whole number"},
		{"0,a,1,1,k,m,extra\n", "t.csv:1:13: too many fields"},
		{"0,a,1,1\xff\n", "non-printable or non-ASCII byte 0xff"},
		{strings.Repeat("x", maxTraceLine+10), "line longer than"},
	}
	for _, c := range cases {
		_, err := ReadTrace("t.csv", strings.NewReader(c.in), "", 0, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s", c.in, err, c.want)
		}
	}
	var recs []TraceRecord
	_, err := ReadTrace("t.csv", strings.NewReader("time_ms,session,input_tokens,output_tokens\n\n# x\n1.5, s ,10,20\r\n2,s,11,0,rk\n"), "", 0, func(r TraceRecord) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil || len(recs) != 2 || recs[0].TimeNs != 1_500_000 || recs[0].Session != recs[1].Session || recs[1].RoutingKey != "rk" || recs[0].OutputTokens != 20 {
		t.Fatalf("%v %+v", err, recs)
	}
}

func FuzzParseScenario(f *testing.F) {
	files, _ := filepath.Glob("../../examples/scenarios/*.yaml")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("clusters: [{id: a}]\nworkload: {turns: {distribution: uniform, min: 1, max: 2}}\n"))
	f.Add([]byte("clusters: [{id: a}]\npolicies: [{name: p, config: {algorithm: pulsar}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario("f.yaml", data)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %T is not an InputError: %v", err, err)
			}
			return
		}
		// A valid scenario resolves its policies without panicking.
		_, _ = ResolvePolicies(sc, Selection{Compare: true})
		_, _ = ResolvePolicies(sc, Selection{})
	})
}

func FuzzReadTrace(f *testing.F) {
	f.Add([]byte("time_ms,session,input_tokens,output_tokens\n0,a,1,1\n1,b,2,2,rk,m\n"))
	f.Add([]byte("0,a,1,1\r\n# c\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		last := int64(-1)
		_, err := ReadTrace("f.csv", bytes.NewReader(data), "", 0, func(r TraceRecord) error {
			if r.TimeNs < last || r.InputTokens < 0 || r.OutputTokens < 0 {
				t.Fatalf("bad record %+v", r)
			}
			last = r.TimeNs
			return nil
		})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
		}
	})
}

// TestLoadEndlessFile: a scenario or lb-config path naming an endless
// device was read with os.ReadFile until memory ran out (23 GB before the
// kernel killed lcctl, ignoring SIGTERM meanwhile).
func TestLoadEndlessFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/zero on Windows")
	}
	if _, err := LoadScenario("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: larger than lcctl's 16777216-byte limit") {
		t.Fatalf("LoadScenario(/dev/zero): %v", err)
	}
	sc := mustScenario(t, "clusters: [{id: a}]\nworkload: {duration_s: 1}\n")
	if _, err := ResolvePolicies(sc, Selection{ConfigFiles: []string{"/dev/zero"}}); err == nil || !strings.Contains(err.Error(), "larger than lcctl's") {
		t.Fatalf("--config /dev/zero: %v", err)
	}
}

// TestScenarioNotUTF8: a UTF-16 scenario is refused at 1:1 rather than
// transcoded with positions that do not match the file.
func TestScenarioNotUTF8(t *testing.T) {
	_, err := ParseScenario("s.yaml", []byte("\xff\xfen\x00a\x00m\x00e\x00"))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 1 || ie.Col != 1 || !strings.Contains(ie.Msg, "not UTF-8") {
		t.Fatalf("got %v, want not UTF-8 at 1:1", err)
	}
}

// TestScenarioReportsEveryError: one run names every problem of the
// file, decoding and range checks alike, each with its position.
func TestScenarioReportsEveryError(t *testing.T) {
	y := `clusters:
  - {id: a, concurrency: 0}
  - {id: a, prefil_tps: 5}
workload:
  session_rate: -1
  turns: {distribution: geometric, mean: 0.5}
gateway: {store: nowhere}
`
	_, err := ParseScenario("s.yaml", []byte(y))
	var all ScenarioErrors
	if !errors.As(err, &all) {
		t.Fatalf("got %T %v, want ScenarioErrors", err, err)
	}
	for _, want := range []string{
		"s.yaml:2:26: clusters[0].concurrency: must be 1–1048576",
		`s.yaml:3:13: clusters[1].prefil_tps: unknown field "prefil_tps"`,
		`clusters[1].id: duplicate cluster id "a"`,
		"s.yaml:5:17: workload.session_rate: must be 0–10000000",
		"workload.turns.mean: must be ≥ 1",
		`s.yaml:7:18: gateway.store: want shared or local, got "nowhere"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 3 {
		t.Errorf("errors.As finds %+v, want the first problem (decoding, line 3)", ie)
	}
}

// TestSetField: --sweep's setter reaches nested, listed and distribution
// fields by their YAML names and refuses what it cannot set.
func TestSetField(t *testing.T) {
	sc := mustScenario(t, "clusters: [{id: a}, {id: b}]\nworkload: {session_rate: 1}\n")
	for _, c := range []struct {
		path string
		v    float64
	}{{"workload.session_rate", 8}, {"clusters.kv_cache_tokens", 1e5}, {"clusters[1].prefill_tps", 123}, {"workload.think_time_s.mean", 9}, {"workload.max_wait_ms", 300}, {"router.staleness_ms", 50}} {
		if err := sc.SetField(c.path, c.v); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
	}
	if sc.Workload.SessionRate != 8 || sc.Clusters[0].KVCacheTokens != 1e5 || sc.Clusters[1].KVCacheTokens != 1e5 || sc.Clusters[1].PrefillTPS != 123 || sc.Clusters[0].PrefillTPS == 123 ||
		sc.Workload.ThinkTimeS.Mean != 9 || *sc.Workload.MaxWaitMs != 300 || sc.Router.StalenessMs != 50 {
		t.Fatalf("%+v", sc)
	}
	for _, c := range []struct {
		path string
		v    float64
		want string
	}{
		{"workload.sesion_rate", 1, `unknown field "sesion_rate"; did you mean "session_rate"?`},
		{"clusters.kv_cache_tokens", 1.5, "want a whole number"},
		{"clusters[5].rtt_ms", 1, "clusters has 2 entries"},
		{"workload.think_time_s", 1, "sweep one of its parameters"},
		{"gateway.store", 1, "not a numeric field"},
		{"workload.priority", 1e12, "want a whole number"},
		{"events.at_s", 1, "events is empty"},
	} {
		if err := sc.SetField(c.path, c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%v: %v, want %s", c.path, c.v, err, c.want)
		}
	}
}

// TestKeyedFieldsDecode: the fields whose key is a constant (SeedKey at
// the top level, lb-config's seed in consistent_hash) decode, count as
// known fields and reject wrong types at
// their position.
func TestKeyedFieldsDecode(t *testing.T) {
	sc := mustScenario(t, "seed: 42\nclusters: [{id: a}]\n")
	if sc.Seed != 42 {
		t.Fatalf("seed %d, want 42", sc.Seed)
	}
	_, err := ParseScenario("s.yaml", []byte("clusters: [{id: a}]\nzz: 1\n"))
	if err == nil || !strings.Contains(err.Error(), ", "+SeedKey+", ") {
		t.Fatalf("the known-field list does not name %s: %v", SeedKey, err)
	}
	_, err = ParseScenario("s.yaml", []byte("clusters: [{id: a}]\nseed: x\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "s.yaml:2:7: seed: ") {
		t.Fatalf("a string seed: %v", err)
	}
	_, err = ParseScenario("s.yaml", []byte("clusters: [{id: a}]\npolicies:\n  - name: ch\n    consistent_hash: {seed: [1]}\n"))
	if err == nil || !strings.Contains(err.Error(), "consistent_hash.seed") {
		t.Fatalf("a list as the ring seed: %v", err)
	}
}
