package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/readlimit"
	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/sim/report"
	"github.com/lcctl/lcctl/internal/ui"
)

// simulateOptions are the flags of `lcctl simulate`.
type simulateOptions struct {
	cmdInput
	scenario    string
	compare     bool
	configs     []string
	policies    []string
	seed        uint64
	sloMs       float64
	maxRequests int64
	durationS   float64
	plotDir     string
	progress    string
	template    bool
	seeds       int
	sweep       string
	// sweepField and sweepValues are --sweep parsed, set by validate.
	sweepField  string
	sweepValues []float64
}

// validate checks the flags (nothing with --template, which prints the
// template and exits): --scenario, --progress, the overrides' ranges,
// --seeds, --plot, and --sweep (parsed; not with --seeds).
func (o *simulateOptions) validate(*Env) (err error) {
	if o.template {
		return nil
	}
	if o.scenario == "" {
		return Usagef("--scenario is required")
	}
	switch o.progress {
	case "auto", "always", "never":
	default:
		return Usagef("invalid --progress %q: want auto, always or never", o.progress)
	}
	if o.sloMs < 0 || o.maxRequests < 0 || o.durationS < 0 {
		return Usagef("--slo-ms, --max-requests and --duration-s must not be negative")
	}
	// NaN passes every comparison above and would be silently ignored;
	// infinity would make the run endless.
	if !(o.sloMs <= sim.MaxSeconds*1000) {
		return Usagef("--slo-ms %v: want a number of milliseconds, at most %g", o.sloMs, sim.MaxSeconds*1000)
	}
	if !(o.durationS <= sim.MaxSeconds) {
		return Usagef("--duration-s %v: want a number of seconds, at most %g", o.durationS, sim.MaxSeconds)
	}
	if o.seeds < 1 || o.seeds > 1000 {
		return Usagef("--seeds %d: want 1–1000", o.seeds)
	}
	if o.flagGiven("plot") && o.plotDir == "" {
		return Usagef("--plot: the directory name is empty")
	}
	if o.sweepField, o.sweepValues, err = parseSweep(o.sweep); err != nil {
		return err
	}
	if len(o.sweepValues) > 0 && o.seeds > 1 {
		return Usagef("--sweep and --seeds cannot be combined: sweep one seed at a time (--seed)")
	}
	return nil
}

func newSimulateCommand(env *Env) *cobra.Command {
	o := &simulateOptions{}
	cmd := &cobra.Command{
		Use:   "simulate --scenario FILE [--compare] [--config LB_CONFIG]... [--policy NAME]...",
		Short: "Simulate routing policies on a workload and compare KV reuse, TTFT and goodput",
		Long: `simulate runs a deterministic discrete-event simulation of Stargate clusters,
the gateway's last-cluster store and the router, driving the real decision
engine, and reports per policy: requests, goodput (requests/s within the
TTFT SLO), TTFT p50/p90/p99, queue and routing wait p99, KV cache reuse,
the share of returning requests that left their last cluster, and
per-cluster utilisation.

Policies: --compare runs the built-in comparison set (wait-and-widen and
pulsar-wait-and-widen with last_cluster_affinity off and on, pulsar,
power-of-n, round-robin, random, consistent-hash, sticky-least-loaded);
--config adds any lb-config file; --policy picks policies by name.
Without them the scenario's own policies run.

The same scenario and seed give byte-identical JSON. The scenario format is
documented in 'lcctl docs simulate'.

Exit codes: 0 simulated; 1 the simulation failed or charts could not be
written; 2 usage error, or a scenario, trace or lb-config that cannot be
read.`,
		Example: `  lcctl simulate --scenario examples/scenarios/saturated-rank1.yaml --compare
  lcctl simulate --scenario examples/scenarios/saturated-rank1.yaml --compare --plot out/
  lcctl simulate --scenario examples/scenarios/hot-set.yaml --config lb-config.json --policy pulsar
  lcctl simulate --scenario examples/scenarios/bursty.yaml --compare --max-requests 50000 -o json
  lcctl simulate --template > my-scenario.yaml`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runSimulate)
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", "", "scenario file (YAML; required)")
	f.BoolVar(&o.compare, "compare", false, "run the built-in comparison set")
	f.StringArrayVar(&o.configs, "config", nil, "lb-config file to simulate (repeatable)")
	f.StringArrayVar(&o.policies, "policy", nil, "policy to run by name: comparison set or scenario policies (repeatable)")
	f.Uint64Var(&o.seed, sim.SeedKey, 0, "master seed (overrides the scenario's)")
	f.Float64Var(&o.sloMs, "slo-ms", 0, "TTFT SLO for goodput in ms (overrides the scenario's slo_ttft_ms)")
	f.Int64Var(&o.maxRequests, "max-requests", 0, "stop the workload after this many requests (overrides workload.max_requests)")
	f.Float64Var(&o.durationS, "duration-s", 0, "session arrival window in seconds (overrides workload.duration_s)")
	f.StringVar(&o.plotDir, "plot", "", "write PNG and SVG charts into this directory")
	f.BoolVar(&o.template, "template", false, "print a commented scenario with every field and its default, and exit")
	f.IntVar(&o.seeds, "seeds", 1, "run every policy with this many master seeds (the scenario's seed and the next ones) and report means with 95 % intervals and paired off → on differences")
	f.StringVar(&o.sweep, "sweep", "", "run every policy once per value of a numeric scenario field: FIELD=V1,V2,... (e.g. workload.session_rate=2,4,8 or clusters.kv_cache_tokens=1e5,1e6)")
	f.StringVar(&o.progress, "progress", "auto", "progress bar on stderr: auto (a terminal, runs over a second), always or never")
	_ = cmd.RegisterFlagCompletionFunc("policy", cobra.FixedCompletions(sim.ComparisonNames, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("progress", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runSimulate runs the validated options' simulation and reports, or
// with --template prints the template (simulate_template.go).
func runSimulate(ctx context.Context, env *Env, o *simulateOptions) error {
	if o.template {
		return printSimulateTemplate(env.Out)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	sweepField, sweepValues := o.sweepField, o.sweepValues
	overrides := func(sc *sim.Scenario) {
		if o.flagGiven(sim.SeedKey) {
			sc.Seed = o.seed
		}
		if o.sloMs > 0 {
			sc.SLOTTFTMs = o.sloMs
		}
		if o.maxRequests > 0 {
			sc.Workload.MaxRequests = o.maxRequests
		}
		if o.durationS > 0 {
			sc.Workload.DurationS = o.durationS
		}
	}
	// The overrides apply before the scenario is checked: the size check
	// sees --max-requests and --duration-s.
	sc, err := sim.LoadScenarioWith(o.scenario, overrides)
	if err != nil {
		if _, notFile := errors.AsType[*readlimit.NotFileError](err); notFile || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			// The file could not be opened: name the flag that gave it.
			err = fmt.Errorf("--scenario: %w", err)
		}
		return UsageErr(err)
	}
	sel := sim.Selection{Compare: o.compare, Names: o.policies, ConfigFiles: o.configs}
	policies, err := sim.ResolvePolicies(sc, sel)
	if err != nil {
		return UsageErr(err)
	}
	// The runs: one per seed, or one per swept value (each value's
	// scenario checked like the file itself).
	type point struct {
		sc       *sim.Scenario
		policies []sim.Policy
	}
	var points []point
	var seeds []uint64
	for k := 0; k < o.seeds && len(sweepValues) == 0; k++ {
		sck := *sc
		sck.Seed = sc.Seed + uint64(k)
		points = append(points, point{&sck, policies})
		seeds = append(seeds, sck.Seed)
	}
	for _, v := range sweepValues {
		var setErr error
		scv, err := sim.LoadScenarioWith(o.scenario, func(s *sim.Scenario) {
			overrides(s)
			setErr = s.SetField(sweepField, v)
		})
		if setErr != nil {
			return Usagef("--sweep %s", setErr)
		}
		if err != nil {
			return UsageErr(fmt.Errorf("--sweep %s=%s: %w", sweepField, report.SweepValueText(v), err))
		}
		pv, err := sim.ResolvePolicies(scv, sel)
		if err != nil {
			return UsageErr(err)
		}
		points = append(points, point{scv, pv})
	}
	var records int64
	if sc.Workload.Trace != "" {
		// Check the whole trace before simulating: a bad line is an input
		// error, reported once with its position.
		if records, err = countTrace(sc); err != nil {
			return UsageErr(err)
		}
	}
	if o.plotDir != "" {
		// Find out now, not after minutes of simulation, that the charts
		// cannot be written.
		if err := checkPlotDir(o.plotDir); err != nil {
			return UsageErr(fmt.Errorf("--plot %s: %w", o.plotDir, err))
		}
	}
	var total int64
	for _, p := range points {
		total += sim.ExpectedRequests(p.sc, records) * int64(len(p.policies))
	}
	var done atomic.Int64
	stop := startProgress(env, o.progress, &done, total)
	// Seed k runs with master seed base+k: new workload draws, the same
	// for every policy of the seed (sim.Run derives every stream from it).
	var runs [][]*sim.Result
	for _, p := range points {
		var res []*sim.Result
		if res, err = sim.RunAll(ctx, p.sc, p.policies, &done); err != nil {
			break
		}
		runs = append(runs, res)
	}
	stop()
	var results []*sim.Result
	if err == nil {
		results = runs[0]
	}
	if err != nil {
		var ie *sim.InputError
		if errors.As(err, &ie) {
			return UsageErr(err)
		}
		if errors.Is(err, context.Canceled) {
			return &ExitError{Code: ExitFindings, Err: errors.New("interrupted: the simulation stopped before it finished; nothing was written")}
		}
		return &ExitError{Code: ExitFindings, Err: err}
	}
	doc := report.NewDocument(sc, results)
	if o.seeds > 1 {
		doc.Seeds = report.NewSeeds(seeds, runs)
	}
	if len(sweepValues) > 0 {
		doc.Sweep = report.NewSweep(sweepField, sweepValues, runs)
	}
	var plotErr error
	if o.plotDir != "" {
		files, err := report.WritePlots(o.plotDir, doc)
		if err == nil && doc.Sweep != nil {
			var more []string
			more, err = report.WriteSweepPlots(o.plotDir, doc)
			files = append(files, more...)
		}
		switch {
		case err != nil:
			// Still print the results: they took the whole run to compute.
			plotErr = &ExitError{Code: ExitFindings, Err: fmt.Errorf("writing charts: %w", err)}
		case !env.Global.JSON():
			defer fmt.Fprintf(env.Err, "lcctl: wrote %d chart files to %s\n", len(files), o.plotDir)
		}
	}
	if env.Global.JSON() {
		err = writeJSON(env.Out, "simulate", doc)
	} else {
		for _, n := range defaultEntryNotes(policies, results) {
			fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Info.Render("note:"), n)
		}
		switch {
		case doc.Sweep != nil:
			err = report.WriteSweepText(env.Out, doc, env.Style)
		case doc.Seeds != nil:
			err = report.WriteSeedsText(env.Out, doc, env.Style)
		default:
			err = report.WriteText(env.Out, doc, env.Style)
		}
	}
	if err != nil {
		return err
	}
	return plotErr
}

// defaultEntryNotes says, for each policy read from an lb-config that has
// `models` entries, which workload models have none and so run the
// config's `default` algorithm with default settings (spec E2), with the
// algorithm, the keys the file has and a "did you mean" when one is
// close. A config without `models` routes every model with `default` on
// purpose: no note. policies and results are in the same order (RunAll).
func defaultEntryNotes(policies []sim.Policy, results []*sim.Result) []string {
	var notes []string
	for i, r := range results {
		if i >= len(policies) {
			break
		}
		keys := policies[i].ModelKeys()
		if len(keys) == 0 {
			continue
		}
		list := strings.Join(keys, ", ")
		if len(keys) > 5 {
			list = strings.Join(keys[:5], ", ") + fmt.Sprintf(", … (%d in all)", len(keys))
		}
		for _, m := range r.Models {
			if m.Entry != sim.EntryDefault {
				continue
			}
			n := fmt.Sprintf("%s: model %s has no models entry (the file has %s), so it runs the config's default algorithm, %s, with default settings",
				r.Policy, m.Model, list, m.Algorithm)
			if m.DidYouMean != "" {
				n += fmt.Sprintf("; did you mean %q?", m.DidYouMean)
			}
			notes = append(notes, ui.Printable(n))
		}
	}
	return notes
}

// checkPlotDir creates dir if needed and checks that a file can be created
// in it (the charts are written there after the simulation).
func checkPlotDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return readlimit.Cause(err)
	}
	f, err := os.CreateTemp(dir, ".lcctl-plot-check-*")
	if err != nil {
		return fmt.Errorf("cannot write there: %w", readlimit.Cause(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func countTrace(sc *sim.Scenario) (int64, error) {
	f, err := readlimit.OpenNoStdin(sc.TracePath())
	if err != nil {
		return 0, traceOpenError(sc, err)
	}
	defer f.Close()
	var n int64
	r := &readErrs{r: f}
	_, err = sim.ReadTrace(sc.Workload.Trace, r, sc.Workload.TraceFormat, sc.Workload.BlockTokens, func(sim.TraceRecord) error { n++; return nil })
	if r.err != nil {
		// The file could not be read (a directory, an I/O error), which
		// is not a problem of a line: say so at the field.
		return 0, traceOpenError(sc, r.err)
	}
	if err == nil && n == 0 {
		err = fmt.Errorf("%s: the trace has no requests (only blank lines, comments or a header)", sc.Workload.Trace)
	}
	return n, err
}

// readErrs is a reader that keeps the first error of r other than io.EOF.
type readErrs struct {
	r   io.Reader
	err error
}

func (e *readErrs) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// traceOpenError is the error for a workload.trace that cannot be opened
// or read, at the field's position ("scenario.yaml:L:C: workload.trace:
// cannot read …").
// A relative trace resolves against the scenario file's folder, not the
// working directory, so the error shows the path as written, the folder
// and the absolute path lcctl tried.
func traceOpenError(sc *sim.Scenario, err error) error {
	tried := sc.TracePath()
	if abs, aerr := filepath.Abs(tried); aerr == nil {
		tried = abs
	}
	if filepath.IsAbs(sc.Workload.Trace) {
		return sc.FieldError("workload.trace", "cannot read %s: %v", tried, readlimit.Cause(err))
	}
	dir := sc.Dir
	if abs, aerr := filepath.Abs(dir); aerr == nil {
		dir = abs
	}
	return sc.FieldError("workload.trace", "cannot read %s (%q is relative to the scenario file's folder %s, not to the working directory): %v",
		tried, sc.Workload.Trace, dir, readlimit.Cause(err))
}

// startProgress draws a progress bar on stderr while the simulation runs:
// only when stderr is a terminal other than TERM=dumb (or mode is "always")
// and only once the run has taken more than a second. The returned function stops it and
// clears the line.
func startProgress(env *Env, mode string, done *atomic.Int64, total int64) func() {
	if !progressWanted(env, mode) {
		return func() {}
	}
	line := ui.NewProgressForced(env.Streams, true)
	quit := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				line.Clear()
				return
			case <-tick.C:
				el := time.Since(start)
				if el < time.Second {
					continue
				}
				line.Show("%s", progressText(done.Load(), total, el))
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// progressWanted decides whether startProgress draws: always, never, or
// (auto) on a terminal stderr that can clear a line (\r\033[K), which
// TERM=dumb cannot.
func progressWanted(env *Env, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return ui.ProgressWanted(env.Streams)
}

// progressText is the progress line of a simulation that has run n of
// total requests in el.
func progressText(n, total int64, el time.Duration) string {
	const width = 30
	frac := 0.0
	if total > 0 {
		frac = min(float64(n)/float64(total), 0.99)
	}
	fill := int(frac * width)
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	if fill < width {
		bar = bar[:fill] + ">" + bar[fill+1:]
	}
	return fmt.Sprintf("simulating [%s] %3.0f%%  %s requests  %s", bar, 100*frac, humanCount(n), el.Truncate(100*time.Millisecond))
}

func humanCount(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%d", n)
}

// parseSweep reads --sweep FIELD=V1,V2,...: at most 100 finite values.
func parseSweep(s string) (string, []float64, error) {
	if s == "" {
		return "", nil, nil
	}
	field, list, ok := strings.Cut(s, "=")
	field = strings.TrimSpace(field)
	if !ok || field == "" || strings.TrimSpace(list) == "" {
		return "", nil, Usagef("--sweep %q: want FIELD=V1,V2,... (e.g. workload.session_rate=2,4,8)", s)
	}
	var vals []float64
	for _, x := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return "", nil, Usagef("--sweep %s: %q is not a finite number", field, strings.TrimSpace(x))
		}
		vals = append(vals, v)
	}
	if len(vals) > 100 {
		return "", nil, Usagef("--sweep %s: %d values; at most 100", field, len(vals))
	}
	return field, vals, nil
}
