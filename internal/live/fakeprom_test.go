package live_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeSeries is one series a fakeProm answers with.
type fakeSeries struct {
	labels map[string]string
	value  string
}

// fakeProm serves Prometheus's /api/v1/query from a fixed series list:
// a timestamp(...) query answers each series with ts (a JSON number or
// string, e.g. "NaN"), any other query with the series whose __name__
// the query names. body, when set, replaces every answer (an error
// page).
func fakeProm(t *testing.T, ts string, series []fakeSeries, body func(w http.ResponseWriter)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body != nil {
			body(w)
			return
		}
		_ = r.ParseForm()
		q := r.Form.Get("query")
		var res []string
		for _, s := range series {
			name := s.labels["__name__"]
			for _, p := range []string{"pylon_model_", "pylon_requests_", "pylon_"} {
				name = strings.TrimPrefix(name, p)
			}
			if !strings.Contains(q, name) {
				continue
			}
			m, _ := json.Marshal(s.labels)
			if strings.HasPrefix(q, "timestamp(") {
				res = append(res, fmt.Sprintf(`{"metric":%s,"value":[1796242500,%q]}`, m, ts))
				continue
			}
			res = append(res, fmt.Sprintf(`{"metric":%s,"value":[1796242500,%q]}`, m, s.value))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[%s]}}`, strings.Join(res, ","))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// pylonSeries are the gauges of one backend for the fake Prometheus.
func pylonSeries(cluster, instance string) []fakeSeries {
	var out []fakeSeries
	for _, g := range []string{"last_mean_input_tps", "output_tps", "max_output_tps", "queue_size", "queued_input_tokens",
		"kv_cache_capacity_tokens", "kv_cache_used_tokens", "kv_cache_free_tokens"} {
		out = append(out, fakeSeries{labels: map[string]string{"__name__": "pylon_model_" + g, "model": model, "cluster": cluster, "instance": instance}, value: "1"})
	}
	return out
}
