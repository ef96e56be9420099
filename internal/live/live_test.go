package live_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/live/livetest"
)

const model = "company/model"

// tick is a clock that advances 1 ms per reading, so scrapes are ordered.
func tick() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

func values(tps, queue, queued float64) livetest.Values {
	return livetest.Values{Model: model, LastMeanInputTPS: tps, OutputTPS: tps / 10, MaxOutputTPS: tps / 5,
		QueueSize: queue, QueuedInputTokens: queued, KVCapacity: 100000, KVUsed: 1000 * queue, KVFree: 100000 - 1000*queue,
		Inflight: queue + 2, InputProcessing: 1, OutputGeneration: 2,
		StateTokens: map[string]float64{"queued": queued, "input_processing": 100, "output_generation": 50, "done": 999}}
}

func roundTrip(t *testing.T, s *live.Snapshot) *lb.Snapshot {
	t.Helper()
	var y, j bytes.Buffer
	if err := live.WriteYAML(&y, s); err != nil {
		t.Fatal(err)
	}
	// The header cites what an installed lcctl carries (lcctl docs), not
	// the repository's spec files.
	if !strings.Contains(y.String(), "\n# aggregation: "+string(s.Aggregation)+` (lcctl docs snapshot, "Field mapping")`+"\n") || strings.Contains(y.String(), "live-snapshot.md") {
		t.Errorf("the YAML header does not cite lcctl docs snapshot:\n%s", y.String())
	}
	ys, err := formats.DecodeSnapshot("snap.yaml", y.Bytes())
	if err != nil {
		t.Fatalf("the YAML is not a valid snapshot: %v\n%s", err, y.String())
	}
	if err := live.WriteJSON(&j, s); err != nil {
		t.Fatal(err)
	}
	js, err := formats.DecodeSnapshot("snap.json", j.Bytes())
	if err != nil {
		t.Fatalf("the JSON is not a valid snapshot: %v\n%s", err, j.String())
	}
	if len(ys.Clusters) != len(js.Clusters) {
		t.Fatalf("YAML has %d clusters, JSON %d", len(ys.Clusters), len(js.Clusters))
	}
	for i := range ys.Clusters {
		if !sameCluster(ys.Clusters[i], js.Clusters[i]) {
			t.Errorf("cluster %d: YAML %+v, JSON %+v", i, ys.Clusters[i], js.Clusters[i])
		}
	}
	return ys
}

func sameCluster(a, b lb.Cluster) bool {
	return a.ClusterID == b.ClusterID && a.RTT == b.RTT && a.Status == b.Status && a.ActiveBackendCount == b.ActiveBackendCount &&
		a.Stats.LastMeanInputTPS == b.Stats.LastMeanInputTPS && a.Stats.QueueSize == b.Stats.QueueSize &&
		a.Stats.QueuedInputSize == b.Stats.QueuedInputSize && a.Stats.MaxInputTPS == b.Stats.MaxInputTPS &&
		a.Stats.KVCacheFreeTokens == b.Stats.KVCacheFreeTokens && a.Stats.NumRunningQueries == b.Stats.NumRunningQueries &&
		a.Stats.MaxEngineConcurrency == b.Stats.MaxEngineConcurrency && a.Stats.TotalQueryInputSize == b.Stats.TotalQueryInputSize
}

func overlay(t *testing.T, text string) *live.Overlay {
	t.Helper()
	o, err := live.DecodeOverlay("overlay.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

const threeOverlay = `clusters:
  cluster-a: {rtt_ms: 5, max_input_tps: 12000, max_engine_concurrency: 64}
  cluster-b: {rtt_ms: 7.5, max_input_tps: 9000}
  cluster-c: {rtt_ms: 12, status: inactive}
`

func TestPylonThreeClustersWithOverlay(t *testing.T) {
	va, vb, vc := values(10000, 3, 6000), values(8000, 0, 0), values(12000, 7, 21000)
	a, b, c := livetest.Start(t, va), livetest.Start(t, vb), livetest.Start(t, vc)
	s, err := live.Build(context.Background(), live.Options{Model: model, Now: tick(), Overlay: overlay(t, threeOverlay),
		Pylons: []live.PylonTarget{{Cluster: "cluster-c", URL: c.URL}, {Cluster: "cluster-a", URL: a.URL}, {Cluster: "cluster-b", URL: b.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	snap := roundTrip(t, s)
	if len(snap.Clusters) != 3 {
		t.Fatalf("got %d clusters", len(snap.Clusters))
	}
	want := map[string]struct {
		v      livetest.Values
		rttMs  float64
		maxIn  float64
		mec    uint64
		status lb.Status
	}{
		"cluster-a": {va, 5, 12000, 64, lb.StatusActive},
		"cluster-b": {vb, 7.5, 9000, 0, lb.StatusActive},
		"cluster-c": {vc, 12, 0, 0, lb.StatusInactive},
	}
	for i, cl := range snap.Clusters {
		if wantID := []string{"cluster-a", "cluster-b", "cluster-c"}[i]; cl.ClusterID != wantID {
			t.Fatalf("cluster %d is %s, want %s (sorted by id)", i, cl.ClusterID, wantID)
		}
		w := want[cl.ClusterID]
		st := cl.Stats
		wantRTT, _ := lb.DurationFromMs(w.rttMs)
		if cl.RTT != wantRTT || cl.Status != w.status || st.MaxInputTPS != w.maxIn || st.MaxEngineConcurrency != w.mec {
			t.Errorf("%s: overlay values rtt %v status %v max_input_tps %v mec %d", cl.ClusterID, cl.RTT, cl.Status, st.MaxInputTPS, st.MaxEngineConcurrency)
		}
		if st.LastMeanInputTPS != w.v.LastMeanInputTPS || st.OutputTPS != w.v.OutputTPS || st.MaxOutputTPS != w.v.MaxOutputTPS ||
			st.QueueSize != uint64(w.v.QueueSize) || st.QueuedInputSize != uint64(w.v.QueuedInputTokens) ||
			st.KVCacheCapacityTokens != uint64(w.v.KVCapacity) || st.KVCacheUsedTokens != uint64(w.v.KVUsed) || st.KVCacheFreeTokens != uint64(w.v.KVFree) ||
			st.NumRunningQueries != uint64(w.v.Inflight) || st.InputProcessingQueries != 1 || st.OutputGenerationQueries != 2 {
			t.Errorf("%s: stats %+v, exporter %+v", cl.ClusterID, st, w.v)
		}
		// queued + input_processing + output_generation; "done" is not a live state.
		if wantTotal := uint64(w.v.QueuedInputTokens + 150); st.TotalQueryInputSize != wantTotal {
			t.Errorf("%s: total_query_input_size %d, want %d", cl.ClusterID, st.TotalQueryInputSize, wantTotal)
		}
		if cl.ActiveBackendCount != 1 {
			t.Errorf("%s: active_backend_count %d", cl.ClusterID, cl.ActiveBackendCount)
		}
	}
	// Provenance.
	ca := s.Cluster("cluster-a")
	for name, origin := range map[string]live.Origin{"rtt_ms": live.OriginOverlay, "queue_size": live.OriginMetric,
		"status": live.OriginDerived, "total_query_input_size": live.OriginDerived, "queue_time_estimate_ms_by_priority": live.OriginDefault} {
		if f := ca.Get(name); f.Origin != origin {
			t.Errorf("cluster-a %s: origin %s, want %s", name, f.Origin, origin)
		}
	}
	if f := s.Cluster("cluster-c").Get("max_input_tps"); f.Origin != live.OriginUnknown {
		t.Errorf("cluster-c max_input_tps: origin %s, want unknown", f.Origin)
	}
	if !hasWarning(s, "max_input_tps unknown for cluster-c") || !hasWarning(s, "max_engine_concurrency unknown for cluster-b, cluster-c") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if f := s.Cluster("cluster-c").Get("status"); f.Note == "" {
		t.Errorf("an overlay status that overrides the gauges is not noted")
	}
	var y bytes.Buffer
	_ = live.WriteYAML(&y, s)
	for _, want := range []string{"# max_input_tps: unknown, left out", "queue_size: 3 # metric from pylon_model_queue_size, age ", "rtt_ms: 5 # overlay from overlay.yaml:2"} {
		if !strings.Contains(y.String(), want) {
			t.Errorf("YAML lacks %q:\n%s", want, y.String())
		}
	}
	if strings.Contains(y.String(), "max_input_tps: 0") {
		t.Errorf("max_input_tps written as 0:\n%s", y.String())
	}
}

func hasWarning(s *live.Snapshot, sub string) bool {
	for _, w := range s.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestAggregationRules(t *testing.T) {
	v1, v2 := values(10000, 3, 6000), values(5000, 1, 2000)
	v2.MaxOutputTPS, v1.MaxOutputTPS = 800, 3000
	v2.KVFree = 12345
	e1, e2 := livetest.Start(t, v1), livetest.Start(t, v2)
	build := func(agg live.Aggregation) *live.Cluster {
		s, err := live.Build(context.Background(), live.Options{Model: model, Now: tick(), Aggregation: agg,
			Pylons: []live.PylonTarget{{Cluster: "cluster-a", URL: e1.URL}, {Cluster: "cluster-a", URL: e2.URL}}})
		if err != nil {
			t.Fatal(err)
		}
		if !hasWarning(s, "cluster cluster-a has 2 backends") || !hasWarning(s, "different KV-cache sizes") {
			t.Errorf("%s: warnings %q", agg, s.Warnings)
		}
		return s.Cluster("cluster-a")
	}
	// e2 is scraped last, so it is the source backend for "latest".
	for _, tc := range []struct {
		agg                    live.Aggregation
		maxOut                 float64
		running, total, kvFree uint64
	}{
		{live.AggregationN1, 3000, uint64(v1.Inflight + v2.Inflight), 6000 + 150 + 2000 + 150, 12345},
		{live.AggregationS, 800, uint64(v2.Inflight), 2000 + 150, 12345},
	} {
		c := build(tc.agg)
		if got := c.Get("last_mean_input_tps").Float; got != 15000 {
			t.Errorf("%s: last_mean_input_tps %v, want the sum 15000", tc.agg, got)
		}
		if got := c.Get("queue_size").Uint; got != 4 {
			t.Errorf("%s: queue_size %d, want the sum 4", tc.agg, got)
		}
		if got := c.Get("max_output_tps").Float; got != tc.maxOut {
			t.Errorf("%s: max_output_tps %v, want %v", tc.agg, got, tc.maxOut)
		}
		if got := c.Get("num_running_queries").Uint; got != tc.running {
			t.Errorf("%s: num_running_queries %d, want %d", tc.agg, got, tc.running)
		}
		if got := c.Get("total_query_input_size").Uint; got != tc.total {
			t.Errorf("%s: total_query_input_size %d, want %d", tc.agg, got, tc.total)
		}
		if got := c.Get("kv_cache_free_tokens").Uint; got != tc.kvFree {
			t.Errorf("%s: kv_cache_free_tokens %d, want the source backend's %d", tc.agg, got, tc.kvFree)
		}
		if got := c.Get("active_backend_count").Uint; got != 2 {
			t.Errorf("%s: active_backend_count %d", tc.agg, got)
		}
	}
}

func TestStatusFromRegistrationGauges(t *testing.T) {
	v := values(1000, 0, 0)
	v.Disconnected = true
	down := livetest.Start(t, v)
	v2 := values(1000, 0, 0)
	v2.Status = "inactive"
	inactive := livetest.Start(t, v2)
	up, downT := 1.0, 0.0
	v3 := values(1000, 0, 0)
	v3.Tunnel = &downT
	tunnelDown := livetest.Start(t, v3)
	v4 := values(1000, 0, 0)
	v4.Tunnel = &up
	tunnelUp := livetest.Start(t, v4)
	s, err := live.Build(context.Background(), live.Options{Model: model,
		Pylons: []live.PylonTarget{{Cluster: "a", URL: down.URL}, {Cluster: "b", URL: inactive.URL}, {Cluster: "c", URL: tunnelDown.URL},
			{Cluster: "d", URL: tunnelUp.URL}, {Cluster: "d", URL: tunnelDown.URL + "?second"}}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"a": "inactive", "b": "inactive", "c": "inactive", "d": "active"} {
		if f := s.Cluster(id).Get("status"); f.Str != want {
			t.Errorf("cluster %s: status %q, want %s", id, f.Str, want)
		}
	}
	if n := s.Cluster("d").Get("active_backend_count").Uint; n != 1 {
		t.Errorf("cluster d: %d active backends, want 1 (its other backend's tunnel is down)", n)
	}
}

// expectErr checks a Build error: an *live.Error naming the source,
// cluster and field, with the usage flag.
func expectErr(t *testing.T, err error, usage bool, parts ...string) {
	t.Helper()
	var le *live.Error
	if !errors.As(err, &le) {
		t.Fatalf("got %v (%T), want a *live.Error", err, err)
	}
	if le.Usage != usage {
		t.Errorf("%v: usage %v, want %v", err, le.Usage, usage)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err, p)
		}
	}
}

func TestPylonBadInput(t *testing.T) {
	good := livetest.Start(t, values(1000, 0, 0))
	build := func(targets ...live.PylonTarget) error {
		_, err := live.Build(context.Background(), live.Options{Model: model, Pylons: targets, Timeout: 2 * time.Second})
		return err
	}
	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: "http://" + addr + "/metrics"}), false, "--pylon http://"+addr, "cluster cluster-x")
	})
	t.Run("http error", func(t *testing.T) {
		e := livetest.Start(t, values(1, 0, 0))
		e.Serve(func(w http.ResponseWriter) bool { http.Error(w, "boom", http.StatusInternalServerError); return true })
		expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: e.URL}), false, "cluster cluster-x", "500")
	})
	t.Run("not prometheus text", func(t *testing.T) {
		e := livetest.Start(t, values(1, 0, 0))
		e.Serve(func(w http.ResponseWriter) bool { _, _ = w.Write([]byte("{\"hello\": 1}\n")); return true })
		expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: e.URL}), true, "cluster cluster-x", "not Prometheus text")
	})
	t.Run("not a pylon page", func(t *testing.T) {
		e := livetest.Start(t, values(1, 0, 0))
		e.Serve(func(w http.ResponseWriter) bool { _, _ = w.Write([]byte("up 1\n")); return true })
		expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: e.URL}), true, "cluster cluster-x", "no pylon_model_*")
	})
	t.Run("no series for the model", func(t *testing.T) {
		v := values(1, 0, 0)
		v.Model = "other/model"
		e := livetest.Start(t, v)
		expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: e.URL}), true, "cluster cluster-x", "model", `no series for model "company/model"`, `"other/model"`)
	})
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		t.Run("non-finite", func(t *testing.T) {
			v := values(1, 0, 0)
			v.QueueSize = bad
			e := livetest.Start(t, v)
			expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: e.URL}), true, "cluster cluster-x", "queue_size", "not a usable number")
		})
	}
	t.Run("negative", func(t *testing.T) {
		v := values(1, 0, 0)
		v.QueuedInputTokens = -4
		e := livetest.Start(t, v)
		expectErr(t, build(live.PylonTarget{Cluster: "cluster-x", URL: e.URL}), true, "cluster cluster-x", "queued_input_size", "negative")
	})
	t.Run("same endpoint for two clusters", func(t *testing.T) {
		expectErr(t, build(live.PylonTarget{Cluster: "a", URL: good.URL}, live.PylonTarget{Cluster: "b", URL: good.URL}), true, "cluster b", "cluster_id", `also given for cluster "a"`)
	})
	t.Run("same endpoint twice", func(t *testing.T) {
		expectErr(t, build(live.PylonTarget{Cluster: "a", URL: good.URL}, live.PylonTarget{Cluster: "a", URL: good.URL}), true, "cluster a", "given twice")
	})
}

func TestParsePylonFlag(t *testing.T) {
	p, err := live.ParsePylonFlag("cluster-a=http://127.0.0.1:9089")
	if err != nil || p.Cluster != "cluster-a" || p.URL != "http://127.0.0.1:9089/metrics" {
		t.Errorf("got %+v, %v", p, err)
	}
	for _, bad := range []string{"", "cluster-a", "=http://x", "a=ftp://x", "a=http://", "a\x01=http://x"} {
		if _, err := live.ParsePylonFlag(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestOverlayErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"clusters:\n  a: {rtt: 5}\n", "overlay.yaml:2:7: clusters.a.rtt: unknown field"},
		{"clusters:\n  a: {rtt_ms: -1}\n", "overlay.yaml:2:15: clusters.a.rtt_ms: want a finite number ≥ 0"},
		{"clusters:\n  a: {max_input_tps: .nan}\n", "clusters.a.max_input_tps: want a finite number"},
		{"clusters:\n  a: {max_engine_concurrency: 1.5}\n", "clusters.a.max_engine_concurrency: want a whole number"},
		{"clusters:\n  a: {status: up}\n", "clusters.a.status: want active, inactive or unknown"},
		{"clusters:\n  a: {}\n  a: {}\n", "overlay.yaml:3:3: clusters.a: cluster \"a\" given twice"},
		{"cluster:\n  a: {}\n", "overlay.yaml:1:1: cluster: unknown field"},
		{"clusters: [a]\n", "clusters: want a mapping"},
		{"", "empty overlay"},
		{"clusters:\n  a: {rtt_ms: 1, rtt_ms: 2}\n", "clusters.a.rtt_ms: given twice"},
	} {
		_, err := live.DecodeOverlay("overlay.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestOverlayClusterWithoutMetricsIsNotGuessed(t *testing.T) {
	e := livetest.Start(t, values(1000, 0, 0))
	s, err := live.Build(context.Background(), live.Options{Model: model, Overlay: overlay(t, "clusters:\n  ghost: {rtt_ms: 1}\n"),
		Pylons: []live.PylonTarget{{Cluster: "a", URL: e.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster("ghost") != nil || !hasWarning(s, "cluster ghost is in the overlay but no live source has it") {
		t.Errorf("clusters %d, warnings %q", len(s.Clusters), s.Warnings)
	}
}

func TestAtNeedsPrometheus(t *testing.T) {
	e := livetest.Start(t, values(1000, 0, 0))
	_, err := live.Build(context.Background(), live.Options{Model: model, At: time.Now().Add(-time.Minute), Pylons: []live.PylonTarget{{Cluster: "a", URL: e.URL}}})
	expectErr(t, err, true, "--at needs --prometheus")
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1796242500":                time.Unix(1796242500, 0).UTC(),
		"1796242500.25":             time.Unix(1796242500, 250e6).UTC(),
		"2026-12-01T20:15:00Z":      time.Date(2026, 12, 1, 20, 15, 0, 0, time.UTC),
		"2026-12-01T21:15:00+01:00": time.Date(2026, 12, 1, 20, 15, 0, 0, time.UTC),
	} {
		got, err := live.ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: got %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-5", "NaN", "2026-12-01"} {
		if _, err := live.ParseTime(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
