package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// TestTypedConfig checks the normalised lb.Config: defaults (lb-config.md
// §6), aliases resolved, normalisations (n 0→1, virtual nodes 0→1), null
// read as absent, duplicates resolved as Stargate does.
func TestTypedConfig(t *testing.T) {
	src := `{
  "default": "power-of-two",
  "request_algorithms": {"pulsar": {"algorithm": "pulsar", "seed": "top", "rendezvous_weight": "last-mean-input-tps"}},
  "models": {
    "a": {"algorithm": "groq-multiregion", "n": 0, "cache_affinity_virtual_nodes": 0, "max_queued": null,
          "cache_affinity_backend_selection_count": 2, "cache_affinity_wait_ms": 250, "last_cluster_affinity": true,
          "max_queue_time_floor_ms": 10, "max_queue_time_ceil_ms": 20, "comparator": "utilization",
          "next_bucket_unlock_factor": null, "cache_affinity_input_tokens_scale": 0},
    "b": "pulsar-wait-and-widen",
    "c": {"algorithm": "power-of-n", "max_input_work_seconds": 2.5,
          "request_algorithms": {"random": "random", "pulsar": {"algorithm": "pulsar", "consider_kv_free_tokens": true}}},
    "d": {"algorithm": "pulsar-wait-and-widen", "band_widen_interval_ms": 0, "fallback_max_queued": 3, "max_queued": 4, "cache_affinity_wait_ms": 300}
  }
}`
	r := validate.File("c.json", []byte(src))
	if !r.Valid() {
		t.Fatalf("rejected:\n%s", dump(r.Diagnostics))
	}
	cfg := r.Config
	if cfg.Default != lb.PowerOfN || cfg.DefaultSpelling != "power-of-two" {
		t.Errorf("default = %v %q", cfg.Default, cfg.DefaultSpelling)
	}
	if p := cfg.RequestAlgorithms[lb.Pulsar]; p == nil || p.Seed != "top" || p.RendezvousWeight != lb.WeightLastMeanInputTPS || p.RequestAlgorithms != nil {
		t.Errorf("top-level pulsar = %+v", p)
	}
	a := cfg.Models["a"]
	switch {
	case a.Algorithm != lb.WaitAndWiden || a.Spelling != "groq-multiregion":
		t.Errorf("a algorithm = %v %q", a.Algorithm, a.Spelling)
	case a.N != 1 || a.CacheAffinityVirtualNodes != 1:
		t.Errorf("a normalisation: n %d, virtual nodes %d", a.N, a.CacheAffinityVirtualNodes)
	case a.MaxQueued != 0 || a.TTFTBucketSizeMs != 20 || a.NextBucketUnlockFactor != 0.25:
		t.Errorf("a defaults: %+v", a)
	case a.CacheAffinityBackendSelectionCount != 2 || a.CacheAffinityWaitMs != 250 || !a.LastClusterAffinity || a.Comparator != lb.CompareUtilization:
		t.Errorf("a settings: %+v", a)
	case !a.HasQueueSLO() || *a.MaxQueueTimeFloorMs != 10 || *a.MaxQueueTimeCeilMs != 20:
		t.Errorf("a SLO: %+v", a)
	case a.CacheAffinityInputTokensScale != 0:
		t.Errorf("a scale = %v", a.CacheAffinityInputTokensScale)
	}
	b := cfg.Models["b"]
	if b.Algorithm != lb.PulsarWaitAndWiden || b.HasQueueSLO() || b.N != 2 || b.CacheAffinityInputTokensScale != 1 || b.BandWidenIntervalMs != nil {
		t.Errorf("b = %+v", b)
	}
	c := cfg.Models["c"]
	if c.SampleCount != 2 || c.MaxInputWorkSeconds == nil || *c.MaxInputWorkSeconds != 2.5 || len(c.RequestAlgorithms) != 2 || !c.RequestAlgorithms[lb.Pulsar].ConsiderKVFreeTokens {
		t.Errorf("c = %+v", c)
	}
	d := cfg.Models["d"]
	if d.BandWidenIntervalMs == nil || *d.BandWidenIntervalMs != 0 || d.FallbackMaxQueued != 3 || d.MaxQueued != 4 || d.CacheAffinityWaitMs != 300 {
		t.Errorf("d = %+v", d)
	}
	// M1 within the M16 scope: b (string form) and d (already bounded, M4).
	got := map[string]bool{}
	for _, e := range r.NoSLO() {
		got[e.Path] = e.Bounded
	}
	if len(got) != 2 || got[`models["b"]`] || !got[`models["d"]`] {
		t.Errorf("no-SLO entries = %v", got)
	}
}

// TestTypedConfigEnumObjectForm: the one-key object forms of comparator and
// rendezvous_weight set the named value, as Stargate reads them.
func TestTypedConfigEnumObjectForm(t *testing.T) {
	r := validate.File("c.json", []byte(`{"models":{"m":{"algorithm":"wait-and-widen","comparator":{"utilization":{}}},"p":{"algorithm":"pulsar","rendezvous_weight":{"last-mean-input-tps":null}}}}`))
	if r.Config == nil {
		t.Fatalf("rejected:\n%s", dump(r.Diagnostics))
	}
	if got := r.Config.Models["m"].Comparator; got != lb.CompareUtilization {
		t.Errorf("comparator = %v, want utilization", got)
	}
	if got := r.Config.Models["p"].RendezvousWeight; got != lb.WeightLastMeanInputTPS {
		t.Errorf("rendezvous_weight = %v, want last-mean-input-tps", got)
	}
}

// TestNoSLOScope follows M16: detection on rejected files, entries that
// fail to parse are not classified, D2 winners only, default counts.
func TestNoSLOScope(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{`{"default":"groq-multiregion","request_algorithms":{"pulsar-multiregion":"groq-multiregion"},"models":{"model-a":"pulsar-multiregion"}}`, []string{`models["model-a"]`}},
		{`{"models":{"m":{"algorithm":"pulsar-wait-and-widen","comparator":"ttft"}}}`, []string{`models["m"]`}},
		{`{"models":{"m":{"algorithm":"pulsar-wait-and-widen","max_queued":-1}}}`, nil},
		{`{"models":{"m":"pulsar-wait-and-widen","m":"pulsar"}}`, nil},
		{`{"models":{"m":"pulsar","m":"pulsar-wait-and-widen"}}`, []string{`models["m"]`}},
		{`{"default":{"pulsar-wait-and-widen":null}}`, []string{"default"}},
		{`{"request_algorithms":{"random":{"algorithm":"random","request_algorithms":{"pulsar-wait-and-widen":"pulsar-wait-and-widen"}}}}`, nil},
		{`{"models":{"m":{"algorithm":"pulsar","request_algorithms":{"pulsar-wait-and-widen":"pulsar-wait-and-widen"}}}}`, []string{`models["m"].request_algorithms["pulsar-wait-and-widen"]`}},
		{`{"models":{"m":{"algorithm":"pulsar-wait-and-widen","max_queue_time_floor_ms":0,"max_queue_time_ceil_ms":0}}}`, nil},
	} {
		r := validate.File("c.json", []byte(tc.src))
		got := paths(r.NoSLO())
		if len(got) != len(tc.want) {
			t.Errorf("%s: no-SLO %v, want %v", tc.src, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: no-SLO %v, want %v", tc.src, got, tc.want)
			}
		}
	}
}

// TestDocumentSpans checks the positioned tree of every JSON example:
// byte spans reproduce each literal (migrate splices edits by offset).
func TestDocumentSpans(t *testing.T) {
	for _, dir := range testutil.LBConfigDirs(t) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no JSON examples in %s", dir)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			doc, diags := validate.Decode(f, data, validate.FormatUnknown)
			if doc.Root == nil {
				t.Fatalf("%s: %v", f, diags)
			}
			checkSpans(t, doc.Root, data)
			checkResult(t, validate.Check(doc, diags), data)
		}
	}
	// YAML keeps the yaml.Node tree and per-value nodes for rewrites.
	doc, _ := validate.Decode("c.yaml", []byte("# head\nmodels:\n  m: pulsar # keep\n"), validate.FormatUnknown)
	m := doc.Root.Get("models").Get("m")
	if doc.YAML == nil || m == nil || m.Node == nil || m.Node.LineComment != "# keep" || m.Start.Line != 3 || m.Start.Col != 6 || m.Start.Offset != 20 {
		t.Errorf("YAML value = %+v", m)
	}
}

func TestNoSLOEntriesOnDocument(t *testing.T) {
	src := []byte("models:\n  a: pulsar-wait-and-widen # keep\n  b: {algorithm: pulsar-wait-and-widen, max_queued: 1, cache_affinity_wait_ms: 5}\n  c: {algorithm: pulsar, bogus: 1}\n")
	doc, _ := validate.Decode("c.yaml", src, validate.FormatUnknown)
	es := validate.NoSLOEntries(doc)
	if len(es) != 2 || es[0].Path != `models["a"]` || es[0].Bounded || !es[0].StringForm || es[0].Value.Node.LineComment != "# keep" || es[1].Path != `models["b"]` || !es[1].Bounded {
		t.Fatalf("entries = %+v", es)
	}
}

// TestTypedConfigResolution checks which occurrence ends up in lb.Config:
// D2 last wins at the top level (alias keys included), D3 last wins inside
// an entry (also inside its request_algorithms), D4 byte order among
// alias-equal keys inside an entry, and the positional and one-key default
// forms.
func TestTypedConfigResolution(t *testing.T) {
	src := `{"request_algorithms":{"power-of-n":{"algorithm":"power-of-n","sample_count":3},"power-of-two":{"algorithm":"powerOfN","sample_count":5}},
"models":{
 "d4":{"algorithm":"random","request_algorithms":{"powerof2":{"algorithm":"power-of-n","sample_count":7},"powerOfN":{"algorithm":"power-of-n","sample_count":3},"power-of-n":{"algorithm":"power-of-n","sample_count":5}}},
 "d3":{"algorithm":"power-of-n","sample_count":3,"sample_count":5,"request_algorithms":{"pulsar":{"algorithm":"bogus"},"pulsar":{"algorithm":"pulsar","seed":"b"}}},
 "d2":"pulsar","d2":{"algorithm":"wait-and-widen","n":0,"cache_affinity_virtual_nodes":0,"cache_affinity_backend_selection_count":0}}}`
	r := validate.File("c.json", []byte(src))
	if !r.Valid() {
		t.Fatalf("rejected:\n%s", dump(r.Diagnostics))
	}
	c := r.Config
	if got := c.RequestAlgorithms[lb.PowerOfN]; got.SampleCount != 5 || got.Spelling != "powerOfN" {
		t.Errorf("top-level D2 winner = %+v, want sample_count 5 spelled powerOfN", got)
	}
	if got := c.Models["d4"].RequestAlgorithms[lb.PowerOfN].SampleCount; got != 7 {
		t.Errorf("D4 winner sample_count = %d, want 7 (\"powerof2\" sorts last)", got)
	}
	d3 := c.Models["d3"]
	if d3.SampleCount != 5 || d3.RequestAlgorithms[lb.Pulsar].Seed != "b" || d3.RequestAlgorithms[lb.Pulsar].RequestAlgorithms != nil {
		t.Errorf("D3 = %+v / %+v", d3, d3.RequestAlgorithms[lb.Pulsar])
	}
	d2 := c.Models["d2"]
	if d2.Algorithm != lb.WaitAndWiden || d2.N != 1 || d2.CacheAffinityVirtualNodes != 1 || d2.CacheAffinityBackendSelectionCount != 0 {
		t.Errorf("D2 winner = %+v, want wait-and-widen normalised", d2)
	}
	if len(c.Models) != 3 {
		t.Errorf("models = %d, want 3", len(c.Models))
	}

	r = validate.File("c.json", []byte(`[{"pulsar-multiregion": null}, {"random": "random"}, {"m": {"algorithm": "pulsar", "seed": "s"}}]`))
	if !r.Valid() {
		t.Fatalf("positional rejected:\n%s", dump(r.Diagnostics))
	}
	c = r.Config
	if c.Default != lb.PulsarWaitAndWiden || c.DefaultSpelling != "pulsar-multiregion" || c.RequestAlgorithms[lb.Random] == nil || c.Models["m"].Seed != "s" {
		t.Errorf("positional config = %+v", c)
	}

	r = validate.File("c.yaml", []byte("base: &b {algorithm: wait-and-widen, max_queued: 3}\n"))
	if r.Valid() {
		t.Fatal("unknown top-level field accepted")
	}
	r = validate.File("c.yaml", []byte("models:\n  a: &b {algorithm: wait-and-widen, max_queued: 3}\n  b: {<<: *b, n: 4}\n"))
	if !r.Valid() {
		t.Fatalf("merge rejected:\n%s", dump(r.Diagnostics))
	}
	if b := r.Config.Models["b"]; b.Algorithm != lb.WaitAndWiden || b.MaxQueued != 3 || b.N != 4 {
		t.Errorf("merged entry = %+v", b)
	}
}
