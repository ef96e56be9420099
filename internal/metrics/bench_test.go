package metrics

import (
	"fmt"
	"strings"
	"testing"
)

// stargateScrape builds a Stargate-like scrape: series session selection
// series (6 per routing key) plus the same number of unrelated request
// series, in text or OpenMetrics form.
func stargateScrape(series int, openMetrics bool) []byte {
	var b strings.Builder
	name := "stargate_routing_session_selections_total"
	typ := name
	if openMetrics {
		typ = strings.TrimSuffix(name, "_total")
	}
	fmt.Fprintf(&b, "# HELP %s Cluster choices for requests classified by last_cluster_affinity.\n# TYPE %s counter\n", typ, typ)
	states := []string{"new", "returning", "stale"}
	sels := []string{"primary", "fallback"}
	for i := 0; i < series; i++ {
		fmt.Fprintf(&b, `%s{algorithm="pulsar-wait-and-widen",model="nvidia/llama-3.3-nemotron-super-49b-v1.5",routing_key="0f1e2d3c-4b5a-6978-8796-%012d",selection="%s",session_state="%s"} %d`+"\n",
			name, i/6, sels[i%2], states[(i/2)%3], i*7)
	}
	other := "stargate_requests_total"
	if openMetrics {
		fmt.Fprintf(&b, "# TYPE stargate_requests counter\n")
	} else {
		fmt.Fprintf(&b, "# TYPE %s counter\n", other)
	}
	for i := 0; i < series; i++ {
		fmt.Fprintf(&b, `%s{inference_server_id="cluster-%d",model="m",routing_key="rk-%d",status="200"} %d`+"\n", other, i%8, i, i)
	}
	if openMetrics {
		b.WriteString("# EOF\n")
	}
	return []byte(b.String())
}

func benchmarkParse(b *testing.B, series int, om bool) {
	data := stargateScrape(series, om)
	keep := StargateFamilies("")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Parse("bench", data, "", keep...)
		if err != nil {
			b.Fatal(err)
		}
		if st := ExtractStargate(s, ""); len(st.Selections) != series {
			b.Fatalf("%d series, want %d", len(st.Selections), series)
		}
	}
}

// BenchmarkParseText: 1,200 session selection series (200 routing keys)
// plus 1,200 other series in the Prometheus text format.
func BenchmarkParseText(b *testing.B) { benchmarkParse(b, 1200, false) }

// BenchmarkParseOpenMetrics: the same scrape in OpenMetrics 1.0.
func BenchmarkParseOpenMetrics(b *testing.B) { benchmarkParse(b, 1200, true) }
