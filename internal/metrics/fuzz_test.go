package metrics

import (
	"bytes"
	"errors"
	"io"
	"reflect"

	"encoding/json"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes through detection, both parsers and the
// extraction and report code: nothing may panic, every error must be a
// *ParseError, and every reported quantile and ratio must be finite.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data, "")
		}
	}
	f.Add([]byte("a_total 1\n# EOF\n"), "application/openmetrics-text; version=1.0.0")
	f.Add([]byte("\x00\x01"), "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited")
	f.Fuzz(func(t *testing.T, data []byte, contentType string) {
		if len(data) > 1<<12 {
			return
		}
		keep := append(append([]string(nil), GatewayFamilies...), StargateFamilies("")...)
		s, err := Parse("fuzz", data, contentType, keep...)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		g := ExtractGateway(s)
		gr := BuildGatewayReport("fuzz", Totals, g)
		for _, p := range []*float64{gr.HitRatio, gr.FailureRatio, gr.SkippedRatio, gr.WriteErrorRatio, gr.Latency.P50, gr.Latency.P90, gr.Latency.P99} {
			if p != nil && (*p != *p) {
				t.Fatalf("NaN in gateway report %+v", gr)
			}
		}
		if _, err := json.Marshal(gr); err != nil {
			t.Fatalf("gateway report does not encode: %v", err)
		}
		_ = GatewayVerdicts(gr, VerdictOptions{Stage: 3})
		st := ExtractStargate(s, "")
		sr := BuildStargateReport("fuzz", Totals, st.Since(st), "")
		_ = StargateSessionVerdicts(sr, nil, VerdictOptions{Stage: 3})
		_ = StargateFlagOffVerdict(sr)
		if _, err := json.Marshal(sr); err != nil {
			t.Fatalf("Stargate report does not encode: %v", err)
		}
	})
}

// FuzzOpenMetricsAgreesWithExpfmt is a differential test of the
// OpenMetrics rewrite: whenever expfmt's own (grammar-based) OpenMetrics
// parser accepts the reduced input, lcctl's path must accept it too and
// extract the same gateway and Stargate series. lcctl may accept more
// (it is lenient about HELP text, UNIT and other families).
func FuzzOpenMetricsAgreesWithExpfmt(f *testing.F) {
	for _, name := range []string{"gateway-healthy.om", "stargate-healthy.om", "gateway-malformed.om"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("# TYPE llm_api_gateway_last_cluster_lookups counter\nllm_api_gateway_last_cluster_lookups_total{result=\"hit\"} 1 # {a=\"b\"} 1\n# EOF\n"))
	for _, seed := range []string{
		"# TYPE llm_api_gateway_last_cluster_lookup_duration_seconds histogram\nllm_api_gateway_last_cluster_lookup_duration_seconds_bucket{result=\"hit\",le=\"0.01\"} 2\nllm_api_gateway_last_cluster_lookup_duration_seconds_bucket{result=\"hit\",le=\"+Inf\"} 3\nllm_api_gateway_last_cluster_lookup_duration_seconds_count{result=\"hit\"} 3\nllm_api_gateway_last_cluster_lookup_duration_seconds_sum{result=\"hit\"} 0.1\nllm_api_gateway_last_cluster_lookup_duration_seconds_created{result=\"hit\"} 1\n# EOF\n",
		"llm_api_gateway_last_cluster_writes_total{result=\"ok\"} NaN\nllm_api_gateway_last_cluster_writes_total{result=\"error\"} -1 123\n# EOF\n",
		"# TYPE llm_api_gateway_last_cluster_writes_total gauge\nllm_api_gateway_last_cluster_writes_total{result=\"o\\\\k\\n\"} 1e3\n# EOF\n",
		"# TYPE stargate_routing_session_selections counter\nstargate_routing_session_selections_total{model=\"m\",session_state=\"new\",selection=\"primary\"} 5\nstargate_routing_session_selections_total{model=\"m\",session_state=\"new\",selection=\"primary\",routing_key=\"\"} 2\n# EOF\n",
		"# TYPE llm_api_gateway_last_cluster_lookups counter\nllm_api_gateway_last_cluster_lookups_total{result=\"hit\"} 1\nllm_api_gateway_last_cluster_lookups_total{result=\"hit\"} 2\n# EOF\n",
	} {
		f.Add([]byte(seed))
	}
	keep := append(append([]string(nil), GatewayFamilies...), StargateFamilies("")...)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			return
		}
		reduced, _ := reduceOpenMetrics(data, keep)
		ref := &Scrape{Families: map[string]*dto.MetricFamily{}}
		dec := expfmt.NewDecoder(bytes.NewReader(reduced), expfmt.FmtOpenMetrics_1_0_0)
		for {
			mf := &dto.MetricFamily{}
			err := dec.Decode(mf)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return // expfmt rejects it: lcctl may do either
			}
			if prev, ok := ref.Families[mf.GetName()]; ok {
				prev.Metric = append(prev.Metric, mf.Metric...)
			} else {
				ref.Families[mf.GetName()] = mf
			}
		}
		got, err := Parse("fuzz", data, "application/openmetrics-text; version=1.0.0", keep...)
		if err != nil {
			if checkDuplicateSeries("fuzz", ref.Families, keep) != nil {
				return // two samples of one series: lcctl refuses on purpose
			}
			t.Fatalf("expfmt accepts, lcctl rejects: %v\n%q", err, reduced)
		}
		if a, b := ExtractGateway(ref), ExtractGateway(got); !reflect.DeepEqual(a, b) {
			t.Fatalf("gateway series differ:\nexpfmt %+v\nlcctl  %+v\n%q", a, b, reduced)
		}
		if a, b := ExtractStargate(ref, ""), ExtractStargate(got, ""); !reflect.DeepEqual(a, b) {
			t.Fatalf("Stargate series differ:\nexpfmt %+v\nlcctl  %+v\n%q", a, b, reduced)
		}
	})
}
