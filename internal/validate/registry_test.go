package validate_test

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

var update = flag.Bool("update", false, "rewrite the generated docs: docs/diagnostics.md from validate.Registry, the field matrix of docs/validate.md from lb.Fields")

// TestRegistry checks the code registry: unique codes in order, ranges
// matching severities, rule numbers matching codes, and every example
// actually producing its code.
func TestRegistry(t *testing.T) {
	seen := map[validate.Code]bool{}
	prev := validate.Code("")
	codeRe := regexp.MustCompile(`^LC([123])(\d)(\d\d)$`)
	for _, c := range validate.Registry {
		if seen[c.Code] {
			t.Errorf("%s registered twice", c.Code)
		}
		seen[c.Code] = true
		if c.Code <= prev {
			t.Errorf("%s out of order", c.Code)
		}
		prev = c.Code
		m := codeRe.FindStringSubmatch(string(c.Code))
		if m == nil {
			t.Fatalf("%s: bad code", c.Code)
		}
		wantSev := map[string]validate.Severity{"1": validate.SeverityError, "2": validate.SeverityWarning, "3": validate.SeverityInfo}[m[1]]
		if c.Severity != wantSev {
			t.Errorf("%s: severity %v outside its range", c.Code, c.Severity)
		}
		if m[2] == "0" && c.Code != validate.CodeRead && c.Code != validate.CodeNoSLOBounded {
			letter := map[string]string{"1": "V", "2": "W", "3": "W"}[m[1]]
			if want := fmt.Sprintf("%s%d", letter, atoi(m[3])); c.Rule != want {
				t.Errorf("%s: rule %q, want %q", c.Code, c.Rule, want)
			}
		}
		if c.Title == "" || c.Meaning == "" || c.Example == "" {
			t.Errorf("%s: undocumented", c.Code)
		}
		if c.Code == validate.CodeRead {
			continue // the example is a command line, not a config
		}
		name := "example.json"
		if !strings.HasPrefix(strings.TrimSpace(c.Example), "{") && !strings.HasPrefix(strings.TrimSpace(c.Example), "[") && !strings.HasPrefix(strings.TrimSpace(c.Example), `"`) {
			name = "example.yaml"
		}
		if r := validate.File(name, []byte(c.Example)); !hasCode(r, c.Code) {
			t.Errorf("%s: its example does not produce it:\n%s", c.Code, dump(r.Diagnostics))
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestDiagnosticsDoc keeps docs/diagnostics.md equal to the rendering of
// validate.Registry (run with -update to rewrite it).
func TestDiagnosticsDoc(t *testing.T) {
	testutil.CheckGeneratedDoc(t, "docs/diagnostics.md", "", renderDiagnosticsDoc(),
		"go test ./internal/validate -run TestDiagnosticsDoc -update", *update)
}

func renderDiagnosticsDoc() string {
	var b strings.Builder
	b.WriteString(`# lcctl diagnostics

Every finding of ` + "`lcctl validate`" + ` carries a stable code. Codes never change
meaning. This page is generated from ` + "`validate.Registry`" + `
(` + "`internal/validate/codes.go`" + `) by
` + "`go test ./internal/validate -run TestDiagnosticsDoc -update`" + `; a test fails
when it is out of date.

- **LC1xxx — errors.** Stargate refuses to start. ` + "`LC10NN`" + ` reproduces startup
  rule VNN of ` + "`../shared/spec/lb-config.md`" + ` §8; ` + "`LC11xx`" + ` are lcctl-only errors
  for YAML input (§7.4). Messages contain Stargate's own text for the rule.
- **LC2xxx — warnings.** The config is accepted but probably not what the
  operator wants. ` + "`LC20NN`" + ` is operator warning WNN of §9; ` + "`LC21xx`" + ` are
  lcctl-only. ` + "`--strict`" + ` makes them fail the run.
- **LC3xxx — infos.** Worth knowing, never a failure. ` + "`LC30NN`" + ` is WNN reported
  as info.

| Code | Severity | Rule | Title |
| --- | --- | --- | --- |
`)
	for _, c := range validate.Registry {
		rule := c.Rule
		if rule == "" {
			rule = "lcctl"
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s |\n", c.Code, strings.ToLower(string(c.Code)), c.Severity, rule, c.Title)
	}
	for _, c := range validate.Registry {
		rule := c.Rule
		if rule == "" {
			rule = "lcctl-only"
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s — %s (%s)\n\n%s\n\nExample:\n\n", c.Code, c.Title, c.Severity, rule, c.Meaning)
		lang := "json"
		if !strings.HasPrefix(c.Example, "{") && !strings.HasPrefix(c.Example, "[") && !strings.HasPrefix(c.Example, `"`) {
			lang = "yaml"
		}
		if c.Code == validate.CodeRead {
			lang = "sh"
		}
		fmt.Fprintf(&b, "```%s\n%s\n```\n", lang, c.Example)
	}
	return b.String()
}
