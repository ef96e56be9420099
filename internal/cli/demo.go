package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/demo"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/sim/report"
	"github.com/lcctl/lcctl/internal/ui"
)

// demoOptions are the flags of `lcctl demo`.
type demoOptions struct {
	cmdInput
	step        int
	only        string
	keep        bool
	examples    string
	simRequests int64
}

func newDemoCommand(env *Env) *cobra.Command {
	o := &demoOptions{simRequests: demo.DefaultSimRequests}
	cmd := &cobra.Command{
		Use:   "demo [--step N | --only STEP] [--keep]",
		Short: "Run the whole rollout story on a built-in demo (embedded Olric, shipped examples)",
		Long: `Walk through the last-cluster affinity rollout end to end with nothing to set
up: lcctl starts an embedded single-member Olric on a free loopback port,
seeds it with demo sessions, and runs its own commands on the shipped
example files, each step under a heading with the command line to run it
by hand:

  1 validate   the shipped lb-configs (no-SLO warnings; mistakes.yaml fails on purpose)
  2 migrate    --strategy bounded on the no-SLO config, as a dry-run diff
  3 preflight  --stage 2 against the embedded Olric and the gateway values example
  4 explain    store get reads a session's last cluster; explain routes its
               next request with it (--timeline --compare flag)
  5 store      scan summary and an evict --cluster dry run
  6 simulate   --compare on the saturated scenario, flag off vs on
  7 live       snapshot and explain from three Pylon-style /metrics pages
               the demo serves on loopback (session id to decision)

Nothing is written: migrate runs without --write, evict without --yes, and
the Olric member lives in memory. The example files come from ./examples
in a clone of the repository, else from a copy built into lcctl
(--examples DIR picks another folder). Commands write their results and
their reports in order on standard output; --output json prints one
document with every command's own JSON output instead.

--keep leaves the Olric member (and, when the live step ran, its Pylon
pages) running after the steps, prints the LCCTL_OLRIC_ADDRS export line
and the URLs for other shells, and waits for Ctrl-C.

Exit codes: 0 every step ran as designed (a step may expect exit 1 from its
command, e.g. validate on mistakes.yaml); 1 a step did not, or Olric could
not start; 2 usage error.`,
		Example: `  lcctl demo
  lcctl demo --only explain
  lcctl demo --step 5 --keep
  lcctl demo --output json | jq '.steps[] | {name, as_designed}'`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runDemo)
	f := cmd.Flags()
	f.IntVar(&o.step, "step", 0, fmt.Sprintf("run only step N (1-%d)", len(demo.StepNames)))
	f.StringVar(&o.only, "only", "", "run only this step: "+strings.Join(demo.StepNames, ", ")+" (or its number)")
	f.BoolVar(&o.keep, "keep", false, "keep the Olric member (and the live step's Pylon pages) running after the steps, until Ctrl-C")
	f.StringVar(&o.examples, "examples", "", "folder with the example files (default ./examples in a clone, else the copy built into lcctl)")
	f.Int64Var(&o.simRequests, "sim-requests", demo.DefaultSimRequests, "requests per policy in the simulate step (100-1000000)")
	_ = cmd.RegisterFlagCompletionFunc("only", cobra.FixedCompletions(demo.StepNames, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// demoReport is the JSON output of `lcctl demo --output json` (schema
// lcctl.demo/v1, docs/cli.md). Keys are never renamed or removed within a
// schema version.
type demoReport struct {
	// Schema is "lcctl.demo/v1".
	Schema string `json:"schema"`
	// Success is true when every step that ran did so as designed.
	Success bool `json:"success"`
	// Examples says where the example files were.
	Examples demoExamplesJSON `json:"examples"`
	// Olric is the embedded member; null when no selected step needed one.
	Olric *demoOlricJSON `json:"olric"`
	// Steps are the steps that ran, in order.
	Steps []demoStepJSON `json:"steps"`
	// ElapsedMs is the wall time of the whole demo (ms).
	ElapsedMs int64 `json:"elapsed_ms"`
}

type demoExamplesJSON struct {
	Dir      string `json:"dir"`
	Embedded bool   `json:"embedded"`
}

// demoOlricJSON describes the embedded member and what was seeded.
type demoOlricJSON struct {
	Addr       string         `json:"addr"`
	DMap       string         `json:"dmap"`
	Seeded     int            `json:"seeded"`
	PerCluster map[string]int `json:"per_cluster"`
	TTLMs      int64          `json:"ttl_ms"`
	// Session is the explain session whose last cluster was written.
	Session demoSessionJSON `json:"session"`
	// Kept is true with --keep.
	Kept bool `json:"kept"`
}

type demoSessionJSON struct {
	RoutingKey  string `json:"routing_key"`
	Model       string `json:"model"`
	AffinityKey string `json:"affinity_key"`
	Cluster     string `json:"cluster"`
}

// demoStepJSON is one step of a demoReport.
type demoStepJSON struct {
	Step  int    `json:"step"`
	Name  string `json:"name"`
	Title string `json:"title"`
	Story string `json:"story"`
	// AsDesigned is true when every command exited with an expected code.
	AsDesigned bool              `json:"as_designed"`
	Commands   []demoCommandJSON `json:"commands"`
	// LastCluster is the cluster store get read (explain step only).
	LastCluster string `json:"last_cluster,omitempty"`
	// FlagEffects compare each algorithm with last_cluster_affinity off
	// and on (simulate step only).
	FlagEffects []demoFlagEffectJSON `json:"flag_effects,omitempty"`
	// Problem says why the step did not run as designed ("" when it did).
	Problem   string `json:"problem,omitempty"`
	ElapsedMs int64  `json:"elapsed_ms"`
}

// demoCommandJSON is one command of a step.
type demoCommandJSON struct {
	// Command is the command line as an operator types it.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// ExitCode is lcctl's exit code for the command; ExpectedExitCodes
	// the codes with which the step runs as designed.
	ExitCode          int    `json:"exit_code"`
	ExpectedExitCodes []int  `json:"expected_exit_codes"`
	AsDesigned        bool   `json:"as_designed"`
	Meaning           string `json:"meaning"`
	// Output is the command's own --output json result (JSON lines
	// become an array; null when it printed nothing).
	Output json.RawMessage `json:"output"`
	// Stderr is what the command wrote to standard error.
	Stderr string `json:"stderr"`
}

// demoFlagEffectJSON is one report.FlagEffect.
type demoFlagEffectJSON struct {
	Algorithm        string  `json:"algorithm"`
	LeftLastOff      float64 `json:"left_last_cluster_share_off"`
	LeftLastOn       float64 `json:"left_last_cluster_share_on"`
	KVReuseOff       float64 `json:"kv_reuse_off"`
	KVReuseOn        float64 `json:"kv_reuse_on"`
	TTFTP99MsOff     float64 `json:"ttft_p99_ms_off"`
	TTFTP99MsOn      float64 `json:"ttft_p99_ms_on"`
	GoodputRPSOff    float64 `json:"goodput_rps_off"`
	GoodputRPSOn     float64 `json:"goodput_rps_on"`
	ReturningOff     int64   `json:"returning_requests_off"`
	ReturningOn      int64   `json:"returning_requests_on"`
	LeftLastCountOff int64   `json:"left_last_cluster_off"`
	LeftLastCountOn  int64   `json:"left_last_cluster_on"`
}

// demoRunner runs the steps of one demo.
type demoRunner struct {
	env  *Env
	json bool
	// ex is where the example files are; kept is --keep.
	ex   demo.Examples
	kept bool
}

// validate checks the flags (usage errors) before anything starts.
func (o *demoOptions) validate(*Env) error {
	if o.flagGiven("step") && o.step == 0 {
		// 0 is the flag's "every step" default; given explicitly
		// it ran the whole demo instead of being refused like 7.
		return Usagef("--step 0: want a step from 1 to %d", len(demo.StepNames))
	}
	if o.simRequests < 100 || o.simRequests > 1_000_000 {
		return Usagef("--sim-requests %d out of range 100-1000000", o.simRequests)
	}
	// The plan's shape does not depend on the examples or the address.
	if _, err := demo.Select(demo.Plan(demo.Params{}), o.step, o.only); err != nil {
		return UsageErr(err)
	}
	return nil
}

// runDemo runs the demo with validated options.
func runDemo(ctx context.Context, env *Env, o *demoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	ex, cleanup, err := demo.FindExamples(o.examples)
	if err != nil {
		if o.examples != "" {
			return UsageErr(err)
		}
		return fail(err)
	}
	defer func() { _ = cleanup() }()

	needOlric, needPylons := o.keep, false
	selected, _ := demo.Select(demo.Plan(demo.Params{Examples: ex}), o.step, o.only)
	for _, s := range selected {
		needOlric = needOlric || s.NeedsOlric
		needPylons = needPylons || s.NeedsPylons
	}
	var backend *demo.Backend
	if needOlric {
		backend, err = demo.Start(ctx, demo.BackendOptions{})
		if err != nil {
			return failf("start the demo's Olric member: %v", err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = backend.Close(sctx)
		}()
	}
	params := demo.Params{Examples: ex, SimRequests: o.simRequests}
	if backend != nil {
		params.OlricAddr = backend.Addr
	}
	if needPylons {
		pylons, err := demo.StartPylons()
		if err != nil {
			return failf("start the demo's Pylon /metrics servers: %v", err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = pylons.Close(sctx)
		}()
		params.PylonFlags = pylons.Flags()
	}
	selected, _ = demo.Select(demo.Plan(params), o.step, o.only)

	r := &demoRunner{env: env, json: env.Global.JSON(), ex: ex, kept: o.keep}
	rep := demoReport{Schema: SchemaID("demo"), Success: true, Examples: demoExamplesJSON{Dir: ex.Dir, Embedded: ex.Embedded}, Steps: []demoStepJSON{}}
	if backend != nil {
		rep.Olric = &demoOlricJSON{Addr: backend.Addr, DMap: backend.DMap, Seeded: backend.Seeded, PerCluster: backend.PerCluster,
			TTLMs: backend.TTL.Milliseconds(), Kept: o.keep,
			Session: demoSessionJSON{RoutingKey: demo.Session.RoutingKey, Model: demo.Session.Model, AffinityKey: demo.Session.AffinityKey, Cluster: demo.SessionCluster}}
	}
	if !r.json {
		r.intro(ex, backend)
	}
	var failed []string
	for _, s := range selected {
		res := r.runStep(ctx, s)
		rep.Steps = append(rep.Steps, res)
		if !res.AsDesigned {
			rep.Success = false
			failed = append(failed, s.Name)
		}
		if ctx.Err() != nil {
			break
		}
	}
	rep.ElapsedMs = time.Since(start).Milliseconds()
	interrupted := ctx.Err() != nil
	if interrupted {
		rep.Success = false
	}
	if r.json {
		if err := writeJSON(env.Out, "demo", rep); err != nil {
			return err
		}
	} else {
		r.closing(len(selected), len(rep.Steps), failed, time.Since(start), interrupted)
	}
	if interrupted {
		return failf("demo interrupted")
	}
	if o.keep && backend != nil {
		var live []string
		if params.PylonFlags != nil {
			for _, s := range selected {
				if s.NeedsPylons {
					for _, c := range s.Commands {
						live = append(live, c.Line())
					}
				}
			}
		}
		if err := r.keep(ctx, backend, params.PylonFlags, live); err != nil {
			return err
		}
	}
	if !rep.Success {
		return ErrFindings
	}
	return nil
}

// intro prints what the demo runs on.
func (r *demoRunner) intro(ex demo.Examples, b *demo.Backend) {
	w, st := r.env.Out, r.env.Style
	fmt.Fprintln(w, st.Header.Render("lcctl demo: the session-aware last-cluster affinity rollout, end to end"))
	where := "(this repository's)"
	if ex.Embedded {
		where = "(a copy of the examples built into lcctl, removed when the demo ends)"
		if r.kept {
			where = "(a copy of the examples built into lcctl, kept until Ctrl-C)"
		}
	}
	fmt.Fprintf(w, "  examples  %s %s\n", ex.Dir, st.Faint.Render(where))
	if b != nil {
		fmt.Fprintf(w, "  olric     %s: an embedded Olric v0.7.4 member on loopback, DMap %s\n", b.Addr, b.DMap)
		clusters := slices.SortedFunc(maps.Keys(b.PerCluster), func(x, y string) int {
			if d := b.PerCluster[y] - b.PerCluster[x]; d != 0 {
				return d
			}
			return strings.Compare(x, y)
		})
		parts := make([]string, len(clusters))
		for i, c := range clusters {
			parts[i] = fmt.Sprintf("%s %d", c, b.PerCluster[c])
		}
		fmt.Fprintf(w, "  sessions  %s (ttl %s): %s\n", plural.Count(b.Seeded, "entry", "entries"), humanDuration(b.TTL), strings.Join(parts, ", "))
		fmt.Fprintf(w, "            %s\n", st.Faint.Render(fmt.Sprintf("the %s entry is session %s / %s / %s of the explain examples",
			demo.SessionCluster, demo.Session.RoutingKey, demo.Session.Model, demo.Session.AffinityKey)))
	}
	// The printed commands name the examples folder and the Olric
	// address of this run: say honestly when they outlive it.
	var gone []string
	if ex.Embedded {
		gone = append(gone, "the example copy")
	}
	if b != nil {
		gone = append(gone, "the Olric member")
	}
	switch {
	case len(gone) == 0:
		fmt.Fprintln(w, "Each step shows the lcctl command it runs; copy it to run it by hand.")
	case r.kept:
		fmt.Fprintf(w, "Each step shows the lcctl command it runs; %s until Ctrl-C, so you can run them by hand meanwhile.\n", staySentence(gone))
	default:
		fmt.Fprintf(w, "Each step shows the lcctl command it runs. %s of this run %s when the demo ends:\n", capitalize(strings.Join(gone, " and ")), plural.Noun(len(gone), "goes", "go"))
		if ex.Embedded {
			fmt.Fprintln(w, st.Faint.Render("to run the commands by hand, run the demo with --keep (it waits for Ctrl-C), or run them in a clone of the lcctl repository on its examples/ folder."))
		} else {
			fmt.Fprintln(w, st.Faint.Render("to run the store commands by hand, run the demo with --keep (it waits for Ctrl-C), or start 'lcctl store serve-dev --seed-demo' and use its address."))
		}
	}
}

// capitalize upper-cases the first letter of an ASCII sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// runStep runs one step and reports it.
func (r *demoRunner) runStep(ctx context.Context, s demo.Step) demoStepJSON {
	start := time.Now()
	res := demoStepJSON{Step: s.Number, Name: s.Name, Title: s.Title, Story: s.Story, AsDesigned: true, Commands: []demoCommandJSON{}}
	if !r.json {
		r.heading(s)
	}
	switch s.Name {
	case demo.StepExplain:
		r.runExplainStep(ctx, s, &res)
	case demo.StepSimulate:
		r.runSimulateStep(ctx, s, &res)
	default:
		for _, c := range s.Commands {
			res.add(r.runCommand(ctx, c, nil))
		}
	}
	res.ElapsedMs = time.Since(start).Milliseconds()
	return res
}

func (res *demoStepJSON) add(c demoCommandJSON) {
	res.Commands = append(res.Commands, c)
	if !c.AsDesigned {
		res.AsDesigned = false
		if res.Problem == "" {
			res.Problem = fmt.Sprintf("%s exited %d, expected %s", c.Command, c.ExitCode, codes(c.ExpectedExitCodes))
		}
	}
}

func (res *demoStepJSON) fail(problem string) {
	res.AsDesigned = false
	if res.Problem == "" {
		res.Problem = problem
	}
}

// runExplainStep reads the session's last cluster with store get and
// explains the session's next request with it.
func (r *demoRunner) runExplainStep(ctx context.Context, s demo.Step, res *demoStepJSON) {
	var entry *getJSON
	get := r.runCommand(ctx, s.Commands[0], func(_ string, v any) {
		if g, ok := v.(getJSON); ok {
			entry = &g
		}
	})
	res.add(get)
	if !get.AsDesigned {
		return
	}
	cluster, err := clusterFromGet(entry)
	if err != nil {
		res.fail(err.Error())
		if !r.json {
			fmt.Fprintf(r.env.Out, "%s %v\n", r.env.Style.Error.Render("✖"), err)
		}
		return
	}
	res.LastCluster = cluster
	if !r.json {
		fmt.Fprintf(r.env.Out, "%s the session's last cluster is %s: explain gets it as --last-cluster %s\n",
			r.env.Style.Accent.Render("→"), r.env.Style.Bold.Render(cluster), demo.ShellQuote(cluster))
	}
	res.add(r.runCommand(ctx, s.Commands[1].WithLastCluster(cluster), nil))
}

// runSimulateStep runs the simulation once, with JSON output, renders the
// document with the renderer `lcctl simulate` uses for text, and adds the
// flag-off-vs-on comparison.
func (r *demoRunner) runSimulateStep(ctx context.Context, s demo.Step, res *demoStepJSON) {
	c := s.Commands[0]
	if !r.json {
		r.commandLine(c)
	}
	var out bytes.Buffer
	var errw io.Writer = r.env.Out
	var errb bytes.Buffer
	if r.json {
		errw = &errb
	}
	code := r.invoke(ctx, c.Args, true, &out, errw, false, nil)
	cj := demoCommandJSON{Command: c.Line(), Args: c.Args, ExitCode: code, ExpectedExitCodes: c.Expect,
		AsDesigned: c.Expected(code), Meaning: c.Meaning, Output: rawJSON(out.Bytes(), jsonLinesCommand(c.Args)), Stderr: errb.String()}
	res.add(cj)
	if code != 0 {
		if !r.json {
			r.verdict(cj)
		}
		return
	}
	var doc report.Document
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		res.fail(fmt.Sprintf("simulate printed JSON that does not decode: %v", err))
		return
	}
	effects := report.FlagEffects(&doc)
	if len(effects) == 0 {
		res.fail("simulate --compare printed no policy pair with last_cluster_affinity off and on")
	}
	for _, e := range effects {
		res.FlagEffects = append(res.FlagEffects, demoFlagEffectJSON{Algorithm: e.Algorithm,
			LeftLastOff: e.Off.LeftLastClusterShare, LeftLastOn: e.On.LeftLastClusterShare,
			KVReuseOff: e.Off.KVReuse, KVReuseOn: e.On.KVReuse,
			TTFTP99MsOff: e.Off.TTFTMs.P99, TTFTP99MsOn: e.On.TTFTMs.P99,
			GoodputRPSOff: e.Off.GoodputRPS, GoodputRPSOn: e.On.GoodputRPS,
			ReturningOff: e.Off.ReturningRequests, ReturningOn: e.On.ReturningRequests,
			LeftLastCountOff: e.Off.LeftLastCluster, LeftLastCountOn: e.On.LeftLastCluster})
	}
	if r.json {
		return
	}
	// The same renderer as `lcctl simulate`: the table, then the
	// last_cluster_affinity off → on lines.
	if err := report.WriteText(r.env.Out, &doc, r.env.Style); err != nil {
		res.fail(err.Error())
		return
	}
	r.verdict(cj)
}

// runCommand runs one command of a step. In text mode it prints the
// command line, the command's output (standard output and error, in
// order) and a verdict. In JSON mode the output is collected into the
// result. onValue, when set, receives the values the command emits (in
// both modes): the demo reads results from them, never from the output.
func (r *demoRunner) runCommand(ctx context.Context, c demo.Command, onValue func(doc string, v any)) demoCommandJSON {
	cj := demoCommandJSON{Command: c.Line(), Args: c.Args, ExpectedExitCodes: c.Expect, Meaning: c.Meaning}
	if r.json {
		var out, errb bytes.Buffer
		cj.ExitCode = r.invoke(ctx, c.Args, true, &out, &errb, false, onValue)
		cj.Output, cj.Stderr = rawJSON(out.Bytes(), jsonLinesCommand(c.Args)), errb.String()
	} else {
		r.commandLine(c)
		cj.ExitCode = r.invoke(ctx, c.Args, false, r.env.Out, r.env.Out, r.env.OutTTY, onValue)
		cj.Output = json.RawMessage("null")
	}
	cj.AsDesigned = c.Expected(cj.ExitCode)
	if !r.json {
		r.verdict(cj)
	}
	return cj
}

// clusterFromGet is the last cluster store get reported, or why there is
// none.
func clusterFromGet(g *getJSON) (string, error) {
	switch {
	case g == nil:
		return "", errors.New("store get reported no entry")
	case g.Found == nil || !*g.Found || g.Cluster == "":
		return "", errors.New("store get found no entry")
	}
	return g.Cluster, nil
}

// invoke runs lcctl with args in this process, exactly as `lcctl ARGS`
// runs (cli.Main), with the demo's global flags and environment.
func (r *demoRunner) invoke(ctx context.Context, args []string, asJSON bool, out, errw io.Writer, tty bool, onValue func(string, any)) int {
	full := append([]string(nil), args...)
	if r.env.Global.NoColor {
		full = append(full, "--no-color")
	}
	if asJSON {
		full = append(full, "--output", OutputJSON)
	}
	s := &ui.Streams{In: strings.NewReader(""), Out: out, Err: errw, OutTTY: tty, ErrTTY: tty, Getenv: r.env.Streams.Getenv}
	return run(ctx, full, s, onValue)
}

func (r *demoRunner) heading(s demo.Step) {
	w, st := r.env.Out, r.env.Style
	fmt.Fprintf(w, "\n%s\n", st.Header.Render(fmt.Sprintf("Step %d/%d · %s", s.Number, len(demo.StepNames), s.Title)))
	for _, line := range ui.Wrap(s.Story, 78) {
		fmt.Fprintf(w, "  %s\n", st.Faint.Render(line))
	}
}

func (r *demoRunner) commandLine(c demo.Command) {
	fmt.Fprintf(r.env.Out, "\n%s %s\n", r.env.Style.Accent.Render("$"), r.env.Style.Bold.Render(c.Line()))
}

func (r *demoRunner) verdict(c demoCommandJSON) {
	st := r.env.Style
	if c.AsDesigned {
		fmt.Fprintf(r.env.Out, "%s exit %d, as designed: %s\n", st.OK.Render("✔"), c.ExitCode, c.Meaning)
		return
	}
	fmt.Fprintf(r.env.Out, "%s exit %d, expected %s: this step did not run as designed\n", st.Error.Render("✖"), c.ExitCode, codes(c.ExpectedExitCodes))
}

func (r *demoRunner) closing(selected, ran int, failed []string, elapsed time.Duration, interrupted bool) {
	w, st := r.env.Out, r.env.Style
	fmt.Fprintln(w)
	switch {
	case interrupted:
		fmt.Fprintf(w, "%s interrupted after %d of %d steps (%s)\n", st.Error.Render("✖"), ran, selected, humanDuration(elapsed))
	case len(failed) > 0:
		fmt.Fprintf(w, "%s %d of %d steps did not run as designed: %s (%s)\n", st.Error.Render("✖"), len(failed), ran, strings.Join(failed, ", "), humanDuration(elapsed))
	default:
		fmt.Fprintf(w, "%s demo done: %d of %d steps ran as designed in %s\n", st.OK.Render("✔"), ran, selected, humanDuration(elapsed))
		if r.ex.Embedded {
			// No docs/ folder here: name where the runbook lives.
			fmt.Fprintln(w, "Next: the runbook, 'lcctl docs rollout'; 'lcctl help' lists the commands and 'lcctl COMMAND --help' shows every flag, with examples.")
		} else {
			fmt.Fprintln(w, "Next: the runbook 'lcctl docs rollout'; 'lcctl COMMAND --help' shows every flag, with examples.")
		}
	}
}

// keep leaves the member running until ctx ends (Ctrl-C) and prints how
// to reach it: on stdout for text, on stderr next to a JSON document.
// pylonFlags (the live step's --pylon CLUSTER=URL pairs, nil when the
// live step did not run) are the Pylon-style pages that stay up too;
// liveLines are the live step's command lines, ready to run again.
func (r *demoRunner) keep(ctx context.Context, b *demo.Backend, pylonFlags, liveLines []string) error {
	w := r.env.Out
	if r.json {
		w = r.env.Err
	}
	fmt.Fprintf(w, "\nOlric keeps running at %s until Ctrl-C", b.Addr)
	if r.ex.Embedded {
		fmt.Fprintf(w, ", and the example copy stays at %s", r.ex.Dir)
	}
	fmt.Fprintln(w, ". In another shell:")
	fmt.Fprintf(w, "  export %s=%s\n", EnvOlricAddrs, b.Addr)
	fmt.Fprintf(w, "  lcctl store get --routing-key %s --model %s --affinity-key %s\n", demo.Session.RoutingKey, demo.Session.Model, demo.Session.AffinityKey)
	fmt.Fprintf(w, "  lcctl store scan --cluster %s --limit 5\n", demo.EvictCluster)
	fmt.Fprintln(w, "  lcctl store stats")
	if len(pylonFlags) > 0 {
		fmt.Fprintln(w, "The Pylon-style /metrics pages of the live step stay up too:")
		for i := 1; i < len(pylonFlags); i += 2 {
			fmt.Fprintf(w, "  %s\n", strings.Replace(pylonFlags[i], "=", "  ", 1))
		}
		for _, l := range liveLines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(w, "stopping")
		return nil
	case <-b.Done():
		return failf("the Olric member stopped unexpectedly")
	}
}

// jsonLinesCommand reports whether lcctl args print JSON lines with
// --output json (store scan streams a line per entry, then a summary
// line), so that their output is always an array, even when it holds only
// the summary (--summary-only).
func jsonLinesCommand(args []string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "store" && args[i+1] == "scan" {
			return true
		}
	}
	return false
}

// rawJSON turns a command's output into one JSON value: a document as it
// is, JSON lines as an array (always an array when lines is set, even for
// one line), nothing as null, anything else as a string.
func rawJSON(b []byte, lines bool) json.RawMessage {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return json.RawMessage("null")
	}
	if !lines && json.Valid(t) {
		return json.RawMessage(t)
	}
	parts := bytes.Split(t, []byte("\n"))
	arr := make([]json.RawMessage, 0, len(parts))
	for _, l := range parts {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if !json.Valid(l) {
			s, _ := json.Marshal(string(b))
			return s
		}
		arr = append(arr, l)
	}
	out, _ := json.Marshal(arr)
	return out
}

func codes(c []int) string {
	parts := make([]string, len(c))
	for i, n := range c {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, " or ")
}

// staySentence joins what outlives a --keep run with the verb agreeing:
// "the Olric member stays", "the example copy and the Olric member stay".
func staySentence(kept []string) string {
	if len(kept) == 1 {
		return kept[0] + " stays"
	}
	return strings.Join(kept, " and ") + " stay"
}
