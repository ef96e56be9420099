package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/live/livetest"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// jsonRun is one --output json invocation of a command: its arguments
// (after the command path), the schema every document or line must carry,
// whether the output is JSON Lines, and the exit codes it may end with.
type jsonRun struct {
	args  []string
	doc   string
	lines bool
	codes []int
}

// TestEveryCommandStampsJSON runs every runnable command with --output
// json and checks that each document, and each line of a JSON Lines
// stream, is an object whose first key is "schema" with the command's
// identification (docs/cli.md "JSON output"). A command added to the tree
// without a run here fails the test.
func TestEveryCommandStampsJSON(t *testing.T) {
	repo := testutil.RepoRoot(t)
	shared := testutil.SharedDir(t)
	ex := func(p string) string { return filepath.Join(repo, "examples", p) }
	seedTestDMap(t, 20)
	storeRun := func(doc string, lines bool, args ...string) []jsonRun {
		return []jsonRun{{args: storeArgs(t, args...)[1:], doc: doc, lines: lines, codes: []int{0}}}
	}
	explainArgs := []string{"--config", ex("explain/returning-outside-group.lb-config.yaml"), "--snapshot", ex("explain/returning-outside-group.snapshot.yaml"), "--model", "model-a"}
	_, ctxFile := writeContexts(t, testContexts, 0o600)
	runs := map[string][]jsonRun{
		"demo":     {{args: []string{"--only", "explain"}, doc: "demo", codes: []int{0}}},
		"validate": {{args: []string{ex("lb-config")}, doc: "validate", codes: []int{1}}},
		"migrate":  {{args: []string{"--strategy", "bounded", ex("lb-config/no-slo-pulsar-wait-and-widen.json")}, doc: "migrate", codes: []int{1}}},
		"explain": {
			{args: explainArgs, doc: "explain", codes: []int{0}},
			{args: []string{"--check", "--case", filepath.Join(shared, "conformance/session.yaml")}, doc: "explain-cases", codes: []int{0}},
		},
		"simulate":        {{args: []string{"--scenario", ex("scenarios/saturated-rank1.yaml"), "--compare", "--max-requests", "2000"}, doc: "simulate", codes: []int{0}}},
		"preflight":       {{args: []string{"--stage", "2", "--config", ex("lb-config/pulsar-wait-and-widen.json"), "--gateway-values", ex("gateway/values-stage2.yaml")}, doc: "checks", codes: []int{0, 1}}},
		"check metrics":   {{args: []string{"--stargate", ex("metrics/stargate-stage3.prom"), "--gateway", ex("metrics/gateway-stage3.prom")}, doc: "metrics", codes: []int{0, 1}}},
		"store key":       {{args: []string{"key", "--routing-key", "rk", "--model", "m", "--affinity-key", "a"}, doc: "store-key", lines: true, codes: []int{0}}},
		"store get":       storeRun("store-get", false, "get", "--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "prompt_cache_key"),
		"store put":       storeRun("store-put", false, "put", "--routing-key", "rk", "--model", "m", "--affinity-key", "a", "--cluster", "cluster-a", "--yes"),
		"store del":       storeRun("store-del", false, "del", "--routing-key", "rk", "--model", "m", "--affinity-key", "a"),
		"store scan":      storeRun("store-scan", true, "scan", "--limit", "3"),
		"store evict":     storeRun("store-evict", false, "evict", "--cluster", "cluster-c"),
		"store stats":     storeRun("store-stats", false, "stats"),
		"store probe":     storeRun("store-probe", false, "probe"),
		"store serve-dev": {{args: []string{"serve-dev", "--port", "0"}, doc: "store-serve-dev", lines: true, codes: []int{0}}},
		"version":         {{doc: "version", codes: []int{0}}},
		"snapshot":        {{args: []string{"--model", "company/model", "--pylon", "cluster-a=" + livetest.Start(t, pylonValues(1000, 1, 100)).URL}, doc: "snapshot", codes: []int{0}}},
		"context list":    {{args: []string{"--config-file", ctxFile}, doc: "context-list", codes: []int{0}}},
		"context use":     {{args: []string{"--config-file", ctxFile, "local"}, doc: "context-use", codes: []int{0}}},
		"context show":    {{args: []string{"--config-file", ctxFile, "--resolved"}, doc: "context-show", codes: []int{0}}},
		"explain-code":    {{args: []string{"LC2001"}, doc: "explain-code", codes: []int{0}}},
		"docs":            {{doc: "docs", codes: []int{0}}, {args: []string{"rollout"}, doc: "docs", codes: []int{0}}},
	}

	seen := map[string]bool{}
	walkRunnable(NewRootCommand(&ui.Streams{}), func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "lcctl ")
		if path == "help" || strings.HasPrefix(path, "completion") {
			return // they print help text and shell scripts, never JSON
		}
		seen[path] = true
		rs, ok := runs[path]
		if !ok {
			t.Errorf("%s: no --output json run in TestEveryCommandStampsJSON", path)
		}
		for _, r := range rs {
			t.Run(path, func(t *testing.T) {
				argv := append(strings.Fields(path), r.args...)
				if strings.HasPrefix(path, "store ") {
					argv = append([]string{"store"}, r.args...)
				}
				argv = append(argv, "--output", "json")
				out, stderr, code := runForJSON(t, path == "store serve-dev", argv)
				if !containsInt(r.codes, code) {
					t.Fatalf("lcctl %s: exit %d, want %v\nstderr: %s", strings.Join(argv, " "), code, r.codes, stderr)
				}
				checkStamped(t, out, SchemaID(r.doc), r.lines)
				if path == "demo" {
					checkDemoOutputs(t, out)
				}
			})
		}
	})
	for path := range runs {
		if !seen[path] {
			t.Errorf("%s: a run for a command the tree does not have", path)
		}
	}
}

// walkRunnable calls f for every runnable command without subcommands.
func walkRunnable(c *cobra.Command, f func(*cobra.Command)) {
	if c.HasSubCommands() {
		for _, s := range c.Commands() {
			walkRunnable(s, f)
		}
		return
	}
	if c.Runnable() {
		f(c)
	}
}

// runForJSON runs lcctl in-process. A server (serve) is interrupted once
// it has written its first line.
func runForJSON(t *testing.T, serve bool, argv []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errb bytes.Buffer
	out := &lineCanceler{cancel: cancel, active: serve}
	s := &ui.Streams{In: strings.NewReader(""), Out: out, Err: &errb, Getenv: func(string) string { return "" }}
	code := Main(ctx, argv, s)
	return out.String(), errb.String(), code
}

// lineCanceler is a buffer that, when active, cancels once a whole line
// has been written.
type lineCanceler struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	cancel func()
	active bool
}

func (w *lineCanceler) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.active && bytes.IndexByte(w.buf.Bytes(), '\n') >= 0 {
		w.cancel()
	}
	return n, err
}

func (w *lineCanceler) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// checkStamped checks that out is one JSON object (lines=false) or JSON
// Lines of objects, each starting with "schema": id.
func checkStamped(t *testing.T, out, id string, lines bool) {
	t.Helper()
	var docs []string
	if lines {
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			docs = append(docs, sc.Text())
		}
	} else {
		docs = []string{out}
	}
	if len(docs) == 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("no JSON output")
	}
	for i, d := range docs {
		if !json.Valid([]byte(d)) {
			t.Fatalf("document %d is not JSON: %.200s", i+1, d)
		}
		dec := json.NewDecoder(strings.NewReader(d))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("document %d is not an object: %.200s", i+1, d)
		}
		key, _ := dec.Token()
		var val string
		if err := dec.Decode(&val); key != "schema" || err != nil || val != id {
			t.Fatalf("document %d starts with %v: %v, want \"schema\": %q\n%.300s", i+1, key, val, id, d)
		}
	}
}

// checkDemoOutputs checks the outputs of the commands the demo ran: each
// document, and each line of a JSON Lines output (an array here), carries
// its own command's identification.
func checkDemoOutputs(t *testing.T, out string) {
	t.Helper()
	var d struct {
		Steps []struct {
			Commands []struct {
				Command string          `json:"command"`
				Output  json.RawMessage `json:"output"`
			} `json:"commands"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range d.Steps {
		for _, c := range s.Commands {
			var docs []json.RawMessage
			if err := json.Unmarshal(c.Output, &docs); err != nil {
				docs = []json.RawMessage{c.Output}
			}
			for _, doc := range docs {
				var head struct {
					Schema string `json:"schema"`
				}
				if err := json.Unmarshal(doc, &head); err != nil || !strings.HasPrefix(head.Schema, "lcctl.") {
					t.Errorf("demo: output of %s has no schema: %.200s", c.Command, doc)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Error("demo: no command output")
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// The writer stamps objects, keeps a matching "schema" already there and
// refuses anything else.
func TestStampJSON(t *testing.T) {
	for _, c := range []struct {
		v       any
		want    string
		wantErr bool
	}{
		{struct{}{}, `{"schema":"lcctl.x/v1"}`, false},
		{map[string]string{"a": "<&>"}, `{"schema":"lcctl.x/v1","a":"<&>"}`, false},
		{struct {
			Schema string `json:"schema"`
			N      int    `json:"n"`
		}{"lcctl.x/v1", 1}, `{"schema":"lcctl.x/v1","n":1}`, false},
		{struct {
			Schema string `json:"schema"`
		}{"lcctl.y/v1"}, "", true},
		{[]int{1}, "", true},
		{"s", "", true},
	} {
		b, err := stampJSON("x", c.v)
		if (err != nil) != c.wantErr || string(b) != c.want {
			t.Errorf("stampJSON(%#v) = %s, %v; want %s (error %v)", c.v, b, err, c.want, c.wantErr)
		}
	}
}

// failWriter fails every write.
type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// The writer's errors reach the caller: the output's own (a closed pipe)
// unchanged, a value that does not encode worded with its document.
func TestWriteJSONErrors(t *testing.T) {
	broken := errors.New("broken pipe")
	for _, write := range []func(io.Writer, string, any) error{writeJSON, writeJSONLine} {
		if err := write(failWriter{broken}, "x", map[string]int{"a": 1}); !errors.Is(err, broken) {
			t.Errorf("failing output: %v, want %v", err, broken)
		}
		var out bytes.Buffer
		if err := write(&out, "x", map[string]any{"c": make(chan int)}); err == nil || !strings.HasPrefix(err.Error(), "encoding the lcctl.x/v1 JSON document: ") || out.Len() != 0 {
			t.Errorf("value that does not encode: %v, wrote %q", err, out.String())
		}
	}
	// A second piece handed to one sink is refused, not taken for the
	// rest of the document.
	var got [][]byte
	s := &documentSink{handle: func(p []byte) error { got = append(got, p); return nil }}
	if _, err := s.Write([]byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("{}\n")); err == nil || len(got) != 1 {
		t.Errorf("second write: %v, handled %d", err, len(got))
	}
}
