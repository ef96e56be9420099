package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/demo"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// demoSimRequests keeps the simulate step short under the race detector.
const demoSimRequests = "3000"

func repoExamples(t *testing.T) string {
	return filepath.Join(testutil.RepoRoot(t), "examples")
}

// wantLines fails unless every pattern matches some line of out, in order.
func wantLines(t *testing.T, out string, patterns ...string) {
	t.Helper()
	rest := out
	for _, p := range patterns {
		re := regexp.MustCompile("(?m)" + p)
		loc := re.FindStringIndex(rest)
		if loc == nil {
			t.Fatalf("no line matching %q (after the earlier matches) in:\n%s", p, out)
		}
		rest = rest[loc[1]:]
	}
}

// TestDemoText runs the whole demo and checks the key lines of every
// step, in order.
func TestDemoText(t *testing.T) {
	ex := repoExamples(t)
	code, out, errs := runLcctlStdin(t, "", map[string]string{"NO_COLOR": "1"}, "demo", "--examples", ex, "--sim-requests", demoSimRequests)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if errs != "" {
		t.Fatalf("stderr: %s", errs)
	}
	q := regexp.QuoteMeta
	addr := regexp.MustCompile(`olric +(127\.0\.0\.1:\d+): an embedded Olric v0\.7\.4 member`).FindStringSubmatch(out)
	if addr == nil {
		t.Fatalf("no Olric address in:\n%s", out)
	}
	a := q(addr[1])
	wantLines(t, out,
		`^lcctl demo: the session-aware last-cluster affinity rollout, end to end$`,
		`^  examples  `+q(ex)+` \(this repository's\)$`,
		`^  sessions  301 entries \(ttl 1h\): cluster-a 149, cluster-b 92, cluster-c 59, B 1$`,

		`^Step 1/7 · validate: `,
		`^\$ lcctl validate -q `+q(filepath.Join(ex, "lb-config"))+`$`,
		`mistakes\.yaml \(yaml\) invalid  9 errors`,
		`^  warning LC2001 W1 .*no-slo-pulsar-wait-and-widen\.json:4:30 request_algorithms\["pulsar-wait-and-widen"\]$`,
		`^9 files checked: 1 failed; 9 errors`,
		`^✔ exit 1, as designed: mistakes\.yaml is broken on purpose`,

		`^Step 2/7 · migrate: `,
		`^\$ lcctl migrate --strategy bounded `+q(filepath.Join(ex, "lb-config", "no-slo-pulsar-wait-and-widen.json"))+`$`,
		`^\+      "max_queued": 4,$`,
		`no-slo-pulsar-wait-and-widen\.json \(json, --strategy bounded\) 4 changes pending`,
		`^  version safety: this file sets cache_affinity_wait_ms`,
		`^✔ exit 1, as designed: 1 means changes are pending; nothing was written`,

		`^Step 3/7 · preflight --stage 2: `,
		`^\$ lcctl preflight --stage 2 --config \S+pulsar-wait-and-widen\.json --gateway-values \S+values-stage2\.yaml --olric `+a+`$`,
		`^✔ gateway last-cluster store flag fits the stage$`,
		`^✔ Olric is reachable$`,
		`^✔ hint DMap is readable and writable`,
		`^Status check results are ✔ \(9 ok, 0 failed, 0 warnings, 2 skipped\)$`,
		`^✔ exit 0, as designed: no check failed`,

		`^Step 4/7 · store get → explain: `,
		`^\$ lcctl store get --olric `+a+` --routing-key rk-1 --model model-a --affinity-key session-6$`,
		`^cluster      B$`,
		`^✔ exit 0, as designed: the entry exists`,
		`^→ the session's last cluster is B: explain gets it as --last-cluster B$`,
		`^\$ lcctl explain --config \S+pwaw-sessions\.lb-config\.yaml --snapshot \S+returning-k1\.snapshot\.yaml --routing-key rk-1 --model model-a --affinity-key session-6 --last-cluster B --input-tokens 2000 --timeline --compare flag$`,
		`^  after       B A C D E  \(last cluster promoted\)$`,
		`^  Wait until 300 ms: affinity wait\.`,
		`^Compare: the same request with last_cluster_affinity off and on$`,
		`^✔ exit 0, as designed: explained$`,

		`^Step 5/7 · store scan and evict: `,
		`^\$ lcctl store scan --olric `+a+` --summary-only$`,
		`^scanned dmap stargate-last-cluster \(complete\) in \S+: 301 keys, 301 live entries$`,
		`^cluster-c +59 +19\.6%$`,
		`^\$ lcctl store evict --olric `+a+` --cluster cluster-c --sample 3$`,
		`^dry run: 59 entries point to cluster-c \(of 301 entries scanned`,
		`^run again with --yes to delete them`,
		`^✔ exit 0, as designed: dry run, nothing was deleted$`,

		`^Step 6/7 · simulate --compare: `,
		`^\$ lcctl simulate --scenario \S+saturated-rank1\.yaml --compare --max-requests `+demoSimRequests+`$`,
		`^scenario saturated-rank1$`,
		`^pulsar-wait-and-widen/lc-on `,
		`^last_cluster_affinity off → on:$`,
		`^  wait-and-widen: left last cluster \S+% → \S+%, KV reuse`,
		`^  pulsar-wait-and-widen: left last cluster \S+% → \S+%, KV reuse`,
		`^✔ exit 0, as designed: simulated`,

		`^Step 7/7 · snapshot → explain --session-id: `,
		`^\$ lcctl snapshot --model company/model --overlay \S+live\.overlay\.yaml --pylon cluster-a=http://127\.0\.0\.1:\d+/metrics --pylon cluster-b=\S+ --pylon cluster-c=\S+$`,
		`^      queue_size: 6 # metric from pylon_model_queue_size, age `,
		`^✔ exit 0, as designed: the snapshot was written`,
		`^\$ lcctl explain --config \S+live-session\.lb-config\.yaml --session-id session-1 --source prompt_cache_key --routing-key fn-alpha --model company/model --olric `+a+` --input-tokens 2000 --overlay \S+ --pylon `,
		`^Provenance$`,
		`^  hint        last cluster cluster-b from Olric: key`,
		`^✔ exit 0, as designed: explained`,

		`^✔ demo done: 7 of 7 steps ran as designed in `,
	)
	if strings.Contains(out, "--yes ") && !strings.Contains(out, "run again with --yes") {
		t.Fatal("the demo ran a command with --yes")
	}
}

type demoDoc struct {
	Schema   string `json:"schema"`
	Success  bool   `json:"success"`
	Examples struct {
		Dir      string `json:"dir"`
		Embedded bool   `json:"embedded"`
	} `json:"examples"`
	Olric *struct {
		Addr       string         `json:"addr"`
		Seeded     int            `json:"seeded"`
		PerCluster map[string]int `json:"per_cluster"`
		Kept       bool           `json:"kept"`
	} `json:"olric"`
	Steps []struct {
		Step        int    `json:"step"`
		Name        string `json:"name"`
		AsDesigned  bool   `json:"as_designed"`
		LastCluster string `json:"last_cluster"`
		Problem     string `json:"problem"`
		Commands    []struct {
			Command    string          `json:"command"`
			ExitCode   int             `json:"exit_code"`
			Expected   []int           `json:"expected_exit_codes"`
			AsDesigned bool            `json:"as_designed"`
			Output     json.RawMessage `json:"output"`
			Stderr     string          `json:"stderr"`
		} `json:"commands"`
		FlagEffects []struct {
			Algorithm   string  `json:"algorithm"`
			LeftLastOff float64 `json:"left_last_cluster_share_off"`
			LeftLastOn  float64 `json:"left_last_cluster_share_on"`
		} `json:"flag_effects"`
	} `json:"steps"`
}

// TestDemoJSON checks the JSON document: every step, its commands' exit
// codes and their own JSON output.
func TestDemoJSON(t *testing.T) {
	code, out, errs := runLcctlStdin(t, "", nil, "demo", "--output", "json", "--examples", repoExamples(t), "--sim-requests", demoSimRequests)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var d demoDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if d.Schema != "lcctl.demo/v1" || !d.Success || d.Examples.Embedded || d.Olric == nil || d.Olric.Seeded != 301 || d.Olric.PerCluster["B"] != 1 || d.Olric.Kept {
		t.Fatalf("document head: %+v", d)
	}
	if len(d.Steps) != 7 {
		t.Fatalf("%d steps, want 7", len(d.Steps))
	}
	wantCodes := [][]int{{1}, {1}, {0}, {0, 0}, {0, 0}, {0}, {0, 0}}
	for i, s := range d.Steps {
		if s.Step != i+1 || !s.AsDesigned || s.Problem != "" || len(s.Commands) != len(wantCodes[i]) {
			t.Fatalf("step %d: %+v", i+1, s)
		}
		for j, c := range s.Commands {
			if c.ExitCode != wantCodes[i][j] || !c.AsDesigned || !json.Valid(c.Output) || string(c.Output) == "null" {
				t.Fatalf("step %s command %s: exit %d, output %.200s", s.Name, c.Command, c.ExitCode, c.Output)
			}
		}
	}
	var validate struct {
		Files []struct {
			File         string   `json:"file"`
			Errors       int      `json:"errors"`
			NoSLOEntries []string `json:"no_slo_entries"`
		} `json:"files"`
	}
	mustDecode(t, d.Steps[0].Commands[0].Output, &validate)
	noSLO, mistakes := 0, 0
	for _, f := range validate.Files {
		switch filepath.Base(f.File) {
		case "mistakes.yaml":
			mistakes = f.Errors
		case "no-slo-pulsar-wait-and-widen.json":
			noSLO = len(f.NoSLOEntries)
		}
	}
	if mistakes != 9 || noSLO != 4 {
		t.Fatalf("validate: mistakes.yaml %d errors, no-SLO entries %d; want 9 and 4", mistakes, noSLO)
	}
	var migrate struct {
		Write bool `json:"write"`
		Files []struct {
			Status string `json:"status"`
		} `json:"files"`
	}
	mustDecode(t, d.Steps[1].Commands[0].Output, &migrate)
	if migrate.Write || len(migrate.Files) != 1 || migrate.Files[0].Status != "changes_pending" {
		t.Fatalf("migrate: %+v", migrate)
	}
	var pf jsonChecks
	mustDecode(t, d.Steps[2].Commands[0].Output, &pf)
	if !pf.Success || pf.Stage != 2 || pf.status("olric.dmap-rw", "") != "ok" || pf.status("gateway.flag", "") != "ok" {
		t.Fatalf("preflight: %+v", pf)
	}
	if d.Steps[3].LastCluster != "B" || !strings.Contains(d.Steps[3].Commands[1].Command, "--last-cluster B ") {
		t.Fatalf("explain step: last cluster %q, command %s", d.Steps[3].LastCluster, d.Steps[3].Commands[1].Command)
	}
	var evict struct {
		Applied    bool `json:"applied"`
		Candidates int  `json:"candidates"`
	}
	mustDecode(t, d.Steps[4].Commands[1].Output, &evict)
	if evict.Applied || evict.Candidates != 59 {
		t.Fatalf("evict: %+v", evict)
	}
	// store scan prints JSON lines: an array even with only the summary
	// line (--summary-only), so the type does not depend on the count.
	var scan []struct {
		Type    string `json:"type"`
		Entries int    `json:"entries"`
	}
	mustDecode(t, d.Steps[4].Commands[0].Output, &scan)
	if len(scan) != 1 || scan[0].Type != "summary" || scan[0].Entries < 300 {
		t.Fatalf("scan: %+v", scan)
	}
	fe := d.Steps[5].FlagEffects
	if len(fe) != 2 || fe[0].Algorithm != "wait-and-widen" || fe[1].Algorithm != "pulsar-wait-and-widen" {
		t.Fatalf("flag effects: %+v", fe)
	}
}

func mustDecode(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %.200s: %v", raw, err)
	}
}

// TestDemoSimulateStepIsTheCommand: the simulate step prints what
// `lcctl simulate` prints for the command line it shows, the
// last_cluster_affinity off → on summary included.
func TestDemoSimulateStepIsTheCommand(t *testing.T) {
	ex := repoExamples(t)
	env := map[string]string{"NO_COLOR": "1"}
	code, out, errs := runLcctlStdin(t, "", env, "demo", "--only", "simulate", "--examples", ex, "--sim-requests", "500")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(out, "olric ") {
		t.Fatalf("the simulate step started Olric:\n%s", out)
	}
	line := regexp.MustCompile(`(?m)^\$ lcctl (.*)$`).FindStringSubmatch(out)
	if line == nil {
		t.Fatalf("no command line in:\n%s", out)
	}
	code, direct, errs := runLcctlStdin(t, "", env, strings.Fields(line[1])...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", line[1], code, errs)
	}
	// The whole of it, the last_cluster_affinity off → on lines included
	// (one renderer for both).
	if !strings.Contains(direct, "\nlast_cluster_affinity off → on:\n  wait-and-widen: left last cluster ") {
		t.Fatalf("lcctl %s prints no off → on summary:\n%s", line[1], direct)
	}
	if !strings.Contains(out, line[0]+"\n"+direct) {
		t.Fatalf("the step's output differs from `lcctl %s`:\n--- step\n%s\n--- command\n%s", line[1], out, direct)
	}
}

// TestDemoOneStepWithoutOlric: --only validate needs no Olric, and outside
// a clone the demo uses the examples built into lcctl (the test runs in
// internal/cli).
func TestDemoOneStepWithoutOlric(t *testing.T) {
	code, out, errs := runLcctlStdin(t, "", map[string]string{"NO_COLOR": "1"}, "demo", "--step", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	wantLines(t, out,
		`^  examples  \S+lcctl-demo-examples-\S+ \(a copy of the examples built into lcctl, removed when the demo ends\)$`,
		`^Each step shows the lcctl command it runs\. The example copy of this run goes when the demo ends:$`,
		`^to run the commands by hand, run the demo with --keep \(it waits for Ctrl-C\), or run them in a clone of the lcctl repository on its examples/ folder\.$`,
		`^Step 1/7 · validate: `,
		`^✔ exit 1, as designed: `,
		`^✔ demo done: 1 of 1 steps ran as designed in `,
		`^Next: the runbook, 'lcctl docs rollout'; 'lcctl help' lists the commands`)
	if strings.Contains(out, "olric ") || strings.Contains(out, "Step 2/7") {
		t.Fatalf("--step 1 ran more than step 1:\n%s", out)
	}
	dir := regexp.MustCompile(`examples  (\S+) `).FindStringSubmatch(out)[1]
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the built-in examples copy %s was not removed: %v", dir, err)
	}
}

// TestDemoNotAsDesigned: a step whose command exits with another code
// than the plan expects fails the demo (exit 1) and says which.
func TestDemoNotAsDesigned(t *testing.T) {
	src := repoExamples(t)
	dst := t.TempDir()
	for _, rel := range []string{"lb-config", "explain", "scenarios", "gateway"} {
		entries, err := os.ReadDir(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, rel), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(src, rel, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, rel, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// mistakes.yaml fixed: validate now exits 0 where the story expects 1.
	if err := os.WriteFile(filepath.Join(dst, "lb-config", "mistakes.yaml"), []byte("default: pulsar\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runLcctlStdin(t, "", map[string]string{"NO_COLOR": "1"}, "demo", "--only", "validate", "--examples", dst)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	wantLines(t, out, `^✖ exit 0, expected 1: this step did not run as designed$`, `^✖ 1 of 1 steps did not run as designed: validate `)

	code, out, _ = runLcctlStdin(t, "", nil, "demo", "--only", "validate", "--examples", dst, "-o", "json")
	var d demoDoc
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 || d.Success || d.Steps[0].AsDesigned ||
		!strings.Contains(d.Steps[0].Problem, "exited 0, expected 1") {
		t.Fatalf("exit %d, %v: %s", code, err, out)
	}
}

func TestDemoUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--step", "8"}, "--step 8: want a step from 1 to 7"},
		{[]string{"--step", "0"}, "--step 0: want a step from 1 to 7"},
		{[]string{"--step", "1", "--only", "validate"}, "--step and --only both pick a step"},
		{[]string{"--only", "deploy"}, `--only "deploy": want one of validate, migrate, preflight, explain, store, simulate`},
		{[]string{"--sim-requests", "5"}, "--sim-requests 5 out of range"},
		{[]string{"--examples", "/nonexistent"}, "--examples /nonexistent: no lb-config/no-slo-pulsar-wait-and-widen.json in this folder"},
		{[]string{"extra"}, "unknown command"},
	} {
		code, out, errs := runLcctlStdin(t, "", nil, append([]string{"demo"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("demo %v: exit %d, stderr %q, stdout %q; want exit 2 and %q", tc.args, code, errs, out, tc.want)
		}
	}
}

// TestDemoKeep: --keep leaves the member running, with the seeded
// sessions, until the context ends (Ctrl-C), and then exits 0.
func TestDemoKeep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testutil.SyncBuffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}}
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, []string{"demo", "--only", "validate", "--keep"}, s) }()
	export := regexp.MustCompile(`(?m)^  export LCCTL_OLRIC_ADDRS=(127\.0\.0\.1:\d+)$`)
	var addr string
	deadline := time.Now().Add(60 * time.Second)
	for addr == "" {
		if m := export.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("demo --keep exited %d before printing the export line:\n%s\n%s", code, out.String(), errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no export line after 60s:\n%s", out.String())
		}
	}
	// Outside a clone (the test runs in internal/cli) the example copy
	// stays too, so the printed command lines keep working meanwhile.
	wantLines(t, out.String(),
		`^  examples  \S+lcctl-demo-examples-\S+ \(a copy of the examples built into lcctl, kept until Ctrl-C\)$`,
		`^Each step shows the lcctl command it runs; the example copy and the Olric member stay until Ctrl-C, so you can run them by hand meanwhile\.$`,
		`^\$ lcctl validate -q \S+lcctl-demo-examples-\S+$`,
		`^Olric keeps running at `+regexp.QuoteMeta(addr)+` until Ctrl-C, and the example copy stays at \S+lcctl-demo-examples-\S+\. In another shell:$`)
	line := regexp.MustCompile(`(?m)^\$ lcctl (validate .*)$`).FindStringSubmatch(out.String())
	if code, _, errs := runLcctlStdin(t, "", nil, strings.Fields(line[1])...); code != 1 {
		t.Fatalf("the printed %q exited %d while the demo is kept, want 1 as in the step: %s", line[1], code, errs)
	}
	kept := regexp.MustCompile(`the example copy stays at (\S+)\. `).FindStringSubmatch(out.String())[1]
	// The member is still there, with the demo's data, for other commands.
	code, got, errs := runLcctlStdin(t, "", map[string]string{"LCCTL_OLRIC_ADDRS": addr}, "store", "get",
		"--routing-key", "rk-1", "--model", "model-a", "--affinity-key", "session-6", "-o", "json")
	if code != 0 || !strings.Contains(got, `"cluster": "B"`) {
		t.Fatalf("store get against the kept member: exit %d\n%s\n%s", code, got, errs)
	}
	select {
	case code := <-done:
		t.Fatalf("demo --keep exited %d without Ctrl-C", code)
	default:
	}
	stopKeptDemo(t, cancel, done, &errb)
	if !strings.HasSuffix(out.String(), "stopping\n") {
		t.Fatalf("output does not end with stopping:\n%s", out.String())
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Fatalf("the kept example copy %s was not removed after Ctrl-C: %v", kept, err)
	}
}

// TestCommandTree: every command has a one-line Short and examples, and
// --help lists the commands in the order of the rollout story.
func TestCommandTree(t *testing.T) {
	root := cli.NewRootCommand(&ui.Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if c.Short == "" || strings.Contains(c.Short, "\n") {
			t.Errorf("%s: Short %q is not one line", c.CommandPath(), c.Short)
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	code, out, _ := runLcctlStdin(t, "", nil, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	wantLines(t, out, `^Examples:$`, `^  lcctl demo$`, `^Start here:$`, `^  demo `,
		`^Configs and routing decisions:$`, `^  validate `, `^  migrate `, `^  explain `, `^  simulate `,
		`^Rollout checks and the live store:$`, `^  preflight `, `^  check `, `^  store `,
		`^Other commands:$`, `^  version `, `^  completion `, `^  help `)
}

// The demo's help lists every step with its number and gives --step's
// range from the same list (it listed six of seven steps).
func TestDemoHelpListsEveryStep(t *testing.T) {
	out, errOut, code := runLcctl(t, nil, false, "demo", "--help")
	if code != 0 {
		t.Fatalf("demo --help: exit %d\n%s", code, errOut)
	}
	for i, name := range demo.StepNames {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^  %d %s `, i+1, name)).MatchString(out) {
			t.Errorf("demo --help does not list step %d %s:\n%s", i+1, name, out)
		}
	}
	if want := fmt.Sprintf("run only step N (1-%d)", len(demo.StepNames)); !strings.Contains(out, want) {
		t.Errorf("demo --help lacks %q", want)
	}
}
