package live_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/live/livetest"
)

func readFixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/spans.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReadSpanCollectorFileExport(t *testing.T) {
	data := readFixture(t)
	for _, tc := range []struct {
		id, cluster, rank, state, by string
	}{
		{"req-2", "cluster-b", "1", "returning", "event request_id"},
		{"req-1", "cluster-a", "2", "new", "event request_id"},
		{"4BF92F3577B34DA6A3CE929D0E0E4736", "cluster-a", "2", "new", "trace id"},
	} {
		s, err := live.ReadSpan("spans.jsonl", data, tc.id)
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if s.Cluster() != tc.cluster || s.Attrs["routing.rank_depth"] != tc.rank || s.SessionState != tc.state || s.MatchedBy != tc.by {
			t.Errorf("%s: cluster %q rank %q state %q by %q", tc.id, s.Cluster(), s.Attrs["routing.rank_depth"], s.SessionState, s.MatchedBy)
		}
		if s.Attrs["selected_inst.rtt_ms"] != "6.25" || s.Attrs["selected_inst.queue_size"] != "4" {
			t.Errorf("%s: attrs %v", tc.id, s.Attrs)
		}
	}
}

func TestReadSpanOtherShapes(t *testing.T) {
	tempo := `{"batches":[{"instrumentationLibrarySpans":[{"spans":[{"traceId":"ab","name":"proxy_openai_request","startTimeUnixNano":1,
	  "attributes":[{"key":"http.request.header.x-request-id","value":{"arrayValue":{"values":[{"stringValue":"r-9"}]}}},
	  {"key":"selected_cluster.id","value":{"stringValue":"c"}},{"key":"routing.rank_depth","value":{"intValue":3}},
	  {"key":"routing.session_state","value":{"stringValue":"stale"}}]}]}]}]}`
	s, err := live.ReadSpan("tempo.json", []byte(tempo), "r-9")
	if err != nil || s.Cluster() != "c" || s.Attrs["routing.rank_depth"] != "3" || s.SessionState != "stale" || s.MatchedBy != "attribute http.request.header.x-request-id" {
		t.Fatalf("tempo: %+v, %v", s, err)
	}
	jaeger := `{"data":[{"traceID":"cd","spans":[{"traceID":"cd","spanID":"01","operationName":"proxy_openai_request","startTime":1796242500000000,
	  "tags":[{"key":"selected_cluster.id","type":"string","value":"b"},{"key":"routing.rank_depth","type":"int64","value":1},
	  {"key":"request.cache_affinity_key_present","type":"bool","value":true}],
	  "logs":[{"timestamp":1,"fields":[{"key":"event","value":"routing session classified"},{"key":"request_id","value":"r-1"},{"key":"session_state","value":"new"}]}]}]}]}`
	s, err = live.ReadSpan("jaeger.json", []byte(jaeger), "r-1")
	if err != nil || s.Cluster() != "b" || s.SessionState != "new" || !s.Start.Equal(time.UnixMicro(1796242500000000)) {
		t.Fatalf("jaeger: %+v, %v", s, err)
	}
}

func TestReadSpanBadInput(t *testing.T) {
	data := readFixture(t)
	for _, tc := range []struct{ in, id, want string }{
		{string(data), "req-404", `no proxy_openai_request span for request "req-404" (3 spans, 2 named proxy_openai_request)`},
		{string(data), "", "--request-id is required"},
		{"", "r", "empty file"},
		{"{\"resourceSpans\": 5}\n", "r", "--span s.json:1: not an OTLP/JSON span export"},
		{"{}\n{oops\n", "r", "--span s.json:2: not JSON"},
		{`{"hello": "world"}`, "r", "no spans found"},
	} {
		_, err := live.ReadSpan("s.json", []byte(tc.in), tc.id)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: got %v, want %q", tc.in, err, tc.want)
		}
		expectErr(t, err, true)
	}
}

func TestSpanValuesWinForTheChosenCluster(t *testing.T) {
	a, b := livetest.Start(t, values(10000, 3, 6000)), livetest.Start(t, values(8000, 0, 0))
	sp, err := live.ReadSpan("spans.jsonl", readFixture(t), "req-2")
	if err != nil {
		t.Fatal(err)
	}
	s, err := live.Build(context.Background(), live.Options{Model: model, Span: sp, Overlay: overlay(t, "clusters:\n  cluster-b: {rtt_ms: 99}\n"),
		Pylons: []live.PylonTarget{{Cluster: "cluster-a", URL: a.URL}, {Cluster: "cluster-b", URL: b.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	cb := s.Cluster("cluster-b")
	for name, want := range map[string]float64{"rtt_ms": 6.25, "queue_size": 4, "queued_input_size": 9000, "last_mean_input_tps": 10000, "max_engine_concurrency": 0} {
		f := cb.Get(name)
		got := f.Float
		if f.Kind == live.KindUint {
			got = float64(f.Uint)
		}
		if f.Origin != live.OriginSpan || got != want {
			t.Errorf("cluster-b %s: %v (%s), want %v from the span", name, got, f.Origin, want)
		}
	}
	if f := s.Cluster("cluster-a").Get("queue_size"); f.Origin != live.OriginMetric || f.Uint != 3 {
		t.Errorf("cluster-a queue_size %d (%s): the span is only about the chosen cluster", f.Uint, f.Origin)
	}
	if !hasWarning(s, "the span of request req-2 was recorded at") {
		t.Errorf("no warning about the span's distance from the instant: %q", s.Warnings)
	}
	roundTrip(t, s)

	sp1, _ := live.ReadSpan("spans.jsonl", readFixture(t), "req-1")
	c := livetest.Start(t, values(1, 0, 0))
	_, err = live.Build(context.Background(), live.Options{Model: model, Span: sp1, Pylons: []live.PylonTarget{{Cluster: "cluster-c", URL: c.URL}}})
	expectErr(t, err, true, "cluster cluster-a", "selected_cluster.id", "not among the live sources' clusters (cluster-c)")
}
