package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file the scenario names as an lb-config (router.config,
// policies[].lb_config) that is not one is refused without quoting it:
// `router: {config: /etc/shadow}` printed `/etc/shadow:1:1: error LC1003
// ["root:*:…"]`.
func TestNamedFileNotAnLBConfigIsNotQuoted(t *testing.T) {
	dir := t.TempDir()
	secret := "root:SECRETHASH:19000:0:99999:7:::"
	files := map[string]string{
		"shadow":  secret + "\n",
		"scalar":  `"SECRETHASH"`,
		"list":    "[SECRETHASH]",
		"garbage": "SECRETHASH: [\n",
		"number":  "42",
	}
	// Each error is placed at the field naming the file.
	wantAt := map[string]string{"router.config": "3:18", "policies[0].lb_config": "3:33"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		for field, y := range map[string]string{
			"router.config":         "router: {config: " + name + "}\n",
			"policies[0].lb_config": "policies: [{name: p, lb_config: " + name + "}]\n",
		} {
			sc := mustScenario(t, "clusters: [{id: a}]\nworkload: {models: [{name: m}]}\n"+y)
			sc.Dir = dir
			_, err := ResolvePolicies(sc, Selection{})
			if err == nil {
				t.Fatalf("%s %s: accepted", field, name)
			}
			msg := err.Error()
			if strings.Contains(msg, "SECRETHASH") || !strings.Contains(msg, "test.yaml:"+wantAt[field]+": "+field+": ") || !strings.Contains(msg, "is not an lb-config") {
				t.Errorf("%s %s: %q; want the field named, 'is not an lb-config' and no content", field, name, msg)
			}
		}
	}
	// An lb-config with errors is still reported in full.
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"default":"power-of-m"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := mustScenario(t, "clusters: [{id: a}]\nrouter: {config: bad.json}\n")
	sc.Dir = dir
	if _, err := ResolvePolicies(sc, Selection{}); err == nil || !strings.Contains(err.Error(), "power-of-m") {
		t.Fatalf("an invalid lb-config: %v, want its own error", err)
	}
}

// A workload.trace whose first request line does not parse may be any
// file: its fields are not quoted. After a good record they are.
func TestTraceFirstLineNotQuoted(t *testing.T) {
	for _, in := range []string{"SECRET,a,1,1\n", "0,a,SECRET,1\n", "0,a,1,SECRET\n"} {
		_, err := ReadTrace("t.csv", strings.NewReader(in), "", 0, nil)
		if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "is the file a trace?") {
			t.Errorf("%q: %v; want no content and the question", in, err)
		}
	}
	_, err := ReadTrace("t.csv", strings.NewReader("0,a,1,1\n1,a,SECRET,1\n"), "", 0, nil)
	if err == nil || !strings.Contains(err.Error(), `got "SECRET"`) || strings.Contains(err.Error(), "is the file a trace?") {
		t.Errorf("second line: %v; want the value quoted", err)
	}
}
