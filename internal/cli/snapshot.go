package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lcctl/lcctl/internal/live"
)

// liveFlags are the live-source flags `lcctl snapshot` and `lcctl explain`
// share (docs/snapshot.md); one set, one code path.
type liveFlags struct {
	prometheus, at, clusterLabel, backendLabel, selector, metricPrefix, router string
	pylons                                                                     []string
	overlay, aggregation, span                                                 string
	lookback, timeout                                                          time.Duration
	// requestID selects the span (--request-id); explain shares its
	// x-request-id flag.
	requestID *string
}

// register adds the flags to fs; withRequestID adds --request-id (explain
// has its own, the request's x-request-id).
func (f *liveFlags) register(fs *pflag.FlagSet, withRequestID bool) {
	fs.StringVar(&f.prometheus, "prometheus", "", "Prometheus `URL` to read Pylon's gauges from (HTTP API instant queries; needs --cluster-label)")
	fs.StringVar(&f.at, "at", "", "with --prometheus: the past instant to read, RFC 3339 or Unix seconds (default now)")
	fs.StringVar(&f.clusterLabel, "cluster-label", "", "with --prometheus: the target `LABEL` holding the cluster id")
	fs.StringVar(&f.backendLabel, "backend-label", "instance", "with --prometheus: the `LABEL` telling a cluster's backends apart")
	fs.StringVar(&f.selector, "selector", "", "with --prometheus: extra PromQL matchers for the routing target's backends, e.g. 'namespace=\"fn-1\"'")
	fs.StringVar(&f.metricPrefix, "metric-prefix", live.DefaultPrefix, "Pylon metric name `PREFIX` (older sidecars: stargate_client_)")
	fs.StringVar(&f.router, "router", "", "count a backend active only for this Stargate replica's router label (its advertise address)")
	fs.StringArrayVar(&f.pylons, "pylon", nil, "scrape a Pylon's /metrics directly, as `CLUSTER=URL` (repeatable; one per backend; now only)")
	fs.StringVar(&f.overlay, "overlay", "", "YAML `FILE` of per-cluster values no metric carries: rtt_ms, max_engine_concurrency, max_input_tps, status")
	fs.StringVar(&f.aggregation, "aggregation", string(live.AggregationN1), "per-cluster aggregation rule: n1 (lcctl's engine) or s (older release)")
	fs.StringVar(&f.span, "span", "", "OTLP/JSON `FILE` of proxy_openai_request spans; the span of --request-id gives the chosen cluster's values exactly")
	fs.DurationVar(&f.lookback, "lookback", live.DefaultLookback, "refuse samples older than this before the instant")
	fs.DurationVar(&f.timeout, "source-timeout", 10*time.Second, "timeout of one Prometheus query or Pylon scrape")
	if withRequestID {
		f.requestID = new(string)
		fs.StringVar(f.requestID, "request-id", "", "with --span: the x-request-id of the request whose span to use")
	}
}

// given reports whether a live metrics source was named.
func (f *liveFlags) given() bool { return f.prometheus != "" || len(f.pylons) > 0 }

// build checks the flags (liveFlags.options) and reads the live sources
// for model.
func (f *liveFlags) build(ctx context.Context, env *Env, model string, span *live.Span) (*live.Snapshot, error) {
	o, err := f.options(model)
	if err != nil {
		return nil, err
	}
	return f.buildWith(ctx, env, o, span)
}

// options checks the live-source flags (usage errors) and turns them into
// the live.Options for model, without the overlay and the span.
func (f *liveFlags) options(model string) (live.Options, error) {
	o := live.Options{Model: model, Prefix: f.metricPrefix, Router: f.router, Lookback: f.lookback, Timeout: f.timeout,
		Prometheus: live.Prometheus{URL: f.prometheus, ClusterLabel: f.clusterLabel, BackendLabel: f.backendLabel, Selector: f.selector}}
	agg, err := live.ParseAggregation(f.aggregation)
	if err != nil {
		return o, UsageErr(err)
	}
	o.Aggregation = agg
	if f.timeout <= 0 {
		return o, Usagef("--source-timeout %s: want a positive duration, e.g. 10s", f.timeout)
	}
	if f.lookback <= 0 {
		return o, Usagef("--lookback %s: want a positive duration, e.g. 5m", f.lookback)
	}
	if f.at != "" {
		if f.prometheus == "" {
			return o, Usagef("--at needs --prometheus (a Pylon's /metrics page shows only the present)")
		}
		t, err := live.ParseTime(f.at)
		if err != nil {
			return o, UsageErr(err)
		}
		if now := time.Now(); t.After(now.Add(live.MaxClockSkew)) {
			return o, Usagef("--at %q is in the future (%s after this machine's clock; up to %s of clock skew is allowed)", f.at, t.Sub(now).Round(time.Second), live.MaxClockSkew)
		}
		o.At = t
	}
	if f.prometheus == "" {
		for _, n := range []string{"cluster-label", "selector"} {
			if (n == "cluster-label" && f.clusterLabel != "") || (n == "selector" && f.selector != "") {
				return o, Usagef("--%s needs --prometheus", n)
			}
		}
	}
	for _, p := range f.pylons {
		t, err := live.ParsePylonFlag(p)
		if err != nil {
			return o, UsageErr(err)
		}
		o.Pylons = append(o.Pylons, t)
	}
	return o, nil
}

// buildWith reads the overlay and the live sources with options o (from
// options). *live.Error values become exit 2 (unusable input) or 1
// (unreachable source).
func (f *liveFlags) buildWith(ctx context.Context, env *Env, o live.Options, span *live.Span) (*live.Snapshot, error) {
	if f.overlay != "" {
		data, err := readFlagInput(env, "overlay", f.overlay, live.MaxOverlayBytes+1)
		if err != nil {
			return nil, UsageErr(err)
		}
		ov, err := live.DecodeOverlay(f.overlay, data)
		if err != nil {
			return nil, UsageErr(err)
		}
		o.Overlay = ov
	}
	o.Span = span
	s, err := live.Build(ctx, o)
	if err != nil {
		return nil, liveErr(err)
	}
	return s, nil
}

// liveErr maps a live error to its exit code.
func liveErr(err error) error {
	var le *live.Error
	if errors.As(err, &le) && le.Usage {
		return UsageErr(err)
	}
	return fail(err)
}

type snapshotOptions struct {
	cmdInput
	live  liveFlags
	model string
	// sources are the live-source flags checked, set by validate.
	sources live.Options
}

// validate checks --model, that a live source is named, --request-id
// against --span, and the live-source flags (liveFlags.options).
func (o *snapshotOptions) validate(*Env) (err error) {
	if strings.TrimSpace(o.model) == "" {
		return Usagef("--model is required: the routed model, as Pylon labels its series")
	}
	if !o.live.given() {
		return Usagef("no live source: give --pylon CLUSTER=URL (repeatable) or --prometheus URL --cluster-label LABEL")
	}
	if o.live.requestID != nil && *o.live.requestID != "" && o.live.span == "" {
		return Usagef("--request-id selects a span: give --span FILE too")
	}
	o.sources, err = o.live.options(o.model)
	return err
}

func newSnapshotCommand(env *Env) *cobra.Command {
	o := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "snapshot --model NAME (--pylon CLUSTER=URL ... | --prometheus URL --cluster-label L) [--overlay FILE] [--span FILE --request-id ID]",
		Short: "Build a routing snapshot from Pylon's metrics, annotated with where each value came from",
		Long: `Build the routing snapshot of one model ('lcctl docs formats') from the live
system: Pylon's gauges, scraped directly from each Pylon's /metrics (--pylon,
now only) or read through Prometheus (--prometheus, any past instant with
--at); per-cluster values no metric carries from --overlay; and the chosen
cluster's exact values from Stargate's proxy_openai_request span (--span,
--request-id). Backends are combined per cluster as Stargate does
(--aggregation; 'lcctl docs snapshot', "Field mapping").

Every value is annotated with its origin (metric, derived, overlay, span,
default, unknown) and age: as YAML comments (the default output), or in the
"provenance" block of -o json. Both are valid 'lcctl explain --snapshot'
input. A field the engine reads that no source has is left out and warned
about on stderr, naming the field and the clusters.

Exit codes: 0 written (warnings included), 1 a source could not be reached
or answered with an HTTP error, 2 usage or unusable input (not Prometheus
text, no series for a cluster, a series without the cluster label, NaN or
infinite gauges, samples older than --lookback, a span file without the
request).`,
		Example: `  # Three single-backend clusters scraped directly, plus an overlay:
  lcctl snapshot --model company/model --overlay overlay.yaml \
    --pylon cluster-a=http://10.0.0.7:9089/metrics --pylon cluster-b=http://10.0.1.7:9089/metrics \
    --pylon cluster-c=http://10.0.2.7:9089/metrics > snap.yaml
  lcctl explain --snapshot snap.yaml --model company/model --input-tokens 2000
  # Through Prometheus, ten minutes ago:
  lcctl snapshot --model company/model --prometheus http://prometheus:9090 --cluster-label cluster \
    --selector 'namespace="fn-1"' --at "$(date -u -d '10 min ago' +%s)"`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runSnapshot)
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "", "the routed model `NAME` (Pylon's model label)")
	o.live.register(f, true)
	_ = cmd.RegisterFlagCompletionFunc("aggregation", cobra.FixedCompletions([]string{"n1", "s"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// runSnapshot reads the span and the live sources of the validated
// options and prints the snapshot.
func runSnapshot(ctx context.Context, env *Env, o *snapshotOptions) error {
	requestID := ""
	if o.live.requestID != nil {
		requestID = *o.live.requestID
	}
	sp, err := o.live.loadSpan(env, requestID)
	if err != nil {
		return err
	}
	s, err := o.live.buildWith(ctx, env, o.sources, sp)
	if err != nil {
		return err
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Warning.Render("warning:"), w)
	}
	if env.Global.JSON() {
		return writeJSON(env.Out, "snapshot", live.JSON(s))
	}
	return live.WriteYAML(env.Out, s)
}

// loadSpan reads --span and selects the span of requestID (nil without
// --span).
func (f *liveFlags) loadSpan(env *Env, requestID string) (*live.Span, error) {
	if f.span == "" {
		return nil, nil
	}
	data, err := readFlagInput(env, "span", f.span, live.MaxSpanFileBytes)
	if err != nil {
		return nil, UsageErr(err)
	}
	sp, err := live.ReadSpan(f.span, data, requestID)
	if err != nil {
		return nil, liveErr(err)
	}
	return sp, nil
}
