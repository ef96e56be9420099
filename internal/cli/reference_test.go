package cli

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	lcctlfiles "github.com/lcctl/lcctl"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

func TestExplainCodeAndHelpCode(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"explain-code", "LC2001"}, {"help", "lc2001"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errs)
		}
		for _, want := range []string{"LC2001 warning (rule W1)", "Example:\n  {\"models\": {\"m\": \"pulsar-wait-and-widen\"}}", "lcctl validate says:", "Fix:\n  run `lcctl migrate`"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: no %q in\n%s", args, want, out)
			}
		}
	}
	code, _, errs := runCLI(t, "", "explain-code", "LC2091")
	if code != ExitUsage || !strings.Contains(errs, `did you mean "LC2001"`) {
		t.Errorf("unknown code: exit %d %s", code, errs)
	}
	// help keeps refusing unknown topics that are not codes.
	if code, _, _ := runCLI(t, "", "help", "nosuch"); code != ExitUsage {
		t.Errorf("help nosuch: exit %d", code)
	}
	code, out, _ := runCLI(t, "", "-o", "json", "explain-code", "LC1018")
	var rep explainCodeReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Severity != "error" || rep.Hint == "" || !strings.Contains(rep.Message, "does not support field") {
		t.Errorf("json: exit %d %+v", code, rep)
	}
}

func TestDocsEmbedded(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, "", "docs")
	if code != 0 || !strings.Contains(out, "rollout") || !strings.Contains(out, "index") {
		t.Fatalf("docs: exit %d\n%s", code, out)
	}
	// Piped (not a terminal): the Markdown source as it is in docs/.
	code, out, _ = runCLI(t, "", "docs", "rollout")
	want, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "rollout.md"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || out != string(want) {
		t.Fatalf("docs rollout: exit %d, %d bytes, want the %d bytes of docs/rollout.md", code, len(out), len(want))
	}
	if code, _, errs := runCLI(t, "", "docs", "rolout"); code != ExitUsage || !strings.Contains(errs, `did you mean "rollout"`) {
		t.Errorf("typo: exit %d %s", code, errs)
	}
	var b bytes.Buffer
	if err := renderMarkdown(&b, []byte("# Title\n\nSome `code` and a table:\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n"), 60); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[") || !strings.Contains(b.String(), "Title") {
		t.Errorf("terminal rendering has no styling: %q", b.String())
	}
}

func TestManPagesAndVersionFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := WriteManPages(dir); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "lcctl-validate.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), ".TH \"LCCTL\" \"1\"") || !strings.Contains(string(page), `\fB--values-key\fP=`) {
		t.Errorf("lcctl-validate.1 lacks its header or flags:\n%.400s", page)
	}
	if _, err := os.Stat(filepath.Join(dir, "lcctl-store-scan.1")); err != nil {
		t.Error(err)
	}
	code, out, _ := runCLI(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "lcctl "+versionInfo().Version+"\ncommit: ") {
		t.Errorf("--version: exit %d %q", code, out)
	}
}

// TestHelpNamesNoDocsPaths: an installed binary has no docs/ folder, so
// no help text, example or flag usage points at docs/*.md ('lcctl docs
// TOPIC' instead), and every topic a help text names exists.
func TestHelpNamesNoDocsPaths(t *testing.T) {
	t.Parallel()
	path := regexp.MustCompile(`docs/[a-z-]+\.md`)
	topic := regexp.MustCompile(`lcctl docs ([a-z-]+)`)
	known := map[string]bool{}
	for _, tp := range docTopics() {
		known[tp.Name] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts := []string{c.Short, c.Long, c.Example}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, s := range texts {
			if m := path.FindString(s); m != "" {
				t.Errorf("%s: help names %s, which an installed binary lacks", c.CommandPath(), m)
			}
			for _, m := range topic.FindAllStringSubmatch(s, -1) {
				if !known[m[1]] && m[1] != "topic" {
					t.Errorf("%s: help names 'lcctl docs %s', not a topic", c.CommandPath(), m[1])
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(&ui.Streams{}))
}

// TestDocsRenderEveryTopic: glamour renders every embedded document
// (tables, code blocks, links) without error and keeps its headings.
func TestDocsRenderEveryTopic(t *testing.T) {
	t.Parallel()
	for _, tp := range docTopics() {
		data, err := fs.ReadFile(lcctlfiles.Docs, tp.path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := renderMarkdown(&b, data, 100); err != nil {
			t.Errorf("%s: %v", tp.Name, err)
			continue
		}
		title := strings.Fields(strings.Trim(tp.Title, "`"))[0]
		if !strings.Contains(ansiRE.ReplaceAllString(b.String(), ""), strings.Trim(title, "`")) {
			t.Errorf("%s: the rendered text lacks the title word %q", tp.Name, title)
		}
	}
}

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestVersionFlagHonoursOutputJSON(t *testing.T) {
	t.Parallel()
	_, want, _ := runCLI(t, "", "version", "-o", "json")
	for _, args := range [][]string{{"--version", "-o", "json"}, {"-o", "json", "--version"}} {
		code, out, errs := runCLI(t, "", args...)
		if code != ExitOK || out != want {
			t.Errorf("%v: exit %d\n%q\nwant %q\n%s", args, code, out, want, errs)
		}
	}
	if code, out, _ := runCLI(t, "", "--version"); code != ExitOK || !strings.HasPrefix(out, "lcctl ") {
		t.Errorf("--version: exit %d %q", code, out)
	}
}
