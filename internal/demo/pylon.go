package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lcctl/lcctl/internal/store"
)

// LiveModel is the model of the demo's live step: the model of the first
// demo store session (store.DemoSessions: fn-alpha, company/model,
// prompt_cache_key "session-1", last cluster cluster-b).
const LiveModel = "company/model"

// PylonLoad is what one demo Pylon exports for LiveModel, in
// live-snapshot.md §2 terms: prefill rate (tokens/s), queued requests and
// input tokens, running requests, KV-cache tokens.
type PylonLoad struct {
	LastMeanInputTPS             float64
	QueueSize, QueuedInputTokens float64
	Inflight                     float64
	KVCapacity, KVFree           float64
}

// DemoPylonLoads are the demo clusters' loads: cluster-a busy (a 2 s
// queue), cluster-b, the last cluster of session-1, with room, cluster-c
// half busy on slower hardware.
var DemoPylonLoads = map[string]PylonLoad{
	store.DemoClusters[0]: {LastMeanInputTPS: 10000, QueueSize: 6, QueuedInputTokens: 20000, Inflight: 8, KVCapacity: 200000, KVFree: 40000},
	store.DemoClusters[1]: {LastMeanInputTPS: 10000, QueueSize: 0, QueuedInputTokens: 0, Inflight: 3, KVCapacity: 200000, KVFree: 150000},
	store.DemoClusters[2]: {LastMeanInputTPS: 6000, QueueSize: 2, QueuedInputTokens: 3000, Inflight: 6, KVCapacity: 120000, KVFree: 60000},
}

// Pylons are in-process HTTP servers on loopback, one per demo cluster,
// each serving a Pylon-style /metrics page (the Prometheus text format,
// written with prometheus/common's expfmt, with Pylon's metric names and
// labels) for `lcctl snapshot --pylon`.
type Pylons struct {
	// URLs maps each cluster to its /metrics URL.
	URLs map[string]string
	srv  []*http.Server
}

// StartPylons starts one server per DemoPylonLoads entry on a free
// loopback port. On error nothing is left running.
func StartPylons() (*Pylons, error) {
	p := &Pylons{URLs: map[string]string{}}
	for _, cl := range p.clusters() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = p.Close(context.Background())
			return nil, fmt.Errorf("demo pylon %s: %w", cl, err)
		}
		page := pylonPage(DemoPylonLoads[cl])
		mux := http.NewServeMux()
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
			_, _ = w.Write(page)
		})
		s := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = s.Serve(l) }()
		p.srv = append(p.srv, s)
		p.URLs[cl] = "http://" + l.Addr().String() + "/metrics"
	}
	return p, nil
}

func (p *Pylons) clusters() []string {
	out := make([]string, 0, len(DemoPylonLoads))
	for c := range DemoPylonLoads {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Flags returns the --pylon CLUSTER=URL arguments, in cluster order.
func (p *Pylons) Flags() []string {
	var out []string
	for _, c := range p.clusters() {
		if u, ok := p.URLs[c]; ok {
			out = append(out, "--pylon", c+"="+u)
		}
	}
	return out
}

// Close stops the servers.
func (p *Pylons) Close(ctx context.Context) error {
	var errs []error
	for _, s := range p.srv {
		errs = append(errs, s.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// pylonPage renders one Pylon's gauges for LiveModel.
func pylonPage(l PylonLoad) []byte {
	gauge := func(name string, v float64, labels ...string) *dto.MetricFamily {
		m := &dto.Metric{Gauge: &dto.Gauge{Value: &v}}
		for i := 0; i+1 < len(labels); i += 2 {
			n, val := labels[i], labels[i+1]
			m.Label = append(m.Label, &dto.LabelPair{Name: &n, Value: &val})
		}
		t := dto.MetricType_GAUGE
		return &dto.MetricFamily{Name: &name, Type: &t, Metric: []*dto.Metric{m}}
	}
	const router = "stargate-0:8080"
	fams := []*dto.MetricFamily{
		gauge("pylon_model_last_mean_input_tps", l.LastMeanInputTPS, "model", LiveModel),
		gauge("pylon_model_output_tps", l.LastMeanInputTPS/20, "model", LiveModel),
		gauge("pylon_model_max_output_tps", l.LastMeanInputTPS/10, "model", LiveModel),
		gauge("pylon_model_queue_size", l.QueueSize, "model", LiveModel),
		gauge("pylon_model_queued_input_tokens", l.QueuedInputTokens, "model", LiveModel),
		gauge("pylon_model_kv_cache_capacity_tokens", l.KVCapacity, "model", LiveModel),
		gauge("pylon_model_kv_cache_used_tokens", l.KVCapacity-l.KVFree, "model", LiveModel),
		gauge("pylon_model_kv_cache_free_tokens", l.KVFree, "model", LiveModel),
		gauge("pylon_model_advertised_status", 1, "router", router, "model", LiveModel, "status", "active"),
		gauge("pylon_registration_stream_connected", 1, "router", router),
		gauge("pylon_requests_inflight", l.Inflight, "model", LiveModel),
	}
	var buf bytes.Buffer
	for _, f := range fams {
		_, _ = expfmt.MetricFamilyToText(&buf, f)
	}
	return buf.Bytes()
}
