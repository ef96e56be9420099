package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/lcctl/lcctl/internal/sim"
)

func testDoc() *Document {
	on, off := true, false
	h := sim.NewHistogram()
	for i := int64(1); i <= 100; i++ {
		h.Add(i * 1e6)
	}
	mk := func(name string, lc *bool, returning, left int64) *sim.Result {
		return &sim.Result{
			Policy: name, Algorithm: "pulsar-wait-and-widen", LastClusterAffinity: lc,
			Requests: 1000, Completed: 990, Good: 980, Failed: 10,
			Failures:          sim.FailureCounts{Rejected: 7, Refused: 3},
			GoodputRPS:        9.8,
			TTFTMs:            sim.Quantiles{P50: 12.5, P90: 250, P99: 12345},
			QueueWaitMs:       sim.Quantiles{P99: 3},
			RouteWaitMs:       sim.Quantiles{P99: 300},
			KVReuse:           0.8512,
			ReturningRequests: returning, LeftLastCluster: left,
			LeftLastClusterShare: func() float64 {
				if returning == 0 {
					return 0
				}
				return float64(left) / float64(returning)
			}(),
			Clusters: []sim.ClusterResult{{ClusterID: "a", Utilization: 0.5}, {ClusterID: "b", Utilization: 0.25}},
			TTFT:     h,
			Series:   &sim.Series{BinNs: 1e9, Clusters: 2, Bins: []sim.SeriesBin{{InputTokens: 10, CachedTokens: 5}}, Load: []float64{0.5, 1}, LoadSamples: []int32{1}},
		}
	}
	return &Document{
		Scenario: ScenarioInfo{Name: "t", Seed: 3, SLOTTFTMs: 2000, DurationS: 10, Clusters: []string{"a", "b"}},
		Policies: []*sim.Result{mk("pulsar-wait-and-widen/lc-off", &off, 200, 20), mk("pulsar-wait-and-widen/lc-on", &on, 0, 0)},
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, testDoc(), nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"scenario t", "seed 3, TTFT SLO 2000 ms",
		"pulsar-wait-and-widen/lc-off", "9.80", "12.50", "250.0", "12345", "85.1%",
		"10.0% (200)", "10 (503: 7, refused: 3)", "50.0%", "25.0%",
		"failed: requests that did not complete, by cause in brackets: 503",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	lines := strings.Split(out, "\n")
	// The header and rows of the main table have the same width.
	var head, row string
	for i, l := range lines {
		if strings.HasPrefix(l, "policy ") {
			head, row = l, lines[i+1]
		}
	}
	if len(head) == 0 || len([]rune(head)) != len([]rune(row)) {
		t.Errorf("misaligned:\n%q\n%q", head, row)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "pulsar-wait-and-widen/lc-on ") {
			if !strings.Contains(l, " – ") {
				t.Errorf("no dash for a policy without hinted requests: %q", l)
			}
			break // the first such line is the comparison table's
		}
	}
}

// TestFailedCell: the failed column never puts two numbers side by side
// ("236 (236 503)" read as 236,503): one cause is "all", several are
// "cause: count".
func TestFailedCell(t *testing.T) {
	for _, c := range []struct {
		f    sim.FailureCounts
		want string
	}{
		{sim.FailureCounts{}, "0"},
		{sim.FailureCounts{Rejected: 236}, "236 (all 503)"},
		{sim.FailureCounts{Refused: 4}, "4 (all refused)"},
		{sim.FailureCounts{Rejected: 10, BadRequest: 1, Refused: 2, Stream: 3}, "16 (503: 10, 400: 1, refused: 2, stream: 3)"},
	} {
		r := &sim.Result{Failures: c.f, Failed: c.f.Rejected + c.f.BadRequest + c.f.Refused + c.f.Stream}
		if got := failed(r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}

// TestLabel: a policy from an lb-config shows the algorithm it resolves
// to and whether that came from `default`, in both tables.
func TestLabel(t *testing.T) {
	def := []sim.ModelRoute{{Model: "chat-model", Algorithm: "power-of-n", Entry: sim.EntryDefault}}
	own := []sim.ModelRoute{{Model: "m", Algorithm: "pulsar", Entry: sim.EntryModels}}
	for _, c := range []struct {
		r    sim.Result
		want string
	}{
		{sim.Result{Policy: "pulsar", Algorithm: "pulsar"}, "pulsar"},
		{sim.Result{Policy: "pwaw.json", Algorithm: "power-of-n", Models: def}, "pwaw.json (power-of-n via default)"},
		{sim.Result{Policy: "prod.json", Algorithm: "pulsar", Models: own}, "prod.json (pulsar)"},
		{sim.Result{Policy: "prod.json", Algorithm: "mixed", Models: append(own, def...)}, "prod.json (mixed, 1 of 2 models via default)"},
	} {
		if got := Label(&c.r); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	d := testDoc()
	d.Policies[0].Policy, d.Policies[0].Algorithm, d.Policies[0].Models = "pwaw.json", "power-of-n", def
	var b bytes.Buffer
	if err := WriteText(&b, d, nil); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\npwaw.json (power-of-n via default)  "); n != 2 {
		t.Errorf("label in %d tables, want 2:\n%s", n, b.String())
	}
}

// TestWindowNote: the text names the measurement window every figure
// covers, from the warm-up to the end of the runs, drain included.
func TestWindowNote(t *testing.T) {
	d := testDoc()
	d.Scenario.WarmupS = 2
	d.Policies[0].SimulatedS, d.Policies[0].MeasuredS = 14.2, 12.2
	d.Policies[1].SimulatedS, d.Policies[1].MeasuredS = 19.6, 17.6
	var b bytes.Buffer
	if err := WriteText(&b, d, nil); err != nil {
		t.Fatal(err)
	}
	want := "measured from the end of the warm-up (2 s) to the end of each run (14–20 s), the drain after sessions stop arriving (10 s) included"
	if !strings.Contains(b.String(), want) {
		t.Errorf("missing %q in\n%s", want, b.String())
	}
	if got := timeWindow(d); got != 19.6 {
		t.Errorf("time charts end at %v s, want the end of the longest run, 19.6 s", got)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, testDoc()); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Scenario ScenarioInfo `json:"scenario"`
		Policies []struct {
			Policy              string `json:"policy"`
			LastClusterAffinity *bool  `json:"last_cluster_affinity"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Scenario.Seed != 3 || len(back.Policies) != 2 || *back.Policies[1].LastClusterAffinity != true {
		t.Fatalf("%+v", back)
	}
	if bytes.Contains(b.Bytes(), []byte("counts")) || !bytes.HasSuffix(b.Bytes(), []byte("}\n")) {
		t.Fatal("histogram leaked into JSON or no final newline")
	}
}

// TestJSONKeysFromConstantsKeepTheirPlace: the keys written by
// MarshalJSON (the seed under sim.SeedKey, last_cluster_affinity under the
// registry's name) sit where their struct tags put them before, between
// the same neighbours, in compact and indented output.
func TestJSONKeysFromConstantsKeepTheirPlace(t *testing.T) {
	on := true
	info := ScenarioInfo{Name: "n", Description: "d<&>", Seed: 7, SLOTTFTMs: 2000, Clusters: []string{"a"}}
	res := sim.Result{Policy: "p", Algorithm: "pulsar", LastClusterAffinity: &on, Source: "s"}
	for _, c := range []struct {
		v    any
		want string
	}{
		{info, `{"name":"n","description":"d<&>","seed":7,"slo_ttft_ms":2000,"warmup_s":0,`},
		{ScenarioInfo{Name: "n"}, `{"name":"n","seed":0,"slo_ttft_ms":0,`},
		{res, `{"policy":"p","algorithm":"pulsar","last_cluster_affinity":true,"source":"s","models":null,`},
		{sim.Result{}, `{"policy":"","algorithm":"","last_cluster_affinity":null,"source":"",`},
	} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c.v); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), c.want) {
			t.Errorf("%T encodes as\n%s\nwant it to start with\n%s", c.v, b.String(), c.want)
		}
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, &Document{Scenario: info}); err != nil {
		t.Fatal(err)
	}
	if want := "\"description\": \"d\\u003c\\u0026\\u003e\",\n    \"seed\": 7,\n    \"slo_ttft_ms\": 2000,"; !strings.Contains(b.String(), want) {
		t.Errorf("indented document\n%s\nlacks\n%s", b.String(), want)
	}
}

func TestWritePlots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	files, err := WritePlots(dir, testDoc())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 8 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// A file in the way of the directory is an error, not a panic.
	bad := filepath.Join(t.TempDir(), "file")
	os.WriteFile(bad, nil, 0o644)
	if _, err := WritePlots(filepath.Join(bad, "sub"), testDoc()); err == nil {
		t.Fatal("no error for an unusable directory")
	}
}

func TestFlagEffects(t *testing.T) {
	on, off := true, false
	res := func(policy, alg, source string, lc *bool, left float64) *sim.Result {
		return &sim.Result{Policy: policy, Algorithm: alg, Source: source, LastClusterAffinity: lc, LeftLastClusterShare: left,
			KVReuse: 0.8, TTFTMs: sim.Quantiles{P99: 400.04}, GoodputRPS: 40}
	}
	doc := &Document{Policies: []*sim.Result{
		res("wait-and-widen/lc-off", "wait-and-widen", "comparison set", &off, 0.04),
		res("wait-and-widen/lc-on", "wait-and-widen", "comparison set", &on, 0.014),
		res("pulsar", "pulsar", "comparison set", &off, 0.05), // no partner
		res("consistent-hash", "consistent-hash", "comparison set", nil, 0),
		res("mine", "wait-and-widen", "mine.json", &on, 0.01), // other source, no partner
		res("pulsar-wait-and-widen/lc-on", "pulsar-wait-and-widen", "comparison set", &on, 0.014),
		res("pulsar-wait-and-widen/lc-off", "pulsar-wait-and-widen", "comparison set", &off, 0.058),
	}}
	got := FlagEffects(doc)
	if len(got) != 2 || got[0].Algorithm != "wait-and-widen" || got[1].Algorithm != "pulsar-wait-and-widen" {
		t.Fatalf("FlagEffects = %+v, want the wait-and-widen and pulsar-wait-and-widen pairs", got)
	}
	if got[1].Off.Policy != "pulsar-wait-and-widen/lc-off" || got[1].On.Policy != "pulsar-wait-and-widen/lc-on" {
		t.Fatalf("pair mixed up: off %s, on %s", got[1].Off.Policy, got[1].On.Policy)
	}
	want := "pulsar-wait-and-widen: left last cluster 5.8% → 1.4%, KV reuse 80.0% → 80.0%, TTFT p99 400.0 → 400.0 ms, goodput 40.00 → 40.00 r/s"
	if s := got[1].Summary(); s != want {
		t.Fatalf("Summary = %q, want %q", s, want)
	}
	// The text report ends with the same lines (lcctl simulate and lcctl
	// demo print them through WriteText).
	var b bytes.Buffer
	if err := WriteText(&b, doc, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "\nlast_cluster_affinity off → on:\n  "+got[0].Summary()+"\n  "+want+"\n") {
		t.Errorf("WriteText does not end with the off → on lines:\n%s", b.String())
	}
	// No pair, no block.
	b.Reset()
	if err := WriteText(&b, testDoc(), nil); err != nil || !strings.Contains(b.String(), "off → on") {
		t.Errorf("testDoc has an off/on pair but no block (%v):\n%s", err, b.String())
	}
	single := testDoc()
	single.Policies = single.Policies[:1]
	b.Reset()
	if err := WriteText(&b, single, nil); err != nil || strings.Contains(b.String(), "off → on") {
		t.Errorf("a block without a pair (%v):\n%s", err, b.String())
	}
}

// TestChartContents reads the SVG charts of a document with a --compare
// pair and a policy without hinted requests: every summary bar carries
// its value (0 as "0 %"), the pair's shades are explained, the load
// panels name their busiest cluster, and the KV reuse chart shows the
// pair's difference.
func TestChartContents(t *testing.T) {
	d := testDoc()
	d.Policies[1].LeftLastClusterShare = 0
	d.Policies[1].ReturningRequests = 5
	d.Policies[0].KVReuse, d.Policies[1].KVReuse = 0.80, 0.85
	// A longer series: bins of 1 s, cluster b busier than a.
	series := func(cached int64) *sim.Series {
		s := &sim.Series{BinNs: 1e9, Clusters: 2}
		for b := 0; b < 60; b++ {
			s.Bins = append(s.Bins, sim.SeriesBin{InputTokens: 100, CachedTokens: cached})
			s.Load = append(s.Load, 0.25, 0.75)
			s.LoadSamples = append(s.LoadSamples, 1)
		}
		return s
	}
	d.Policies[0].Series, d.Policies[1].Series = series(80), series(85)
	d.Policies[0].SimulatedS, d.Policies[1].SimulatedS = 60, 60
	d.Policies[0].Clusters[1].Utilization = 0.75
	d.Policies[1].Clusters[1].Utilization = 0.75
	dir := t.TempDir()
	if _, err := WritePlots(dir, d); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for chart, wants := range map[string][]string{
		ChartSummary:     {"80.0 %", "85.0 %", "10.0 %", ">0 %<", "9.80", "the same algorithm with last_cluster_affinity off"},
		ChartClusterLoad: {"busiest: b (75 % over the window)", "the other clusters, least to most busy"},
		ChartKVReuse:     {"pulsar-wait-and-widen: KV reuse with last_cluster_affinity off and on", "on − off: +5.0 points overall", "off: 80.0 % overall"},
	} {
		svg := read(chart)
		for _, w := range wants {
			if !strings.Contains(svg, w) {
				t.Errorf("%s.svg lacks %q", chart, w)
			}
		}
	}
}

func TestSmoothing(t *testing.T) {
	s := &sim.Series{BinNs: 2e9, Clusters: 1,
		Load: []float64{0, 2, 0, 4, 0}, LoadSamples: []int32{1, 2, 0, 4, 1},
		Bins: make([]sim.SeriesBin, 5)}
	if w := smoothBins(s, 6); w != 3 {
		t.Errorf("smoothBins(6 s over 2 s bins) = %d, want 3", w)
	}
	if w := smoothBins(s, 0.1); w != 1 {
		t.Errorf("smoothBins(tiny) = %d, want 1", w)
	}
	v, ok := smoothedLoad(s, 0, 3)
	// bin 1: (0+2+0)/(1+2+0); bin 2: (2+0+4)/(2+0+4); bin 3: (0+4+0)/(0+4+1).
	want := []float64{2.0 / 3, 2.0 / 3, 1, 0.8, 0.8}
	for i := range want {
		if !ok[i] || math.Abs(v[i]-want[i]) > 1e-12 {
			t.Errorf("bin %d: %v %v, want %v", i, v[i], ok[i], want[i])
		}
	}
	pts := plotter.XYs{{X: 1, Y: 10}, {X: 3, Y: 30}, {X: 5, Y: 50}}
	for x, want := range map[float64]float64{0: 10, 1.9: 10, 2.1: 30, 4.5: 50, 9: 50} {
		if got, _ := valueAt(pts, x); got != want {
			t.Errorf("valueAt(%v) = %v, want %v", x, got, want)
		}
	}
	if _, ok := valueAt(nil, 1); ok {
		t.Error("valueAt(nil) ok")
	}
}

func TestWriteTextEscapesControlCharacters(t *testing.T) {
	d := testDoc()
	d.Scenario.Name = "x\x1b[31m"
	d.Scenario.Description = "first line\nclears \x1b[2J the screen\n"
	d.Policies[0].Policy = "p\x1b]0;title\x07"
	var b bytes.Buffer
	if err := WriteText(&b, d, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("control characters in the text output:\n%q", out)
	}
	for _, want := range []string{"scenario x\\x1b[31m\n", "  first line\n  clears \\x1b[2J the screen\n", "p\\x1b]0;title\\x07 "} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// TestChartsAreWellFormedXML draws a policy name with a raw ESC, a
// bidirectional override, an invalid UTF-8 byte and a non-character: each
// SVG parses as XML and shows the name's escaped form (\x1b, \u202e).
func TestChartsAreWellFormedXML(t *testing.T) {
	d := testDoc()
	name := "p\x1b[31m\u202e\xff\ufffe"
	d.Policies[0].Policy = name
	dir := t.TempDir()
	files, err := WritePlots(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, ".svg") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(b))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", filepath.Base(f), err)
			}
		}
		// The KV reuse chart names the pair's algorithm, not its policies.
		if want := `p\x1b[31m\u202e\xff\ufffe`; !strings.HasPrefix(filepath.Base(f), ChartKVReuse) && !strings.Contains(string(b), want) {
			t.Errorf("%s lacks the escaped name %s", filepath.Base(f), want)
		}
	}
}
