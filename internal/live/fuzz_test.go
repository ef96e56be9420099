package live_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/live"
)

// FuzzReadSpan: the span reader never panics, and a span it returns
// matched the request id.
func FuzzReadSpan(f *testing.F) {
	if data, err := os.ReadFile("testdata/spans.otlp.jsonl"); err == nil {
		f.Add(data, "req-2")
	}
	f.Add([]byte(`{"batches":[{"scopeSpans":[{"spans":[{"name":"proxy_openai_request","attributes":[{"key":"request_id","value":{"intValue":7}}]}]}]}]}`), "7")
	f.Add([]byte(`{"data":[{"spans":[{"operationName":"proxy_openai_request","tags":[{"key":"request.id","value":"x"}]}]}]}`), "x")
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		s, err := live.ReadSpan("f.json", data, id)
		if err == nil && s.MatchedBy == "" {
			t.Fatalf("a span was returned without a match")
		}
	})
}

// FuzzDecodeOverlay: the overlay decoder never panics and errors carry a
// position or say the file is empty or too large.
func FuzzDecodeOverlay(f *testing.F) {
	f.Add([]byte("clusters:\n  a: {rtt_ms: 5, max_input_tps: 1e4, max_engine_concurrency: 64, status: active}\n"))
	f.Add([]byte("clusters: {a: {status: up}}"))
	f.Add([]byte("{\"clusters\": {\"a\": {\"rtt_ms\": 0x10}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := live.DecodeOverlay("o.yaml", data)
		if err == nil && o == nil {
			t.Fatal("nil overlay without an error")
		}
	})
}

// FuzzPylonPage: any page the snapshot builder accepts yields a snapshot
// that `explain --snapshot` decodes (YAML and JSON); nothing panics.
func FuzzPylonPage(f *testing.F) {
	f.Add([]byte("# TYPE pylon_model_queue_size gauge\npylon_model_queue_size{model=\"m\"} 3\npylon_model_advertised_status{router=\"r\",model=\"m\",status=\"active\"} 1\n"))
	f.Add([]byte("pylon_model_last_mean_input_tps{model=\"m\"} NaN\n"))
	f.Add([]byte("pylon_requests_state_input_tokens{model=\"m\",state=\"queued\"} 1e300\npylon_model_kv_cache_free_tokens{model=\"m\"} 12\n# EOF\n"))
	t0 := live.PylonTarget{Cluster: "cluster \"a\": #x", URL: "http://127.0.0.1:1/metrics"}
	f.Fuzz(func(t *testing.T, page []byte) {
		if _, err := live.ParsePylonPage(t0, page, "", "m", ""); err != nil {
			return
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil // no sniffing: the page is parsed as ParsePylonPage parsed it
			_, _ = w.Write(page)
		}))
		defer srv.Close()
		s, err := live.Build(context.Background(), live.Options{Model: "m", Pylons: []live.PylonTarget{{Cluster: t0.Cluster, URL: srv.URL + "/metrics"}}})
		if err != nil {
			t.Fatalf("ParsePylonPage accepted the page, Build refused it: %v", err)
		}
		var y, j bytes.Buffer
		_ = live.WriteYAML(&y, s)
		if _, err := formats.DecodeSnapshot("s.yaml", y.Bytes()); err != nil {
			t.Fatalf("invalid snapshot YAML: %v\n%s", err, y.String())
		}
		_ = live.WriteJSON(&j, s)
		if _, err := formats.DecodeSnapshot("s.json", j.Bytes()); err != nil {
			t.Fatalf("invalid snapshot JSON: %v\n%s", err, j.String())
		}
	})
}
