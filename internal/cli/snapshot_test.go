package cli

import (
	"encoding/json"
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
