package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckGeneratedDoc keeps a generated part of a file in the repository
// equal to want: the whole file when section is "", otherwise the lines
// between "<!-- BEGIN generated: SECTION -->" and
// "<!-- END generated: SECTION -->" (markers kept). rel is relative to the
// repository root, e.g. "docs/validate.md". With update the part is
// rewritten; otherwise a difference fails the test with the command that
// regenerates it (command, e.g. "go test ./internal/validate -run
// TestDiagnosticsDoc -update"). A missing file or marker fails the test.
func CheckGeneratedDoc(t testing.TB, rel, section, want, command string, update bool) {
	t.Helper()
	path := filepath.Join(RepoRoot(t), filepath.FromSlash(rel))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, full := string(data), want
	if section != "" {
		begin := "<!-- BEGIN generated: " + section + " -->\n"
		end := "<!-- END generated: " + section + " -->"
		i := strings.Index(got, begin)
		j := strings.Index(got, end)
		if i < 0 || j < i {
			t.Fatalf("%s: markers %q … %q not found", rel, strings.TrimSpace(begin), end)
		}
		full = got[:i+len(begin)] + want + got[j:]
		got = got[i+len(begin) : j]
	}
	if update {
		if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s is out of date (section %q): run %s", rel, section, command)
	}
}
