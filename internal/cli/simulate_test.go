package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/ui"
)

func runSim(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code = Main(context.Background(), args, s)
	return code, out.String(), errb.String()
}

const cliScenario = `
name: cli-test
clusters:
  - {id: a}
  - {id: b}
workload:
  session_rate: 2
  duration_s: 10
`

func writeScenario(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimulateTextAndJSON(t *testing.T) {
	sc := writeScenario(t, cliScenario)
	code, out, errs := runSim(t, "simulate", "--scenario", sc, "--compare")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"scenario cli-test", "wait-and-widen/lc-off", "sticky-least-loaded", "goodput r/s", "utilisation"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	code, j1, _ := runSim(t, "simulate", "--scenario", sc, "--compare", "-o", "json")
	if code != 0 {
		t.Fatal("json run failed")
	}
	_, j2, _ := runSim(t, "simulate", "--scenario", sc, "--compare", "-o", "json")
	if j1 != j2 {
		t.Fatal("same seed, different JSON")
	}
	// The per-purpose streams make a policy's result independent of the
	// others: the sticky-least-loaded entry is the same when it runs alone.
	_, alone, _ := runSim(t, "simulate", "--scenario", sc, "--policy", "sticky-least-loaded", "-o", "json")
	if i := strings.Index(j1, `"policy": "sticky-least-loaded"`); i < 0 || !strings.Contains(alone, j1[i:len(j1)-4]) {
		t.Fatal("sticky-least-loaded differs when run alone")
	}
	var doc struct {
		Scenario struct {
			Name     string   `json:"name"`
			Seed     uint64   `json:"seed"`
			Clusters []string `json:"clusters"`
		} `json:"scenario"`
		Policies []struct {
			Policy   string             `json:"policy"`
			Requests int64              `json:"requests"`
			TTFT     map[string]float64 `json:"ttft_ms"`
			KVReuse  float64            `json:"kv_reuse"`
			Clusters []map[string]any   `json:"clusters"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(j1), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Scenario.Name != "cli-test" || len(doc.Policies) != 10 || len(doc.Scenario.Clusters) != 2 {
		t.Fatalf("document %+v", doc.Scenario)
	}
	for _, p := range doc.Policies {
		if p.Requests == 0 || p.TTFT["p99"] < p.TTFT["p50"] || len(p.Clusters) != 2 {
			t.Errorf("policy %s: %+v", p.Policy, p)
		}
	}
	_, j3, _ := runSim(t, "simulate", "--scenario", sc, "--policy", "sticky-least-loaded", "-o", "json", "--seed", "7")
	if j3 == alone {
		t.Fatal("--seed had no effect")
	}
}

func TestSimulatePlots(t *testing.T) {
	sc := writeScenario(t, cliScenario)
	dir := filepath.Join(t.TempDir(), "charts")
	code, _, errs := runSim(t, "simulate", "--scenario", sc, "--policy", "pulsar-wait-and-widen/lc-on", "--policy", "random", "--plot", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, name := range []string{"ttft-cdf", "kv-reuse", "cluster-load", "summary"} {
		for _, ext := range []string{".png", ".svg"} {
			st, err := os.Stat(filepath.Join(dir, name+ext))
			if err != nil || st.Size() < 1000 {
				t.Errorf("%s%s: %v", name, ext, err)
			}
		}
	}
	png, _ := os.ReadFile(filepath.Join(dir, "ttft-cdf.png"))
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Error("ttft-cdf.png is not a PNG")
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "kv-reuse.svg"))
	if !bytes.Contains(svg, []byte("<svg")) {
		t.Error("kv-reuse.svg is not an SVG")
	}
}

func TestSimulateErrors(t *testing.T) {
	bad := writeScenario(t, "clusters:\n  - {id: a, concurency: 3}\n")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"simulate"}, 2, "--scenario is required"},
		{[]string{"simulate", "--scenario", "/nonexistent/s.yaml", "--compare"}, 2, "no such file"},
		{[]string{"simulate", "--scenario", bad, "--compare"}, 2, `s.yaml:2:13: clusters[0].concurency: unknown field "concurency"`},
		{[]string{"simulate", "--scenario", writeScenario(t, cliScenario)}, 2, "nothing to simulate"},
		{[]string{"simulate", "--scenario", writeScenario(t, cliScenario), "--policy", "nope"}, 2, `unknown policy "nope"`},
		{[]string{"simulate", "--scenario", writeScenario(t, cliScenario), "--compare", "--progress", "maybe"}, 2, "invalid --progress"},
		{[]string{"simulate", "--scenario", writeScenario(t, cliScenario), "--config", "/nonexistent.json"}, 2, "nonexistent.json"},
	}
	for _, c := range cases {
		code, _, errs := runSim(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, errs, c.code, c.want)
		}
	}
}

func TestSimulateConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "lc-on.json")
	os.WriteFile(cfg, []byte(`{"models":{"model":{"algorithm":"pulsar-wait-and-widen","seed":"s","cache_affinity_wait_ms":300,"last_cluster_affinity":true}}}`), 0o644)
	code, out, errs := runSim(t, "simulate", "--scenario", writeScenario(t, cliScenario), "--config", cfg, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, `"policy": "lc-on.json"`) || !strings.Contains(out, `"algorithm": "pulsar-wait-and-widen"`) || !strings.Contains(out, `"last_cluster_affinity": true`) {
		t.Fatalf("output:\n%s", out)
	}
}

// TestSimulateConfigDefaultEntry: a scenario model without a models entry
// in the --config file runs the config's default; simulate says so on
// stderr (with "did you mean"), in the row's label and in the JSON.
func TestSimulateConfigDefaultEntry(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pwaw.json")
	os.WriteFile(cfg, []byte(`{"default":"power-of-n","models":{"modle":{"algorithm":"pulsar-wait-and-widen","seed":"s","last_cluster_affinity":true}}}`), 0o644)
	sc := writeScenario(t, cliScenario)
	code, out, errs := runSim(t, "simulate", "--scenario", sc, "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	wantNote := `note: pwaw.json: model model has no models entry (the file has modle), so it runs the config's default algorithm, power-of-n, with default settings; did you mean "modle"?`
	if !strings.Contains(errs, wantNote) {
		t.Errorf("stderr lacks %q:\n%s", wantNote, errs)
	}
	if !strings.Contains(out, "\npwaw.json (power-of-n via default)  ") {
		t.Errorf("row label lacks the resolved algorithm:\n%s", out)
	}
	code, out, errs = runSim(t, "simulate", "--scenario", sc, "--config", cfg, "-o", "json")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Policies []struct {
			Algorithm           string           `json:"algorithm"`
			LastClusterAffinity *bool            `json:"last_cluster_affinity"`
			Models              []map[string]any `json:"models"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Policies[0]
	if p.Algorithm != "power-of-n" || p.LastClusterAffinity != nil || len(p.Models) != 1 ||
		p.Models[0]["model"] != "model" || p.Models[0]["entry"] != "default" || p.Models[0]["did_you_mean"] != "modle" {
		t.Fatalf("policy %+v", p)
	}
	// The model's own entry: no note.
	os.WriteFile(cfg, []byte(`{"default":"power-of-n","models":{"model":{"algorithm":"pulsar","seed":"s"}}}`), 0o644)
	code, out, errs = runSim(t, "simulate", "--scenario", sc, "--config", cfg)
	if code != 0 || strings.Contains(errs, "note:") || !strings.Contains(out, "\npwaw.json (pulsar)  ") {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
}

// TestSimulateLastClusterAffinityNull: in the comparison set the flag is
// true or false for the two algorithms that read it and null elsewhere.
func TestSimulateLastClusterAffinityNull(t *testing.T) {
	code, out, errs := runSim(t, "simulate", "--scenario", writeScenario(t, cliScenario), "--compare", "--max-requests", "50", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Policies []struct {
			Policy              string          `json:"policy"`
			LastClusterAffinity json.RawMessage `json:"last_cluster_affinity"`
			Models              json.RawMessage `json:"models"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Policies {
		want := "null"
		if strings.HasSuffix(p.Policy, "/lc-off") {
			want = "false"
		} else if strings.HasSuffix(p.Policy, "/lc-on") {
			want = "true"
		}
		if string(p.LastClusterAffinity) != want || string(p.Models) != "null" {
			t.Errorf("%s: last_cluster_affinity %s (want %s), models %s", p.Policy, p.LastClusterAffinity, want, p.Models)
		}
	}
}

func TestProgressBar(t *testing.T) {
	if got := progressText(500, 1000, 2500e6); !strings.Contains(got, "50%") || !strings.Contains(got, "[===============>") || !strings.Contains(got, "500 requests") {
		t.Fatalf("progress line %q", got)
	}
	// Not a terminal: no progress output at all.
	var errb bytes.Buffer
	env := &Env{Streams: &ui.Streams{Err: &errb}}
	stop := startProgress(env, "auto", nil, 10)
	stop()
	if errb.Len() != 0 {
		t.Fatalf("progress drawn on a non-terminal: %q", errb.String())
	}
	// A terminal draws it, unless TERM=dumb (no line clearing).
	for _, tc := range []struct {
		mode, term string
		tty, want  bool
	}{
		{"auto", "xterm", true, true},
		{"auto", "dumb", true, false},
		{"auto", "xterm", false, false},
		{"always", "dumb", false, true},
		{"never", "xterm", true, false},
	} {
		env := &Env{Streams: &ui.Streams{ErrTTY: tc.tty, Getenv: func(k string) string {
			if k == "TERM" {
				return tc.term
			}
			return ""
		}}}
		if got := progressWanted(env, tc.mode); got != tc.want {
			t.Errorf("mode %s, TERM=%s, terminal %v: progress %v, want %v", tc.mode, tc.term, tc.tty, got, tc.want)
		}
	}
}

// TestSimulateFixes: --compare --policy runs the named policy only; the
// workload-size check sees --max-requests; a bad JSONL trace is exit 2
// with file:line and field.
func TestSimulateFixes(t *testing.T) {
	sc := writeScenario(t, cliScenario)
	code, out, errs := runSim(t, "simulate", "--scenario", sc, "--compare", "--policy", "round-robin", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Policies []struct{ Policy string } `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Policies) != 1 || doc.Policies[0].Policy != "round-robin" {
		t.Fatalf("--compare --policy round-robin ran %+v (%v)", doc.Policies, err)
	}

	huge := writeScenario(t, "clusters: [{id: a}]\nworkload: {session_rate: 100, duration_s: 1e8}\n")
	if code, _, errs := runSim(t, "simulate", "--scenario", huge, "--policy", "round-robin"); code != 2 || !strings.Contains(errs, "--max-requests") {
		t.Fatalf("huge workload: exit %d, %s", code, errs)
	}
	if code, _, errs := runSim(t, "simulate", "--scenario", huge, "--policy", "round-robin", "--max-requests", "200"); code != 0 {
		t.Fatalf("huge workload with --max-requests: exit %d, %s", code, errs)
	}

	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	lines := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}` + "\n" + `{"timestamp": 1, "input_length": 600, "output_length": 5, "hash_ids": [0, "x"]}` + "\n"
	if err := os.WriteFile(trace, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	sct := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(sct, []byte("clusters: [{id: a}]\nworkload: {trace: t.jsonl}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runSim(t, "simulate", "--scenario", sct, "--policy", "round-robin")
	if code != 2 || !strings.Contains(errs, "t.jsonl:2:59: hash_ids: want a list of integers") {
		t.Fatalf("bad trace: exit %d, %s", code, errs)
	}
}

// TestSimulateSeeds: --seeds N carries per-seed values and intervals in
// JSON and prints the verdict in text.
func TestSimulateSeeds(t *testing.T) {
	sc := writeScenario(t, cliScenario)
	args := []string{"simulate", "--scenario", sc, "--policy", "wait-and-widen/lc-off", "--policy", "wait-and-widen/lc-on", "--seeds", "3"}
	code, out, errs := runSim(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Seeds struct {
			Seeds    []uint64
			Policies []struct {
				Policy  string
				Metrics map[string]struct {
					Values          []float64
					Mean, Low, High float64
				}
			}
			Differences []struct {
				Algorithm string
				Metrics   map[string]struct {
					Values      []float64
					Significant *bool
				}
			}
			Verdict []string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Seeds
	if len(s.Seeds) != 3 || s.Seeds[0] != 1 || len(s.Policies) != 2 || len(s.Differences) != 1 || len(s.Verdict) != 1 {
		t.Fatalf("%+v", s)
	}
	g := s.Policies[0].Metrics["goodput_rps"]
	if len(g.Values) != 3 || !(g.Low <= g.Mean && g.Mean <= g.High) || g.Values[0] == g.Values[1] && g.Values[1] == g.Values[2] {
		t.Fatalf("goodput over seeds %+v: want three different draws", g)
	}
	if d := s.Differences[0].Metrics["kv_reuse"]; len(d.Values) != 3 || d.Significant == nil {
		t.Fatalf("%+v", d)
	}
	code, out, _ = runSim(t, args...)
	if code != 0 || !strings.Contains(out, "verdict:") || !strings.Contains(out, "over 3 seeds") {
		t.Fatalf("text: exit %d\n%s", code, out)
	}
	if code, _, errs := runSim(t, "simulate", "--scenario", sc, "--compare", "--seeds", "0"); code != 2 || !strings.Contains(errs, "--seeds 0: want 1–1000") {
		t.Fatalf("--seeds 0: exit %d %s", code, errs)
	}
}

// TestSimulateSweep: one run per value, a table per metric, the sweep in
// JSON, the charts, and a value the scenario check refuses.
func TestSimulateSweep(t *testing.T) {
	sc := writeScenario(t, cliScenario)
	args := []string{"simulate", "--scenario", sc, "--policy", "round-robin", "--sweep", "clusters.kv_cache_tokens=0,1000000"}
	code, out, errs := runSim(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Sweep struct {
			Field    string
			Values   []float64
			Policies []struct {
				Policy  string
				Metrics map[string][]float64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	kv := doc.Sweep.Policies[0].Metrics["kv_reuse"]
	if doc.Sweep.Field != "clusters.kv_cache_tokens" || len(kv) != 2 || kv[0] != 0 || !(kv[1] > 0) {
		t.Fatalf("%+v", doc.Sweep)
	}
	dir := t.TempDir()
	code, out, errs = runSim(t, append(args, "--plot", dir)...)
	if code != 0 || !strings.Contains(out, "KV reuse % \\ clusters.kv_cache_tokens") || !strings.Contains(out, " 1000000") || strings.Contains(out, "e+06") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "kv-reuse-vs-capacity.png")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arg, want string }{
		{"workload.session_rate=-1", "workload.session_rate: must be 0–10000000"},
		{"workload.session_rate", "want FIELD=V1,V2"},
		{"workload.nope=1", `unknown field "nope"`},
		{"workload.session_rate=1,x", `"x" is not a finite number`},
	} {
		if code, _, errs := runSim(t, "simulate", "--scenario", sc, "--policy", "round-robin", "--sweep", c.arg); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--sweep %s: exit %d, %s", c.arg, code, errs)
		}
	}
	if code, _, errs := runSim(t, "simulate", "--scenario", sc, "--compare", "--seeds", "2", "--sweep", "workload.session_rate=1,2"); code != 2 || !strings.Contains(errs, "cannot be combined") {
		t.Errorf("--seeds with --sweep: exit %d, %s", code, errs)
	}
}
