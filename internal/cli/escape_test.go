package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lcctl/lcctl/internal/testutil"
)

// rawControl reports whether s holds a character ui.Printable escapes: an
// ESC or another C0/C1 control other than newline and tab, or a bidi
// formatting character.
func rawControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		if r == '\n' || r == '\t' {
			return false
		}
		return r < 0x20 || (r >= 0x7f && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
	}) >= 0
}

// Every command's errors reach the terminal through one escaping path:
// a config value holding ESC[31m and U+202E is quoted escaped by every
// command that reads it. explain printed it raw in its "unknown variant"
// errors under --config, --algorithm-config, --compare config= and --case.
func TestErrorsEscapeControlsInEveryCommand(t *testing.T) {
	dir := t.TempDir()
	bad := `"\u001b[31mbad\u202e"`
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := write("bad.json", `{"default":"pulsar","models":{"model-a":{"algorithm":"pulsar","rendezvous_weight":`+bad+`}}}`)
	// migrate reports the errors of a file it would migrate.
	mig := write("mig.json", `{"default":"pulsar","models":{"m":{"algorithm":"pulsar-wait-and-widen","seed":"s"},"model-a":{"algorithm":"pulsar","rendezvous_weight":`+bad+`}}}`)
	good := write("good.json", `{"default":"pulsar"}`)
	alg := write("alg.json", `{"algorithm":"pulsar","rendezvous_weight":`+bad+`}`)
	cases := write("case.yaml", "- name: c\n  lb_config: {\"default\": \"pulsar\", \"models\": {\"m\": {\"algorithm\": \"pulsar\", \"rendezvous_weight\": "+bad+"}}}\n  expect: {valid: true}\n"+
		"- name: d\n  config: {\"algorithm\": \"pulsar\", \"rendezvous_weight\": "+bad+"}\n  request: {model: m}\n  snapshot: {clusters: [{cluster_id: A}]}\n  expect: {outcome: dispatch}\n")
	root := testutil.RepoRoot(t)
	snap := filepath.Join(root, "examples/explain/rank1-full.snapshot.yaml")
	scenario := filepath.Join(root, "examples/scenarios/drain.yaml")
	for name, args := range map[string][]string{
		"validate":                   {"validate", cfg},
		"migrate":                    {"migrate", "--strategy", "bounded", mig},
		"explain --config":           {"explain", "--snapshot", snap, "--model", "model-a", "--config", cfg},
		"explain --algorithm-config": {"explain", "--snapshot", snap, "--model", "model-a", "--algorithm-config", alg},
		"explain --compare config=":  {"explain", "--snapshot", snap, "--model", "model-a", "--config", good, "--compare", "config=" + cfg},
		"explain --case":             {"explain", "--check", "--case", cases},
		"simulate --config":          {"simulate", "--scenario", scenario, "--config", cfg, "--max-requests", "10"},
		"preflight --config":         {"preflight", "--stage", "1", "--config", cfg},
	} {
		t.Run(name, func(t *testing.T) {
			r := lcctl(t, "", nil, args...)
			if r.code == 0 {
				t.Fatalf("exit 0, stderr %q", r.err)
			}
			if rawControl(r.err) || rawControl(r.out) {
				t.Errorf("raw control character in the output:\nstdout %q\nstderr %q", r.out, r.err)
			}
			if !strings.Contains(r.err+r.out, `\x1b[31mbad\u202e`) {
				t.Errorf("the value is not shown escaped:\nstdout %q\nstderr %q", r.out, r.err)
			}
		})
	}
}

// JSON output carries no raw U+202E (or other bidi or C1 control) inside
// a string: it is written as \u202e.
func TestJSONOutputEscapesBidi(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rlo.json")
	if err := os.WriteFile(p, []byte("{\"default\":\"pulsar\",\"models\":{\"m\u202e\":{\"algorithm\":\"pulsar-wait-and-widen\",\"seed\":\"gnp\u202e\"}}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"migrate", "--strategy", "bounded", "-o", "json", p}, {"validate", "-o", "json", p}} {
		r := lcctl(t, "", nil, args...)
		if strings.ContainsRune(r.out, '\u202e') || !strings.Contains(r.out, `\u202e`) {
			t.Errorf("%v: exit %d, stdout %q", args, r.code, r.out)
		}
	}
}

// Bytes that are not UTF-8 in a value an error echoes (here a file name,
// and an --exclude cluster id) reach the terminal as \xNN, through the
// same escaping path as control characters, in every command family
// (JSON output has encoding/json's U+FFFD for them).
func TestErrorsEscapeInvalidUTF8InEveryCommand(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "b\xffd")
	root := testutil.RepoRoot(t)
	snap := filepath.Join(root, "examples/explain/rank1-full.snapshot.yaml")
	scenario := filepath.Join(root, "examples/scenarios/drain.yaml")
	for name, args := range map[string][]string{
		"validate":                  {"validate", missing + ".json"},
		"validate -o json":          {"validate", "-o", "json", missing + ".json"},
		"migrate":                   {"migrate", "--strategy", "bounded", missing + ".json"},
		"explain --config":          {"explain", "--snapshot", snap, "--model", "model-a", "--config", missing + ".json"},
		"explain --compare config=": {"explain", "--snapshot", snap, "--model", "model-a", "--compare", "config=" + missing + ".json"},
		"explain --case":            {"explain", "--check", "--case", missing + ".yaml"},
		"explain --exclude":         {"explain", "--snapshot", snap, "--model", "model-a", "--exclude", "A,b\xffd"},
		"simulate --scenario":       {"simulate", "--scenario", missing + ".yaml"},
		"simulate --config":         {"simulate", "--scenario", scenario, "--config", missing + ".json", "--max-requests", "10"},
		"preflight --config":        {"preflight", "--stage", "1", "--config", missing + ".json"},
	} {
		t.Run(name, func(t *testing.T) {
			r := lcctl(t, "", nil, args...)
			if r.code == 0 {
				t.Fatalf("exit 0, stderr %q", r.err)
			}
			if !utf8.ValidString(r.out) || !utf8.ValidString(r.err) {
				t.Errorf("bytes that are not UTF-8 in the output:\nstdout %q\nstderr %q", r.out, r.err)
			}
			want := `b\xffd`
			if args[1] == "-o" {
				want = `b\ufffdd` // encoding/json's replacement
			}
			if !strings.Contains(r.err+r.out, want) {
				t.Errorf("the value is not shown escaped:\nstdout %q\nstderr %q", r.out, r.err)
			}
		})
	}
}
