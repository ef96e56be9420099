package validate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

var (
	specRow   = regexp.MustCompile("^\\| (\\d+) \\| `(.*)` \\| (.*) \\|$")
	ruleToken = regexp.MustCompile(`\b([VW]\d+)\b`)
)

// TestSpecSection14 reads the table of small examples in section 14 of
// ../shared/spec/lb-config.md at test time and checks each verdict and
// each V/W rule named in its reason.
func TestSpecSection14(t *testing.T) {
	for _, m := range section14(t) {
		num, cfg, reason := m[1], m[2], m[3]
		t.Run("example-"+num, func(t *testing.T) {
			r := validate.File("example.json", []byte(cfg))
			wantValid := strings.HasPrefix(reason, "✓")
			if r.Valid() != wantValid {
				t.Fatalf("%s: valid = %v, want %v (%s)\n%s", cfg, r.Valid(), wantValid, reason, dump(r.Diagnostics))
			}
			for _, rule := range ruleToken.FindAllString(reason, -1) {
				if wantValid && rule[0] == 'V' {
					// An accepted example names the V rule that allows it.
					continue
				}
				found := false
				for _, d := range r.Diagnostics {
					if d.Rule == rule {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: no diagnostic for %s (%s)\n%s", cfg, rule, reason, dump(r.Diagnostics))
				}
			}
			if !wantValid {
				// The first V rule named is the one Stargate reports.
				if v := ruleToken.FindString(reason); v != "" && v[0] == 'V' {
					for _, d := range r.Errors() {
						if d.Rule != v {
							t.Errorf("%s: unexpected error %s besides %s", cfg, d, v)
						}
					}
				}
				// Quoted Stargate text must appear in the message.
				if q := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(reason); q != nil && !strings.HasPrefix(q[1], "…") {
					want := strings.TrimPrefix(q[1], "…")
					found := false
					for _, d := range r.Errors() {
						if strings.Contains(d.Message, want) {
							found = true
						}
					}
					if !found {
						t.Errorf("%s: no error message contains %q:\n%s", cfg, want, dump(r.Errors()))
					}
				}
			}
			if strings.Contains(reason, "M4: info") && !hasCode(r, validate.CodeNoSLOBounded) {
				t.Errorf("%s: want LC3001 (M4 info)", cfg)
			}
		})
	}
}

// TestSpecSection14AsConformanceCases feeds every section-14 example to
// validate.Node the way a config-only conformance case carries it
// (`lb_config: <the JSON text>`, formats.md) and requires the same verdict
// and the same findings as reading the JSON file. Example 50 (`-0` in an
// unsigned field) is the one where YAML's core schema and serde_json
// disagree.
func TestSpecSection14AsConformanceCases(t *testing.T) {
	for _, m := range section14(t) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("- name: example-"+m[1]+"\n  lb_config: "+m[2]+"\n"), &doc); err != nil {
			t.Fatalf("example %s: %v", m[1], err)
		}
		node := doc.Content[0].Content[0].Content[3]
		got := validate.Node(node, nil, "config.yaml")
		want := validate.File("example.json", []byte(m[2]))
		if got.Valid() != want.Valid() {
			t.Errorf("example %s %s: Node valid = %v, JSON valid = %v\n%s", m[1], m[2], got.Valid(), want.Valid(), dump(got.Diagnostics))
			continue
		}
		if len(got.Diagnostics) != len(want.Diagnostics) {
			t.Errorf("example %s: Node findings differ from JSON:\n%s---\n%s", m[1], dump(got.Diagnostics), dump(want.Diagnostics))
			continue
		}
		for i := range got.Diagnostics {
			g, w := got.Diagnostics[i], want.Diagnostics[i]
			// Messages of errors carry no line numbers; W15's do.
			if g.Code != w.Code || g.Path != w.Path || (g.Severity == validate.SeverityError && g.Message != w.Message) {
				t.Errorf("example %s: finding %d: Node %s, JSON %s", m[1], i, g, w)
			}
		}
	}
	// Block-style YAML keeps the core schema of lb-config.md §7.4: -0 is 0.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("models:\n  m:\n    algorithm: wait-and-widen\n    max_queued: -0\n"), &doc); err != nil {
		t.Fatal(err)
	}
	if r := validate.Node(&doc, nil, "c.yaml"); !r.Valid() {
		t.Errorf("block YAML -0 rejected:\n%s", dump(r.Diagnostics))
	}
}

// section14 returns the rows of the table of small examples in section 14
// of ../shared/spec/lb-config.md, read at test time: per row the number,
// the config text and the expected verdict with its reason (specRow's
// submatches). It fails the test when the section is missing or holds fewer
// than 60 examples, so a moved table cannot pass silently.
func section14(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.SharedDir(t), "spec", "lb-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "## 14. Small examples")
	end := strings.Index(text, "Header examples")
	if start < 0 || end < start {
		t.Fatal("section 14 not found in lb-config.md")
	}
	var rows [][]string
	for _, line := range strings.Split(text[start:end], "\n") {
		if m := specRow.FindStringSubmatch(line); m != nil {
			rows = append(rows, m)
		}
	}
	if len(rows) < 60 {
		t.Fatalf("found only %d examples in section 14", len(rows))
	}
	return rows
}

func hasCode(r *validate.Result, c validate.Code) bool {
	for _, d := range r.Diagnostics {
		if d.Code == c {
			return true
		}
	}
	return false
}
