package lb

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// Fixture helpers mirroring the upstream candidate() defaults used by the
// spec examples: rtt 5 ms, last_mean_input_tps 100, everything else 0.

type copt func(*Cluster)

func cl(id string, opts ...copt) Cluster {
	c := Cluster{ClusterID: id, RTT: 5 * time.Millisecond, Stats: Stats{LastMeanInputTPS: 100}}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func rttMs(ms float64) copt {
	return func(c *Cluster) { d, _ := DurationFromMs(ms); c.RTT = d }
}
func tps(v float64) copt    { return func(c *Cluster) { c.Stats.LastMeanInputTPS = v } }
func maxTPS(v float64) copt { return func(c *Cluster) { c.Stats.MaxInputTPS = v } }
func queued(v uint64) copt  { return func(c *Cluster) { c.Stats.QueuedInputSize = v } }
func qsize(v uint64) copt   { return func(c *Cluster) { c.Stats.QueueSize = v } }
func load(run, max uint64) copt {
	return func(c *Cluster) { c.Stats.NumRunningQueries, c.Stats.MaxEngineConcurrency = run, max }
}
func prio(kv ...uint64) copt {
	return func(c *Cluster) {
		c.Stats.QueueTimeEstimateMsByPriority = nil
		for i := 0; i+1 < len(kv); i += 2 {
			c.Stats.QueueTimeEstimateMsByPriority = append(c.Stats.QueueTimeEstimateMsByPriority, PriorityEstimate{uint32(kv[i]), kv[i+1]})
		}
		c.Stats.SortPriorityEstimates()
	}
}
func kv(capacity, used, free uint64) copt {
	return func(c *Cluster) {
		c.Stats.KVCacheCapacityTokens, c.Stats.KVCacheUsedTokens, c.Stats.KVCacheFreeTokens = capacity, used, free
	}
}

var (
	full = load(1, 1)
	free = load(0, 1)
)

func snapOf(cs ...Cluster) *Snapshot { return &Snapshot{Model: "model-a", Clusters: cs} }

type ropt func(*Request)

func rq(opts ...ropt) *Request {
	r := &Request{Model: "model-a", RoutingKey: "rk-1", HasInputTokens: true}
	for _, o := range opts {
		o(r)
	}
	return r
}
func key(k string) ropt          { return func(r *Request) { r.CacheAffinityKey = k } }
func input(n uint64) ropt        { return func(r *Request) { r.InputTokens = n } }
func at(ms float64) ropt         { return func(r *Request) { r.Elapsed, _ = DurationFromMs(ms) } }
func last(id string) ropt        { return func(r *Request) { r.LastClusterID = id } }
func exclude(ids ...string) ropt { return func(r *Request) { r.ExcludedClusterIDs = ids } }
func priority(p uint32) ropt     { return func(r *Request) { r.Priority = p } }
func slo(ms uint64) ropt         { return func(r *Request) { r.RequestSLOMs = Some(ms) } }
func maxWait(ms uint64) ropt     { return func(r *Request) { r.MaxWaitMs = Some(ms) } }
func pinned(s SessionState) ropt { return func(r *Request) { r.FirstClassification = s } }
func noRoutingKey() ropt         { return func(r *Request) { r.RoutingKey = "" } }

type cfgOpt func(*AlgorithmConfig)

func cfgOf(a Algorithm, opts ...cfgOpt) *AlgorithmConfig {
	c := DefaultAlgorithmConfig(a)
	for _, o := range opts {
		o(&c)
	}
	return &c
}
func u64p(v uint64) *uint64    { return &v }
func withSeed(s string) cfgOpt { return func(c *AlgorithmConfig) { c.Seed = s } }
func withK(k int) cfgOpt {
	return func(c *AlgorithmConfig) { c.CacheAffinityBackendSelectionCount = k }
}
func withX(ms uint64) cfgOpt { return func(c *AlgorithmConfig) { c.CacheAffinityWaitMs = ms } }
func withScale(s float64) cfgOpt {
	return func(c *AlgorithmConfig) { c.CacheAffinityInputTokensScale = s }
}
func withN(n int) cfgOpt { return func(c *AlgorithmConfig) { c.N = n } }
func withV(v int) cfgOpt { return func(c *AlgorithmConfig) { c.CacheAffinityVirtualNodes = v } }
func withSLO(floor, ceil uint64) cfgOpt {
	return func(c *AlgorithmConfig) { c.MaxQueueTimeFloorMs, c.MaxQueueTimeCeilMs = u64p(floor), u64p(ceil) }
}
func withCmp(cmp Comparator) cfgOpt      { return func(c *AlgorithmConfig) { c.Comparator = cmp } }
func withMaxQueued(v uint64) cfgOpt      { return func(c *AlgorithmConfig) { c.MaxQueued = v } }
func withFallbackQueued(v uint64) cfgOpt { return func(c *AlgorithmConfig) { c.FallbackMaxQueued = v } }
func withBand(ms uint64) cfgOpt          { return func(c *AlgorithmConfig) { c.BandWidenIntervalMs = u64p(ms) } }
func withBucket(ms uint64) cfgOpt        { return func(c *AlgorithmConfig) { c.TTFTBucketSizeMs = ms } }
func withSessions() cfgOpt               { return func(c *AlgorithmConfig) { c.LastClusterAffinity = true } }
func withKV() cfgOpt                     { return func(c *AlgorithmConfig) { c.ConsiderKVFreeTokens = true } }
func withIgnoreQueue() cfgOpt            { return func(c *AlgorithmConfig) { c.IgnoreQueueTime = true } }
func withIgnorePrefill() cfgOpt {
	return func(c *AlgorithmConfig) { c.IgnoreInputProcessingTime = true }
}
func withWeight(w RendezvousWeight) cfgOpt {
	return func(c *AlgorithmConfig) { c.RendezvousWeight = w }
}

// decide runs one decision with probabilities and a trace on, with a
// seeded source, and returns a cloned decision.
func decide(t *testing.T, cfg *AlgorithmConfig, snap *Snapshot, req *Request) Decision {
	t.Helper()
	e := NewEngine(cfg)
	return e.Decide(snap, req, rand.New(rand.NewPCG(1, 2)), Options{Trace: true, Probabilities: true}).Clone()
}

func support(d Decision) []string {
	var out []string
	for _, c := range d.Choices {
		out = append(out, c.ClusterID)
	}
	sort.Strings(out)
	return out
}

func wantDispatch(t *testing.T, d Decision, id string, depth int) {
	t.Helper()
	if d.Kind != KindSelected || d.ClusterID != id {
		t.Fatalf("want dispatch %s, got %v %q wait=%v reason=%v (support %v)", id, d.Kind, d.ClusterID, d.Wait, d.Reason, support(d))
	}
	if depth > 0 && d.RankDepth != depth {
		t.Fatalf("want rank depth %d, got %d", depth, d.RankDepth)
	}
	if s := support(d); len(s) != 1 || s[0] != id {
		t.Fatalf("want deterministic choice %s, support %v", id, s)
	}
}

func wantOneOf(t *testing.T, d Decision, ids ...string) {
	t.Helper()
	if d.Kind != KindSelected {
		t.Fatalf("want dispatch one of %v, got %v wait=%v", ids, d.Kind, d.Wait)
	}
	want := append([]string(nil), ids...)
	sort.Strings(want)
	if got := support(d); !equalStrings(got, want) {
		t.Fatalf("want support %v, got %v", want, got)
	}
	sum := 0.0
	for _, c := range d.Choices {
		sum += c.P
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("probabilities sum to %v", sum)
	}
}

func wantWait(t *testing.T, d Decision, ms float64) {
	t.Helper()
	if d.Kind != KindWait {
		t.Fatalf("want wait %v ms, got %v %q reason=%v", ms, d.Kind, d.ClusterID, d.Reason)
	}
	if got := DurationMs(d.Wait); math.Abs(got-ms) > 1e-6 {
		t.Fatalf("want wait %v ms, got %v ms", ms, got)
	}
}

func wantUnavailable(t *testing.T, d Decision) {
	t.Helper()
	if d.Kind != KindUnavailable {
		t.Fatalf("want unavailable, got %v %q wait=%v", d.Kind, d.ClusterID, d.Wait)
	}
}

func ids(snap *Snapshot, idx []int) []string { return IDs(snap, idx) }
