package sim

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/lcctl/lcctl/internal/ui"
)

// check validates ranges and cross references.
func (sc *Scenario) check() {
	d := sc.dec
	if !(sc.SLOTTFTMs > 0) || sc.SLOTTFTMs > MaxSeconds*1000 {
		d.report("slo_ttft_ms", "must be > 0 and at most %g", MaxSeconds*1000)
	}
	if sc.WarmupS < 0 || sc.WarmupS > MaxSeconds {
		d.report("warmup_s", "must be 0–%g", MaxSeconds)
	}
	if len(sc.Clusters) == 0 {
		d.report("clusters", "at least one cluster is required")
	}
	if len(sc.Clusters) > 4096 {
		d.report("clusters", "at most 4096 clusters")
	}
	ids := map[string]bool{}
	for i := range sc.Clusters {
		c := &sc.Clusters[i]
		p := fmt.Sprintf("clusters[%d]", i)
		switch {
		case c.ID == "":
			d.report(p+".id", "required")
		case len(c.ID) > 256 || !printableASCII(c.ID):
			d.report(p+".id", "must be 1–256 printable ASCII bytes (the gateway stores nothing else)")
		case ids[c.ID]:
			d.report(p+".id", "duplicate cluster id %q", c.ID)
		case c.Concurrency < 1 || c.Concurrency > 1<<20:
			d.report(p+".concurrency", "must be 1–1048576")
		case c.QueueCapacity < -1:
			d.report(p+".queue_capacity", "must be ≥ 0, or -1 for unbounded")
		case !(c.PrefillTPS > 0):
			d.report(p+".prefill_tps", "must be > 0")
		case !(c.DecodeTPS > 0):
			d.report(p+".decode_tps", "must be > 0")
		case c.RTTMs < 0 || c.RTTMs > 60000:
			d.report(p+".rtt_ms", "must be 0–60000")
		case c.KVCacheTokens < 0 || c.KVCacheTokens > MaxTokens:
			d.report(p+".kv_cache_tokens", "must be 0–%d", int64(MaxTokens))
		case c.MaxInputTPS < 0:
			d.report(p+".max_input_tps", "must be ≥ 0")
		case c.Engine != EngineFIFO && c.Engine != EngineBatched:
			d.report(p+".engine", "want fifo or batched, got %q", c.Engine)
		case c.MaxNumBatchedTokens < 1 || c.MaxNumBatchedTokens > 1<<30:
			d.report(p+".max_num_batched_tokens", "must be 1–1073741824")
		case !(c.StepBaseMs >= 0 && c.StepPrefillMsPerToken >= 0 && c.StepDecodeMsPerSeq >= 0 && c.StepKVReadMsPerToken >= 0) || c.StepBaseMs+c.StepPrefillMsPerToken+c.StepDecodeMsPerSeq+c.StepKVReadMsPerToken > 1e6:
			d.report(p+".step_base_ms", "the step coefficients must be ≥ 0 and at most 1e6 ms in all")
		case c.Engine == EngineBatched && c.StepBaseMs == 0 && c.StepPrefillMsPerToken == 0 && c.StepDecodeMsPerSeq == 0 && c.StepKVReadMsPerToken == 0:
			d.report(p+".step_base_ms", "a batched engine needs a step time > 0 (a step coefficient)")
		}
		ids[c.ID] = true
	}
	sc.Workload.check(d)
	g := &sc.Gateway
	switch {
	case g.Store != "shared" && g.Store != "local":
		d.report("gateway.store", "want shared or local, got %q", g.Store)
	case g.Replicas < 1 || g.Replicas > 1024:
		d.report("gateway.replicas", "must be 1–1024")
	case !(g.TTLS > 0) || g.TTLS > MaxSeconds:
		d.report("gateway.ttl_s", "must be > 0 and at most %g", MaxSeconds)
	case g.MaxEntries < 1:
		d.report("gateway.max_entries", "must be ≥ 1")
	}
	r := &sc.Router
	switch {
	case !(r.SnapshotIntervalMs >= 1) || r.SnapshotIntervalMs > 3_600_000:
		d.report("router.snapshot_interval_ms", "must be 1–3600000")
	case r.StalenessMs < 0 || r.StalenessMs > 3_600_000:
		d.report("router.staleness_ms", "must be 0–3600000")
	case r.StalenessMs/r.SnapshotIntervalMs > 1000:
		d.report("router.staleness_ms", "at most 1000 snapshot intervals")
	case r.RecheckIntervalMs < 0 || r.RecheckIntervalMs > 60000:
		d.report("router.recheck_interval_ms", "must be 0–60000")
	case r.MaxAttempts < 1 || r.MaxAttempts > 64:
		d.report("router.max_attempts", "must be 1–64")
	}
	for i, e := range sc.Events {
		p := fmt.Sprintf("events[%d]", i)
		switch {
		case e.AtS < 0 || e.AtS > MaxSeconds:
			d.report(p+".at_s", "must be 0–%g", MaxSeconds)
		case !ids[e.Cluster]:
			d.report(p+".cluster", "unknown cluster %q", e.Cluster)
		case e.Action != "drain" && e.Action != "fail" && e.Action != "restore":
			d.report(p+".action", "want drain, fail or restore, got %q", e.Action)
		}
	}
	sc.Compare.check(d)
	names := map[string]bool{}
	for i := range sc.Policies {
		p := &sc.Policies[i]
		path := fmt.Sprintf("policies[%d]", i)
		switch {
		case p.Name == "":
			d.report(path+".name", "required")
		case !displayable(p.Name):
			// The name labels text output, JSON and the charts: refused
			// here like a cluster id, not escaped in each of them.
			d.report(path+".name", "must be valid UTF-8 without control or bidirectional formatting characters, got %s", strconv.QuoteToASCII(p.Name))
		}
		if names[p.Name] {
			d.report(path+".name", "duplicate policy name %q", p.Name)
		}
		names[p.Name] = true
		set := 0
		for _, b := range []bool{p.Config != nil, p.LBConfig != "", p.ConsistentHash != nil, p.StickyLeastLoaded != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			d.report(path, "give exactly one of config, lb_config, consistent_hash, sticky_least_loaded")
		}
		if p.ConsistentHash != nil {
			p.ConsistentHash.check(d, path+".consistent_hash")
		}
		if p.StickyLeastLoaded != nil {
			p.StickyLeastLoaded.check(d, path+".sticky_least_loaded")
		}
	}
	// The size estimate assumes valid values.
	if len(d.errs) == 0 {
		if err := sc.CheckSize(); err != nil {
			d.errs = append(d.errs, err)
		}
	}
}

// CheckSize refuses a generated workload too large to simulate: burst
// windows (repetitions) beyond MaxBurstWindows within the arrival window
// (duration_s, or MaxSeconds without it), more than MaxRunRequests
// requests expected per policy (ExpectedRequests: session_rate ×
// duration_s × mean turns, bursts included, capped by sessions and
// max_requests), or an arrival window of more than MaxSnapshots snapshot
// intervals when neither sessions nor max_requests can end it earlier. A trace workload is as large as its file. ParseScenario
// calls it; call it again after changing the workload (the CLI's
// --duration-s and --max-requests). The error is an *InputError.
func (sc *Scenario) CheckSize() error {
	d := sc.dec
	if d == nil {
		d = newDecoder(sc.File)
	}
	w := &sc.Workload
	if w.Trace != "" {
		return nil
	}
	horizon := w.DurationS
	if horizon <= 0 {
		horizon = MaxSeconds
	}
	windows := 0.0
	for _, b := range w.Bursts {
		if b.EveryS > 0 && b.StartS < horizon {
			windows += math.Floor((horizon-b.StartS)/b.EveryS) + 1
		}
	}
	if windows > MaxBurstWindows {
		return d.errPath("workload.bursts", "the bursts repeat %.3g times within the arrival window (%g s); lcctl simulates at most %d burst windows: use a longer every_s or a shorter workload.duration_s",
			windows, horizon, MaxBurstWindows)
	}
	if n := ExpectedRequests(sc, 0); n > MaxRunRequests {
		return d.errPath("workload", "about %.3g requests per policy (session_rate × duration_s × mean turns), more than lcctl simulates in one run (%d): lower session_rate or duration_s, or set max_requests (--max-requests)",
			float64(n), MaxRunRequests)
	}
	// Snapshots are published all through the arrival window; sessions
	// and max_requests may end the arrivals earlier.
	if snaps := horizon * 1000 / sc.Router.SnapshotIntervalMs; w.DurationS > 0 && w.Sessions == 0 && w.MaxRequests == 0 && snaps > MaxSnapshots {
		return d.errPath("router.snapshot_interval_ms", "the arrival window (%g s) takes %.3g snapshots at this interval; lcctl simulates at most %d: use a longer interval, a shorter workload.duration_s (--duration-s), or set max_requests (--max-requests)",
			horizon, snaps, MaxSnapshots)
	}
	return nil
}

func (c *CompareSpec) check(d *decoder) {
	c.ConsistentHash.check(d, "compare.consistent_hash")
	c.StickyLeastLoaded.check(d, "compare.sticky_least_loaded")
	seen := map[string]bool{}
	for i, n := range c.Policies {
		p := fmt.Sprintf("compare.policies[%d]", i)
		if !isComparisonName(n) {
			d.report(p, "unknown comparison policy %q (known: %s)", n, comparisonList())
		}
		if seen[n] {
			d.report(p, "duplicate %q", n)
		}
		seen[n] = true
	}
}

func (c *ConsistentHashSpec) check(d *decoder, path string) {
	if c.VirtualNodes < 1 || c.VirtualNodes > 10000 {
		d.report(path+".virtual_nodes", "must be 1–10000")
	}
}

func (s *StickyLeastLoadedSpec) check(d *decoder, path string) {
	switch {
	case s.SessionExpirationS < 0 || s.SessionExpirationS > MaxSeconds:
		d.report(path+".session_expiration_s", "must be 0–%g", MaxSeconds)
	case s.MaxSessions < 0:
		d.report(path+".max_sessions", "must be ≥ 0")
	case s.MaxSessionIDBytes < 0:
		d.report(path+".max_session_id_bytes", "must be ≥ 0")
	}
}

func (w *WorkloadSpec) check(d *decoder) {
	switch {
	case w.SessionRate < 0 || w.SessionRate > 1e7:
		d.report("workload.session_rate", "must be 0–10000000")
	case w.DurationS < 0 || w.DurationS > MaxSeconds:
		d.report("workload.duration_s", "must be 0–%g", MaxSeconds)
	case w.Sessions < 0:
		d.report("workload.sessions", "must be ≥ 0")
	case w.MaxRequests < 0:
		d.report("workload.max_requests", "must be ≥ 0")
	case w.MaxContextTokens < 1 || w.MaxContextTokens > MaxTokens:
		d.report("workload.max_context_tokens", "must be 1–%d", int64(MaxTokens))
	case w.PayloadShare < 0 || w.PayloadShare > 1:
		d.report("workload.payload_share", "must be 0–1")
	case w.TraceFormat != "" && w.TraceFormat != TraceCSV && w.TraceFormat != TraceMooncake && w.TraceFormat != TraceBailian:
		d.report("workload.trace_format", "want csv, mooncake or bailian, got %q", w.TraceFormat)
	case w.Replay != ReplayOpen && w.Replay != ReplayClosed:
		d.report("workload.replay", "want open or closed, got %q", w.Replay)
	case w.Replay == ReplayClosed && w.Trace == "":
		d.report("workload.replay", "closed replay needs workload.trace (synthetic sessions are closed loop already)")
	case w.TraceFormat != "" && w.Trace == "":
		d.report("workload.trace_format", "needs workload.trace")
	case w.BlockTokens < 0 || w.BlockTokens > 1<<20:
		d.report("workload.block_tokens", "must be 1–1048576 (0 = the default)")
	case w.SystemPromptTokens < 0 || w.SystemPromptTokens > MaxTokens:
		d.report("workload.system_prompt_tokens", "must be 0–%d", int64(MaxTokens))
	}
	if w.Trace == "" && w.DurationS == 0 && w.Sessions == 0 && w.MaxRequests == 0 {
		d.report("workload", "unbounded workload: set duration_s, sessions or max_requests")
	}
	if w.Trace == "" && w.SessionRate == 0 {
		d.report("workload.session_rate", "must be > 0 without a trace")
	}
	if w.Trace != "" {
		// A trace replaces the generator: a generator field set beside it
		// would be ignored, as trace_format without a trace would be.
		for _, f := range generatorFields {
			if _, set := d.pos["workload."+f]; set {
				d.report("workload."+f, "not used with workload.trace (the trace gives the arrivals, sessions and token counts): remove it")
			}
		}
	}
	for _, x := range []struct {
		path    string
		d       *Dist
		min, hi float64
	}{
		{"workload.turns", &w.Turns, 1, maxTurns},
		{"workload.think_time_s", &w.ThinkTimeS, 0, MaxSeconds},
		{"workload.first_input_tokens", &w.FirstInputTokens, 0, MaxTokens},
		{"workload.new_input_tokens", &w.NewInputTokens, 0, MaxTokens},
		{"workload.output_tokens", &w.OutputTokens, 0, MaxTokens},
	} {
		x.d.check(d, x.path, x.min, x.hi)
	}
	for _, l := range []struct {
		path string
		s    []WeightedName
	}{{"workload.routing_keys", w.RoutingKeys}, {"workload.models", w.Models}} {
		seen := map[string]bool{}
		for i, n := range l.s {
			p := fmt.Sprintf("%s[%d]", l.path, i)
			switch {
			case n.Name == "" || !printableASCII(n.Name):
				d.report(p+".name", "must be non-empty printable ASCII")
			case seen[n.Name]:
				d.report(p+".name", "duplicate %q", n.Name)
			case !(n.Weight > 0):
				d.report(p+".weight", "must be > 0")
			}
			seen[n.Name] = true
		}
	}
	h := &w.HotSet
	switch {
	case h.Prefixes < 0 || h.Prefixes > 1_000_000:
		d.report("workload.hot_set.prefixes", "must be 0–1000000")
	case h.Share < 0 || h.Share > 1:
		d.report("workload.hot_set.share", "must be 0–1")
	case h.PrefixTokens < 0 || h.PrefixTokens > MaxTokens:
		d.report("workload.hot_set.prefix_tokens", "must be 0–%d", int64(MaxTokens))
	case h.ZipfS < 0 || h.ZipfS > 10:
		d.report("workload.hot_set.zipf_s", "must be 0–10")
	case h.Share > 0 && h.Prefixes == 0:
		d.report("workload.hot_set.prefixes", "must be ≥ 1 when share > 0")
	}
	if len(w.Bursts) > MaxBursts {
		d.report(fmt.Sprintf("workload.bursts[%d]", MaxBursts), "at most %d bursts", MaxBursts)
	}
	for i, b := range w.Bursts {
		p := fmt.Sprintf("workload.bursts[%d]", i)
		switch {
		case b.StartS < 0 || b.StartS > MaxSeconds:
			d.report(p+".start_s", "must be 0–%g", MaxSeconds)
		case !(b.DurationS >= MinBurstS) || b.DurationS > MaxSeconds:
			d.report(p+".duration_s", "must be %g–%g", MinBurstS, MaxSeconds)
		case b.EveryS != 0 && (b.EveryS < b.DurationS || b.EveryS > MaxSeconds):
			d.report(p+".every_s", "must be 0, or from duration_s to %g", MaxSeconds)
		case b.RateMultiplier < 0 || b.RateMultiplier > 1e6:
			d.report(p+".rate_multiplier", "must be 0–1000000")
		}
	}
}

// generatorFields are the workload fields only the synthetic generator
// reads (docs/simulate.md, Workload); with workload.trace they are errors.
var generatorFields = []string{"session_rate", "duration_s", "sessions", "turns", "think_time_s",
	"first_input_tokens", "new_input_tokens", "output_tokens", "max_context_tokens", "system_prompt_tokens",
	"payload_share", "hot_set", "bursts"}

// displayable reports whether s is valid UTF-8 that ui.Printable leaves
// unchanged (no C0, DEL, C1 or bidirectional formatting character).
func displayable(s string) bool {
	return utf8.ValidString(s) && ui.Printable(s) == s
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// TracePath returns the trace file's path resolved against the scenario's
// directory ("" without a trace).
func (sc *Scenario) TracePath() string {
	if sc.Workload.Trace == "" {
		return ""
	}
	return sc.resolvePath(sc.Workload.Trace)
}
