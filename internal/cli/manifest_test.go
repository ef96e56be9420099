package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// helmTemplate is a stream as `helm template` prints it: a Service, the
// router's ConfigMap with a JSON lb-config in a block scalar, comments.
const helmTemplate = `---
# Source: router/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: router
---
# Source: router/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: llm-request-router
  namespace: nvcf
data:
  lb-config.json: |
    {
      "default": "power-of-n",
      "models": {
        "chat": "pulsar-wait-and-widen",
        "embed": {"algorithm": "round-robin"}
      }
    }
  other.txt: keep
`

func TestValidateManifestStdin(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, helmTemplate, "--output", "json", "validate", "--fail-on", "LC2001", "-")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1 (LC2001 under --fail-on)\n%s%s", code, out, errs)
	}
	var rep validateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 1 || rep.Files[0].Source != `ConfigMap nvcf/llm-request-router data["lb-config.json"]` || rep.Files[0].Format != "json" {
		t.Fatalf("files: %+v", rep.Files)
	}
	found := false
	for _, d := range rep.Files[0].Diagnostics {
		if d.Code == "LC2001" {
			found = true
			// "chat" on line 19, column 9 of the stream; its value at 17.
			if d.Line != 19 || d.Column != 17 {
				t.Errorf("LC2001 at %d:%d, want 19:17 (the manifest's position)", d.Line, d.Column)
			}
		}
		if d.Code == "LC1003" {
			t.Errorf("the manifest's own fields were checked as an lb-config: %+v", d)
		}
	}
	if !found {
		t.Fatalf("no LC2001: %s", out)
	}
}

func TestValidateManifestErrorsAndList(t *testing.T) {
	t.Parallel()
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: r}
  data:
    lb-config.yaml: |-
      models:
        m:
          algorithm: pulsar
          max_queued: -1
`
	dir := t.TempDir()
	f := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(f, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "validate", f)
	if code != ExitFindings || !strings.Contains(out, "in ConfigMap r data[\"lb-config.yaml\"]") || !strings.Contains(out, f+":12:11") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	none := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n"
	code, out, errs := runCLI(t, none, "validate", "-")
	if code != ExitUsage || !strings.Contains(out, "no lb-config found in ConfigMap x (data keys: a)") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

func TestMigrateManifestWriteKeepsOtherBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := filepath.Join(dir, "rendered.yaml")
	if err := os.WriteFile(f, []byte(helmTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "migrate", "--strategy", "pulsar", "--no-preserve-header-method", "--write", f)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	got, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(helmTemplate, `"chat": "pulsar-wait-and-widen"`, `"chat": "pulsar"`, 1)
	if string(got) != want {
		t.Fatalf("written:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(errs, "in ConfigMap nvcf/llm-request-router") || !strings.Contains(out, "+        \"chat\": \"pulsar\",") {
		t.Errorf("report:\n%s%s", out, errs)
	}
	if code, out, _ := runCLI(t, "", "validate", "--fail-on", "LC2001", f); code != ExitOK {
		t.Errorf("validate after migrate: exit %d\n%s", code, out)
	}
}

func TestHelmValuesKey(t *testing.T) {
	t.Parallel()
	values := `router:
  replicas: 2
  lbConfig:
    default: power-of-n
    models:
      chat: pulsar-wait-and-widen   # sticky today
gateway: {}
`
	dir := t.TempDir()
	f := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(f, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "validate", "--values-key", "router.lbConfig", "--fail-on", "LC2001", f)
	if code != ExitFindings || !strings.Contains(out, f+":6:13") || !strings.Contains(out, "in values key router.lbConfig") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, out, errs := runCLI(t, "", "migrate", "--strategy", "pulsar", "--no-preserve-header-method", "--values-key", "router.lbConfig", "--write", f)
	if code != ExitOK {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errs)
	}
	got, _ := os.ReadFile(f)
	if want := strings.Replace(values, "chat: pulsar-wait-and-widen", "chat: pulsar", 1); string(got) != want {
		t.Fatalf("written:\n%s\nwant:\n%s", got, want)
	}
	if code, out, _ := runCLI(t, "", "validate", "--values-key", "router.nope", f); code != ExitUsage || !strings.Contains(out, `router has no key "nope" (keys: replicas, lbConfig)`) {
		t.Fatalf("missing key: exit %d\n%s", code, out)
	}
}

func TestExplainConfigManifest(t *testing.T) {
	t.Parallel()
	sf := filepath.Join(testutil.RepoRoot(t), "examples", "explain", "returning-k1.snapshot.yaml")
	code, out, errs := runCLI(t, helmTemplate, "explain", "--config", "-", "--snapshot", sf, "--model", "embed")
	if !strings.Contains(out, "round-robin") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// twoConfigs is one ConfigMap holding two lb-configs.
const twoConfigs = `apiVersion: v1
kind: ConfigMap
metadata:
  name: router
data:
  lb-config.yaml: |
    default: round-robin
  lb-config-canary.yaml: |
    default: power-of-n
`

func TestExplainDataKeyPicksOneEntry(t *testing.T) {
	t.Parallel()
	sf := filepath.Join(testutil.RepoRoot(t), "examples", "explain", "returning-k1.snapshot.yaml")
	code, out, errs := runCLI(t, twoConfigs, "explain", "--config", "-", "--snapshot", sf, "--model", "embed")
	if code != ExitUsage || !strings.Contains(errs, "--data-key") || strings.Contains(errs, "give the ConfigMap alone") {
		t.Fatalf("several entries: exit %d, want 2 naming --data-key\n%s%s", code, out, errs)
	}
	for key, alg := range map[string]string{"lb-config.yaml": "round-robin", "lb-config-canary.yaml": "power-of-n"} {
		code, out, errs := runCLI(t, twoConfigs, "explain", "--config", "-", "--data-key", key, "--snapshot", sf, "--model", "embed")
		if !strings.Contains(out, alg) {
			t.Errorf("--data-key %s: exit %d, want %s\n%s%s", key, code, alg, out, errs)
		}
	}
	code, out, _ = runCLI(t, twoConfigs, "validate", "--data-key", "nope", "-")
	if code != ExitUsage || !strings.Contains(out, `"nope"`) || !strings.Contains(out, `"lb-config-canary.yaml"`) {
		t.Errorf("unknown --data-key: exit %d\n%s", code, out)
	}
}

func TestManifestDuplicateKeyIsAnError(t *testing.T) {
	t.Parallel()
	dup := `apiVersion: v1
kind: ConfigMap
metadata:
  name: router
data:
  lb-config.yaml: |
    default: pulsar-wait-and-widen
  lb-config.yaml: |
    default: round-robin
`
	dir := t.TempDir()
	f := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(f, []byte(dup), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "validate", f)
	if code != ExitUsage || !strings.Contains(out, f+":8:3") || !strings.Contains(out, `duplicate key "lb-config.yaml"`) {
		t.Fatalf("validate: exit %d, want 2 at 8:3\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "migrate", "--strategy", "pulsar", "--write", f)
	if got, _ := os.ReadFile(f); code == ExitOK || string(got) != dup {
		t.Fatalf("migrate --write: exit %d, file changed=%v\n%s%s", code, string(got) != dup, out, errs)
	}
	// A repeated key at the top level too.
	top := "apiVersion: v1\nkind: ConfigMap\nkind: ConfigMap\ndata:\n  lb-config.yaml: |\n    default: round-robin\n"
	if code, out, _ := runCLI(t, top, "validate", "-"); code != ExitUsage || !strings.Contains(out, `:3:1`) || !strings.Contains(out, `duplicate key "kind"`) {
		t.Errorf("top level: exit %d\n%s", code, out)
	}
}

func TestManifestAliasedEntry(t *testing.T) {
	t.Parallel()
	aliased := `apiVersion: v1
kind: ConfigMap
metadata:
  name: router
data:
  lb-config.yaml: &cfg |
    default: pulsar-wait-and-widen
  copy: *cfg
`
	dir := t.TempDir()
	f := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(f, []byte(aliased), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "--output", "json", "validate", "--fail-on", "LC2001", f)
	var rep validateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", code, err, out, errs)
	}
	if len(rep.Files) != 2 || !strings.Contains(rep.Files[1].Source, `data["copy"] (alias *cfg`) {
		t.Fatalf("want the anchored entry and its alias: %+v", rep.Files)
	}
	for _, fr := range rep.Files {
		for _, d := range fr.Diagnostics {
			if d.Code == "LC2001" && (d.Line != 7 || d.Column != 14) {
				t.Errorf("%s: LC2001 at %d:%d, want 7:14 (the text, not the anchor)", fr.Source, d.Line, d.Column)
			}
		}
	}
	code, out, errs = runCLI(t, "", "migrate", "--strategy", "pulsar", "--write", f)
	got, _ := os.ReadFile(f)
	if code == ExitOK || string(got) != aliased || !strings.Contains(out+errs, "&cfg") || strings.Contains(out+errs, "| indicator") {
		t.Fatalf("migrate --write: exit %d, changed=%v\n%s%s", code, string(got) != aliased, out, errs)
	}
}

func TestValidateManifestSummaryCountsLbConfigs(t *testing.T) {
	t.Parallel()
	_, out, _ := runCLI(t, twoConfigs, "validate", "-")
	if !strings.Contains(out, "2 lb-configs in 1 file checked") {
		t.Fatalf("summary:\n%s", out)
	}
}
