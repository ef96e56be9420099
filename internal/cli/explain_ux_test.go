package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/explain"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// runLcctl runs lcctl in-process from the repository root with injected
// streams and returns stdout, stderr and the exit code.
func runLcctl(t *testing.T, env map[string]string, tty bool, args ...string) (string, string, int) {
	t.Helper()
	t.Chdir(testutil.RepoRoot(t))
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, OutTTY: tty, ErrTTY: tty,
		Getenv: func(k string) string { return env[k] }}
	code := cli.Main(context.Background(), args, s)
	return out.String(), errb.String(), code
}

var pwawBands = []string{"explain", "--config", "examples/explain/pwaw-bands.lb-config.yaml",
	"--snapshot", "examples/explain/pwaw-bands.snapshot.yaml", "--model", "model-a",
	"--routing-key", "rk-1", "--affinity-key", "session-6", "--last-cluster", "D"}

func decodeReport(t *testing.T, out string) *explain.Report {
	t.Helper()
	var doc struct {
		Schema string `json:"schema"`
		explain.Report
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("JSON output does not decode into explain.Report: %v\n%s", err, out)
	}
	if doc.Schema != cli.SchemaID("explain") {
		t.Fatalf("schema %q, want %q", doc.Schema, cli.SchemaID("explain"))
	}
	return &doc.Report
}

// The JSON output decodes into the report (and its decision values) and
// encodes back to the same bytes.
func TestExplainJSONRoundTrip(t *testing.T) {
	for _, extra := range [][]string{
		{"--timeline", "--compare", "flag"},
		{"--elapsed", "300ms", "--exclude", "A", "--priority", "2", "--slo-ms", "900", "--max-wait-ms", "350"},
		{"--compare", "config=examples/explain/pwaw-sessions.lb-config.yaml", "--timeline"},
		{"--routing-method", "sticky"},
	} {
		args := append(append(append([]string{}, pwawBands...), extra...), "-o", "json")
		out, stderr, code := runLcctl(t, nil, false, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", extra, code, stderr)
		}
		rep := decodeReport(t, out)
		var buf bytes.Buffer
		if err := cli.WriteJSON(&buf, "explain", rep); err != nil {
			t.Fatal(err)
		}
		if buf.String() != out {
			t.Fatalf("%v: re-encoded JSON differs from the output", extra)
		}
	}
}

// session.md S3 through the JSON output: D, A, B open after X, then C.
func TestExplainJSONPwawBands(t *testing.T) {
	out, _, code := runLcctl(t, nil, false, append(append([]string{}, pwawBands...), "--timeline", "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	rep := decodeReport(t, out)
	d := rep.Run.Decision
	if d.Outcome != lb.OutcomeWait || d.RetryAtMs == nil || *d.RetryAtMs != 300 || d.SessionState == nil ||
		*d.SessionState != "returning" || !d.Promoted || strings.Join(d.AffinityOrder, "") != "DABCE" {
		t.Fatalf("decision at 0: %+v", d)
	}
	want := []struct {
		at      float64
		open    string
		outcome lb.Outcome
		cluster string
	}{{0, "D", lb.OutcomeWait, ""}, {300, "DAB", lb.OutcomeWait, ""}, {400, "DABCE", lb.OutcomeDispatch, "C"}}
	if len(rep.Run.Timeline) != len(want) {
		t.Fatalf("timeline has %d points, want %d", len(rep.Run.Timeline), len(want))
	}
	for i, w := range want {
		p := rep.Run.Timeline[i]
		if p.ElapsedMs != w.at || strings.Join(p.OpenSet, "") != w.open || p.Outcome != w.outcome || p.Cluster != w.cluster {
			t.Errorf("timeline[%d] = %v %v %v %q; want %v %v %v %q", i, p.ElapsedMs, p.OpenSet, p.Outcome, p.Cluster, w.at, w.open, w.outcome, w.cluster)
		}
	}
	if last := rep.Run.Timeline[2]; last.RankDepth != 4 {
		t.Errorf("C dispatched at rank depth %d, want 4", last.RankDepth)
	}
}

// A returning session with k = 1 is never sent anywhere but its last
// cluster B before X (session.md S4), whatever the elapsed time.
func TestExplainReturningNeverLeavesBeforeX(t *testing.T) {
	for _, el := range []string{"0", "1", "150", "299.999"} {
		out, _, code := runLcctl(t, nil, false, "explain", "--config", "examples/explain/pwaw-sessions.lb-config.yaml",
			"--snapshot", "examples/explain/returning-k1.snapshot.yaml", "--model", "model-a", "--routing-key", "rk-1",
			"--affinity-key", "session-6", "--last-cluster", "B", "--elapsed", el, "--timeline", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		rep := decodeReport(t, out)
		for _, p := range rep.Run.Timeline {
			if p.ElapsedMs < 300 && (p.Outcome != lb.OutcomeWait || strings.Join(p.OpenSet, "") != "B") {
				t.Fatalf("elapsed %s: at %v ms the request must wait for B alone, got %v open %v", el, p.ElapsedMs, p.Outcome, p.OpenSet)
			}
		}
		final := rep.Run.Timeline[len(rep.Run.Timeline)-1]
		if final.ElapsedMs != 300 || final.Outcome != lb.OutcomeDispatch || len(final.Choices) != 2 ||
			final.Choices[0].ClusterID != "A" || final.Choices[1].ClusterID != "C" {
			t.Fatalf("elapsed %s: final %+v, want one of A, C at 300", el, final)
		}
	}
}

// Colour only on a terminal, never with NO_COLOR or --no-color.
func TestExplainColour(t *testing.T) {
	args := append(append([]string{}, pwawBands...), "--timeline")
	out, _, _ := runLcctl(t, map[string]string{"TERM": "xterm-256color"}, true, args...)
	if !strings.Contains(out, "\x1b[") {
		t.Fatal("a terminal gets ANSI styling")
	}
	if !strings.Contains(out, "│") || !strings.Contains(out, "Open set over time") {
		t.Fatal("a terminal gets the open-set chart with --timeline")
	}
	for _, tc := range []struct {
		env  map[string]string
		tty  bool
		args []string
	}{
		{map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, true, args},
		{map[string]string{"TERM": "xterm"}, true, append(append([]string{}, args...), "--no-color")},
		{map[string]string{"TERM": "xterm"}, false, args},
	} {
		out, _, code := runLcctl(t, tc.env, tc.tty, tc.args...)
		if code != 0 || strings.Contains(out, "\x1b[") {
			t.Fatalf("env %v tty %v: exit %d, ANSI in plain output", tc.env, tc.tty, code)
		}
	}
	// Piped: no chart unless asked for.
	out, _, _ = runLcctl(t, nil, false, args...)
	if strings.Contains(out, "Open set over time") {
		t.Fatal("no chart when stdout is not a terminal (--chart auto)")
	}
}

// --width and $COLUMNS bound every line.
func TestExplainWidth(t *testing.T) {
	for _, tc := range []struct {
		env   map[string]string
		flags []string
		max   int
	}{
		{nil, nil, 100},
		{map[string]string{"COLUMNS": "80"}, nil, 80},
		{nil, []string{"--width", "72"}, 72},
		{map[string]string{"COLUMNS": "80"}, []string{"--width", "120"}, 120},
	} {
		args := append(append(append([]string{}, pwawBands...), "--timeline", "--chart", "always", "--compare", "flag"), tc.flags...)
		out, _, code := runLcctl(t, tc.env, false, args...)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := len([]rune(l)); n > tc.max {
				t.Fatalf("%v %v: line of %d columns > %d: %q", tc.env, tc.flags, n, tc.max, l)
			}
		}
	}
}

// helpExamples returns the `lcctl ...` command lines of a command's
// Example text, continuation lines joined, comments dropped.
func helpExamples(example string) [][]string {
	var cmds [][]string
	var cur string
	for _, l := range strings.Split(example, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		cur += " " + strings.TrimSuffix(l, "\\")
		if strings.HasSuffix(l, "\\") {
			continue
		}
		if f := strings.Fields(cur); len(f) > 0 && f[0] == "lcctl" {
			cmds = append(cmds, f[1:])
		}
		cur = ""
	}
	return cmds
}

// TestExplainHelpExamples: the examples of `lcctl explain --help` that use
// the shipped files run, give a realistic x-input-tokens (no "assuming 0"
// note) and tell the documented stories (the outside-group one is S7:
// routing key rk-1, last cluster C promoted, B through the global
// fallback at 300 ms); the flag placeholders name what the flags take.
func TestExplainHelpExamples(t *testing.T) {
	root := cli.NewRootCommand(&ui.Streams{})
	ex, _, err := root.Find([]string{"explain"})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, args := range helpExamples(ex.Example) {
		if !strings.Contains(strings.Join(args, " "), "examples/explain/") {
			continue
		}
		ran++
		out, errs, code := runLcctl(t, nil, false, args...)
		if code != 0 || strings.Contains(out, "x-input-tokens not given") {
			t.Errorf("%v: exit %d, stderr %q, or the input-tokens note:\n%s", args, code, errs, out)
		}
		if slices.Contains(args, "returning-outside-group.lb-config.yaml") {
			for _, want := range []string{"routing key rk-1 · last cluster C", "after       C A  (last cluster promoted)", "Then at 300 ms: Dispatch to B (rank depth 3, global phase)."} {
				if !strings.Contains(out, want) {
					t.Errorf("outside-group example: no %q in\n%s", want, out)
				}
			}
		}
	}
	if ran < 2 {
		t.Fatalf("%d runnable examples in explain --help, want at least 2:\n%s", ran, ex.Example)
	}
	var help bytes.Buffer
	ex.SetOut(&help)
	if err := ex.Help(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--compare flag|config=FILE", "a routing expression"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("explain --help lacks %q", want)
		}
	}
}
