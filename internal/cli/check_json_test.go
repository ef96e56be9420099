package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/testutil"
)

// TestWriteMetricsJSONIsWriteJSON checks that the streamed check metrics
// document is byte for byte what writeJSON writes for the same report:
// the report of every internal/metrics fixture (gateway and Stargate,
// healthy, malformed, empty, OpenMetrics), of a mixed scrape (several
// algorithms and routing keys per model, unknown states and
// selections, model names that need escaping) with and without --model,
// and hand-made reports with nil and empty lists and nil groups.
func TestWriteMetricsJSONIsWriteJSON(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(t), "internal", "metrics", "testdata")
	fixtures, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	var runs []*checkMetricsOptions
	for _, f := range fixtures {
		if strings.HasPrefix(filepath.Base(f), "gateway") {
			runs = append(runs, &checkMetricsOptions{Gateway: f})
		} else {
			runs = append(runs, &checkMetricsOptions{Stargate: f})
		}
	}
	mixed := filepath.Join(t.TempDir(), "mixed.prom")
	var b strings.Builder
	b.WriteString("# TYPE stargate_routing_session_selections_total counter\n")
	algs := []string{"pulsar-wait-and-widen", "wait-and-widen", "pulsar"}
	states := []string{"new", "returning", "stale", "odd"}
	sels := []string{"primary", "fallback", "other"}
	for i := range 60 {
		model := fmt.Sprintf("org/m-%02d <&> \\\"q\\\" \u2028", i) // the label text: \" is a quote
		for a := range 1 + i%3 {
			for k := range 1 + i%4 {
				st, sel := states[(i+k)%len(states)], sels[(i+a)%len(sels)]
				fmt.Fprintf(&b, "stargate_routing_session_selections_total{algorithm=%q,model=\"%s\",routing_key=\"rk-%d\",selection=%q,session_state=%q,pod=\"p\"} %d\n",
					algs[a], model, k, sel, st, (i*7+k)%50)
			}
		}
	}
	if err := os.WriteFile(mixed, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	runs = append(runs, &checkMetricsOptions{Stargate: mixed},
		&checkMetricsOptions{Stargate: mixed, Model: `org/m-07 <&> "q" ` + "\u2028"},
		&checkMetricsOptions{Stargate: mixed, Gateway: filepath.Join(dir, "gateway-healthy.prom")})
	var reports []*MetricsReport
	for _, o := range runs {
		o.StargatePrefix, o.Timeout, o.LookupTimeout = metrics.DefaultStargatePrefix, metrics.DefaultTimeout, metrics.DefaultLookupTimeout
		env, _, _ := testEnv("", OutputJSON)
		if err := o.validate(env); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		run, err := scrapeMetricsRun(context.Background(), env, o)
		if err != nil {
			t.Logf("%s%s: %v (not a report)", o.Stargate, o.Gateway, err)
			continue
		}
		reports = append(reports, &run.report)
	}
	if len(reports) != len(runs)-3 { // the three malformed fixtures
		t.Fatalf("only %d reports of %d runs", len(reports), len(runs))
	}
	reports = append(reports,
		&MetricsReport{Schema: SchemaID("metrics"), Window: metrics.Totals},
		&MetricsReport{Schema: SchemaID("metrics"), Window: metrics.Totals, Errors: []string{"x"},
			Stargate: &metrics.StargateReport{Rows: []metrics.ModelSelections{}, Models: nil, ModelsInScrape: []string{`"rows":null`}},
			Verdicts: checks.JSONReport{Schema: checks.JSONSchema, Groups: []*checks.Group{nil, {Name: `"checks":null`}, {Name: "e", Checks: []checks.Result{}}}}})
	for i, r := range reports {
		var want, got bytes.Buffer
		if err := writeJSON(&want, "metrics", r); err != nil {
			t.Fatal(err)
		}
		if err := writeMetricsJSON(&got, r); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			n := 0
			for n < got.Len() && n < want.Len() && got.Bytes()[n] == want.Bytes()[n] {
				n++
			}
			t.Errorf("report %d: the streamed document differs from writeJSON's at byte %d of %d/%d:\n%s", i, n, got.Len(), want.Len(), got.Bytes()[max(0, n-200):min(got.Len(), n+100)])
		}
	}
}

// TestTopLevelValue: the member is found only at the top level, not
// inside a string or a nested object, and its value's end is found past
// nested values and strings with brackets and escaped quotes.
func TestTopLevelValue(t *testing.T) {
	obj := []byte(`{"a":{"k":1,"b":[1,{"k":2}]},"s":"\"k\":{,}","k":{"x":"}\\\"]"},"z":null}`)
	start, end, err := topLevelValue(obj, 0, "k")
	if err != nil || string(obj[start:end]) != `{"x":"}\\\"]"}` {
		t.Fatalf("k: %q %v", obj[start:end], err)
	}
	start, end, err = topLevelValue(obj, end, "z")
	if err != nil || string(obj[start:end]) != "null" {
		t.Fatalf("z: %q %v", obj[start:end], err)
	}
	if _, _, err := topLevelValue(obj, 0, "b"); err == nil {
		t.Error("a nested member was taken for a top-level one")
	}
}
