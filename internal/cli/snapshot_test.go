package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/live/livetest"
	"github.com/lcctl/lcctl/internal/testutil"
)

func pylonValues(tps, queue, queued float64) livetest.Values {
	return livetest.Values{Model: "company/model", LastMeanInputTPS: tps, OutputTPS: 100, MaxOutputTPS: 2 * tps,
		QueueSize: queue, QueuedInputTokens: queued, KVCapacity: 50000, KVUsed: 1000, KVFree: 49000, Inflight: queue}
}

// threePylons starts three exporters and returns the --pylon flags.
func threePylons(t *testing.T) []string {
	t.Helper()
	a := livetest.Start(t, pylonValues(10000, 2, 4000))
	b := livetest.Start(t, pylonValues(10000, 0, 0))
	c := livetest.Start(t, pylonValues(5000, 9, 30000))
	return []string{"--pylon", "cluster-a=" + a.URL, "--pylon", "cluster-b=" + b.URL, "--pylon", "cluster-c=" + c.URL}
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const testOverlay = `clusters:
  cluster-a: {rtt_ms: 5, max_input_tps: 12000}
  cluster-b: {rtt_ms: 5, max_input_tps: 12000}
  cluster-c: {rtt_ms: 20, max_input_tps: 6000}
`

// TestSnapshotPylonAcceptedByExplain is the first acceptance line of issue
// 12: three exporters, an overlay, and explain accepting the output
// unchanged (YAML and JSON).
func TestSnapshotPylonAcceptedByExplain(t *testing.T) {
	ov := writeFile(t, "overlay.yaml", testOverlay)
	args := append([]string{"snapshot", "--model", "company/model", "--overlay", ov}, threePylons(t)...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "warning: max_engine_concurrency unknown for cluster-a, cluster-b, cluster-c") {
		t.Errorf("stderr lacks the unknown-field warning:\n%s", errOut)
	}
	for _, want := range []string{"queued_input_size: 30000 # metric from pylon_model_queued_input_tokens", "max_input_tps: 6000 # overlay from "} {
		if !strings.Contains(out, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, out)
		}
	}
	snap := writeFile(t, "snap.yaml", out)
	code, exp, errOut := runCLI(t, "", "explain", "--snapshot", snap, "--model", "company/model", "--input-tokens", "2000", "-o", "json")
	if code != 0 {
		t.Fatalf("explain --snapshot: exit %d: %s", code, errOut)
	}
	var rep struct {
		Run struct {
			Decision struct {
				Outcome string `json:"outcome"`
			} `json:"decision"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(exp), &rep); err != nil || rep.Run.Decision.Outcome == "" {
		t.Fatalf("explain output: %v\n%s", err, exp)
	}

	code, jout, errOut := runCLI(t, "", append([]string{"-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("-o json: exit %d: %s", code, errOut)
	}
	var doc struct {
		Schema     string `json:"schema"`
		Provenance struct {
			Clusters []struct {
				Fields []struct {
					Field, Origin string
				} `json:"fields"`
			} `json:"clusters"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(jout), &doc); err != nil || doc.Schema != "lcctl.snapshot/v1" || len(doc.Provenance.Clusters) != 3 {
		t.Fatalf("JSON: %v\n%s", err, jout)
	}
	js := writeFile(t, "snap.json", jout)
	if code, _, errOut := runCLI(t, "", "explain", "--snapshot", js, "--model", "company/model", "--input-tokens", "2000"); code != 0 {
		t.Fatalf("explain --snapshot JSON: exit %d: %s", code, errOut)
	}
}

func TestSnapshotUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"snapshot", "--pylon", "a=http://127.0.0.1:1"}, "--model is required"},
		{[]string{"snapshot", "--model", "m"}, "no live source"},
		{[]string{"snapshot", "--model", "m", "--pylon", "a"}, "want CLUSTER=URL"},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--at", "1796242500"}, "--at needs --prometheus"},
		{[]string{"snapshot", "--model", "m", "--prometheus", "http://127.0.0.1:1", "--at", "soon"}, "--at \"soon\""},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--aggregation", "n2"}, "--aggregation \"n2\""},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--cluster-label", "cluster"}, "--cluster-label needs --prometheus"},
		{[]string{"snapshot", "--model", "m", "--prometheus", "http://127.0.0.1:1"}, "--cluster-label is required"},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--source-timeout", "0"}, "--source-timeout 0s: want a positive duration"},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--source-timeout", "-1s"}, "--source-timeout -1s: want a positive duration"},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--lookback", "0"}, "--lookback 0s: want a positive duration"},
		{[]string{"snapshot", "--model", "m", "--prometheus", "http://127.0.0.1:1", "--cluster-label", "c", "--at", fmt.Sprint(time.Now().Add(time.Hour).Unix())}, "is in the future"},
		{[]string{"snapshot", "--model", "m", "--pylon", "a=http://127.0.0.1:1", "--overlay", "/nonexistent/overlay.yaml"}, "overlay.yaml"},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestSnapshotExitCodes(t *testing.T) {
	// Unreachable: 1 (a failed check); not Prometheus text: 2.
	code, _, errOut := runCLI(t, "", "snapshot", "--model", "company/model", "--pylon", "cluster-a=http://127.0.0.1:1/metrics")
	if code != 1 || !strings.Contains(errOut, "--pylon http://127.0.0.1:1/metrics: cluster cluster-a:") {
		t.Errorf("unreachable: exit %d, %q", code, errOut)
	}
	e := livetest.Start(t, pylonValues(1, 0, 0))
	e.Serve(func(w http.ResponseWriter) bool { _, _ = w.Write([]byte("<html>hi</html>")); return true })
	code, _, errOut = runCLI(t, "", "snapshot", "--model", "company/model", "--pylon", "cluster-a="+e.URL)
	if code != 2 || !strings.Contains(errOut, "not Prometheus text") {
		t.Errorf("html: exit %d, %q", code, errOut)
	}
}

// TestSnapshotPrometheusAt is the second acceptance line: the same
// through a real Prometheus with --cluster-label, now and with --at
// before the values changed; explain accepts both outputs.
func TestSnapshotPrometheusAt(t *testing.T) {
	va := pylonValues(10000, 2, 4000)
	a := livetest.Start(t, va)
	b := livetest.Start(t, pylonValues(10000, 0, 0))
	c := livetest.Start(t, pylonValues(5000, 9, 30000))
	lbl := func(cl string) map[string]string { return map[string]string{"kube_cluster": cl} }
	prom := livetest.StartPrometheus(t, []livetest.Job{{Name: "pylon", Targets: []livetest.Target{
		{Addr: a.Addr, Labels: lbl("cluster-a")}, {Addr: b.Addr, Labels: lbl("cluster-b")}, {Addr: c.Addr, Labels: lbl("cluster-c")}}}})
	prom.WaitFor(t, `count(pylon_model_queue_size)`, func(r []livetest.QueryResult) bool { return len(r) == 1 && r[0].Value == 3 })
	before := time.Now()
	time.Sleep(10 * time.Millisecond)
	va.QueueSize, va.QueuedInputTokens = 50, 99000
	a.Set(va)
	prom.WaitFor(t, `pylon_model_queue_size{kube_cluster="cluster-a"}`, func(r []livetest.QueryResult) bool { return len(r) == 1 && r[0].Value == 50 })
	ov := writeFile(t, "overlay.yaml", testOverlay)
	base := []string{"snapshot", "--model", "company/model", "--prometheus", prom.URL, "--cluster-label", "kube_cluster", "--selector", `job="pylon"`, "--overlay", ov}
	for _, tc := range []struct {
		at     []string
		queued string
	}{
		{nil, "queued_input_size: 99000 # metric from pylon_model_queued_input_tokens"},
		{[]string{"--at", before.UTC().Format(time.RFC3339Nano)}, "queued_input_size: 4000 # metric from pylon_model_queued_input_tokens"},
		{[]string{"--at", strconv.FormatFloat(float64(before.UnixNano())/1e9, 'f', 3, 64)}, "queued_input_size: 4000 #"},
	} {
		code, out, errOut := runCLI(t, "", append(base, tc.at...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.at, code, errOut)
		}
		if !strings.Contains(out, tc.queued) || !strings.Contains(out, "# source: prometheus "+prom.URL) {
			t.Errorf("%v: lacks %q:\n%s", tc.at, tc.queued, out)
		}
		snap := writeFile(t, "snap.yaml", out)
		if code, _, errOut := runCLI(t, "", "explain", "--snapshot", snap, "--model", "company/model", "--input-tokens", "2000"); code != 0 {
			t.Fatalf("explain --snapshot: exit %d: %s", code, errOut)
		}
	}
	// explain --at: the snapshot from Prometheus at that instant, the last
	// cluster from the span of the session's previous request.
	spans := filepath.Join(testutil.RepoRoot(t), "internal", "live", "testdata", "spans.otlp.jsonl")
	code, out, errOut := runCLI(t, "", "explain", "--model", "company/model", "--prometheus", prom.URL, "--cluster-label", "kube_cluster",
		"--at", before.UTC().Format(time.RFC3339Nano), "--session-id", "session-1", "--source", "prompt_cache_key", "--routing-key", "fn-alpha",
		"--input-tokens", "2000", "--span", spans, "--request-id", "req-2", "--previous-request-id", "req-1", "--width", "300", "-o", "json")
	if code != 0 {
		t.Fatalf("explain --at: exit %d: %s", code, errOut)
	}
	var rep struct {
		Snapshot struct {
			Clusters []struct {
				ClusterID string `json:"cluster_id"`
				Stats     struct {
					QueuedInputSize uint64 `json:"queued_input_size"`
				} `json:"stats"`
			} `json:"clusters"`
		} `json:"snapshot"`
		Provenance struct {
			Snapshot    struct{ Past bool }
			LastCluster struct{ From, Cluster, RequestID string } `json:"last_cluster"`
		} `json:"provenance"`
		Span *struct{ Reproduced bool } `json:"span_comparison"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Provenance.Snapshot.Past || rep.Provenance.LastCluster.From != "span" || rep.Provenance.LastCluster.Cluster != "cluster-a" || rep.Span == nil {
		t.Errorf("provenance %+v span %+v", rep.Provenance, rep.Span)
	}
	found := false
	for _, c := range rep.Snapshot.Clusters {
		if c.ClusterID == "cluster-a" {
			found = true
			if c.Stats.QueuedInputSize != 4000 {
				t.Errorf("cluster-a queued_input_size at --at: %d, want 4000 (before the change)", c.Stats.QueuedInputSize)
			}
		}
	}
	if !found {
		t.Errorf("no cluster-a in the explained snapshot: %s", out)
	}
}

func TestSnapshotSpan(t *testing.T) {
	spans := filepath.Join(testutil.RepoRoot(t), "internal", "live", "testdata", "spans.otlp.jsonl")
	args := append([]string{"snapshot", "--model", "company/model", "--span", spans, "--request-id", "req-2"}, threePylons(t)...)
	code, out, errOut := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# span: " + spans + ", request req-2", "rtt_ms: 6.25 # span from selected_inst.rtt_ms", "queue_size: 4 # span from selected_inst.queue_size"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = runCLI(t, "", append([]string{"snapshot", "--model", "company/model", "--span", spans, "--request-id", "nope"}, threePylons(t)...)...)
	if code != 2 || !strings.Contains(errOut, `no proxy_openai_request span for request "nope"`) {
		t.Errorf("unknown request: exit %d, %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", append([]string{"snapshot", "--model", "company/model", "--request-id", "req-2"}, threePylons(t)...)...)
	if code != 2 || !strings.Contains(errOut, "give --span FILE too") {
		t.Errorf("--request-id without --span: exit %d, %s", code, errOut)
	}
}

// TestExplainSessionLive is the third acceptance line: one command from a
// session id to the decision, with the last cluster from a real Olric
// (seeded with the demo's sessions) and the snapshot scraped from Pylon
// exporters, starting with the provenance block.
func TestExplainSessionLive(t *testing.T) {
	seedTestDMap(t, 20)
	olric := storeArgs(t)[1:5] // --olric ADDRS --dmap DMAP
	args := append(append([]string{"explain", "--session-id", "session-1", "--source", "prompt_cache_key", "--routing-key", "fn-alpha",
		"--model", "company/model", "--input-tokens", "2000", "--width", "300", "--overlay", writeFile(t, "overlay.yaml", testOverlay)}, olric...), threePylons(t)...)
	r := lcctl(t, "", nil, args...)
	wantCode(t, r, 0, args)
	for _, want := range []string{
		"Provenance",
		"config      none",
		"snapshot    pylon scrape (3 endpoints) at ",
		"session     affinity key mt:v1:session:",
		"hint        last cluster cluster-b from Olric: key lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6, value \"cluster-b\", written ",
		"TTL ",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	if i, j := strings.Index(r.out, "Provenance"), strings.Index(r.out, "lcctl explain: model"); i < 0 || j < i {
		t.Errorf("the provenance block is not first:\n%s", r.out)
	}
	rj := lcctl(t, "", nil, append(args, "-o", "json")...)
	wantCode(t, rj, 0, args)
	var rep struct {
		Request struct {
			LastClusterID    string `json:"last_cluster_id"`
			CacheAffinityKey string `json:"cache_affinity_key"`
		} `json:"request"`
		Provenance struct {
			LastCluster struct {
				From, Cluster, Key string
				Found              *bool
				TTLMs              *int64 `json:"ttl_ms"`
			} `json:"last_cluster"`
			Snapshot struct {
				Source string   `json:"source"`
				AgeMs  *float64 `json:"age_ms"`
			} `json:"snapshot"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal([]byte(rj.out), &rep); err != nil {
		t.Fatal(err)
	}
	lc := rep.Provenance.LastCluster
	if lc.From != "olric" || lc.Cluster != "cluster-b" || lc.Found == nil || !*lc.Found || lc.TTLMs == nil || *lc.TTLMs <= 0 ||
		rep.Request.LastClusterID != "cluster-b" || !strings.HasPrefix(rep.Request.CacheAffinityKey, "mt:v1:session:") || rep.Provenance.Snapshot.AgeMs == nil {
		t.Errorf("JSON provenance %+v request %+v", rep.Provenance, rep.Request)
	}

	// A session the store does not have: no hint, said so.
	args2 := append(append([]string{"explain", "--session-id", "no-such-session", "--source", "header", "--routing-key", "fn-alpha",
		"--model", "company/model", "--input-tokens", "2000", "--width", "300"}, olric...), threePylons(t)...)
	r = lcctl(t, "", nil, args2...)
	wantCode(t, r, 0, args2)
	if !strings.Contains(r.out, "hint        no last cluster: Olric has no entry for key lc:v1:") {
		t.Errorf("absent entry:\n%s", r.out)
	}
}

func TestExplainSessionBadInput(t *testing.T) {
	snap := filepath.Join(testutil.RepoRoot(t), "examples", "explain", "returning-k1.snapshot.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--session-id", "s-1", "--source", "body"}, `--source: `},
		{[]string{"--session-id", "s-1"}, "--session-id needs --source"},
		{[]string{"--source", "header"}, "--source needs --session-id"},
		{[]string{"--session-id", "s-1", "--source", "header", "--affinity-key", "k"}, "not both"},
		{[]string{"--session-id", "", "--source", "header"}, "--source needs --session-id"},
		{[]string{"--span", "x.json"}, "--span needs --request-id"},
		{[]string{"--previous-request-id", "r"}, "--previous-request-id needs --span"},
		{[]string{"--pylon", "a=http://127.0.0.1:1"}, "not both"},
		{[]string{"--olric", "127.0.0.1:1"}, "--olric needs the session"},
	} {
		args := append([]string{"explain", "--snapshot", snap, "--model", "model-a"}, tc.args...)
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestExplainSpanComparison: explain sets its decision beside the one the
// span recorded and says whether it reproduces it.
func TestExplainSpanComparison(t *testing.T) {
	seedTestDMap(t, 5)
	olric := storeArgs(t)[1:5]
	repo := testutil.RepoRoot(t)
	spans := filepath.Join(repo, "internal", "live", "testdata", "spans.otlp.jsonl")
	base := append(append([]string{"explain", "--config", filepath.Join(repo, "examples", "explain", "live-session.lb-config.yaml"),
		"--session-id", "session-1", "--source", "prompt_cache_key", "--routing-key", "fn-alpha", "--model", "company/model",
		"--input-tokens", "2000", "--width", "300", "--span", spans}, olric...), threePylons(t)...)
	r := lcctl(t, "", nil, append(base, "--request-id", "req-2")...)
	wantCode(t, r, 0, base)
	for _, want := range []string{"Stargate's recorded decision (request req-2, ", "recorded    cluster-b, rank depth 1, session returning",
		"lcctl       cluster-b, rank depth 1, session returning", "verdict     lcctl reproduces Stargate's decision", "approximate ",
		"the chosen cluster's values from the span of request req-2"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("lacks %q:\n%s", want, r.out)
		}
	}
	// The live snapshot notes the metric value the span replaced.
	code, snapOut, errOut := runCLI(t, "", append([]string{"snapshot", "--model", "company/model", "--span", spans, "--request-id", "req-2"}, threePylons(t)...)...)
	if code != 0 || !strings.Contains(snapOut, "queue_size: 4 # span from selected_inst.queue_size, age ") || !strings.Contains(snapOut, "; the metric value was 0") {
		t.Errorf("snapshot --span: exit %d %s\n%s", code, errOut, snapOut)
	}
	// With a --snapshot file, the span's values are set beside the file's.
	fileArgs := append(append([]string{"explain", "--config", filepath.Join(repo, "examples", "explain", "live-session.lb-config.yaml"),
		"--model", "company/model", "--routing-key", "fn-alpha", "--session-id", "session-1", "--source", "prompt_cache_key", "--last-cluster", "cluster-b",
		"--input-tokens", "2000", "--width", "300", "--span", spans, "--request-id", "req-2"}, olric...), "--snapshot", writeFile(t, "s.yaml", snapOut[:0]+mustSnapshot(t)))
	r = lcctl(t, "", nil, fileArgs...)
	wantCode(t, r, 0, fileArgs)
	if !strings.Contains(r.out, "cluster cluster-b queue_size: the snapshot file has 0, Stargate read 4 (selected_inst.queue_size)") {
		t.Errorf("file vs span:\n%s", r.out)
	}
	// req-1 chose cluster-a at depth 2 as a new session: not reproduced.
	r = lcctl(t, "", nil, append(base, "--request-id", "req-1", "--last-cluster", "cluster-a")...)
	if r.code == 2 {
		t.Fatalf("exit 2: %s", r.err)
	}
	for _, want := range []string{"lcctl does NOT reproduce it: the snapshot differs from Stargate's view", "rank depth: Stargate 2, lcctl 1", "session state: Stargate new, lcctl returning"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("req-1 lacks %q:\n%s", want, r.out)
		}
	}
}

// A header session id already in mt:v1:…:<64 hex> form is kept as the
// affinity key (live-snapshot.md §6); a body id is hashed.
func TestExplainSessionHeaderKeyKept(t *testing.T) {
	snap := filepath.Join(testutil.RepoRoot(t), "examples", "explain", "returning-k1.snapshot.yaml")
	kept := "mt:v1:session:" + strings.Repeat("AB", 32)
	for _, tc := range []struct{ id, source, want string }{
		{kept, "header", kept},
		{"  " + kept + " ", "header", kept},
		{kept, "prompt_cache_key", "mt:v1:session:"},
	} {
		code, out, errOut := runCLI(t, "", "explain", "--snapshot", snap, "--model", "model-a", "--session-id", tc.id, "--source", tc.source, "-o", "json")
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.id, code, errOut)
		}
		var rep struct {
			Request struct {
				CacheAffinityKey string `json:"cache_affinity_key"`
			} `json:"request"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		got := rep.Request.CacheAffinityKey
		if tc.source == "header" && got != tc.want || tc.source != "header" && (got == kept || !strings.HasPrefix(got, tc.want) || len(got) != len("mt:v1:session:")+64) {
			t.Errorf("%q via %s: affinity key %q, want %q", tc.id, tc.source, got, tc.want)
		}
	}
}

// mustSnapshot is a snapshot of threePylons' clusters written by lcctl
// snapshot.
func mustSnapshot(t *testing.T) string {
	t.Helper()
	code, out, errOut := runCLI(t, "", append([]string{"snapshot", "--model", "company/model"}, threePylons(t)...)...)
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	return out
}
