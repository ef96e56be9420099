package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		"10.0% (200)", "10 (7 503, 3 refused)", "50.0%", "25.0%",
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

// TestWriteTextEscapesControlCharacters: a scenario name, description or
// policy name with an escape sequence reached the terminal raw.
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
