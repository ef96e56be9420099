package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/preflight"
	"github.com/lcctl/lcctl/internal/ui"
)

func newCheckCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check a live rollout (metrics)",
		Example: `  lcctl check metrics --gateway http://llm-api-gateway:9464/metrics --stargate http://llm-request-router:9090/metrics
  lcctl check metrics --gateway examples/metrics/gateway-stage3.prom --stargate examples/metrics/stargate-stage3.prom`,
	}
	cmd.AddCommand(newCheckMetricsCommand(env))
	return cmd
}

// checkMetricsOptions are the flags of `lcctl check metrics`.
type checkMetricsOptions struct {
	cmdInput
	Stargate       string
	Gateway        string
	Model          string
	StargatePrefix string
	Interval       time.Duration
	Timeout        time.Duration
	LookupTimeout  time.Duration
	Strict         bool
	// Watch redraws the report every Interval (watch.go).
	Watch bool
}

// validate checks the flags: with --watch, the interval (default
// defaultWatchInterval, at least minWatchInterval) and URL sources; then
// that a source is given, the timeouts and the scrape interval.
func (opts *checkMetricsOptions) validate(*Env) error {
	if opts.Watch {
		if opts.Interval == 0 {
			opts.Interval = defaultWatchInterval
		}
		if opts.Interval < minWatchInterval {
			return Usagef("--interval %s: --watch needs at least %s", opts.Interval, minWatchInterval)
		}
		if !metrics.IsURL(opts.Stargate) && opts.Stargate != "" || !metrics.IsURL(opts.Gateway) && opts.Gateway != "" {
			return Usagef("--watch needs http(s) URLs: a file or standard input does not change between scrapes")
		}
	}
	if opts.Stargate == "" && opts.Gateway == "" {
		return Usagef("give --stargate, --gateway or both")
	}
	if opts.Timeout <= 0 || opts.LookupTimeout <= 0 {
		return Usagef("--timeout and --lookup-timeout must be positive")
	}
	return checkIntervalSources(opts.Interval, opts.Stargate, opts.Gateway)
}

func newCheckMetricsCommand(env *Env) *cobra.Command {
	opts := &checkMetricsOptions{StargatePrefix: metrics.DefaultStargatePrefix, Timeout: metrics.DefaultTimeout, LookupTimeout: metrics.DefaultLookupTimeout}
	cmd := &cobra.Command{
		Use:   "metrics --stargate URL|FILE|- --gateway URL|FILE|-",
		Short: "Report last-cluster metrics of the gateway and Stargate, with verdicts",
		Long: `Read Prometheus scrapes (text format or OpenMetrics) of the LLM API gateway
and of Stargate and report:

  gateway   last-cluster lookups by result and the hit ratio, writes by
            result, lookup latency quantiles (p50/p90/p99 from the histogram's
            own buckets);
  Stargate  stargate_routing_session_selections_total by session state and
            selection per model and algorithm, the share of returning
            requests, and how many of them went to their last cluster
            (primary) versus elsewhere (fallback).

One scrape reports totals since each process started. --interval scrapes
the URLs twice and reports the increase as rates per second; --watch does
that every interval (default 10s) until Ctrl-C, redrawing the report on a
terminal and printing one line per interval when piped. The verdicts
are those of lcctl preflight ('lcctl docs preflight'), without a stage.

Exit codes: 0 no verdict failed; 1 a verdict failed (or warned, with
--strict), or a URL could not be scraped; 2 usage error, or a file that
cannot be read or parsed.`,
		Example: `  lcctl check metrics --gateway http://llm-api-gateway:9464/metrics --stargate http://llm-request-router:9090/metrics
  lcctl check metrics --stargate scrape.txt --model meta/llama-3.1-8b-instruct
  curl -s http://llm-api-gateway:9464/metrics | lcctl check metrics --gateway -
  lcctl check metrics --gateway http://llm-api-gateway:9464/metrics --interval 30s -o json
  lcctl check metrics --gateway http://llm-api-gateway:9464/metrics --stargate http://llm-request-router:9090/metrics --watch`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, opts, runCheckMetrics)
	f := cmd.Flags()
	f.StringVar(&opts.Stargate, "stargate", "", "Stargate metrics: URL, file or -")
	f.StringVar(&opts.Gateway, "gateway", "", "gateway metrics: URL, file or -")
	f.StringVar(&opts.Model, "model", "", "report only this model (Stargate's model label)")
	f.StringVar(&opts.StargatePrefix, "stargate-prefix", metrics.DefaultStargatePrefix, "Stargate --metrics-prefix (older charts: llm_request_router_)")
	f.DurationVar(&opts.Interval, "interval", 0, "scrape twice this far apart and report rates (URLs only)")
	f.DurationVar(&opts.Timeout, "timeout", metrics.DefaultTimeout, "timeout of each scrape")
	f.DurationVar(&opts.LookupTimeout, "lookup-timeout", metrics.DefaultLookupTimeout, "the gateway's STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT, to judge lookup latency")
	f.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on warnings too")
	f.BoolVar(&opts.Watch, "watch", false, "report the rates over every --interval (default 10s) until Ctrl-C: redrawn on a terminal, one line per interval when piped (URLs only)")
	return cmd
}

// MetricsReport is the JSON output of `lcctl check metrics` (schema
// "lcctl.metrics/v1", docs/preflight.md).
type MetricsReport struct {
	Schema string `json:"schema"`
	// Window is the same for both sources: totals or rates.
	Window metrics.Window `json:"window"`
	// Gateway and Stargate are null when their source was not given or
	// could not be scraped (see Errors).
	Gateway  *metrics.GatewayReport  `json:"gateway"`
	Stargate *metrics.StargateReport `json:"stargate"`
	// Errors lists sources that could not be scraped; empty (never null)
	// when every source was read.
	Errors []string `json:"errors"`
	// Verdicts is the checklist (schema lcctl.checks/v1).
	Verdicts checks.JSONReport `json:"verdicts"`
}

// runCheckMetrics scrapes the sources of the validated options and
// reports, with --watch every interval (runCheckMetricsWatch).
func runCheckMetrics(ctx context.Context, env *Env, opts *checkMetricsOptions) error {
	if opts.Watch {
		return runCheckMetricsWatch(ctx, env, opts)
	}
	return runCheckMetricsOnce(ctx, env, opts)
}

// runCheckMetricsOnce scrapes and reports once: the report on stdout
// (text or JSON), the sources that could not be scraped on stderr.
func runCheckMetricsOnce(ctx context.Context, env *Env, opts *checkMetricsOptions) error {
	run, err := scrapeMetricsRun(ctx, env, opts)
	if err != nil {
		return err
	}
	if env.Global.JSON() {
		if err := writeMetricsJSON(env.Out, &run.report); err != nil {
			return err
		}
	} else {
		if err := renderMetricsText(env, &run.report, opts.Model); err != nil {
			return err
		}
		if len(run.checks.Groups) > 0 {
			fmt.Fprintln(env.Out)
			if err := checks.RenderText(env.Out, env.Style, run.checks); err != nil {
				return err
			}
		}
	}
	return run.finish(env)
}

// metricsRun is one run of check metrics: the report, its checklist (the
// report's Verdicts are made of it) and whether a source could not be
// scraped.
type metricsRun struct {
	report       MetricsReport
	checks       *checks.Report
	strict       bool
	failedSource bool
}

// finish writes the sources that could not be scraped to stderr and
// returns the run's exit: ErrFindings when one could not be scraped or a
// verdict failed (with --strict, warned), else nil.
func (r *metricsRun) finish(env *Env) error {
	for _, e := range r.report.Errors {
		writeProblem(env.Err, e)
	}
	if r.failedSource || r.checks.Failed(r.strict) {
		return ErrFindings
	}
	return nil
}

// scrapeMetricsRun scrapes the sources of opts and builds the report and
// its verdicts; it prints nothing. Errors: scrapeAll's (a file that cannot
// be read or parsed, exit 2; the context's).
func scrapeMetricsRun(ctx context.Context, env *Env, opts *checkMetricsOptions) (*metricsRun, error) {
	fetcher := &metrics.Fetcher{Client: httpClient, Timeout: opts.Timeout, Stdin: env.In}
	var gw, sg *preflight.Scrapes
	var specs []*scrapeSpec
	if opts.Gateway != "" {
		gw = &preflight.Scrapes{Source: sourceLabel(opts.Gateway)}
		specs = append(specs, &scrapeSpec{flag: "gateway", src: opts.Gateway, keep: metrics.GatewayFamilies, out: gw})
	}
	if opts.Stargate != "" {
		sg = &preflight.Scrapes{Source: sourceLabel(opts.Stargate)}
		specs = append(specs, &scrapeSpec{flag: "stargate", src: opts.Stargate, keep: metrics.StargateFamilies(opts.StargatePrefix), out: sg})
	}
	if err := scrapeAll(ctx, fetcher, specs, opts.Interval); err != nil {
		return nil, err
	}

	out := MetricsReport{Schema: SchemaID("metrics"), Window: metrics.Totals, Errors: []string{}}
	rep := &checks.Report{}
	vo := metrics.VerdictOptions{LookupTimeout: opts.LookupTimeout}
	failedSource := false
	win := func(sc *preflight.Scrapes) metrics.Window {
		if sc.Before == nil {
			return metrics.Totals
		}
		return metrics.RatesOver(sc.After.Time.Sub(sc.Before.Time))
	}
	if gw != nil {
		if !preflight.ScrapeCheck(rep.Group(preflight.GroupGatewayMetrics), true, "--gateway", gw) {
			out.Errors = append(out.Errors, scrapeErrText(gw)+contextNotes(env, scrapeErrText(gw), "gateway"))
			failedSource = true
		} else {
			snap := metrics.ExtractGateway(gw.After)
			if gw.Before != nil {
				snap = snap.Since(metrics.ExtractGateway(gw.Before))
			}
			r := metrics.BuildGatewayReport(gw.Source, win(gw), snap)
			out.Gateway, out.Window = &r, r.Window
			rep.Group(preflight.GroupGatewayMetrics).Add(metrics.GatewayVerdicts(r, vo)...)
		}
	}
	if sg != nil {
		if !preflight.ScrapeCheck(rep.Group(preflight.GroupStargateMetrics), false, "--stargate", sg) {
			out.Errors = append(out.Errors, scrapeErrText(sg)+contextNotes(env, scrapeErrText(sg), "stargate"))
			failedSource = true
		} else {
			snap := metrics.ExtractStargate(sg.After, opts.StargatePrefix)
			if sg.Before != nil {
				snap = snap.Since(metrics.ExtractStargate(sg.Before, opts.StargatePrefix))
			}
			r := metrics.BuildStargateReport(sg.Source, win(sg), snap, opts.Model)
			// Done with the parse trees (200,000 series are hundreds of MB
			// the garbage collector would keep scanning).
			sg.After.Families = nil
			if sg.Before != nil {
				sg.Before.Families = nil
			}
			out.Stargate, out.Window = &r, r.Window
			var models []string
			if opts.Model != "" {
				models = []string{opts.Model}
			}
			if res, missing := metrics.StargateModelVerdict(r, opts.Model); missing {
				// Series exist, none for --model: a wrong name, not a
				// model without traffic (exit 1, docs/preflight.md).
				rep.Group(preflight.GroupStargateMetrics).Add(res)
			} else {
				rep.Group(preflight.GroupStargateMetrics).Add(metrics.StargateSessionVerdicts(r, models, vo)...)
			}
		}
	}
	annotateContextChecks(env, rep, map[string]string{preflight.CheckGatewayScrape: "gateway", preflight.CheckStargateScrape: "stargate"})
	out.Verdicts = checks.ToJSON(rep, "check metrics", 0, opts.Strict)
	return &metricsRun{report: out, checks: rep, strict: opts.Strict, failedSource: failedSource}, nil
}

// num renders a count of window w: per second with rates ("41.2/s"),
// else as metrics.FormatCount does.
func num(w metrics.Window, v float64) string {
	if w.Mode == metrics.ModeRates {
		return fmt.Sprintf("%.3g/s", w.PerSecond(v))
	}
	return metrics.FormatCount(v)
}

func windowTitle(w metrics.Window) string {
	if w.Mode == metrics.ModeRates {
		return fmt.Sprintf("rates over %s", w.Interval())
	}
	return "totals since process start"
}

// scrapeErrText is the error of a source that could not be scraped.
func scrapeErrText(sc *preflight.Scrapes) string {
	if sc.Err == nil {
		return sc.Source + ": no scrape"
	}
	return sc.Err.Error()
}

// renderMetricsText prints the report as text; model is the --model
// filter ("" for every model).
func renderMetricsText(env *Env, r *MetricsReport, model string) error {
	w := env.Out
	h := func(s string) string { return env.Style.Header.Render(s) }
	if g := r.Gateway; g != nil {
		fmt.Fprintf(w, "%s\n", h(fmt.Sprintf("Gateway last-cluster store — %s (%s)", ui.Printable(g.Source), windowTitle(g.Window))))
		if !g.Present {
			fmt.Fprintf(w, "  no %s series%s\n", metrics.GatewayLookups, invalidNote(g.InvalidSamples-g.InvalidLabels.Samples, g.InvalidLabels.Samples))
		} else {
			fmt.Fprintf(w, "  lookups  %s  (hit ratio %s, error+timeout %s, skipped %s)\n", resultList(g.Window, g.Lookups,
				[]string{metrics.ResultHit, metrics.ResultMiss, metrics.ResultError, metrics.ResultTimeout, metrics.ResultSkipped}),
				metrics.Pct(g.HitRatio), metrics.Pct(g.FailureRatio), metrics.Pct(g.SkippedRatio))
			fmt.Fprintf(w, "  writes   %s  (error %s)\n", resultList(g.Window, g.Writes, []string{metrics.ResultOK, metrics.ResultError}), metrics.Pct(g.WriteErrorRatio))
			fmt.Fprintf(w, "  latency  p50 %s  p90 %s  p99 %s  (%s timed lookups)\n", metrics.FormatSeconds(g.Latency.P50), metrics.FormatSeconds(g.Latency.P90), metrics.FormatSeconds(g.Latency.P99), num(metrics.Totals, g.Latency.Count))
		}
		fmt.Fprintln(w)
	}
	if s := r.Stargate; s != nil {
		fmt.Fprintf(w, "%s\n", h(fmt.Sprintf("Stargate session selections — %s (%s)", ui.Printable(s.Source), windowTitle(s.Window))))
		if len(s.Rows) == 0 && model != "" && s.Present {
			// Model names come from the scrape: escaped like the rest.
			fmt.Fprintf(w, "  %s\n", ui.Printable(metrics.MissingModelMessage(*s, model)))
		} else if len(s.Rows) == 0 {
			fmt.Fprintf(w, "  no %s series%s\n", s.Metric, invalidNote(s.InvalidSamples-s.InvalidLabels.Samples, s.InvalidLabels.Samples))
		} else if err := selectionsTable(w, s); err != nil {
			return err
		}
	}
	return nil
}

// invalidNote says how many samples were left out as NaN, ±Inf or
// negative (bad) and for an undocumented label value (labels), so "no
// series" does not hide them.
func invalidNote(bad, labels int) string {
	var parts []string
	if bad > 0 {
		parts = append(parts, plural.Count(bad, "sample", "samples")+" NaN, ±Inf or negative")
	}
	if labels > 0 {
		parts = append(parts, plural.Count(labels, "sample", "samples")+" with an undocumented label value")
	}
	if len(parts) == 0 {
		return ""
	}
	return " with a valid value (left out: " + strings.Join(parts, ", ") + ")"
}

func resultList(win metrics.Window, m map[string]float64, order []string) string {
	seen := map[string]bool{}
	var parts []string
	for _, k := range order {
		seen[k] = true
		parts = append(parts, fmt.Sprintf("%s %s", k, num(win, m[k])))
	}
	var extra []string
	for k := range m {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		parts = append(parts, fmt.Sprintf("%s %s", ui.Printable(ui.EchoLabel(k)), num(win, m[k])))
	}
	return strings.Join(parts, ", ")
}

func selectionsTable(w io.Writer, s *metrics.StargateReport) error {
	t := ui.Table{Headers: []string{"MODEL", "ALGORITHM", "NEW p/f", "RETURNING p/f", "STALE p/f", "RETURNING", "TO LAST CLUSTER", "STALE"}, Indent: "  "}
	rows, omitted := s.TextRows(metrics.MaxTextRows)
	for _, m := range rows {
		pf := func(state string) string {
			c := m.State(state)
			return num(s.Window, c.Primary) + "/" + num(s.Window, c.Fallback)
		}
		t.Rows = append(t.Rows, []string{ui.Printable(ui.EchoLabel(m.Model)), ui.Printable(ui.EchoLabel(m.Algorithm)),
			pf(metrics.StateNew), pf(metrics.StateReturning), pf(metrics.StateStale),
			metrics.Pct(m.ReturningShare), metrics.Pct(m.ReturningPrimaryShare), metrics.Pct(m.StaleShare)})
	}
	if _, err := io.WriteString(w, t.Render(nil)); err != nil {
		return err
	}
	if omitted > 0 {
		// docs/preflight.md "check metrics": text lists the busiest rows.
		_, err := fmt.Fprintf(w, "  %d of %d rows shown (the most classified requests); -o json lists every row, --model NAME shows one model\n", len(rows), len(s.Rows))
		return err
	}
	return nil
}
