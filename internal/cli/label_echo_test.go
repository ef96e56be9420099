package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugeLabelEchoedShort: a 2,000,000-byte model label and a
// 3,000,000-byte result label are echoed as 200 bytes and their size in
// text output and in JSON messages (before: the text output was 8 MB,
// the result value printed twice in its note); JSON rows keep the model
// exact.
func TestHugeLabelEchoedShort(t *testing.T) {
	dir := t.TempDir()
	model := strings.Repeat("m", 2_000_000)
	var sg strings.Builder
	sg.WriteString("# TYPE stargate_routing_session_selections_total counter\n")
	for _, sel := range []string{"primary", "fallback"} {
		for _, st := range []string{"new", "returning", "stale"} {
			sg.WriteString(`stargate_routing_session_selections_total{algorithm="wait-and-widen",model="` + model + `",routing_key="chat",selection="` + sel + `",session_state="` + st + "\"} 100\n")
		}
	}
	gw := "# TYPE llm_api_gateway_last_cluster_lookups_total counter\nllm_api_gateway_last_cluster_lookups_total{result=\"hit\"} 100\n" +
		"llm_api_gateway_last_cluster_lookups_total{result=\"" + strings.Repeat("r", 3_000_000) + "\"} 5\n" +
		"# TYPE llm_api_gateway_last_cluster_writes_total counter\nllm_api_gateway_last_cluster_writes_total{result=\"ok\"} 100\n"
	sgFile, gwFile := filepath.Join(dir, "sg.prom"), filepath.Join(dir, "gw.prom")
	if err := os.WriteFile(sgFile, []byte(sg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gwFile, []byte(gw), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errs := runCLI(t, "", "check", "metrics", "--stargate", sgFile, "--gateway", gwFile)
	if len(out)+len(errs) > 20_000 {
		t.Errorf("text output %d bytes, stderr %d bytes: label values echoed in full", len(out), len(errs))
	}
	for _, want := range []string{"… (2000000 bytes)", "… (3000000 bytes)"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("text output does not say %q", want)
		}
	}
	_, jout, _ := runCLI(t, "", "-o", "json", "check", "metrics", "--stargate", sgFile, "--gateway", gwFile)
	var doc struct {
		Stargate struct {
			Rows []struct {
				Model string `json:"model"`
			} `json:"rows"`
		} `json:"stargate"`
		Verdicts struct {
			Groups []struct {
				Checks []struct {
					Title, Reason string
					Details       []string
				} `json:"checks"`
			} `json:"groups"`
		} `json:"verdicts"`
	}
	if err := json.Unmarshal([]byte(jout), &doc); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	if len(doc.Stargate.Rows) != 1 || doc.Stargate.Rows[0].Model != model {
		t.Errorf("JSON rows do not keep the model exact (%d rows)", len(doc.Stargate.Rows))
	}
	n := 0
	for _, g := range doc.Verdicts.Groups {
		for _, c := range g.Checks {
			n++
			for _, s := range append([]string{c.Title, c.Reason}, c.Details...) {
				if len(s) > 2000 {
					t.Errorf("JSON message of %d bytes: %.80s…", len(s), s)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no verdicts in the JSON document")
	}
}
