package metrics

import (
	"fmt"
	"strings"
	"testing"
)

// modelsScrape is a Stargate scrape with one returning-primary session
// selection series for each of n distinct models.
func modelsScrape(n int) []byte {
	var b strings.Builder
	b.WriteString("# TYPE stargate_routing_session_selections_total counter\n")
	for i := range n {
		fmt.Fprintf(&b, `stargate_routing_session_selections_total{algorithm="pulsar-wait-and-widen",model="org/model-%06d",routing_key="fn-a",selection="primary",session_state="returning"} %d`+"\n", i, i+1)
	}
	return []byte(b.String())
}

// BenchmarkStargateModels runs what `lcctl check metrics --stargate` does
// with a scrape before printing (parse, extract, report, per-model
// verdicts) for 2,000, 20,000 and 200,000 distinct models: linear (200,000
// took 97 s, a linear search per model; target for the whole command
// ≤ 5 s, BenchmarkCheckMetricsModels in internal/cli). docs/performance.md
// records the numbers.
func BenchmarkStargateModels(b *testing.B) {
	for _, n := range []int{2000, 20000, 200000} {
		data := modelsScrape(n)
		b.Run(fmt.Sprintf("%d-models", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				s, err := Parse("bench", data, "", StargateFamilies("")...)
				if err != nil {
					b.Fatal(err)
				}
				r := BuildStargateReport("bench", Totals, ExtractStargate(s, ""), "")
				if v := StargateSessionVerdicts(r, nil, VerdictOptions{}); len(v) < n {
					b.Fatalf("%d verdicts for %d models", len(v), n)
				}
			}
		})
	}
}
