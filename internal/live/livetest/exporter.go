// Package livetest serves Pylon-style /metrics pages for tests with
// github.com/prometheus/client_golang, and starts a real Prometheus server
// that scrapes them. Only tests import it.
package livetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Values are the gauges one Pylon backend exports for one model, by
// their live-snapshot.md §2 meaning. Status is the advertised status
// ("active" by default); Router the router label (default "sg-0:8080").
type Values struct {
	Model                                       string
	LastMeanInputTPS, OutputTPS, MaxOutputTPS   float64
	QueueSize, QueuedInputTokens                float64
	KVCapacity, KVUsed, KVFree                  float64
	Inflight, InputProcessing, OutputGeneration float64
	// StateTokens are pylon_requests_state_input_tokens by state.
	StateTokens map[string]float64
	Status      string
	Router      string
	// Disconnected sets pylon_registration_stream_connected to 0.
	Disconnected bool
	// Tunnel, when set, exports pylon_reverse_tunnel_connected (a
	// reverse-connectivity Pylon) with this value.
	Tunnel *float64
}

// Exporter is one in-test Pylon /metrics endpoint.
type Exporter struct {
	// URL is the /metrics URL.
	URL string
	// Addr is host:port (for a Prometheus scrape config).
	Addr string

	mu       sync.Mutex
	reg      *prometheus.Registry
	gauges   map[string]*prometheus.GaugeVec
	srv      *httptest.Server
	override func(http.ResponseWriter) bool
}

// Prefix is the metric prefix the exporter uses.
const Prefix = "pylon_"

// Start serves v on a loopback port until the test ends.
func Start(tb testing.TB, v Values) *Exporter {
	tb.Helper()
	e := &Exporter{reg: prometheus.NewRegistry(), gauges: map[string]*prometheus.GaugeVec{}}
	for _, g := range []struct {
		name   string
		labels []string
	}{
		{"model_last_mean_input_tps", []string{"model"}},
		{"model_output_tps", []string{"model"}},
		{"model_max_output_tps", []string{"model"}},
		{"model_queue_size", []string{"model"}},
		{"model_queued_input_tokens", []string{"model"}},
		{"model_kv_cache_capacity_tokens", []string{"model"}},
		{"model_kv_cache_used_tokens", []string{"model"}},
		{"model_kv_cache_free_tokens", []string{"model"}},
		{"model_advertised_status", []string{"router", "model", "status"}},
		{"registration_stream_connected", []string{"router"}},
		{"reverse_tunnel_connected", []string{"router"}},
		{"requests_inflight", []string{"model"}},
		{"requests_state", []string{"model", "state"}},
		{"requests_state_input_tokens", []string{"model", "state"}},
	} {
		gv := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: Prefix + g.name, Help: "test gauge " + g.name}, g.labels)
		e.reg.MustRegister(gv)
		e.gauges[g.name] = gv
	}
	e.Set(v)
	h := promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{})
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		o := e.override
		e.mu.Unlock()
		if o != nil && o(w) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(e.srv.Close)
	e.URL = e.srv.URL + "/metrics"
	e.Addr = e.srv.Listener.Addr().String()
	return e
}

// Set replaces the exported values.
func (e *Exporter) Set(v Values) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v.Status == "" {
		v.Status = "active"
	}
	if v.Router == "" {
		v.Router = "sg-0:8080"
	}
	for _, g := range e.gauges {
		g.Reset()
	}
	m := v.Model
	set := func(name string, val float64, labels ...string) {
		e.gauges[name].WithLabelValues(labels...).Set(val)
	}
	set("model_last_mean_input_tps", v.LastMeanInputTPS, m)
	set("model_output_tps", v.OutputTPS, m)
	set("model_max_output_tps", v.MaxOutputTPS, m)
	set("model_queue_size", v.QueueSize, m)
	set("model_queued_input_tokens", v.QueuedInputTokens, m)
	set("model_kv_cache_capacity_tokens", v.KVCapacity, m)
	set("model_kv_cache_used_tokens", v.KVUsed, m)
	set("model_kv_cache_free_tokens", v.KVFree, m)
	for _, st := range []string{"active", "inactive", "unknown"} {
		val := 0.0
		if st == v.Status {
			val = 1
		}
		set("model_advertised_status", val, v.Router, m, st)
	}
	conn := 1.0
	if v.Disconnected {
		conn = 0
	}
	set("registration_stream_connected", conn, v.Router)
	if v.Tunnel != nil {
		set("reverse_tunnel_connected", *v.Tunnel, v.Router)
	}
	set("requests_inflight", v.Inflight, m)
	set("requests_state", v.InputProcessing, m, "input_processing")
	set("requests_state", v.OutputGeneration, m, "output_generation")
	for st, tok := range v.StateTokens {
		set("requests_state_input_tokens", tok, m, st)
	}
}

// Serve makes the endpoint answer with fn instead of the metrics while
// fn returns true (nil restores the metrics).
func (e *Exporter) Serve(fn func(http.ResponseWriter) bool) {
	e.mu.Lock()
	e.override = fn
	e.mu.Unlock()
}
