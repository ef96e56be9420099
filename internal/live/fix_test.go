package live_test

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/live/livetest"
)

const secret = "s3cr3tPW"

func withCreds(u string) string { return strings.Replace(u, "http://", "http://admin:"+secret+"@", 1) }

func noSecret(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, secret) {
		t.Errorf("%s shows the password:\n%s", what, s)
	}
}

// TestCredentialsAreRedacted: a password in a --pylon or --prometheus URL
// appears nowhere: not in the YAML comments, the JSON provenance, nor any
// error.
func TestCredentialsAreRedacted(t *testing.T) {
	e := livetest.Start(t, values(1000, 1, 10))
	s, err := live.Build(context.Background(), live.Options{Model: model, Pylons: []live.PylonTarget{{Cluster: "a", URL: withCreds(e.URL)}}, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var y, j bytes.Buffer
	if err := live.WriteYAML(&y, s); err != nil {
		t.Fatal(err)
	}
	if err := live.WriteJSON(&j, s); err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the YAML", y.String())
	noSecret(t, "the JSON", j.String())
	if !strings.Contains(j.String(), "xxxxx@") {
		t.Errorf("the JSON does not name the backend with its password redacted:\n%s", j.String())
	}
	if _, err := live.ParsePylonFlag("a=ftp://admin:" + secret + "@127.0.0.1/x"); err == nil {
		t.Error("ftp URL accepted")
	} else {
		noSecret(t, "the --pylon flag error", err.Error())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	_, err = live.Build(context.Background(), live.Options{Model: model, Pylons: []live.PylonTarget{{Cluster: "a", URL: "http://admin:" + secret + "@" + addr + "/metrics"}}, Timeout: 2 * time.Second})
	expectErr(t, err, false, "--pylon http://admin:xxxxx@"+addr)
	noSecret(t, "the unreachable --pylon error", err.Error())
	_, err = live.Build(context.Background(), live.Options{Model: model, Pylons: []live.PylonTarget{{Cluster: "a", URL: withCreds(e.URL)}, {Cluster: "b", URL: withCreds(e.URL)}}, Timeout: 2 * time.Second})
	expectErr(t, err, true, "also given")
	noSecret(t, "the duplicate --pylon error", err.Error())
	_, err = live.Build(context.Background(), live.Options{Model: model, Timeout: 2 * time.Second,
		Prometheus: live.Prometheus{URL: "http://admin:" + secret + "@" + addr, ClusterLabel: "cluster"}})
	expectErr(t, err, false, "--prometheus http://admin:xxxxx@"+addr)
	noSecret(t, "the unreachable --prometheus error", err.Error())
	_, err = live.Build(context.Background(), live.Options{Model: model, Timeout: 2 * time.Second,
		Prometheus: live.Prometheus{URL: "http://admin:" + secret + "@" + addr}})
	expectErr(t, err, true, "--cluster-label")
	noSecret(t, "the --cluster-label error", err.Error())
}

// TestPrometheusBackendErrorNamesPrometheus: an error about a backend
// read through Prometheus names --prometheus, never --pylon.
func TestPrometheusBackendErrorNamesPrometheus(t *testing.T) {
	at := time.Unix(1796242500, 0).UTC()
	u := fakeProm(t, "1796242500", pylonSeries("bad\x01id", "i1"), nil)
	_, err := live.Build(context.Background(), live.Options{Model: model, At: at, Now: func() time.Time { return at },
		Prometheus: live.Prometheus{URL: u, ClusterLabel: "cluster"}})
	expectErr(t, err, true, "--prometheus "+u, "cluster_id")
	if err != nil && strings.Contains(err.Error(), "--pylon") {
		t.Errorf("error %q names --pylon, which was not given", err)
	}
}

// TestPrometheusUnusableSampleTime: a NaN or infinite timestamp() answer
// is refused as unusable input naming the source, cluster and field.
func TestPrometheusUnusableSampleTime(t *testing.T) {
	at := time.Unix(1796242500, 0).UTC()
	for _, ts := range []string{"NaN", "+Inf", "-Inf"} {
		u := fakeProm(t, ts, pylonSeries("cluster-a", "i1"), nil)
		_, err := live.Build(context.Background(), live.Options{Model: model, At: at, Now: func() time.Time { return at },
			Prometheus: live.Prometheus{URL: u, ClusterLabel: "cluster"}})
		expectErr(t, err, true, "--prometheus "+u, "cluster cluster-a", "sample time", "not a usable Unix time")
	}
}

// TestTwoSeriesOfOneGaugeAreRefused: one backend with two series of one
// gauge for the model (other labels) is refused naming the metric, the
// cluster and both label sets; two backends of a cluster are summed.
func TestTwoSeriesOfOneGaugeAreRefused(t *testing.T) {
	page := "pylon_model_queue_size{model=\"company/model\"} 2\npylon_model_queue_size{model=\"company/model\",x=\"y\"} 1\npylon_model_last_mean_input_tps{model=\"company/model\"} 5\n"
	_, err := live.ParsePylonPage(live.PylonTarget{Cluster: "cluster-a", URL: "http://127.0.0.1:1/metrics"}, []byte(page), "text/plain; version=0.0.4", model, "")
	expectErr(t, err, true, "cluster cluster-a", "pylon_model_queue_size", `{model="company/model"}`, `{model="company/model",x="y"}`)

	at := time.Unix(1796242500, 0).UTC()
	series := pylonSeries("cluster-a", "i1")
	series = append(series, fakeSeries{labels: map[string]string{"__name__": "pylon_model_queue_size", "model": model, "cluster": "cluster-a", "instance": "i1", "x": "y"}, value: "1"})
	u := fakeProm(t, "1796242500", series, nil)
	_, err = live.Build(context.Background(), live.Options{Model: model, At: at, Now: func() time.Time { return at },
		Prometheus: live.Prometheus{URL: u, ClusterLabel: "cluster"}})
	expectErr(t, err, true, "--prometheus", "cluster cluster-a", "pylon_model_queue_size", `{model="company/model",x="y"}`)

	two := append(pylonSeries("cluster-a", "i1"), pylonSeries("cluster-a", "i2")...)
	u = fakeProm(t, "1796242500", two, nil)
	s, err := live.Build(context.Background(), live.Options{Model: model, At: at, Now: func() time.Time { return at },
		Prometheus: live.Prometheus{URL: u, ClusterLabel: "cluster"}})
	if err != nil {
		t.Fatalf("two backends of one cluster: %v", err)
	}
	if got := s.Clusters[0].Get("queue_size").Uint; got != 2 {
		t.Errorf("two backends' queue_size summed to %v, want 2", got)
	}
}

// TestSpanRepeatedKeyAndFutureStart: an attribute key given twice is an
// error naming it; a span starting in the future is refused, not given a
// negative age.
func TestSpanRepeatedKeyAndFutureStart(t *testing.T) {
	otlp := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"01","name":"proxy_openai_request","startTimeUnixNano":"1796242500000000000",` +
		`"attributes":[{"key":"request_id","value":{"stringValue":"r"}},{"key":"selected_inst.queue_size","value":{"intValue":"1"}},{"key":"selected_inst.queue_size","value":{"intValue":"9"}}]}]}]}]}`
	_, err := live.ReadSpan("s.json", []byte(otlp), "r")
	expectErr(t, err, true, "s.json:1", `attribute "selected_inst.queue_size" is given twice`)
	jaeger := `{"data":[{"spans":[{"traceID":"ab","spanID":"01","operationName":"proxy_openai_request","startTime":1,"tags":[{"key":"request_id","value":"r"},{"key":"request_id","value":"q"}]}]}]}`
	_, err = live.ReadSpan("s.json", []byte(jaeger), "r")
	expectErr(t, err, true, `tag "request_id" is given twice`)

	e := livetest.Start(t, values(1000, 1, 10))
	sp := &live.Span{File: "s.json", RequestID: "r", Start: time.Now().Add(time.Hour), Attrs: map[string]string{"selected_cluster.id": "a", "selected_inst.queue_size": "1"}}
	_, err = live.Build(context.Background(), live.Options{Model: model, Span: sp, Pylons: []live.PylonTarget{{Cluster: "a", URL: e.URL}}, Timeout: 2 * time.Second})
	expectErr(t, err, true, "--span s.json", "in the future")
}
