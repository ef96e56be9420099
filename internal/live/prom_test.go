package live_test

import (
	"context"
	"math"
	"net"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/live/livetest"
)

// TestPrometheus runs a real Prometheus that scrapes in-test Pylon
// exporters every 200 ms, and reads the snapshot through its HTTP API:
// now, at a past instant before the values changed, and the bad inputs.
func TestPrometheus(t *testing.T) {
	va, vb, vc := values(10000, 3, 6000), values(8000, 0, 0), values(12000, 7, 21000)
	a, b, c := livetest.Start(t, va), livetest.Start(t, vb), livetest.Start(t, vc)
	// cluster-b has two backends.
	vb2 := values(4000, 2, 500)
	b2 := livetest.Start(t, vb2)
	u := livetest.Start(t, values(1, 1, 1))
	vn := values(1, 1, 1)
	vn.QueueSize = math.NaN()
	n := livetest.Start(t, vn)
	lbl := func(cl string) map[string]string { return map[string]string{"cluster": cl} }
	prom := livetest.StartPrometheus(t, []livetest.Job{
		{Name: "pylon", Targets: []livetest.Target{{Addr: a.Addr, Labels: lbl("cluster-a")}, {Addr: b.Addr, Labels: lbl("cluster-b")},
			{Addr: b2.Addr, Labels: lbl("cluster-b")}, {Addr: c.Addr, Labels: lbl("cluster-c")}}},
		{Name: "unlabelled", Targets: []livetest.Target{{Addr: u.Addr}}},
		{Name: "dup", Targets: []livetest.Target{{Addr: a.Addr, Labels: lbl("cluster-x")}}},
		{Name: "nan", Targets: []livetest.Target{{Addr: n.Addr, Labels: lbl("cluster-n")}}},
	})
	prom.WaitFor(t, `count(pylon_model_queue_size)`, func(r []livetest.QueryResult) bool { return len(r) == 1 && r[0].Value == 7 })
	build := func(at time.Time, sel string, mut func(*live.Options)) (*live.Snapshot, error) {
		o := live.Options{Model: model, At: at, Prometheus: live.Prometheus{URL: prom.URL, ClusterLabel: "cluster", Selector: sel}}
		if mut != nil {
			mut(&o)
		}
		return live.Build(context.Background(), o)
	}
	before := time.Now()
	time.Sleep(10 * time.Millisecond)
	changed := va
	changed.QueueSize, changed.QueuedInputTokens = 42, 84000
	a.Set(changed)
	prom.WaitFor(t, `pylon_model_queue_size{job="pylon",cluster="cluster-a"}`, func(r []livetest.QueryResult) bool { return len(r) == 1 && r[0].Value == 42 })

	t.Run("now", func(t *testing.T) {
		s, err := build(time.Time{}, `job="pylon"`, nil)
		if err != nil {
			t.Fatal(err)
		}
		snap := roundTrip(t, s)
		if len(snap.Clusters) != 3 {
			t.Fatalf("%d clusters", len(snap.Clusters))
		}
		ca, cb, cc := snap.Clusters[0], snap.Clusters[1], snap.Clusters[2]
		if ca.Stats.QueueSize != 42 || ca.Stats.QueuedInputSize != 84000 || ca.Stats.LastMeanInputTPS != 10000 {
			t.Errorf("cluster-a now: %+v", ca.Stats)
		}
		if cb.Stats.LastMeanInputTPS != vb.LastMeanInputTPS+vb2.LastMeanInputTPS || cb.Stats.QueueSize != 2 || cb.Stats.QueuedInputSize != 500 ||
			cb.ActiveBackendCount != 2 || cb.Stats.NumRunningQueries != uint64(vb.Inflight+vb2.Inflight) {
			t.Errorf("cluster-b (two backends, n1): %+v backends %d", cb.Stats, cb.ActiveBackendCount)
		}
		if cc.Stats.QueueSize != 7 || cc.Stats.KVCacheFreeTokens != uint64(vc.KVFree) {
			t.Errorf("cluster-c: %+v", cc.Stats)
		}
		for _, cl := range s.Clusters {
			if len(cl.Backends) == 0 || cl.Age < 0 || cl.Age > 5*time.Second {
				t.Errorf("%s: backends %+v age %v", cl.ID, cl.Backends, cl.Age)
			}
		}
		if s.Past || s.Source != "prometheus "+prom.URL {
			t.Errorf("past %v source %q", s.Past, s.Source)
		}
	})
	t.Run("at a past instant", func(t *testing.T) {
		s, err := build(before, `job="pylon"`, nil)
		if err != nil {
			t.Fatal(err)
		}
		ca := s.Cluster("cluster-a")
		if q := ca.Get("queue_size").Uint; q != 3 {
			t.Errorf("queue_size at --at %v = %d, want the value before the change, 3", before, q)
		}
		if q := ca.Get("queued_input_size").Uint; q != 6000 {
			t.Errorf("queued_input_size at --at = %d, want 6000", q)
		}
		if !s.Past || !s.At.Equal(before) {
			t.Errorf("past %v at %v", s.Past, s.At)
		}
		if ca.Backends[0].SampleTime.After(before) {
			t.Errorf("sample time %v is after --at %v", ca.Backends[0].SampleTime, before)
		}
	})
	t.Run("series without the cluster label", func(t *testing.T) {
		_, err := build(time.Time{}, `job=~"pylon|unlabelled"`, nil)
		expectErr(t, err, true, "--prometheus "+prom.URL, "cluster: series", `has no "cluster" label`)
	})
	t.Run("one backend in two clusters", func(t *testing.T) {
		_, err := build(time.Time{}, `job=~"pylon|dup"`, nil)
		expectErr(t, err, true, "cluster", "is in two clusters", "cluster-a", "cluster-x")
	})
	t.Run("NaN gauge", func(t *testing.T) {
		_, err := build(time.Time{}, `job="nan"`, nil)
		expectErr(t, err, true, "cluster cluster-n", "queue_size", "NaN")
	})
	t.Run("no series for the model", func(t *testing.T) {
		_, err := build(time.Time{}, `job="pylon"`, func(o *live.Options) { o.Model = "other/model" })
		expectErr(t, err, true, `no Pylon series for model "other/model"`)
	})
	t.Run("samples older than the lookback", func(t *testing.T) {
		_, err := build(time.Time{}, `job="pylon"`, func(o *live.Options) { o.Lookback = time.Millisecond })
		expectErr(t, err, true, "cluster cluster-", "older than the lookback 1ms")
	})
	t.Run("before the first scrape", func(t *testing.T) {
		_, err := build(before.Add(-time.Hour), `job="pylon"`, nil)
		expectErr(t, err, true, "no Pylon series")
	})
	t.Run("malformed selector", func(t *testing.T) {
		_, err := build(time.Time{}, `job=~"("`, nil)
		expectErr(t, err, true, "Prometheus refused the query")
	})
	t.Run("HTTP error", func(t *testing.T) {
		_, err := build(time.Time{}, "", func(o *live.Options) { o.Prometheus.URL = prom.URL + "/no-such-prefix" })
		expectErr(t, err, false, "--prometheus "+prom.URL+"/no-such-prefix", "404")
	})
	t.Run("the S rule", func(t *testing.T) {
		s, err := build(time.Time{}, `job="pylon"`, func(o *live.Options) { o.Aggregation = live.AggregationS })
		if err != nil {
			t.Fatal(err)
		}
		cb := s.Cluster("cluster-b")
		src := cb.Backends[0]
		for _, be := range cb.Backends {
			if be.Source {
				src = be
			}
		}
		want := vb.Inflight
		if src.ID == b2.Addr {
			want = vb2.Inflight
		}
		if got := cb.Get("num_running_queries").Uint; got != uint64(want) {
			t.Errorf("S: num_running_queries %d, want the source backend %s's %v", got, src.ID, want)
		}
	})
}

func TestPrometheusUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, err = live.Build(context.Background(), live.Options{Model: model, Timeout: 2 * time.Second,
		Prometheus: live.Prometheus{URL: "http://" + addr, ClusterLabel: "cluster"}})
	expectErr(t, err, false, "--prometheus http://"+addr, "connect")
}
