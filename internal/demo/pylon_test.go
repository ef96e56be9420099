package demo

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/lcctl/lcctl/internal/live"
)

// TestPylonsServePylonPages: each demo server's page is a Pylon page
// lcctl snapshot reads back with the cluster's load.
func TestPylonsServePylonPages(t *testing.T) {
	p, err := StartPylons()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close(context.Background()) }()
	if len(p.Flags()) != 2*len(DemoPylonLoads) {
		t.Fatalf("flags %v", p.Flags())
	}
	for cl, load := range DemoPylonLoads {
		resp, err := http.Get(p.URLs[cl])
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		b, err := live.ParsePylonPage(live.PylonTarget{Cluster: cl, URL: p.URLs[cl]}, page, resp.Header.Get("Content-Type"), LiveModel, "")
		if err != nil {
			t.Fatalf("%s: %v\n%s", cl, err, page)
		}
		got := map[string]float64{}
		for _, s := range b.Samples {
			got[s.Metric] = s.Value
		}
		if got["pylon_model_queued_input_tokens"] != load.QueuedInputTokens || got["pylon_model_last_mean_input_tps"] != load.LastMeanInputTPS ||
			got["pylon_model_kv_cache_free_tokens"] != load.KVFree || got["pylon_requests_inflight"] != load.Inflight {
			t.Errorf("%s: %v, want %+v", cl, got, load)
		}
	}
}
