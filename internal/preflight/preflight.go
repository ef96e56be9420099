// Package preflight assembles `lcctl preflight --stage N`: the rollout
// checklist of gateway.md §12 and session.md, as a checks.Report. The
// rollout order is
//
//  1. deploy Stargate with the release and last_cluster_affinity off, after
//     reviewing no-SLO pulsar-wait-and-widen entries;
//  2. enable the gateway store (STARGATE_LAST_CLUSTER_ENABLED=true);
//  3. turn last_cluster_affinity on per model.
//
// Run takes already-read inputs (a validated lb config, the gateway's
// environment, scrapes, an Olric prober) so it does no I/O of its own
// except through the prober; the CLI reads the inputs. Every input is
// optional: the checks that need a missing input are skipped with a reason.
package preflight

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/gateway"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/validate"
)

// Group names, in display order.
const (
	GroupConfig          = "lb config (Stargate)"
	GroupGateway         = "gateway settings"
	GroupOlric           = "olric"
	GroupGatewayMetrics  = "gateway metrics"
	GroupStargateMetrics = "stargate metrics"
)

// Check IDs defined here (the metrics ones come from package metrics);
// all are documented in docs/preflight.md.
const (
	CheckConfigValid      = "config.valid"
	CheckConfigPWAW       = "config.pwaw-migrated"
	CheckConfigFlagOff    = "config.flag-off"
	CheckConfigFlagOn     = "config.flag-on"
	CheckGatewaySettings  = "gateway.settings-valid"
	CheckGatewayOlric     = "gateway.olric-coherent"
	CheckGatewayDMap      = "gateway.dmap"
	CheckGatewayFlag      = "gateway.flag"
	CheckOlricReachable   = "olric.reachable"
	CheckOlricReadWrite   = "olric.dmap-rw"
	CheckGatewayScrape    = "gateway-metrics.scrape"
	CheckStargateScrape   = "stargate-metrics.scrape"
	maxDetailLines        = 20
	defaultGatewayOptHelp = "--gateway-env FILE or --gateway-values FILE"
)

// ProbeReport is what an Olric probe found.
type ProbeReport struct {
	// Reach is nil when a seed answered; Members and Version (free text,
	// e.g. the partition count) describe the cluster then.
	Reach   error
	Members []string // member names (host:port)
	Version string   // free text about the cluster
	// ReadWrite is nil when a probe key was written, read back with the
	// same value and deleted again in the DMap.
	ReadWrite error
	// Details are extra lines to show (key used, timings), never a session
	// ID or a real store key.
	Details []string
}

// OlricProber probes an Olric cluster: connect to addrs, then write, read
// back and delete one probe key in dmap. Implemented over internal/store
// (the only package that talks to Olric).
type OlricProber interface {
	Probe(ctx context.Context, addrs []string, dmap string) ProbeReport
}

// Scrapes are one metrics input: the source, its scrape(s) or the error
// that kept lcctl from getting them.
type Scrapes struct {
	// Source is the URL or file as given.
	Source string
	// Before is the first of two scrapes (nil with a single scrape).
	Before *metrics.Scrape
	// After is the (last) scrape; nil when Err is set.
	After *metrics.Scrape
	// Err is the fetch or parse error of a live source.
	Err error
}

// Inputs are everything preflight checks. Nil or empty fields skip their
// checks with a reason.
type Inputs struct {
	// Stage is 1, 2 or 3.
	Stage int
	// Config is the validated lb config (--config).
	Config *validate.Result
	// Gateway is the gateway environment (--gateway-env/--gateway-values).
	Gateway *gateway.Env
	// OlricAddrs are the Olric seeds (--olric).
	OlricAddrs []string
	// StoreDMap is the DMap `lcctl store` uses (default
	// gateway.LastClusterDMap).
	StoreDMap string
	// Prober probes Olric; nil when this build has none.
	Prober OlricProber
	// GatewayMetrics and StargateMetrics are the scrapes.
	GatewayMetrics  *Scrapes // --gateway-metrics
	StargateMetrics *Scrapes // --stargate-metrics
	// StargatePrefix is Stargate's metric prefix (default stargate_).
	StargatePrefix string
	// Thresholds override metrics.DefaultThresholds when non-nil.
	Thresholds *metrics.Thresholds
}

// Run builds the checklist for in.Stage.
func Run(ctx context.Context, in Inputs) *checks.Report {
	r := &checks.Report{}
	for _, g := range []string{GroupConfig, GroupGateway, GroupOlric, GroupGatewayMetrics, GroupStargateMetrics} {
		r.Group(g)
	}
	flagModels := configChecks(r.Group(GroupConfig), in)
	settings := gatewayChecks(r.Group(GroupGateway), in)
	if in.Stage >= 2 {
		olricChecks(ctx, r.Group(GroupOlric), in)
	}
	gatewayMetricsChecks(r.Group(GroupGatewayMetrics), in, settings)
	stargateMetricsChecks(r.Group(GroupStargateMetrics), in, flagModels)
	return r
}

// capDetails keeps the first maxDetailLines of lines and folds the rest
// into one "… and N more" line; N is at least 2.
func capDetails(lines []string) []string {
	// A fold line in place of a single line would hide it and save
	// nothing: fold only two lines or more.
	if len(lines) > maxDetailLines+1 {
		more := len(lines) - maxDetailLines
		lines = append(lines[:maxDetailLines:maxDetailLines], fmt.Sprintf("… and %d more", more))
	}
	return lines
}

// configChecks adds the lb-config checks and returns the models with
// last_cluster_affinity on (nil when unknown or only top-level
// request_algorithms have it).
func configChecks(g *checks.Group, in Inputs) []string {
	const (
		tValid   = "lb config is valid (Stargate starts with it)"
		tPWAW    = "no unmigrated no-SLO pulsar-wait-and-widen entry"
		tFlagOff = "last_cluster_affinity is off everywhere"
		tFlagOn  = "last_cluster_affinity is on for the models being rolled out"
	)
	ids := []struct{ id, title string }{{CheckConfigValid, tValid}, {CheckConfigPWAW, tPWAW}}
	if in.Stage <= 2 {
		ids = append(ids, struct{ id, title string }{CheckConfigFlagOff, tFlagOff})
	} else {
		ids = append(ids, struct{ id, title string }{CheckConfigFlagOn, tFlagOn})
	}
	res := in.Config
	if res == nil {
		for _, c := range ids {
			g.Add(checks.Skip(c.id, c.title, "no --config given"))
		}
		return nil
	}

	// config.valid
	var errLines []string
	for _, d := range res.Diagnostics {
		if d.Severity == validate.SeverityError {
			errLines = append(errLines, d.String())
		}
	}
	if res.Valid() {
		g.Add(checks.OK(CheckConfigValid, tValid, fmt.Sprintf("%s: %s, %s", res.File, plural.Count(res.Counts.Warnings, "warning", "warnings"), plural.Count(res.Counts.Infos, "info", "infos"))))
	} else {
		g.Add(checks.Fail(CheckConfigValid, tValid, fmt.Sprintf("%s: %s; Stargate refuses to start with this config", res.File, plural.Count(res.Counts.Errors, "error", "errors")),
			"fix the errors (lcctl validate "+res.File+" shows every finding with its code)").WithDetails(capDetails(errLines)...))
	}

	// config.pwaw-migrated
	var open, bounded []string
	for _, e := range res.NoSLO() {
		line := fmt.Sprintf("%s:%d:%d %s", res.File, e.Value.Start.Line, e.Value.Start.Col, entryName(e))
		if e.Bounded {
			bounded = append(bounded, line)
		} else {
			open = append(open, line+": no-SLO pulsar-wait-and-widen loses the \"eligible primary wins\" shortcut in this release")
		}
	}
	switch {
	case len(open) == 0:
		reason := "no no-SLO pulsar-wait-and-widen entry"
		if len(bounded) > 0 {
			reason = plural.Count(len(bounded), "no-SLO pulsar-wait-and-widen entry", "no-SLO pulsar-wait-and-widen entries") +
				" already bounded (max_queued and cache_affinity_wait_ms set)"
		}
		g.Add(checks.OK(CheckConfigPWAW, tPWAW, reason))
	default:
		hint := "review each entry and run lcctl migrate (a --strategy bounded file must only reach a Stargate with the affinity-wait feature; see 'lcctl docs rollout', version safety)"
		reason := plural.Count(len(open), "no-SLO pulsar-wait-and-widen entry changes", "no-SLO pulsar-wait-and-widen entries change") +
			" behaviour at the upgrade"
		if in.Stage == 1 {
			g.Add(checks.Fail(CheckConfigPWAW, tPWAW, reason, hint).WithDetails(capDetails(open)...))
		} else {
			g.Add(checks.Warn(CheckConfigPWAW, tPWAW, reason+" (the upgrade is done: the new behaviour is live)", hint).WithDetails(capDetails(open)...))
		}
	}

	// Where the flag is on.
	var onLines []string
	models := map[string]bool{}
	for _, e := range res.Entries {
		if !e.Active || e.Shadowed || e.Role == validate.RoleDefault || e.Config == nil || !e.Config.LastClusterAffinity {
			continue
		}
		pos := e.Value.Start
		if f := e.Value.Get(lb.FieldLastClusterAffinity.Name); f != nil {
			pos = f.Start
		}
		onLines = append(onLines, fmt.Sprintf("%s:%d:%d %s", res.File, pos.Line, pos.Col, entryName(e)))
		if e.Model != "" {
			models[e.Model] = true
		}
	}
	var modelList []string
	for m := range models {
		modelList = append(modelList, m)
	}
	sort.Strings(modelList)
	if in.Stage <= 2 {
		if len(onLines) == 0 {
			g.Add(checks.OK(CheckConfigFlagOff, tFlagOff, "no active entry sets last_cluster_affinity: true"))
		} else {
			g.Add(checks.Fail(CheckConfigFlagOff, tFlagOff, fmt.Sprintf("%s on before stage 3", plural.Count(len(onLines), "entry turns it", "entries turn it")),
				"set last_cluster_affinity: false (or remove it) until the gateway store works (stage 2 checks pass); turning it on first makes every session new").WithDetails(capDetails(onLines)...))
		}
		return nil
	}
	if len(onLines) == 0 {
		g.Add(checks.Warn(CheckConfigFlagOn, tFlagOn, "no active entry sets last_cluster_affinity: true",
			"stage 3 turns last_cluster_affinity on per model (wait-and-widen or pulsar-wait-and-widen entries)"))
		return nil
	}
	g.Add(checks.OK(CheckConfigFlagOn, tFlagOn, fmt.Sprintf("on in %s", plural.Count(len(onLines), "entry", "entries"))).WithDetails(capDetails(onLines)...))
	if len(modelList) == 0 {
		return nil
	}
	return modelList
}

func entryName(e *validate.Entry) string {
	switch e.Role {
	case validate.RoleModel:
		return fmt.Sprintf("models[%q]", e.Model)
	case validate.RoleModelRequestAlgorithm:
		return fmt.Sprintf("models[%q].request_algorithms[%q]", e.Model, e.Key)
	case validate.RoleRequestAlgorithm:
		return fmt.Sprintf("request_algorithms[%q]", e.Key)
	case validate.RoleDefault:
		return lb.TopLevelDefault
	}
	return e.Path
}

// gatewayChecks adds the gateway settings checks and returns the settings
// (nil without gateway input).
func gatewayChecks(g *checks.Group, in Inputs) *gateway.Settings {
	const (
		tValid = "gateway last-cluster values are valid"
		tOlric = "gateway Olric settings are coherent"
		tDMap  = "hint DMap matches what lcctl store uses"
		tFlag  = "gateway last-cluster store flag fits the stage"
	)
	if in.Gateway == nil {
		for _, c := range []struct{ id, t string }{{CheckGatewaySettings, tValid}, {CheckGatewayOlric, tOlric}, {CheckGatewayDMap, tDMap}, {CheckGatewayFlag, tFlag}} {
			g.Add(checks.Skip(c.id, c.t, "no "+defaultGatewayOptHelp+" given"))
		}
		return nil
	}
	s, problems := gateway.Check(in.Gateway, in.StoreDMap)
	byCat := map[gateway.Category][]gateway.Problem{}
	for _, p := range problems {
		byCat[p.Category] = append(byCat[p.Category], p)
	}
	judge := func(id, title string, cat gateway.Category, okReason string) {
		ps := byCat[cat]
		// Every finding's hint, once each, the errors' first: two bad
		// values need two fixes.
		var lines, errHints, warnHints []string
		errs := 0
		for _, p := range ps {
			lines = append(lines, fmt.Sprintf("%s %s", p.Severity, p.String()))
			hints := &warnHints
			if p.Severity == gateway.SeverityError {
				errs++
				hints = &errHints
			}
			if p.Hint != "" && !slices.Contains(errHints, p.Hint) && !slices.Contains(warnHints, p.Hint) {
				*hints = append(*hints, p.Hint)
			}
		}
		hint := strings.Join(append(errHints, warnHints...), "; ")
		switch {
		case len(ps) == 0:
			g.Add(checks.OK(id, title, okReason))
		case errs > 0:
			g.Add(checks.Fail(id, title, fmt.Sprintf("%s, %s", plural.Count(errs, "error", "errors"), plural.Count(len(ps)-errs, "warning", "warnings")), hint).WithDetails(capDetails(lines)...))
		default:
			g.Add(checks.Warn(id, title, plural.Count(len(ps), "warning", "warnings"), hint).WithDetails(capDetails(lines)...))
		}
	}
	judge(CheckGatewaySettings, tValid, gateway.CategoryValues, lastClusterValues(s))
	olricReason := "Olric off: each replica keeps its own LRU"
	if s.OlricEnabled.Value {
		olricReason = fmt.Sprintf("Olric on (env %s, RESP port %d, memberlist port %d, partitions %d)", s.OlricEnv.Value, s.OlricBindPort.Value, s.OlricMemberlistPort.Value, s.OlricPartitionCount.Value)
	}
	judge(CheckGatewayOlric, tOlric, gateway.CategoryOlric, olricReason)
	storeDMap := in.StoreDMap
	if storeDMap == "" {
		storeDMap = gateway.LastClusterDMap
	}
	judge(CheckGatewayDMap, tDMap, gateway.CategoryDMap, fmt.Sprintf("gateway and lcctl store both use %q; the rate limiter uses %q", storeDMap, s.OlricDMapName.Value))

	en := s.LastClusterEnabled
	where := en.Var.Origin()
	name := "STARGATE_LAST_CLUSTER_ENABLED"
	if en.Var.ValuesPath != "" {
		name = en.Var.ValuesPath
	}
	state := fmt.Sprintf("%s=%t (%s), store %s", name, en.Value, where, s.Store())
	switch {
	case en.Invalid:
		// Not false: the gateway refuses to start (gateway.md §8.1).
		g.Add(checks.Fail(CheckGatewayFlag, tFlag,
			fmt.Sprintf("%s=%q (%s) is not a boolean the gateway accepts: it refuses to start, so the flag is neither on nor off", name, en.Var.Value, where),
			fmt.Sprintf("set %s to true or false", name)))
	case in.Stage == 1 && en.Value:
		g.Add(checks.Warn(CheckGatewayFlag, tFlag, state+": ahead of plan; the gateway sends hints before Stargate is upgraded",
			"enable the gateway store in stage 2, after the Stargate upgrade; Stargate releases without the feature are assumed to ignore the header (gateway.md §16)"))
	case in.Stage == 1:
		g.Add(checks.OK(CheckGatewayFlag, tFlag, state))
	case !en.Value && in.Stage == 2:
		g.Add(checks.Fail(CheckGatewayFlag, tFlag, state+": stage 2 turns the gateway store on",
			fmt.Sprintf("set %s=true and roll the gateway out", name)))
	case !en.Value:
		g.Add(checks.Fail(CheckGatewayFlag, tFlag, state+": turning last_cluster_affinity on now makes every session new (step 3 before step 2)",
			fmt.Sprintf("complete stage 2 first: set %s=true, roll the gateway and pass lcctl preflight --stage 2", name)))
	default:
		g.Add(checks.OK(CheckGatewayFlag, tFlag, state))
	}
	return s
}

// lastClusterValues is the reason of a passing gateway.settings-valid:
// the ttl, lookup timeout and local max entries with where each came from
// (gateway.Var.Origin), one origin at the end when all three share it:
// "ttl 10m0s, lookup timeout 20ms, local max entries 100000 (chart
// default)".
func lastClusterValues(s *gateway.Settings) string {
	items := []struct{ text, origin string }{
		{"ttl " + s.TTL.Value.String(), s.TTL.Var.Origin()},
		{"lookup timeout " + s.LookupTimeout.Value.String(), s.LookupTimeout.Var.Origin()},
		{fmt.Sprintf("local max entries %d", s.LocalMaxEntries.Value), s.LocalMaxEntries.Var.Origin()},
	}
	parts := make([]string, len(items))
	same := true
	for i, it := range items {
		parts[i] = fmt.Sprintf("%s (%s)", it.text, it.origin)
		same = same && it.origin == items[0].origin
	}
	if same {
		for i, it := range items {
			parts[i] = it.text
		}
		return fmt.Sprintf("%s (%s)", strings.Join(parts, ", "), items[0].origin)
	}
	return strings.Join(parts, ", ")
}

func olricChecks(ctx context.Context, g *checks.Group, in Inputs) {
	const (
		tReach = "Olric is reachable"
		tRW    = "hint DMap is readable and writable (probe key written, read, deleted)"
	)
	dmap := in.StoreDMap
	if dmap == "" {
		dmap = gateway.LastClusterDMap
	}
	switch {
	case len(in.OlricAddrs) == 0:
		g.Add(checks.Skip(CheckOlricReachable, tReach, "no --olric addresses given"),
			checks.Skip(CheckOlricReadWrite, tRW, "no --olric addresses given"))
		return
	case in.Prober == nil:
		g.Add(checks.Skip(CheckOlricReachable, tReach, "this lcctl build has no Olric client (internal/store not wired)"),
			checks.Skip(CheckOlricReadWrite, tRW, "this lcctl build has no Olric client (internal/store not wired)"))
		return
	}
	rep := in.Prober.Probe(ctx, in.OlricAddrs, dmap)
	addrs := strings.Join(in.OlricAddrs, ",")
	if rep.Reach != nil {
		// store.Connect's error names every seed it tried; name them
		// here only when the error does not (a failed member listing).
		reason := rep.Reach.Error()
		for _, a := range in.OlricAddrs {
			if !strings.Contains(reason, a) {
				reason = fmt.Sprintf("%s: %v", addrs, rep.Reach)
				break
			}
		}
		g.Add(checks.Fail(CheckOlricReachable, tReach, reason,
			"run lcctl from inside the cluster network (member names are pod IPs, port 3320; a single port-forward is not enough) and check that the gateway pods run Olric"),
			checks.Skip(CheckOlricReadWrite, tRW, "Olric is not reachable"))
		return
	}
	// The members are listed in the details; the --olric seeds are named
	// only when one of them is not a member name (a Service or a
	// port-forward), so a member address is printed once.
	reason := plural.Count(len(rep.Members), "member", "members")
	if rep.Version != "" {
		reason += " " + rep.Version
	}
	for _, a := range in.OlricAddrs {
		if !slices.Contains(rep.Members, a) {
			reason += ", reached through " + addrs
			break
		}
	}
	g.Add(checks.OK(CheckOlricReachable, tReach, reason).WithDetails(capDetails(rep.Members)...))
	if rep.ReadWrite != nil {
		g.Add(checks.Fail(CheckOlricReadWrite, tRW, fmt.Sprintf("DMap %q: %v", dmap, rep.ReadWrite),
			"check the Olric logs of the gateway pods and the partition owners (lcctl store …)").WithDetails(rep.Details...))
		return
	}
	g.Add(checks.OK(CheckOlricReadWrite, tRW, fmt.Sprintf("DMap %q", dmap)).WithDetails(rep.Details...))
}

// ScrapeCheck adds the scrape check of one metrics source to g
// (CheckGatewayScrape when gatewaySource, else CheckStargateScrape): ok
// with the number of families read, failed with the scrape error and a hint
// naming flag (the option that gave the source), skipped when sc is nil.
// It reports whether the scrape can be judged further. lcctl check metrics
// uses it so that a source that cannot be scraped fails its group there as
// it does in preflight.
func ScrapeCheck(g *checks.Group, gatewaySource bool, flag string, sc *Scrapes) bool {
	if gatewaySource {
		return scrapeCheck(g, CheckGatewayScrape, "gateway", flag, sc)
	}
	return scrapeCheck(g, CheckStargateScrape, "Stargate", flag, sc)
}

func scrapeCheck(g *checks.Group, id, what, flag string, sc *Scrapes) bool {
	title := what + " metrics can be scraped"
	if sc == nil {
		g.Add(checks.Skip(id, title, "no "+flag+" given"))
		return false
	}
	if sc.Err != nil || sc.After == nil {
		err := sc.Err
		if err == nil {
			err = fmt.Errorf("no scrape")
		}
		g.Add(checks.Fail(id, title, err.Error(), fmt.Sprintf("check %s: the URL, the port (%s) and that metrics are enabled", flag, map[string]string{"gateway": "9464, llmApiGateway.metrics.enabled", "Stargate": "9090, llmRequestRouter.metrics.enabled"}[what])))
		return false
	}
	reason := fmt.Sprintf("%s: %s (%s)", sc.Source, plural.Count(len(sc.After.Families), "family", "families"), sc.After.Format)
	if sc.Before != nil {
		reason += fmt.Sprintf(", two scrapes %s apart", sc.After.Time.Sub(sc.Before.Time).Round(time.Millisecond))
	}
	g.Add(checks.OK(id, title, reason))
	return true
}

func window(sc *Scrapes) metrics.Window {
	if sc.Before == nil {
		return metrics.Totals
	}
	return metrics.RatesOver(sc.After.Time.Sub(sc.Before.Time))
}

func gatewayMetricsChecks(g *checks.Group, in Inputs, s *gateway.Settings) {
	if !scrapeCheck(g, CheckGatewayScrape, "gateway", "--gateway-metrics", in.GatewayMetrics) {
		return
	}
	sc := in.GatewayMetrics
	snap := metrics.ExtractGateway(sc.After)
	if sc.Before != nil {
		snap = snap.Since(metrics.ExtractGateway(sc.Before))
	}
	rep := metrics.BuildGatewayReport(sc.Source, window(sc), snap)
	o := metrics.VerdictOptions{Stage: in.Stage, Thresholds: in.Thresholds}
	if s != nil {
		o.LookupTimeout = s.LookupTimeout.Value
	}
	g.Add(metrics.GatewayVerdicts(rep, o)...)
}

func stargateMetricsChecks(g *checks.Group, in Inputs, flagModels []string) {
	if !scrapeCheck(g, CheckStargateScrape, "Stargate", "--stargate-metrics", in.StargateMetrics) {
		return
	}
	sc := in.StargateMetrics
	snap := metrics.ExtractStargate(sc.After, in.StargatePrefix)
	if sc.Before != nil {
		snap = snap.Since(metrics.ExtractStargate(sc.Before, in.StargatePrefix))
	}
	rep := metrics.BuildStargateReport(sc.Source, window(sc), snap, "")
	if in.Stage <= 2 {
		if res, bad := metrics.InvalidSamplesVerdict(metrics.CheckStargateSamples, rep.Metric, rep.Source, rep.InvalidSamples); bad {
			g.Add(res)
		}
		g.Add(metrics.StargateFlagOffVerdict(rep))
		return
	}
	g.Add(metrics.StargateSessionVerdicts(rep, flagModels, metrics.VerdictOptions{Stage: in.Stage, Thresholds: in.Thresholds})...)
}
