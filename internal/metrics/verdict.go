package metrics

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/suggest"
	"github.com/lcctl/lcctl/internal/ui"
)

// Check IDs produced by this package (docs/preflight.md).
const (
	CheckGatewayPresent   = "gateway-metrics.present"
	CheckGatewayLookups   = "gateway-metrics.lookups"
	CheckGatewayWrites    = "gateway-metrics.writes"
	CheckGatewayErrors    = "gateway-metrics.errors"
	CheckGatewayLatency   = "gateway-metrics.latency"
	CheckStargateFlagOff  = "stargate-metrics.flag-off"
	CheckStargateSessions = "stargate-metrics.sessions"
	CheckStargateReturn   = "stargate-metrics.returning"
	CheckStargateSticky   = "stargate-metrics.stickiness"
	CheckStargateModel    = "stargate-metrics.model"
	// CheckGatewaySamples and CheckStargateSamples fail when counter
	// samples are NaN, ±Inf or negative (InvalidSamplesVerdict).
	CheckGatewaySamples  = "gateway-metrics.samples"
	CheckStargateSamples = "stargate-metrics.samples"
	// CheckGatewayLabels and CheckStargateLabels fail when a series has a
	// label value outside its documented set (InvalidLabelsVerdict).
	CheckGatewayLabels  = "gateway-metrics.labels"
	CheckStargateLabels = "stargate-metrics.labels"
)

// DefaultLookupTimeout is the gateway's default
// STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT (gateway.md §8.1), used to judge
// lookup latency when the gateway settings are not known.
const DefaultLookupTimeout = 20 * time.Millisecond

// Thresholds are lcctl's rollout health limits. They are lcctl's choice,
// not upstream's (gateway.md §12 gives the PromQL, not the limits); the
// defaults are documented in docs/preflight.md.
type Thresholds struct {
	// MinSamples is the number of requests (lookups, writes or classified
	// selections, as counts not rates) below which a ratio is not judged:
	// the check warns "too little traffic" instead of failing.
	MinSamples float64
	// WarnFailureRatio and MaxFailureRatio bound (error+timeout)/attempted
	// lookups and error/all writes: above Warn warns, above Max fails.
	WarnFailureRatio float64 // fraction, default 0.01
	MaxFailureRatio  float64 // fraction, default 0.05
	// WarnLatencyFraction: lookup p99 at or above this fraction of the
	// lookup timeout warns; at or above the timeout fails.
	WarnLatencyFraction float64
	// MinReturningShare: a model with classified traffic whose returning
	// share is below this warns (at zero returning and zero stale it fails:
	// Stargate receives no hints at all).
	MinReturningShare float64
	// MinStickiness: returning-primary / returning below this warns.
	MinStickiness float64
	// MaxStaleShare: stale / classified above this warns.
	MaxStaleShare float64
}

// DefaultThresholds returns lcctl's defaults: 20 samples, failure ratio
// warn 1% / fail 5%, latency warn at 50% of the lookup timeout, returning
// share warn below 5%, stickiness warn below 50%, stale share warn above
// 10%.
func DefaultThresholds() Thresholds {
	return Thresholds{
		MinSamples:          20,
		WarnFailureRatio:    0.01,
		MaxFailureRatio:     0.05,
		WarnLatencyFraction: 0.5,
		MinReturningShare:   0.05,
		MinStickiness:       0.5,
		MaxStaleShare:       0.10,
	}
}

// VerdictOptions parameterise the verdicts.
type VerdictOptions struct {
	// Stage is the rollout stage being checked (1–3), or 0 for a plain
	// `lcctl check metrics` (no stage: absence of traffic only warns).
	Stage int
	// LookupTimeout is the gateway's lookup timeout; 0 means
	// DefaultLookupTimeout.
	LookupTimeout time.Duration
	// Thresholds; the zero value means DefaultThresholds().
	Thresholds *Thresholds
}

func (o VerdictOptions) th() Thresholds {
	if o.Thresholds != nil {
		return *o.Thresholds
	}
	return DefaultThresholds()
}

func (o VerdictOptions) timeout() time.Duration {
	if o.LookupTimeout > 0 {
		return o.LookupTimeout
	}
	return DefaultLookupTimeout
}

// Pct formats a ratio (0..1) as a percentage with one decimal; "n/a" for
// nil. A share that is not zero never prints as 0.0 % or 100.0 %: it is
// "<0.1%" or ">99.9%", so a handful of errors among many requests stays
// visible.
func Pct(p *float64) string {
	if p == nil {
		return "n/a"
	}
	v := *p * 100
	switch {
	case v > 0 && v < 0.05:
		return "<0.1%"
	case v < 100 && v >= 99.95:
		return ">99.9%"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "%"
}

// FormatCount renders a count for text output: an integer as one
// ("1685"), anything else with two decimals ("12.50": rates, and counts
// after a reset). The verdicts and the check metrics table both use it.
func FormatCount(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func windowNote(w Window) string {
	if w.Mode == ModeRates {
		return fmt.Sprintf("over %s", w.Interval())
	}
	return "since process start (single scrape; pass --interval to measure growth)"
}

// GatewayVerdicts judges the gateway's last-cluster metrics. Stage 1
// returns nothing (the gateway store is not on yet). Stages 2 and 0 warn
// when there is no traffic; stage 3 fails, since the router flag must not
// be on before the store works.
func GatewayVerdicts(r GatewayReport, o VerdictOptions) []checks.Result {
	if o.Stage == 1 {
		return nil
	}
	th := o.th()
	const (
		tPresent = "gateway exports last-cluster metrics"
		tLookups = "gateway lookups return hits"
		tWrites  = "gateway writes succeed"
		tErrors  = "no lookup or write error/timeout surge"
		tLatency = "lookup latency is within the lookup timeout"
	)
	var out []checks.Result
	if res, bad := InvalidSamplesVerdict(CheckGatewaySamples, GatewayLookups+" and "+GatewayWrites, r.Source, r.InvalidSamples-r.InvalidLabels.Samples); bad {
		out = append(out, res)
	}
	if res, bad := InvalidLabelsVerdict(CheckGatewayLabels, r.Source, r.InvalidLabels); bad {
		out = append(out, res)
	}
	if !r.Present {
		reason := fmt.Sprintf("%s has no %s series", r.Source, GatewayLookups)
		hint := "point --gateway-metrics at the gateway's metrics port (9464, llmApiGateway.metrics.enabled=true) and run a gateway build with last-cluster hints"
		res := checks.Warn(CheckGatewayPresent, tPresent, reason+" (the gateway build may predate the feature, or the counters appear only once the feature is on)", hint)
		if o.Stage == 3 {
			res = checks.Fail(CheckGatewayPresent, tPresent, reason, hint+"; stage 3 needs a working gateway store (stage 2) first")
		}
		out = append(out, res)
		why := "no last-cluster metrics in the gateway scrape"
		for _, c := range []struct{ id, t string }{{CheckGatewayLookups, tLookups}, {CheckGatewayWrites, tWrites}, {CheckGatewayErrors, tErrors}, {CheckGatewayLatency, tLatency}} {
			out = append(out, checks.Skip(c.id, c.t, why))
		}
		return out
	}
	out = append(out, checks.OK(CheckGatewayPresent, tPresent, fmt.Sprintf("%s present in %s", GatewayLookups, r.Source)))

	// Lookups: hits must show up (and grow, with two scrapes).
	hit := r.Lookups[ResultHit]
	lookupLine := fmt.Sprintf("%s lookups %s: hit %s, miss %s, error %s, timeout %s, skipped %s (hit ratio %s)",
		FormatCount(r.LookupsTotal), windowNote(r.Window), FormatCount(hit), FormatCount(r.Lookups[ResultMiss]),
		FormatCount(r.Lookups[ResultError]), FormatCount(r.Lookups[ResultTimeout]), FormatCount(r.Lookups[ResultSkipped]), Pct(r.HitRatio))
	switch {
	case r.LookupsTotal == 0:
		reason := "no lookups " + windowNote(r.Window)
		hint := "set STARGATE_LAST_CLUSTER_ENABLED=true (llmApiGateway.config.lastCluster.enabled) and send traffic with session IDs (prompt_cache_key, conversation.id or x-multi-turn-session-id)"
		if o.Stage == 3 {
			out = append(out, checks.Fail(CheckGatewayLookups, tLookups, reason+": the gateway sends no last-cluster hints, so every session is new on Stargate", hint+"; do not turn on last_cluster_affinity before this passes"))
		} else {
			out = append(out, checks.Warn(CheckGatewayLookups, tLookups, reason+" (expected before the gateway store is on)", hint))
		}
	case r.Attempted == 0:
		out = append(out, checks.Warn(CheckGatewayLookups, tLookups, "every lookup was skipped: clients send no eligible session ID (payload-only sessions never get hints)",
			"clients must send prompt_cache_key, conversation.id or x-multi-turn-session-id").WithDetails(lookupLine))
	case hit == 0 && r.Attempted >= th.MinSamples:
		out = append(out, checks.Fail(CheckGatewayLookups, tLookups, fmt.Sprintf("%s attempted lookups and no hit", FormatCount(r.Attempted)),
			"writes are not reaching the store or entries expire too soon: check the writes and errors below, Olric health and STARGATE_LAST_CLUSTER_TTL").WithDetails(lookupLine))
	case hit == 0:
		out = append(out, checks.Warn(CheckGatewayLookups, tLookups, fmt.Sprintf("no hit yet in %s attempted lookups (fewer than %s)", FormatCount(r.Attempted), FormatCount(th.MinSamples)),
			"re-run with more traffic, or with --interval over a longer window").WithDetails(lookupLine))
	default:
		out = append(out, checks.OK(CheckGatewayLookups, tLookups, lookupLine))
	}

	// Writes.
	ok := r.Writes[ResultOK]
	writeLine := fmt.Sprintf("%s writes %s: ok %s, error %s", FormatCount(r.WritesTotal), windowNote(r.Window), FormatCount(ok), FormatCount(r.Writes[ResultError]))
	switch {
	case !r.WritesPresent:
		out = append(out, checks.Fail(CheckGatewayWrites, tWrites, fmt.Sprintf("%s has no %s series", r.Source, GatewayWrites), "scrape a gateway build with last-cluster hints"))
	case r.WritesTotal == 0 && o.Stage == 3:
		out = append(out, checks.Fail(CheckGatewayWrites, tWrites, "no writes "+windowNote(r.Window), "the gateway writes after each 2xx Stargate answer: enable the gateway store and check that Stargate returns x-stargate-cluster-id"))
	case r.WritesTotal == 0:
		out = append(out, checks.Warn(CheckGatewayWrites, tWrites, "no writes "+windowNote(r.Window), "enable the gateway store and send traffic with session IDs"))
	case ok == 0:
		out = append(out, checks.Fail(CheckGatewayWrites, tWrites, "no write succeeded", "every write failed: check Olric health (lcctl store …, olric.* checks)").WithDetails(writeLine))
	default:
		out = append(out, checks.OK(CheckGatewayWrites, tWrites, writeLine))
	}

	// Errors and timeouts.
	var lines []string
	worst := checks.StatusOK
	judge := func(what string, bad float64, ratioP *float64, den float64) {
		if ratioP == nil {
			return
		}
		line := fmt.Sprintf("%s: %s of %s (%s)", what, FormatCount(bad), FormatCount(den), Pct(ratioP))
		lines = append(lines, line)
		switch {
		case *ratioP > th.MaxFailureRatio && den >= th.MinSamples:
			worst = checks.StatusFail
		case *ratioP > th.WarnFailureRatio && worst != checks.StatusFail:
			worst = checks.StatusWarn
		}
	}
	judge("lookup error+timeout", r.Lookups[ResultError]+r.Lookups[ResultTimeout], r.FailureRatio, r.Attempted)
	judge("write error", r.Writes[ResultError], r.WriteErrorRatio, r.WritesTotal)
	errHint := "Olric is unhealthy or slow: lookups that fail send no hint and Stargate treats the session as new; check olric.* below, the gateway logs (\"stargate last-cluster lookup failed\") and STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT"
	switch {
	case len(lines) == 0:
		out = append(out, checks.Skip(CheckGatewayErrors, tErrors, "no attempted lookups or writes "+windowNote(r.Window)))
	case worst == checks.StatusFail:
		out = append(out, checks.Fail(CheckGatewayErrors, tErrors, fmt.Sprintf("failure ratio above %.0f%%", th.MaxFailureRatio*100), errHint).WithDetails(lines...))
	case worst == checks.StatusWarn:
		out = append(out, checks.Warn(CheckGatewayErrors, tErrors, fmt.Sprintf("failure ratio above %.0f%%", th.WarnFailureRatio*100), errHint).WithDetails(lines...))
	default:
		out = append(out, checks.OK(CheckGatewayErrors, tErrors, strings.Join(lines, "; ")))
	}

	// Latency.
	timeout := o.timeout()
	if r.Latency.P99 == nil {
		out = append(out, checks.Skip(CheckGatewayLatency, tLatency, "no timed lookups "+windowNote(r.Window)))
	} else {
		p99 := time.Duration(*r.Latency.P99 * float64(time.Second))
		line := fmt.Sprintf("lookup p99 %s (p50 %s, p90 %s, n=%s) against a %s lookup timeout",
			FormatSeconds(r.Latency.P99), FormatSeconds(r.Latency.P50), FormatSeconds(r.Latency.P90), FormatCount(r.Latency.Count), timeout)
		hint := "lookups that reach the timeout send no hint: check Olric load and network, or raise STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT (it adds to request latency)"
		switch {
		case p99 >= timeout:
			out = append(out, checks.Fail(CheckGatewayLatency, tLatency, line, hint))
		case float64(p99) >= th.WarnLatencyFraction*float64(timeout):
			out = append(out, checks.Warn(CheckGatewayLatency, tLatency, line, hint))
		default:
			out = append(out, checks.OK(CheckGatewayLatency, tLatency, line))
		}
	}
	return out
}

// FormatSeconds renders a latency in seconds as a Go duration rounded for
// reading: to 1 ms from 1 s up, to 10 µs from 1 ms, to 1 µs below; "n/a"
// for nil. The table and the verdicts of check metrics both
// use it, so one number reads the same in both.
func FormatSeconds(p *float64) string {
	if p == nil {
		return "n/a"
	}
	d := time.Duration(*p * float64(time.Second))
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// StargateFlagOffVerdict checks that the running Stargate classifies no
// requests (stages 1 and 2: last_cluster_affinity must be off everywhere).
// The session selections family is absent until the first classified
// request, so presence means the flag is on for some model (or was on
// earlier in the process's life: with two scrapes, series that did not grow
// only warn).
func StargateFlagOffVerdict(r StargateReport) checks.Result {
	const title = "Stargate classifies no sessions (last_cluster_affinity off)"
	if !r.Present {
		return checks.OK(CheckStargateFlagOff, title, fmt.Sprintf("no %s series in %s", r.Metric, r.Source))
	}
	var models []string
	var total float64
	for _, m := range r.Models {
		total += m.Total
		if m.Total > 0 {
			models = append(models, ui.EchoLabel(m.Model))
		}
	}
	if total == 0 {
		reason := fmt.Sprintf("%s series exist with zero counts", r.Metric)
		if r.Window.Mode == ModeRates {
			reason = fmt.Sprintf("%s series exist but did not grow %s: the flag was on earlier in this Stargate's life", r.Metric, windowNote(r.Window))
		}
		return checks.Warn(CheckStargateFlagOff, title, reason, "confirm the deployed lb config has last_cluster_affinity off")
	}
	return checks.Fail(CheckStargateFlagOff, title,
		fmt.Sprintf("%s classified requests %s for %s: last_cluster_affinity is on", FormatCount(total), windowNote(r.Window), strings.Join(models, ", ")),
		"turn last_cluster_affinity off for these models until stage 3 (the gateway store must work first), then re-run")
}

// StargateModelVerdict checks a model asked for by name (lcctl check
// metrics --model) against the scrape. When the session selections family
// has series, but none for model, the name is most likely wrong (a typo,
// or the client-facing name rather than Stargate's model label): a failed
// result that lists the models present and suggests the closest one, and
// true. Otherwise (model found, or no series at all, which cannot tell a
// wrong name from no classified traffic) it returns false.
func StargateModelVerdict(r StargateReport, model string) (checks.Result, bool) {
	if !r.Present || model == "" || slices.Contains(r.ModelsInScrape, model) {
		return checks.Result{}, false
	}
	return checks.Fail(CheckStargateModel, "the model has session selection series",
		MissingModelMessage(r, model),
		"give --model exactly as Stargate's model label (one of those listed), or leave it out to see every model").WithSubject(model), true
}

// MissingModelMessage says that r has no series for model, which models
// it has, and the closest one when model looks like a typo of it.
func MissingModelMessage(r StargateReport, model string) string {
	echoed := make([]string, len(r.ModelsInScrape))
	for i, m := range r.ModelsInScrape {
		echoed[i] = ui.EchoLabel(m)
	}
	return fmt.Sprintf("no %s series for model %q in %s (%s: %s)%s", r.Metric, ui.EchoLabel(model), r.Source,
		plural.Noun(len(r.ModelsInScrape), "model", "models"), strings.Join(echoed, ", "),
		suggest.DidYouMean(model, echoed))
}

// StargateSessionVerdicts judges, per model, whether session-aware routing
// gets hints (the step-3-before-step-2 failure mode, gateway.md §12) and
// how sticky returning sessions are. models lists the models expected to
// have the flag on (from the lb config); nil means every model present in
// the scrape. At stage 0 and no series at all, one informational result
// says so.
func StargateSessionVerdicts(r StargateReport, models []string, o VerdictOptions) []checks.Result {
	var out []checks.Result
	if res, bad := InvalidSamplesVerdict(CheckStargateSamples, r.Metric, r.Source, r.InvalidSamples-r.InvalidLabels.Samples); bad {
		out = append(out, res)
	}
	if res, bad := InvalidLabelsVerdict(CheckStargateLabels, r.Source, r.InvalidLabels); bad {
		out = append(out, res)
	}
	return appendSessionVerdicts(out, r, models, o)
}

// appendSessionVerdicts appends StargateSessionVerdicts' per-model
// results to out (the sample and label checks, usually none) and returns
// it: no second slice of 400,000 results for 200,000 models.
func appendSessionVerdicts(out []checks.Result, r StargateReport, models []string, o VerdictOptions) []checks.Result {
	th := o.th()
	const (
		tReturn = "returning sessions reach Stargate"
		tSticky = "returning sessions go back to their last cluster"
	)
	// Every model of the report, in its (sorted) order: r.Models[i] is
	// the i-th model, no index needed.
	inOrder := models == nil
	if inOrder {
		models = make([]string, len(r.Models))
		for i, m := range r.Models {
			models[i] = m.Model
		}
		inOrder = slices.IsSorted(models)
	}
	if len(models) == 0 && r.InvalidSamples > 0 {
		// Every sample was left out (NaN, ±Inf, negative, undocumented
		// label): no valid sample says the flag is off or on.
		return append(out, checks.Skip(CheckStargateSessions, "Stargate session classification",
			fmt.Sprintf("no valid %s sample in %s (%s left out)", r.Metric, r.Source, plural.Count(r.InvalidSamples, "sample", "samples"))))
	}
	if len(models) == 0 {
		if o.Stage == 0 {
			return append(out, checks.OK(CheckStargateSessions, "Stargate session classification",
				fmt.Sprintf("no %s series in %s: last_cluster_affinity is off for every model served, or no request carried a cache affinity key", r.Metric, r.Source)))
		}
		return append(out, checks.Warn(CheckStargateReturn, tReturn, fmt.Sprintf("no %s series in %s and no model with last_cluster_affinity on", r.Metric, r.Source),
			"turn on last_cluster_affinity for at least one model, or pass --config so lcctl knows which models to check"))
	}
	if !inOrder {
		models = append([]string(nil), models...)
		sort.Strings(models)
	}
	// Per model: strings are concatenated, not formatted (200,000 models,
	// docs/performance.md).
	window := windowNote(r.Window)
	noClassified := "no classified request " + window
	out = slices.Grow(out, 2*len(models))
	// One index instead of r.Model per model: a linear search each made
	// 200,000 models take 97 s.
	var byModel map[string]int
	if !inOrder {
		byModel = make(map[string]int, len(r.Models))
		for i, m := range r.Models {
			if _, dup := byModel[m.Model]; !dup {
				byModel[m.Model] = i
			}
		}
	}
	for k, model := range models {
		var m ModelSelections
		i, found := k, true
		if !inOrder {
			i, found = byModel[model]
		}
		if found {
			m = r.Models[i]
		}
		if !found || m.Total == 0 {
			out = append(out, checks.Warn(CheckStargateReturn, tReturn, noClassified,
				"the running Stargate has not applied last_cluster_affinity for this model, or its requests carry no x-cache-affinity-key; check the deployed lb config and traffic").WithSubject(model),
				checks.Skip(CheckStargateSticky, tSticky, "no classified requests").WithSubject(model))
			continue
		}
		ret, stale, nw := m.State(StateReturning), m.State(StateStale), m.State(StateNew)
		line := FormatCount(m.Total) + " classified " + window + ": new " + FormatCount(nw.Total()) + ", returning " + FormatCount(ret.Total()) +
			", stale " + FormatCount(stale.Total()) + " (returning share " + Pct(m.ReturningShare) + ")"
		switch {
		case ret.Total() == 0 && stale.Total() == 0 && m.Total >= th.MinSamples:
			out = append(out, checks.Fail(CheckStargateReturn, tReturn,
				fmt.Sprintf("all %s classified requests are new: Stargate receives no last-cluster hints, so every session skips its affinity wait", FormatCount(m.Total)),
				"the gateway store is not on or not working (step 3 before step 2): roll back by turning last_cluster_affinity off for this model, then complete stage 2 (STARGATE_LAST_CLUSTER_ENABLED=true, lcctl preflight --stage 2)").WithSubject(model).WithDetails(line))
		case m.Total < th.MinSamples:
			out = append(out, checks.Warn(CheckStargateReturn, tReturn, fmt.Sprintf("only %s classified requests (fewer than %s)", FormatCount(m.Total), FormatCount(th.MinSamples)),
				"re-run with more traffic, or with --interval over a longer window").WithSubject(model).WithDetails(line))
		case m.ReturningShare != nil && *m.ReturningShare < th.MinReturningShare:
			out = append(out, checks.Warn(CheckStargateReturn, tReturn, fmt.Sprintf("returning share %s is below %.0f%%", Pct(m.ReturningShare), th.MinReturningShare*100),
				"check the gateway hit ratio and lookup errors (gateway-metrics.*); payload-only sessions never return").WithSubject(model).WithDetails(line))
		default:
			out = append(out, checks.OK(CheckStargateReturn, tReturn, line).WithSubject(model))
		}
		if ret.Total() == 0 {
			out = append(out, checks.Skip(CheckStargateSticky, tSticky, "no returning requests").WithSubject(model))
			continue
		}
		sline := "returning: primary (last cluster) " + Pct(m.ReturningPrimaryShare) + ", fallback " + Pct(m.ReturningFallbackShare) +
			"; stale share " + Pct(m.StaleShare)
		var warns []string
		if m.ReturningPrimaryShare != nil && *m.ReturningPrimaryShare < th.MinStickiness {
			warns = append(warns, fmt.Sprintf("only %s of returning requests went to their last cluster (the last cluster could not take them within the wait and widening budget)", Pct(m.ReturningPrimaryShare)))
		}
		if m.StaleShare != nil && *m.StaleShare > th.MaxStaleShare {
			warns = append(warns, fmt.Sprintf("stale share %s above %.0f%%: hints name clusters that are no longer candidates (renamed or removed clusters, sessions crossing regions)", Pct(m.StaleShare), th.MaxStaleShare*100))
		}
		if len(warns) > 0 {
			out = append(out, checks.Warn(CheckStargateSticky, tSticky, strings.Join(warns, "; "),
				"review cache_affinity_wait_ms and cluster capacity for this model; stale hints are harmless but lose affinity").WithSubject(model).WithDetails(sline))
		} else {
			out = append(out, checks.OK(CheckStargateSticky, tSticky, sline).WithSubject(model))
		}
	}
	return out
}

// InvalidSamplesVerdict returns a failed check id when n > 0 samples of
// metric in source were NaN, +Inf, -Inf or negative, which no counter can
// be (a broken exporter or a hand-edited scrape); those samples are left
// out of every count, so without this check they would read as "no
// series". bad is false when n is 0.
func InvalidSamplesVerdict(id, metric, source string, n int) (res checks.Result, bad bool) {
	if n == 0 {
		return checks.Result{}, false
	}
	return checks.Fail(id, "counter samples are valid numbers",
		fmt.Sprintf("%s: %s of %s %s NaN, +Inf, -Inf or negative; a counter is a finite count >= 0, so %s left out of every count", source, plural.Count(n, "sample", "samples"), metric, map[bool]string{true: "is", false: "are"}[n == 1], map[bool]string{true: "it was", false: "they were"}[n == 1]),
		"check the exporter (or the file): a counter sample must be a finite number >= 0"), true
}

// InvalidLabelsVerdict returns a failed check id when l holds series of
// source whose result, session_state or selection label is outside its
// documented set (LookupResults, WriteResults, SessionStates,
// Selections): those series are in no count, so every total and share
// is computed without them. The reason names the first series and its
// value; the details list the other examples (MaxInvalidLabelExamples in
// all). bad is false when there are none.
func InvalidLabelsVerdict(id, source string, l InvalidLabels) (res checks.Result, bad bool) {
	if l.Samples == 0 || len(l.Examples) == 0 {
		return checks.Result{}, false
	}
	first := l.Examples[0]
	what := fmt.Sprintf("%s=%q (expected %s)", first.Label, ui.EchoLabel(first.Value), strings.Join(documentedValues(first.Label, first.Series), ", "))
	if first.Value == "" {
		what = "no " + first.Label + " label"
	}
	reason := fmt.Sprintf("%s: %s with a label value outside the documented set, left out of every count and share: %s in %s",
		source, plural.Count(l.Samples, "sample", "samples"), what, echoSeries(first.Series))
	var details []string
	for _, e := range l.Examples[1:] {
		details = append(details, fmt.Sprintf("%s=%q (expected %s): %s", e.Label, ui.EchoLabel(e.Value), strings.Join(documentedValues(e.Label, e.Series), ", "), echoSeries(e.Series)))
	}
	if n := l.Samples - len(l.Examples); n > 0 {
		details = append(details, fmt.Sprintf("… and %s more", plural.Count(n, "sample", "samples")))
	}
	return checks.Fail(id, "label values are documented ones", reason,
		"check the exporter (or the file): label values are case-sensitive, and a newer build may need a newer lcctl").WithDetails(details...), true
}

// documentedValues returns the values label may take in series.
func documentedValues(label, series string) []string {
	switch {
	case label == "session_state":
		return SessionStates
	case label == "selection":
		return Selections
	case strings.HasPrefix(series, GatewayWrites+"{"):
		return WriteResults
	}
	return LookupResults
}
