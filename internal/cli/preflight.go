package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/gateway"
	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/preflight"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/validate"
)

// preflightOptions are the flags of `lcctl preflight`.
type preflightOptions struct {
	cmdInput
	Stage           int
	Config          string
	GatewayEnv      string
	GatewayValues   []string
	StargateMetrics string
	GatewayMetrics  string
	StargatePrefix  string
	Interval        time.Duration
	Timeout         time.Duration
	Strict          bool
	// Wait re-runs the checklist until it passes (watch.go).
	Wait waitOptions
	// conn are the Olric connection flags of lcctl store; olric is the
	// store.Options they give, set by validate when an address is given
	// (olricGiven).
	conn       *connFlags
	olric      store.Options
	olricGiven bool
	// storeDMap is --dmap as given ("" when not), before conn.options
	// resolves it.
	storeDMap string
}

// validate checks the flags: --stage (required, 1-3), no input given an
// empty value, what reads standard input, the wait and scrape settings,
// the Olric connection, and that something is to be checked.
func (opts *preflightOptions) validate(env *Env) error {
	if !opts.flagGiven("stage") {
		return Usagef("--stage is required: 1, 2 or 3")
	}
	// An input option given an empty value is an unset variable
	// in a script, not a wish to skip its checks: refuse it
	// rather than pass with those checks skipped.
	for _, in := range []struct {
		name string
		vals []string
	}{
		{"config", []string{opts.Config}}, {"gateway-env", []string{opts.GatewayEnv}}, {"gateway-values", opts.GatewayValues},
		{"stargate-metrics", []string{opts.StargateMetrics}}, {"gateway-metrics", []string{opts.GatewayMetrics}},
	} {
		if !opts.flagGiven(in.name) {
			continue
		}
		for _, v := range in.vals {
			if strings.TrimSpace(v) == "" {
				return Usagef("--%s is empty (an unset variable?): give a file, a URL or -, or leave the option out", in.name)
			}
		}
	}
	if opts.Wait.Wait {
		if slices.Contains(append([]string{opts.Config, opts.GatewayEnv, opts.StargateMetrics, opts.GatewayMetrics}, opts.GatewayValues...), "-") {
			return Usagef("--wait runs the checks again: standard input (-) can be read only once; give files or URLs")
		}
		if opts.Wait.Timeout <= 0 || opts.Wait.Interval <= 0 {
			return Usagef("--wait-timeout and --wait-interval must be positive")
		}
	}
	if opts.Stage < 1 || opts.Stage > 3 {
		return Usagef("--stage must be 1, 2 or 3")
	}
	if opts.GatewayEnv != "" && len(opts.GatewayValues) > 0 {
		return Usagef("--gateway-env and --gateway-values are mutually exclusive")
	}
	if opts.Timeout <= 0 {
		return Usagef("--timeout must be positive")
	}
	stdinUsers := 0
	for _, s := range append([]string{opts.Config, opts.GatewayEnv, opts.StargateMetrics, opts.GatewayMetrics}, opts.GatewayValues...) {
		if s == "-" {
			stdinUsers++
		}
	}
	if stdinUsers > 1 {
		return Usagef("only one input can be standard input (-)")
	}
	if err := checkIntervalSources(opts.Interval, opts.StargateMetrics, opts.GatewayMetrics); err != nil {
		return err
	}
	// Olric: the connection flags of lcctl store; no address skips the
	// olric.* checks instead of failing. An explicitly empty --olric skips
	// them too, even with $LCCTL_OLRIC_ADDRS set.
	conn := opts.conn
	opts.storeDMap = conn.dmap
	addrs := conn.addrs
	if addrs == "" && !explicitlyEmpty(opts.flagGiven, "olric", conn.addrs) {
		addrs = env.Streams.Env(EnvOlricAddrs)
	}
	opts.olricGiven = strings.TrimSpace(addrs) != ""
	if opts.olricGiven {
		o, err := conn.options(env, opts.flagGiven)
		if err != nil {
			return err
		}
		opts.olric = o
	}
	if opts.Config == "" && opts.GatewayEnv == "" && len(opts.GatewayValues) == 0 && opts.StargateMetrics == "" && opts.GatewayMetrics == "" && !opts.olricGiven {
		// Every check would be skipped and the run would pass.
		return Usagef("nothing to check: give at least one of --config, --gateway-env or --gateway-values, --olric, --stargate-metrics, --gateway-metrics")
	}
	return nil
}

// httpClient is the client metrics URLs are fetched with (tests swap it).
var httpClient = http.DefaultClient

func newPreflightCommand(env *Env) *cobra.Command {
	conn := &connFlags{}
	opts := &preflightOptions{StargatePrefix: metrics.DefaultStargatePrefix, Timeout: metrics.DefaultTimeout, conn: conn}
	cmd := &cobra.Command{
		Use:   "preflight --stage 1|2|3 [inputs]",
		Short: "Run the rollout checklist of a last-cluster affinity stage",
		Long: `Check that a rollout stage of session-aware last-cluster affinity is safe:

  stage 1  deploy Stargate with the release, last_cluster_affinity off, after
           reviewing no-SLO pulsar-wait-and-widen entries;
  stage 2  enable the gateway store (STARGATE_LAST_CLUSTER_ENABLED=true);
  stage 3  turn last_cluster_affinity on per model.

Every input is optional; checks whose input is missing are skipped with the
reason shown. Results: ✔ ok, ✖ failed (with a hint), ‼ warning, ○ skipped.
Check IDs and the JSON schema are in 'lcctl docs preflight'; the runbook is
'lcctl docs rollout'.

Metrics sources are http(s) URLs, files, or - (standard input). A URL that
cannot be scraped fails its check; a file that cannot be read or parsed is
an input error.

--wait runs the checks again every --wait-interval (10s) until none fails
(exit 0) or --wait-timeout (10m) passes (exit 1), printing the final
report; Ctrl-C stops the wait (exit 1, whatever the last run found). An
input file that cannot be read or parsed is waited for too; still so when
--wait-timeout passes, it is exit 2.

Exit codes: 0 no check failed; 1 a check failed (or warned, with --strict);
2 usage error, or an input file that cannot be read or parsed.`,
		Example: `  lcctl preflight --stage 1 --config lb-config.json --stargate-metrics http://llm-request-router:9090/metrics
  lcctl preflight --stage 2 --config lb-config.json --gateway-values values.yaml \
      --olric llm-api-gateway:3320 --gateway-metrics http://llm-api-gateway:9464/metrics
  lcctl preflight --stage 3 --config lb-config.json --gateway-values values.yaml \
      --gateway-metrics http://llm-api-gateway:9464/metrics \
      --stargate-metrics http://llm-request-router:9090/metrics --interval 60s
  lcctl preflight --stage 2 --olric llm-api-gateway:3320 --wait --wait-timeout 10m   # in a rollout script`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, opts, runPreflight)
	f := cmd.Flags()
	f.IntVar(&opts.Stage, "stage", 0, "rollout stage to check: 1, 2 or 3 (required)")
	f.StringVar(&opts.Config, "config", "", "Stargate lb-config file (JSON or YAML; - for stdin)")
	f.StringVar(&opts.GatewayEnv, "gateway-env", "", "gateway environment as a dotenv file (NAME=VALUE lines)")
	f.StringArrayVar(&opts.GatewayValues, "gateway-values", nil, "gateway Helm values file; repeat to layer files like helm -f")
	conn.register(f)
	f.StringVar(&opts.StargateMetrics, "stargate-metrics", "", "Stargate metrics: URL, file or -")
	f.StringVar(&opts.GatewayMetrics, "gateway-metrics", "", "gateway metrics: URL, file or -")
	f.StringVar(&opts.StargatePrefix, "stargate-prefix", metrics.DefaultStargatePrefix, "Stargate --metrics-prefix (older charts: llm_request_router_)")
	f.DurationVar(&opts.Interval, "interval", 0, "scrape URLs twice this far apart and judge the increase (e.g. 30s)")
	f.DurationVar(&opts.Timeout, "timeout", metrics.DefaultTimeout, "timeout of each metrics scrape")
	f.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on warnings too")
	addWaitFlags(f, &opts.Wait)
	_ = cmd.RegisterFlagCompletionFunc("stage", cobra.FixedCompletions([]string{"1", "2", "3"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runPreflight runs the checklist of the validated options, with --wait
// until it passes (runPreflightWait). Notes about the options themselves
// (Olric addresses at stage 1) are printed once, before the first run.
func runPreflight(ctx context.Context, env *Env, opts *preflightOptions) error {
	if opts.Stage == 1 && opts.olricGiven && len(opts.olric.Addrs) > 0 {
		fmt.Fprintf(env.Err, "lcctl: note: the Olric checks start at stage 2 (the gateway store); the Olric addresses (%s) are not used at stage 1\n", valueOrigin(env, opts.flagGiven, "olric", EnvOlricAddrs))
	}
	if opts.Wait.Wait {
		return runPreflightWait(ctx, env, func(ctx context.Context, e *Env) error { return runPreflightOnce(ctx, e, opts) }, opts.Wait, opts.fileInputs())
	}
	return runPreflightOnce(ctx, env, opts)
}

// runPreflightOnce runs the checklist once. An input file that cannot be
// read or parsed is an exit-2 error marked unreadyInput (--wait runs
// again on it).
func runPreflightOnce(ctx context.Context, env *Env, opts *preflightOptions) error {
	if opts.Wait.Wait {
		if err := refuseUnwaitable(opts.fileInputs()); err != nil {
			return err
		}
	}
	in, err := readPreflightInputs(ctx, env, opts)
	if err != nil {
		if exitCode(err) == ExitUsage && ctx.Err() == nil {
			return &unreadyInput{err: err}
		}
		return err
	}

	report := preflight.Run(ctx, in)
	annotateContextChecks(env, report, map[string]string{
		preflight.CheckOlricReachable: "olric",
		preflight.CheckGatewayScrape:  "gateway-metrics",
		preflight.CheckStargateScrape: "stargate-metrics",
	})
	if err := nothingChecked(report, opts.Stage); err != nil {
		// A usage error: no summary first (it would read as a pass).
		return err
	}
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "checks", checks.ToJSON(report, "preflight", opts.Stage, opts.Strict)); err != nil {
			return err
		}
	} else if err := checks.RenderText(env.Out, env.Style, report); err != nil {
		return err
	}
	if report.Failed(opts.Strict) {
		return ErrFindings
	}
	return nil
}

// readPreflightInputs reads and parses the inputs of one run: the
// lb-config, the gateway settings and the metrics scrapes. A file that
// cannot be read or parsed is an exit-2 error.
func readPreflightInputs(ctx context.Context, env *Env, opts *preflightOptions) (preflight.Inputs, error) {
	in := preflight.Inputs{Stage: opts.Stage, StoreDMap: opts.storeDMap, StargatePrefix: opts.StargatePrefix}
	if opts.olricGiven {
		in.OlricAddrs = opts.olric.Addrs
		in.Prober = preflight.StoreProber{Options: opts.olric}
	}
	if opts.Config != "" {
		data, err := readFlagInput(env, "config", opts.Config, validate.MaxInputBytes)
		if err != nil {
			return in, UsageErr(err)
		}
		res := validate.File(opts.Config, data)
		if res.Doc == nil || res.Doc.Root == nil {
			// Not JSON/YAML at all: an input error, as for lcctl validate.
			for _, d := range res.Diagnostics {
				if d.Severity == validate.SeverityError {
					return in, Usagef("%s", d.String())
				}
			}
		}
		in.Config = res
	}

	switch {
	case opts.GatewayEnv != "":
		data, err := readFlagInput(env, "gateway-env", opts.GatewayEnv, gateway.MaxInputBytes)
		if err != nil {
			return in, UsageErr(err)
		}
		ge, err := gateway.ParseDotenv(opts.GatewayEnv, data)
		if err != nil {
			return in, UsageErr(err)
		}
		in.Gateway = ge
	case len(opts.GatewayValues) > 0:
		var ins []gateway.NamedInput
		for _, p := range opts.GatewayValues {
			data, err := readFlagInput(env, "gateway-values", p, gateway.MaxInputBytes)
			if err != nil {
				return in, UsageErr(err)
			}
			ins = append(ins, gateway.NamedInput{Name: p, Data: data})
		}
		ge, err := gateway.ParseValues(ins...)
		if err != nil {
			return in, UsageErr(err)
		}
		in.Gateway = ge
	}

	fetcher := &metrics.Fetcher{Client: httpClient, Timeout: opts.Timeout, Stdin: env.In}
	var specs []*scrapeSpec
	if opts.GatewayMetrics != "" {
		in.GatewayMetrics = &preflight.Scrapes{Source: sourceLabel(opts.GatewayMetrics)}
		specs = append(specs, &scrapeSpec{flag: "gateway-metrics", src: opts.GatewayMetrics, keep: metrics.GatewayFamilies, out: in.GatewayMetrics})
	}
	if opts.StargateMetrics != "" {
		in.StargateMetrics = &preflight.Scrapes{Source: sourceLabel(opts.StargateMetrics)}
		specs = append(specs, &scrapeSpec{flag: "stargate-metrics", src: opts.StargateMetrics, keep: metrics.StargateFamilies(opts.StargatePrefix), out: in.StargateMetrics})
	}
	return in, scrapeAll(ctx, fetcher, specs, opts.Interval)
}

// fileInput is an input a preflight run reads from a named file: the
// flag that gave it (without dashes) and the path.
type fileInput struct{ flag, path string }

// fileInputs lists the inputs of opts read from named files, in flag
// order: --config, --gateway-env, each --gateway-values, and the metrics
// sources that are not URLs (standard input, "-", is not listed).
func (opts *preflightOptions) fileInputs() []fileInput {
	var out []fileInput
	add := func(flag, path string) {
		if path != "" && path != "-" && !metrics.IsURL(path) {
			out = append(out, fileInput{flag, path})
		}
	}
	add("config", opts.Config)
	add("gateway-env", opts.GatewayEnv)
	for _, p := range opts.GatewayValues {
		add("gateway-values", p)
	}
	add("gateway-metrics", opts.GatewayMetrics)
	add("stargate-metrics", opts.StargateMetrics)
	return out
}

// refuseUnwaitable is the usage error of a --wait whose file input exists
// but is not a regular file (a directory, a named pipe or process
// substitution, a socket, a device): no later run can read it as a
// file, so the wait stops at once rather than run until --wait-timeout.
// An input that is not there, or cannot be inspected (permission
// denied), is not refused: it is waited for.
func refuseUnwaitable(files []fileInput) error {
	for _, f := range files {
		st, err := os.Stat(f.path)
		if err != nil {
			continue
		}
		if kind := fileKind(st.Mode()); kind != "" {
			return Usagef("--%s: %s is %s, not a regular file: --wait reads every input again on each run, so each must be a regular file (a pipe can be read only once)", f.flag, f.path, kind)
		}
	}
	return nil
}

// unreadyInput marks the error of a preflight run whose input file could
// not be read or parsed (exit 2, from the *ExitError it wraps). Without
// --wait it is that error; --wait runs again on it until its deadline,
// since a file can be caught mid-write (runPreflightWait), where any other
// usage error stops the wait at once.
type unreadyInput struct{ err error }

func (u *unreadyInput) Error() string { return u.err.Error() }
func (u *unreadyInput) Unwrap() error { return u.err }

// maxSkipReasons is how many skip reasons nothingChecked names before it
// folds the rest into "and N more" (N ≥ 2).
const maxSkipReasons = 3

// nothingChecked is the usage error for a run whose inputs were given but
// none of which applies at the stage: every check was skipped. It names
// the distinct skip reasons, since nothing else is printed: all of them
// when there are up to maxSkipReasons+1, else the first maxSkipReasons
// and how many more.
func nothingChecked(report *checks.Report, stage int) error {
	if sum := report.Summary(); sum.OK+sum.Warn+sum.Fail > 0 {
		return nil
	}
	var reasons []string
	for _, r := range report.Results() {
		if r.Reason != "" && !slices.Contains(reasons, r.Reason) {
			reasons = append(reasons, r.Reason)
		}
	}
	// "and 1 more" would hide a reason to save none: fold only two or more.
	more := ""
	if len(reasons) > maxSkipReasons+1 {
		more = fmt.Sprintf("; and %d more", len(reasons)-maxSkipReasons)
		reasons = reasons[:maxSkipReasons]
	}
	return Usagef("nothing was checked at stage %d: every check was skipped (%s%s)", stage, strings.Join(reasons, "; "), more)
}
