package lb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// genSnapshot draws 1–8 clusters with varied load, RTT and rates; every
// cluster has a valid Pulsar weight unless allowUnranked.
func genSnapshot(t *rapid.T, allowUnranked bool) *Snapshot {
	n := rapid.IntRange(1, 8).Draw(t, "n")
	cs := make([]Cluster, n)
	for i := range cs {
		c := cl(fmt.Sprintf("c%d", i))
		c.RTT = time.Duration(rapid.SampledFrom([]float64{0, 1, 5, 50, 500}).Draw(t, "rtt") * 1e6)
		c.Stats.LastMeanInputTPS = rapid.SampledFrom([]float64{100, 1000, 5000, 0}).Draw(t, "tps")
		c.Stats.MaxInputTPS = rapid.SampledFrom([]float64{100, 400, 1}).Draw(t, "max")
		if allowUnranked && rapid.Bool().Draw(t, "unranked") {
			c.Stats.MaxInputTPS = 0
		}
		c.Stats.MaxEngineConcurrency = rapid.Uint64Range(0, 2).Draw(t, "limit")
		c.Stats.NumRunningQueries = rapid.Uint64Range(0, 3).Draw(t, "running")
		c.Stats.QueuedInputSize = rapid.SampledFrom([]uint64{0, 10, 1000}).Draw(t, "queued")
		cs[i] = c
	}
	return snapOf(cs...)
}

func genConfig(t *rapid.T, a Algorithm, sessions bool) *AlgorithmConfig {
	c := cfgOf(a, withSeed(rapid.SampledFrom([]string{"", "s1", "seed-1"}).Draw(t, "seed")),
		withK(rapid.IntRange(1, 3).Draw(t, "k")), withX(rapid.SampledFrom([]uint64{0, 100, 300}).Draw(t, "x")),
		withScale(rapid.SampledFrom([]float64{1, 0.1, 0}).Draw(t, "scale")), withN(rapid.IntRange(1, 4).Draw(t, "nsample")),
		withV(rapid.IntRange(1, 20).Draw(t, "v")))
	c.LastClusterAffinity = sessions
	if rapid.Bool().Draw(t, "slo") {
		c.MaxQueueTimeFloorMs, c.MaxQueueTimeCeilMs = u64p(100), u64p(rapid.SampledFrom([]uint64{100, 5000}).Draw(t, "ceil"))
	}
	if a == PulsarWaitAndWiden && rapid.Bool().Draw(t, "band") {
		c.BandWidenIntervalMs = u64p(rapid.SampledFrom([]uint64{0, 50, 200}).Draw(t, "bandms"))
	}
	return c
}

func genRequest(t *rapid.T) *Request {
	r := rq(key(rapid.SampledFrom([]string{"k1", "session-6", "prefix"}).Draw(t, "key")),
		input(rapid.SampledFrom([]uint64{0, 1, 100, 1000}).Draw(t, "input")),
		at(rapid.SampledFrom([]float64{0, 50, 150, 299, 300, 1000}).Draw(t, "elapsed")))
	return r
}

// same reports whether two decisions agree on everything but the session
// fields and the trace.
func same(a, b Decision) bool {
	return a.Kind == b.Kind && a.Cluster == b.Cluster && a.RankDepth == b.RankDepth && a.Wait == b.Wait &&
		a.SelectedAfterKVFreeTokensSkip == b.SelectedAfterKVFreeTokensSkip && a.Reason == b.Reason
}

func seeded(seed uint64) Rand { return rand.New(rand.NewPCG(seed, 7)) }

// The ring group does not depend on the candidate slice order
// (wait-and-widen.md §4.2 sorts by hash, then cluster id).
func TestPropRingStableUnderReordering(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, false)
		cfg := genConfig(t, WaitAndWiden, false)
		r := genRequest(t)
		perm := rapid.Permutation(s.Clusters).Draw(t, "perm")
		s2 := snapOf(perm...)
		d1 := NewEngine(cfg).Decide(s, r, seeded(1), Options{})
		d2 := NewEngine(cfg).Decide(s2, r, seeded(1), Options{})
		g1, g2 := IDs(s, d1.AffinityGroup), IDs(s2, d2.AffinityGroup)
		if !equalStrings(g1, g2) {
			t.Fatalf("group %v vs %v after reordering", g1, g2)
		}
		// The Pulsar ranking too.
		p1 := NewEngine(cfgOf(Pulsar, withSeed(cfg.Seed))).Decide(s, r, nil, Options{})
		p2 := NewEngine(cfgOf(Pulsar, withSeed(cfg.Seed))).Decide(s2, r, nil, Options{})
		if !equalStrings(IDs(s, p1.AffinityOrder), IDs(s2, p2.AffinityOrder)) {
			t.Fatalf("ranking changed under reordering")
		}
	})
}

func without(ids []string, x string) []string {
	var out []string
	for _, s := range ids {
		if s != x {
			out = append(out, s)
		}
	}
	return out
}

// Promotion keeps the relative order of every other cluster (session.md §4).
func TestPropPromotionKeepsRelativeOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, true)
		a := rapid.SampledFrom([]Algorithm{WaitAndWiden, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := genConfig(t, a, true)
		r := genRequest(t)
		hint := s.Clusters[rapid.IntRange(0, len(s.Clusters)-1).Draw(t, "hint")].ClusterID
		r.LastClusterID = hint
		d := NewEngine(cfg).Decide(s, r, seeded(3), Options{})
		if d.AffinityOrder == nil {
			return
		}
		orig, got := IDs(s, d.OriginalOrder), IDs(s, d.AffinityOrder)
		if len(orig) != len(got) {
			t.Fatalf("length changed: %v -> %v", orig, got)
		}
		rest := without(got, hint)
		o := without(orig, hint)
		if a == PulsarWaitAndWiden {
			if !equalStrings(rest, o) {
				t.Fatalf("keep mode: %v -> %v", orig, got)
			}
			return
		}
		// insert-and-truncate: the others are a prefix of the original order.
		if len(rest) > len(o) || !equalStrings(rest, o[:len(rest)]) {
			t.Fatalf("insert-and-truncate: %v -> %v", orig, got)
		}
	})
}

// With the flag off the hint changes nothing.
func TestPropFlagOffIgnoresHint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, true)
		a := rapid.SampledFrom([]Algorithm{WaitAndWiden, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := genConfig(t, a, false)
		r := genRequest(t)
		seed := rapid.Uint64().Draw(t, "seed")
		d1 := NewEngine(cfg).Decide(s, r, seeded(seed), Options{})
		r2 := *r
		r2.LastClusterID = rapid.SampledFrom([]string{s.Clusters[0].ClusterID, "gone", " "}).Draw(t, "hint")
		d2 := NewEngine(cfg).Decide(s, &r2, seeded(seed), Options{})
		if !same(d1, d2) || d2.Session != SessionNone || !equalStrings(IDs(s, d1.AffinityOrder), IDs(s, d2.AffinityOrder)) {
			t.Fatalf("flag off: %+v vs %+v", d1, d2)
		}
	})
}

// New and stale sessions decide identically.
func TestPropNewEqualsStale(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, true)
		a := rapid.SampledFrom([]Algorithm{WaitAndWiden, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := genConfig(t, a, true)
		r := genRequest(t)
		seed := rapid.Uint64().Draw(t, "seed")
		dn := NewEngine(cfg).Decide(s, r, seeded(seed), Options{})
		r2 := *r
		r2.LastClusterID = "not-a-candidate"
		ds := NewEngine(cfg).Decide(s, &r2, seeded(seed), Options{})
		if !same(dn, ds) || !equalStrings(IDs(s, dn.AffinityOrder), IDs(s, ds.AffinityOrder)) {
			t.Fatalf("new %+v vs stale %+v", dn, ds)
		}
		if dn.Session != SessionNone && (dn.Session != SessionNew || ds.Session != SessionStale) {
			t.Fatalf("states %v %v", dn.Session, ds.Session)
		}
	})
}

// A returning session with k = 1 never dispatches elsewhere before X.
func TestPropReturningK1WaitsForLastCluster(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, false)
		a := rapid.SampledFrom([]Algorithm{WaitAndWiden, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := genConfig(t, a, true)
		cfg.CacheAffinityBackendSelectionCount = 1
		cfg.CacheAffinityWaitMs = rapid.Uint64Range(1, 1000).Draw(t, "x")
		r := genRequest(t)
		r.Elapsed = time.Duration(rapid.Int64Range(0, int64(cfg.CacheAffinityWaitMs)*1e6-1).Draw(t, "elapsed"))
		hint := s.Clusters[rapid.IntRange(0, len(s.Clusters)-1).Draw(t, "hint")].ClusterID
		r.LastClusterID = hint
		if rapid.Bool().Draw(t, "excluded") {
			r.ExcludedClusterIDs = []string{hint}
		}
		d := NewEngine(cfg).Decide(s, r, seeded(5), Options{})
		if d.Session != SessionReturning {
			t.Fatalf("state %v", d.Session)
		}
		if d.Kind == KindSelected && d.ClusterID != hint {
			t.Fatalf("dispatched to %s before the affinity wait (hint %s)", d.ClusterID, hint)
		}
	})
}

// Two engines with the same seed, config and snapshot choose the same.
func TestPropDeterministicEngines(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, true)
		a := rapid.SampledFrom(Algorithms[:]).Draw(t, "alg")
		cfg := genConfig(t, a, false)
		if a == WaitAndWiden || a == PulsarWaitAndWiden {
			cfg.LastClusterAffinity = rapid.Bool().Draw(t, "sessions")
		}
		r := genRequest(t)
		r.LastClusterID = rapid.SampledFrom([]string{"", s.Clusters[0].ClusterID, "gone"}).Draw(t, "hint")
		seed := rapid.Uint64().Draw(t, "seed")
		e1, e2 := NewEngine(cfg), NewEngine(cfg)
		for i := 0; i < 3; i++ {
			d1 := e1.Decide(s, r, seeded(seed+uint64(i)), Options{})
			d2 := e2.Decide(s, r, seeded(seed+uint64(i)), Options{})
			if !same(d1, d2) || d1.Session != d2.Session || d1.Promoted != d2.Promoted {
				t.Fatalf("engines disagree: %+v vs %+v", d1, d2)
			}
		}
	})
}

// The chosen cluster is always in the computed choice set, and the
// probabilities sum to 1.
func TestPropChoiceInSupport(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t, true)
		a := rapid.SampledFrom(Algorithms[:]).Draw(t, "alg")
		cfg := genConfig(t, a, true && (a == WaitAndWiden || a == PulsarWaitAndWiden))
		r := genRequest(t)
		d := NewEngine(cfg).Decide(s, r, seeded(rapid.Uint64().Draw(t, "seed")), Options{Probabilities: true, Trace: true})
		if d.Kind != KindSelected {
			return
		}
		sum, found := 0.0, false
		for _, c := range d.Choices {
			sum += c.P
			found = found || c.Cluster == d.Cluster
		}
		if !found || math.Abs(sum-1) > 1e-9 {
			t.Fatalf("choice %s not in %v (sum %v)", d.ClusterID, d.Choices, sum)
		}
	})
}

// The analytic probabilities match the sampling frequencies (a
// statistical check with a fixed seed; tolerance 0.02 on 20000 draws).
func TestProbabilitiesMatchSampling(t *testing.T) {
	cases := []struct {
		name string
		cfg  *AlgorithmConfig
		snap *Snapshot
	}{
		{"ww ties", cfgOf(WaitAndWiden, withN(2), withCmp(CompareUtilization)),
			snapOf(cl("a", load(0, 4)), cl("b", load(0, 4)), cl("c", load(1, 4)), cl("d", load(2, 4)))},
		{"power-of-n 3 of 5", cfgOf(PowerOfN, func(c *AlgorithmConfig) { c.SampleCount = 3 }),
			snapOf(cl("a", queued(5)), cl("b", queued(5)), cl("c", queued(1)), cl("d", queued(9)), cl("e", queued(9)))},
		// Intransitive pww comparator: equal queues, mixed unknown limits.
		{"pww intransitive", cfgOf(PulsarWaitAndWiden, withN(2), withBand(0), withMaxQueued(10), withFallbackQueued(10)),
			snapOf(cl("a", maxTPS(100), load(5, 0)), cl("b", maxTPS(100), load(1, 10)), cl("c", maxTPS(100), load(9, 100)))},
	}
	for _, tc := range cases {
		e := NewEngine(tc.cfg)
		r := rq(key("k"))
		d := e.Decide(tc.snap, r, seeded(1), Options{Probabilities: true}).Clone()
		want := map[string]float64{}
		for _, c := range d.Choices {
			want[c.ClusterID] = c.P
		}
		got := map[string]float64{}
		rng := seeded(99)
		const draws = 20000
		for i := 0; i < draws; i++ {
			got[e.Decide(tc.snap, r, rng, Options{}).ClusterID]++
		}
		for id, n := range got {
			if math.Abs(n/draws-want[id]) > 0.02 {
				t.Errorf("%s: %s frequency %v, probability %v", tc.name, id, n/draws, want[id])
			}
		}
		for id, p := range want {
			if p > 0.05 && got[id] == 0 {
				t.Errorf("%s: %s never drawn (p=%v)", tc.name, id, p)
			}
		}
		if !d.ChoicesExact {
			t.Errorf("%s: probabilities not exact", tc.name)
		}
	}
}

// Engine caches (Pulsar ranking, ring) never change a decision: a long-lived
// engine fed changing snapshots and keys decides exactly like a fresh one.
func TestPropCachesAreTransparent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SampledFrom([]Algorithm{Pulsar, PulsarWaitAndWiden, WaitAndWiden}).Draw(t, "alg")
		cfg := genConfig(t, a, false)
		long := NewEngine(cfg)
		s := genSnapshot(t, true)
		for step := 0; step < 6; step++ {
			if rapid.Bool().Draw(t, "mutate") {
				i := rapid.IntRange(0, len(s.Clusters)-1).Draw(t, "i")
				s.Clusters[i].Stats.MaxInputTPS = rapid.SampledFrom([]float64{0, 1, 100, 400}).Draw(t, "w")
			}
			if rapid.Bool().Draw(t, "swap") && len(s.Clusters) > 1 {
				s.Clusters[0], s.Clusters[1] = s.Clusters[1], s.Clusters[0]
			}
			r := rq(key(rapid.SampledFrom([]string{"k1", "k2", "k3"}).Draw(t, "key")))
			r.RoutingKey = rapid.SampledFrom([]string{"rk-1", "rk-2"}).Draw(t, "rk")
			d1 := long.Decide(s, r, seeded(uint64(step)), Options{})
			d2 := NewEngine(cfg).Decide(s, r, seeded(uint64(step)), Options{})
			if !same(d1, d2) || d1.Ambiguous != d2.Ambiguous || !equalStrings(IDs(s, d1.AffinityOrder), IDs(s, d2.AffinityOrder)) {
				t.Fatalf("step %d: cached %+v vs fresh %+v", step, IDs(s, d1.AffinityOrder), IDs(s, d2.AffinityOrder))
			}
		}
	})
}

// The ranking cache grows under many keys (256 → … → 32,768 entries),
// evicts the oldest key first once full, and stays transparent: a
// long-lived engine cycling through 40,000 keys decides like fresh
// engines, and exactly the most recent 32,768 keys are cached.
func TestRankCacheGrowsTransparently(t *testing.T) {
	snap := genSnapshotFixed()
	for _, a := range []Algorithm{Pulsar, PulsarWaitAndWiden} {
		cfg := cfgOf(a, withSeed("grow"))
		long := NewEngine(cfg)
		keys := make([]string, 40000)
		for i := range keys {
			keys[i] = fmt.Sprintf("session-%d", i)
		}
		for pass := 0; pass < 2; pass++ {
			for i, k := range keys {
				r := rq(key(k), input(100))
				d1 := long.Decide(snap, r, seeded(uint64(i)), Options{})
				if i%97 == 0 {
					d2 := NewEngine(cfg).Decide(snap, r, seeded(uint64(i)), Options{})
					if !same(d1, d2) || !equalStrings(IDs(snap, d1.AffinityOrder), IDs(snap, d2.AffinityOrder)) {
						t.Fatalf("%s pass %d key %s: cached %v vs fresh %v", a, pass, k, IDs(snap, d1.AffinityOrder), IDs(snap, d2.AffinityOrder))
					}
				}
			}
		}
		if n := len(long.rankCache.entries); n != maxRankCacheEntries {
			t.Fatalf("%s: cache holds %d keys, want %d after 80,000 keyed decisions", a, n, maxRankCacheEntries)
		}
		cached := func(k string) bool {
			rv := long.view(rq(key(k)))
			_, ok := long.rankCache.lookup(long.rankSet.gen, new(rankTargetMemo).keyHash(&rv), &rv)
			return ok
		}
		for i, k := range keys {
			if want := i >= len(keys)-maxRankCacheEntries; cached(k) != want {
				t.Fatalf("%s: key %d of %d cached = %v, want %v (oldest first out)", a, i, len(keys), !want, want)
			}
		}
	}
}

func genSnapshotFixed() *Snapshot {
	var cs []Cluster
	for i := 0; i < 8; i++ {
		cs = append(cs, cl(fmt.Sprintf("c%d", i), maxTPS(float64(100+50*i)), load(uint64(i%3), 4)))
	}
	return snapOf(cs...)
}
