package validate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// TestSharedExamples runs every file of ../shared/examples/lb-config against
// the verdict and no-SLO column of its expected.tsv, read at test time.
// Rows marked n/a are not lb-configs (summaries written for that folder);
// given to Stargate they would be refused for their unknown top-level
// fields, so lcctl must reject them too.
func TestSharedExamples(t *testing.T) {
	dir, rows := testutil.LBConfigExamples(t)
	listed := map[string]bool{}
	for _, row := range rows {
		name, verdict, noSLO := row.Name, row.Verdict, row.NoSLO
		listed[name] = true
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			r := validate.File(name, data)
			switch verdict {
			case "accepted":
				if !r.Valid() {
					t.Errorf("want accepted, got errors:\n%s", dump(r.Errors()))
				}
				if r.Config == nil {
					t.Error("accepted file has no typed config")
				}
			case "rejected", "n/a":
				if r.Valid() {
					t.Errorf("want rejected (%s), got valid", verdict)
				}
				if r.Config != nil {
					t.Error("rejected file has a typed config")
				}
			default:
				t.Fatalf("unknown verdict %q", verdict)
			}
			gotNoSLO := len(r.NoSLO()) > 0
			if gotNoSLO != noSLO {
				t.Errorf("no-SLO pwaw: got %v, want %v (entries %v)", gotNoSLO, noSLO, paths(r.NoSLO()))
			}
			hasW1 := false
			for _, d := range r.Diagnostics {
				if d.Code == validate.CodeNoSLO || d.Code == validate.CodeNoSLOBounded {
					hasW1 = true
				}
				if d.Line == 0 && d.Severity == validate.SeverityError {
					t.Errorf("error without a line: %s", d)
				}
			}
			if hasW1 != gotNoSLO {
				t.Errorf("W1 reported %v but no-SLO entries %v", hasW1, paths(r.NoSLO()))
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if n == "expected.tsv" || n == "README.md" {
			continue
		}
		if !listed[n] {
			t.Errorf("%s is not listed in expected.tsv", n)
		}
	}
}

func dump(ds []validate.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func paths(es []*validate.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

type confCase struct {
	Name     string    `yaml:"name"`
	LBConfig yaml.Node `yaml:"lb_config"`
	Config   yaml.Node `yaml:"config"`
	Expect   struct {
		Valid         *bool  `yaml:"valid"`
		ErrorContains string `yaml:"error_contains"`
		Outcome       string `yaml:"outcome"`
	} `yaml:"expect"`
}

func loadCases(t testing.TB) map[string][]confCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testutil.SharedDir(t), "conformance", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files: %v", err)
	}
	out := map[string][]confCase{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []confCase
		if err := yaml.Unmarshal(data, &cases); err != nil {
			var one confCase
			if err2 := yaml.Unmarshal(data, &one); err2 != nil {
				t.Fatalf("%s: %v", f, err)
			}
			cases = []confCase{one}
		}
		out[filepath.Base(f)] = cases
	}
	return out
}

// TestConformanceConfigCases runs every config-only case (lb_config:) of
// ../shared/conformance/*.yaml: validity, and for invalid cases that some
// error message contains the expected Stargate text.
func TestConformanceConfigCases(t *testing.T) {
	n := 0
	for file, cases := range loadCases(t) {
		for _, c := range cases {
			if c.LBConfig.Kind == 0 {
				continue
			}
			n++
			t.Run(file+"/"+c.Name, func(t *testing.T) {
				if c.Expect.Valid == nil {
					t.Fatal("config-only case without expect.valid")
				}
				r := validate.Node(&c.LBConfig, nil, file)
				if r.Valid() != *c.Expect.Valid {
					t.Fatalf("valid = %v, want %v; diagnostics:\n%s", r.Valid(), *c.Expect.Valid, dump(r.Diagnostics))
				}
				if c.Expect.ErrorContains != "" {
					found := false
					for _, d := range r.Errors() {
						if strings.Contains(d.Message, c.Expect.ErrorContains) {
							found = true
						}
						// Document-level errors (e.g. a top level that is
						// not an object) have the empty path, documented
						// as "the whole document"; every error has a line.
						if d.Line == 0 {
							t.Errorf("error without a line: %s", d)
						}
					}
					if !found {
						t.Errorf("no error contains %q:\n%s", c.Expect.ErrorContains, dump(r.Errors()))
					}
				}
			})
		}
	}
	if n < 20 {
		t.Errorf("only %d config-only cases found", n)
	}
}

// TestConformanceAlgorithmConfigs decodes the config: block of every
// decision case with AlgorithmConfigFromNode, the way the engine reads
// them, and checks the normalised values against the node.
func TestConformanceAlgorithmConfigs(t *testing.T) {
	n := 0
	for file, cases := range loadCases(t) {
		for _, c := range cases {
			if c.Config.Kind == 0 {
				continue
			}
			n++
			ac, diags := validate.AlgorithmConfigFromNode(&c.Config, file)
			if ac == nil {
				t.Errorf("%s/%s: config rejected:\n%s", file, c.Name, dump(diags))
				continue
			}
			var raw map[string]any
			if err := c.Config.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			want, _ := lb.ParseAlgorithmName(raw["algorithm"].(string))
			if ac.Algorithm != want {
				t.Errorf("%s/%s: algorithm %v, want %v", file, c.Name, ac.Algorithm, want)
			}
			if k, ok := raw["cache_affinity_backend_selection_count"].(int); ok && ac.CacheAffinityBackendSelectionCount != k {
				t.Errorf("%s/%s: k = %d, want %d", file, c.Name, ac.CacheAffinityBackendSelectionCount, k)
			}
			if w, ok := raw["cache_affinity_wait_ms"].(int); ok && ac.CacheAffinityWaitMs != uint64(w) {
				t.Errorf("%s/%s: wait = %d, want %d", file, c.Name, ac.CacheAffinityWaitMs, w)
			}
			if l, ok := raw["last_cluster_affinity"].(bool); ok && ac.LastClusterAffinity != l {
				t.Errorf("%s/%s: last_cluster_affinity = %v, want %v", file, c.Name, ac.LastClusterAffinity, l)
			}
			if s, ok := raw["seed"].(string); ok && ac.Seed != s {
				t.Errorf("%s/%s: seed = %q, want %q", file, c.Name, ac.Seed, s)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d decision cases found", n)
	}
}
