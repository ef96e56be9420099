package metrics

import (
	"encoding/json"
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
