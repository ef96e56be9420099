package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// TestExplainCaseJSONDocumented keeps docs/explain.md's `--case` section in
// step with the JSON that explain --case prints: every key of a case and
// of its decision summary must be named there in backquotes.
func TestExplainCaseJSONDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "explain.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## `--case FILE [--check]`")
	if start < 0 {
		t.Fatal("docs/explain.md has no `--case FILE [--check]` section")
	}
	section := text[start:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(explainReport{}), reflect.TypeOf(explainCase{}), reflect.TypeOf(decisionSummary{})} {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if !strings.Contains(section, "`"+name+"`") && !strings.Contains(section, `"`+name+`"`) {
				t.Errorf("%s.%s: JSON key %q is not documented in the --case section of docs/explain.md", typ.Name(), typ.Field(i).Name, name)
			}
		}
	}
}
