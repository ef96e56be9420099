package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckMetricsManyModelsText: with more models than the text limits,
// check metrics lists the busiest rows and folds the per-model checks,
// says so and how to see everything; -o json keeps every row and result.
func TestCheckMetricsManyModelsText(t *testing.T) {
	const n = 150
	path := writeModelsScrape(t, t.TempDir(), n)
	code, out, errOut := runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", path)
	// Models 1..19 have fewer than 20 requests: warnings, exit 0.
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{
		"  org/model-000149  pulsar-wait-and-widen  0/0      150/0",
		"  100 of 150 rows shown (the most classified requests); -o json lists every row, --model NAME shows one model\n",
		"‼ returning sessions reach Stargate [org/model-000018]\n",
		"✔ returning sessions reach Stargate [131 models: org/model-000019, org/model-000020, org/model-000021, …]\n",
		"✔ returning sessions go back to their last cluster [150 models: org/model-000000, org/model-000001, org/model-000002, …]\n",
		"-o json lists every result with its reason\n",
		"(282 ok, 0 failed, 19 warnings, 0 skipped)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "org/model-000049  ") {
		t.Errorf("a row outside the 100 busiest is listed:\n%s", out)
	}
	code, out, errOut = runLcctlStdin(t, "", nil, "check", "metrics", "--stargate", path, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Stargate struct {
			Rows   []json.RawMessage `json:"rows"`
			Models []json.RawMessage `json:"models"`
		} `json:"stargate"`
		Verdicts struct {
			Groups []struct {
				Checks []json.RawMessage `json:"checks"`
			} `json:"groups"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, g := range doc.Verdicts.Groups {
		results += len(g.Checks)
	}
	if len(doc.Stargate.Rows) != n || len(doc.Stargate.Models) != n || results != 1+2*n {
		t.Errorf("JSON: %d rows, %d models, %d results; want %d, %d, %d", len(doc.Stargate.Rows), len(doc.Stargate.Models), results, n, n, 1+2*n)
	}
}
