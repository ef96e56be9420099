package validate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
	n := 0
	for _, line := range strings.Split(text[start:end], "\n") {
		m := specRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
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
	if n < 60 {
		t.Errorf("found only %d examples in section 14", n)
	}
}

func hasCode(r *validate.Result, c validate.Code) bool {
	for _, d := range r.Diagnostics {
		if d.Code == c {
			return true
		}
	}
	return false
}
