package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := Main(context.Background(), args, s)
	return code, out.String(), errb.String()
}

func TestExplainCheckSharedConformance(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t), "conformance", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no conformance files")
	}
	for _, f := range files {
		code, out, errs := runCLI(t, "", "explain", "--check", "--case", f)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, errs)
		}
		if !strings.Contains(out, "cases passed") {
			t.Errorf("%s: no summary line", f)
		}
	}
}

const mismatchCase = `
- name: wrong-cluster
  config: {algorithm: pulsar, seed: seed-1}
  request: {model: model-a, routing_key: rk-1, cache_affinity_key: prefix-123, input_tokens: 1, elapsed_ms: 0}
  snapshot:
    clusters:
      - {cluster_id: inst-a, rtt_ms: 5, stats: {max_input_tps: 100, last_mean_input_tps: 100}}
      - {cluster_id: inst-b, rtt_ms: 5, stats: {max_input_tps: 100, last_mean_input_tps: 100}}
  expect: {outcome: dispatch, cluster: nope, rank_depth: 7, session_state: returning}
- name: right
  config: {algorithm: random}
  request: {model: model-a, input_tokens: 1}
  snapshot: {clusters: [{cluster_id: A}, {cluster_id: B}, {cluster_id: C}]}
  expect: {outcome: dispatch, one_of: [A, B, C], session_state: null}
`

func TestExplainCheckMismatchJSON(t *testing.T) {
	code, out, errs := runCLI(t, mismatchCase, "explain", "--check", "--case", "-", "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1\n%s", code, errs)
	}
	var rep struct {
		Cases []struct {
			Name       string          `json:"name"`
			Pass       bool            `json:"pass"`
			Mismatches []string        `json:"mismatches"`
			Decision   json.RawMessage `json:"decision"`
		} `json:"cases"`
		Passed int `json:"passed"`
		Total  int `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if rep.Total != 2 || rep.Passed != 1 || rep.Cases[0].Pass || !rep.Cases[1].Pass {
		t.Fatalf("report: %+v", rep)
	}
	if len(rep.Cases[0].Mismatches) != 3 {
		t.Fatalf("mismatches: %v", rep.Cases[0].Mismatches)
	}
	var dec map[string]any
	if err := json.Unmarshal(rep.Cases[1].Decision, &dec); err != nil {
		t.Fatal(err)
	}
	if dec["outcome"] != "dispatch" || dec["session_state"] != nil || len(dec["choices"].([]any)) != 3 {
		t.Fatalf("decision: %v", dec)
	}
	ch := dec["choices"].([]any)[0].(map[string]any)
	if ch["fraction"] != "1/3" {
		t.Fatalf("choice: %v", ch)
	}
}

func TestExplainText(t *testing.T) {
	code, out, _ := runCLI(t, mismatchCase, "explain", "--case", "-")
	if code != 0 {
		t.Fatalf("exit %d without --check", code)
	}
	for _, want := range []string{"case wrong-cluster", "outcome: dispatch to inst-b", "pulsar ranking:", "sampling could choose: A 1/3, B 1/3, C 1/3", "mismatch: cluster: want nope"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestExplainUsageErrors(t *testing.T) {
	if code, _, errs := runCLI(t, "", "explain"); code != ExitUsage || !strings.Contains(errs, "--case") {
		t.Fatalf("no --case: %d %s", code, errs)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("- name: x\n  config: {algorithm: random}\n  request: {model: m, input_tokens: 1}\n  snapshot: {clusters: [{cluster_id: A, rtt: 5}]}\n  expect: {}\n"), 0o644)
	code, _, errs := runCLI(t, "", "explain", "--case", bad)
	if code != ExitUsage || !strings.Contains(errs, "bad.yaml:4:") || !strings.Contains(errs, `unknown field "rtt"`) {
		t.Fatalf("unknown field: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "", "explain", "--case", filepath.Join(dir, "missing.yaml")); code != ExitUsage || !strings.Contains(errs, "failed to read") {
		t.Fatalf("missing file: %d %s", code, errs)
	}
}

func TestExplainConfigErrorCase(t *testing.T) {
	in := `
name: bad-config
config: {algorithm: power-of-n, last_cluster_affinity: true}
request: {model: m, input_tokens: 1}
snapshot: {clusters: [{cluster_id: A}]}
expect: {outcome: error, error_contains: last_cluster_affinity, session_state: null}
`
	code, out, errs := runCLI(t, in, "explain", "--check", "--case", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// An inactive (or unknown) cluster is listed as not a candidate, in the
// text and in the JSON, also when the proxy rejects before balancing.
func TestExplainCaseNotACandidate(t *testing.T) {
	in := `
- name: one-active
  config: {algorithm: round-robin}
  request: {model: m, input_tokens: 1}
  snapshot: {clusters: [{cluster_id: A, status: inactive}, {cluster_id: B}, {cluster_id: C, status: unknown}]}
  expect: {outcome: dispatch, cluster: B}
- name: none-active
  config: {algorithm: wait-and-widen}
  request: {model: m, input_tokens: 1, max_wait_ms: 60000}
  snapshot: {clusters: [{cluster_id: A, status: inactive}]}
  expect: {outcome: reject}
`
	code, out, errs := runCLI(t, in, "explain", "--check", "--case", "-")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"not a candidate: A (inactive), C (unknown)", "not a candidate: A (inactive)\n", "HTTP 503 no_eligible_candidates"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, in, "explain", "--case", "-", "-o", "json")
	if code != 0 || !strings.Contains(out, `"not_candidates": [
          "A (inactive)",
          "C (unknown)"
        ]`) {
		t.Fatalf("JSON lacks not_candidates (exit %d):\n%s", code, out)
	}
}
