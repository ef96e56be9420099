package lb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"
)

// referenceRanking is pulsar.md §4 written as plainly as possible: every
// candidate's hash, u, −ln u (Ln) and score, a stable sort by score
// descending then cluster id ascending, and the near-tie flag over every
// adjacent pair. The engine's ranking (cached, or computed by whatever
// shortcut) must equal it.
func referenceRanking(seed string, snap *Snapshot, mode RendezvousWeight, rv *reqView) ([]string, bool) {
	type scored struct {
		id    string
		score float64
	}
	var s []scored
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		w, ok := pulsarWeight(mode, &c.Stats)
		if !ok {
			continue
		}
		e := -Ln(PulsarUnit(PulsarHash(seed, rv.routingKey, rv.model, rv.key, c.ClusterID)))
		if !(e > 0) || math.IsInf(e, 0) {
			continue
		}
		s = append(s, scored{c.ClusterID, w / e})
	}
	slices.SortStableFunc(s, func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	ids := make([]string, len(s))
	amb := false
	for i := range s {
		ids[i] = s[i].id
		if i > 0 && nearTie(s[i-1].score, s[i].score) {
			amb = true
		}
	}
	return ids, amb
}

// genWideSnapshot draws 1–300 clusters with weights from a small set (so
// many are equal), some invalid, some huge (scores of +Inf tie and go by
// cluster id), and ids of mixed lengths that share prefixes.
func genWideSnapshot(t *rapid.T) *Snapshot {
	return genSnapshotOf(t, rapid.IntRange(1, 300).Draw(t, "n"))
}

// genSnapshotOf is genWideSnapshot with n clusters.
func genSnapshotOf(t *rapid.T, n int) *Snapshot {
	weights := []float64{100, 100, 400, 1, 3.5e4, 0, math.Inf(1), math.MaxFloat64, 1e300, 5e-324}
	prefix := rapid.SampledFrom([]string{"", "c", "cluster-", "us-east-1/"}).Draw(t, "prefix")
	cs := make([]Cluster, n)
	for i := range cs {
		cs[i] = cl(fmt.Sprintf("%s%d", prefix, i), maxTPS(rapid.SampledFrom(weights).Draw(t, "w")))
		cs[i].Stats.LastMeanInputTPS = rapid.SampledFrom(weights).Draw(t, "mean")
	}
	return snapOf(cs...)
}

// The engine's Pulsar ranking (both algorithms, cache cold and warm, trace
// on and off) is the reference ranking, order and near-tie flag, on random
// snapshots of 1–300 clusters.
func TestPropRankingMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := genWideSnapshot(t)
		a := rapid.SampledFrom([]Algorithm{Pulsar, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := cfgOf(a, withSeed(rapid.SampledFrom([]string{"", "s1", "model-a-v1"}).Draw(t, "seed")))
		cfg.RendezvousWeight = rapid.SampledFrom([]RendezvousWeight{WeightMaxInputTPS, WeightLastMeanInputTPS}).Draw(t, "mode")
		e := NewEngine(cfg)
		keys := rapid.SliceOfN(rapid.SampledFrom([]string{"", "k1", "session-6", "prefix-123", strings.Repeat("x", 300)}), 1, 6).Draw(t, "keys")
		for i, k := range keys {
			r := rq(key(k))
			r.RoutingKey = rapid.SampledFrom([]string{"", "rk-1"}).Draw(t, "rk")
			rv := e.view(r)
			want, wantAmb := referenceRanking(cfg.Seed, snap, cfg.RendezvousWeight, &rv)
			trace := rapid.Bool().Draw(t, "trace")
			d := e.Decide(snap, r, seeded(uint64(i)), Options{Trace: trace})
			if got := IDs(snap, d.OriginalOrder); !slices.Equal(got, want) || d.Ambiguous != wantAmb {
				t.Fatalf("key %q (decision %d, trace %v): ranking %v ambiguous %v, want %v ambiguous %v", k, i, trace, got, d.Ambiguous, want, wantAmb)
			}
		}
	})
}

// A long-lived engine serving many keys (cache hits, evictions, candidate
// set changes) decides exactly as a fresh engine per decision.
func TestPropRankCachePerKey(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := genWideSnapshot(t)
		a := rapid.SampledFrom([]Algorithm{Pulsar, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := cfgOf(a, withSeed("s1"))
		long := NewEngine(cfg)
		for step := 0; step < 40; step++ {
			if rapid.IntRange(0, 9).Draw(t, "change") == 0 {
				i := rapid.IntRange(0, len(snap.Clusters)-1).Draw(t, "i")
				snap.Clusters[i].Stats.MaxInputTPS = rapid.SampledFrom([]float64{0, 1, 100, 400}).Draw(t, "w")
			}
			r := rq(key(fmt.Sprintf("session-%d", rapid.IntRange(0, 30).Draw(t, "key"))), input(100))
			d1 := long.Decide(snap, r, seeded(uint64(step)), Options{})
			d2 := NewEngine(cfg).Decide(snap, r, seeded(uint64(step)), Options{})
			if !same(d1, d2) || d1.Ambiguous != d2.Ambiguous || !slices.Equal(d1.AffinityOrder, d2.AffinityOrder) {
				t.Fatalf("step %d: cached %v vs fresh %v", step, IDs(snap, d1.AffinityOrder), IDs(snap, d2.AffinityOrder))
			}
		}
	})
}

// Eviction keeps the index consistent: after more inserts than the cache
// holds, with colliding hashes, every key still cached is found with its own ranking, and every
// evicted key misses.
func TestRankCacheEvictionKeepsIndex(t *testing.T) {
	var c rankCache
	ranked := make([]rankEntry, 3)
	const n = 40000
	for i := 0; i < n; i++ {
		rv := reqView{key: fmt.Sprintf("k%d", i), model: "m"}
		for j := range ranked {
			ranked[j].idx = (i + j) % 3
		}
		rs := rankState{total: 3, tie: noTie}
		if i%2 == 0 {
			rs.tie = 1
		}
		c.store(1, 3, new(rankTargetMemo).keyHash(&rv)&0xfffff, &rv, ranked, &rs, -1) // colliding hashes: long probe runs
	}
	if len(c.entries) != maxRankCacheEntries {
		t.Fatalf("%d entries, want %d", len(c.entries), maxRankCacheEntries)
	}
	for i := 0; i < n; i++ {
		rv := reqView{key: fmt.Sprintf("k%d", i), model: "m"}
		id, ok := c.lookup(1, new(rankTargetMemo).keyHash(&rv)&0xfffff, &rv)
		if want := i >= n-len(c.entries); ok != want {
			t.Fatalf("key %d: cached %v, want %v (%d entries)", i, ok, want, len(c.entries))
		}
		if ok && (c.ranks(id)[0] != uint16(i%3) || (c.entries[id].tie() == 1) != (i%2 == 0) || c.entries[id].total() != 3 || c.entries[id].validAll()) {
			t.Fatalf("key %d: ranking %v near-tie at %d, %d ranked", i, c.ranks(id), c.entries[id].tie(), c.entries[id].total())
		}
	}
}

// Entries are told apart by their routing target (routing key, model)
// as well as their key: one key under many targets, with equal strings
// in other memory and colliding hashes, hits only its own target's
// ranking; past maxRankTargets targets the cache empties and then holds
// the new targets' rankings; rankings longer than an entry's own line
// (headRanks) come back whole from its slot.
func TestRankCacheRoutingTargets(t *testing.T) {
	var c rankCache
	const n = 40 // candidates
	view := func(target int) reqView {
		// Fresh strings each time: the cache may not rely on their address.
		return reqView{key: strings.Clone("k"), routingKey: fmt.Sprintf("rk-%d", target/3), model: fmt.Sprintf("m-%d", target%3)}
	}
	ranking := func(target int) []rankEntry {
		r := make([]rankEntry, 1+target%(2*headRanks))
		for j := range r {
			r[j].idx = (target + j) % n
		}
		return r
	}
	check := func(target int, want bool) {
		t.Helper()
		rv := view(target)
		id, ok := c.lookup(1, 7, &rv)
		if ok != want {
			t.Fatalf("target %d: cached %v, want %v", target, ok, want)
		}
		if !ok {
			return
		}
		var got []int
		for _, i := range c.ranks(id) {
			got = append(got, int(i))
		}
		var exp []int
		for _, r := range ranking(target) {
			exp = append(exp, r.idx)
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("target %d: ranks %v, want %v", target, got, exp)
		}
	}
	for target := 0; target < maxRankTargets; target++ {
		rv := view(target)
		r := ranking(target)
		c.store(1, n, 7, &rv, r, &rankState{total: n, tie: noTie, validAll: true}, -1)
	}
	for target := maxRankTargets - 200; target < maxRankTargets; target++ {
		check(target, true)
	}
	check(maxRankTargets, false)
	rv := view(maxRankTargets) // one target too many: the cache empties
	c.store(1, n, 7, &rv, ranking(maxRankTargets), &rankState{total: n, tie: noTie, validAll: true}, -1)
	check(maxRankTargets, true)
	check(maxRankTargets-1, false)
	check(0, false)
	if len(c.targets) != 1 || len(c.entries) != 1 {
		t.Fatalf("%d targets, %d entries after the overflow, want 1 and 1", len(c.targets), len(c.entries))
	}
}

// approxNegLn stays within a tenth of negLnBound of −Ln(u) over random unit
// values, values next to 1 (where −ln u is tiny), the smallest u, and both
// sides of every table subinterval boundary at many exponents; and Ln is
// negative for every u < 1 tried (so only u = 1 leaves the ranking).
func TestApproxNegLnWithinBound(t *testing.T) {
	check := func(u float64) {
		t.Helper()
		if !(u > 0 && u < 1) {
			return
		}
		exact := -Ln(u)
		if !(exact > 0) || math.IsInf(exact, 0) {
			t.Fatalf("−Ln(%v) = %v, want finite and > 0", u, exact)
		}
		if d := math.Abs(approxNegLn(u) - exact); !(d <= negLnBound/10) {
			t.Fatalf("u = %v (%#x): approximation off by %g", u, math.Float64bits(u), d)
		}
	}
	rng := rand.New(rand.NewPCG(3, 7))
	for i := 0; i < 200_000; i++ {
		check(PulsarUnit(rng.Uint64()))
	}
	for k := 1; k <= 4096; k++ {
		check(1 - float64(k)*0x1p-53)
		check(PulsarUnit(uint64(k)))
		check(PulsarUnit(math.MaxUint64 - uint64(k)*1024))
	}
	for exp := -1; exp >= -64; exp-- {
		for i := 0; i <= 128; i++ {
			x := math.Ldexp(1+float64(i)/128, exp)
			check(x)
			check(math.Nextafter(x, 0))
			check(math.Nextafter(x, 1))
		}
	}
}

// orderByBounds gives the exact order and near-tie rank, and the groups
// cut inside the p smallest keys a prefix of them, on crafted scores
// that the bounds cannot separate: equal weights with adjacent u (scores
// within an ulp or equal: ties go by cluster id), +Inf scores, subnormal
// weights, u next to 1, mixed with ordinary candidates.
func TestOrderByBoundsMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.IntN(40)
		cs := make([]Cluster, n)
		cands := make([]rankEntry, n)
		for i := range cs {
			cs[i] = cl(fmt.Sprintf("c%02d", rng.IntN(1000)*100+i))
			u := PulsarUnit(rng.Uint64())
			switch rng.IntN(6) {
			case 0: // next to an earlier candidate's u
				if i > 0 {
					u = math.Nextafter(cands[rng.IntN(i)].u, float64(rng.IntN(2)))
				}
			case 1:
				u = 1 - float64(1+rng.IntN(8))*0x1p-53
			case 2:
				if i > 0 {
					u = cands[rng.IntN(i)].u
				}
			}
			if !(u < 1) {
				u = 0.5
			}
			w := []float64{100, 100, 400, math.MaxFloat64, 1e300, 5e-324, 1e-310, 3}[rng.IntN(8)]
			cands[i] = rankEntry{idx: i, u: u, weight: w}
		}
		snap := snapOf(cs...)
		exact := slices.Clone(cands)
		for i := range exact {
			exact[i].score = exact[i].weight / -Ln(exact[i].u)
			exact[i].key = totalKey(exact[i].score)
		}
		wantTie, gotTie := noTie, noTie
		want := slices.Clone(NewEngine(cfgOf(Pulsar)).orderExact(snap, exact, &wantTie))
		e := NewEngine(cfgOf(Pulsar))
		got := e.orderByBounds(snap, slices.Clone(cands), &gotTie)
		for i := range want {
			if got[i].idx != want[i].idx {
				t.Fatalf("round %d: position %d is candidate %d, want %d", round, i, got[i].idx, want[i].idx)
			}
		}
		if len(got) != len(want) || wantTie != gotTie {
			t.Fatalf("round %d: %d entries near-tie at %d, want %d near-tie at %d", round, len(got), gotTie, len(want), wantTie)
		}
		// Prefixes: the groups that end inside the p smallest keys.
		for p := 1; p <= n; p++ {
			c := slices.Clone(cands)
			lo, hi, keys := e.boundKeys(c)
			tie := noTie
			pre := e.cutGroups(snap, c, lo, hi, e.topKeys(keys, p), p == n, nil, &tie)
			if len(pre) > p || p == n && len(pre) != n {
				t.Fatalf("round %d: prefix of %d keys gives %d ranks", round, p, len(pre))
			}
			for i := range pre {
				if pre[i].idx != want[i].idx {
					t.Fatalf("round %d, prefix of %d: position %d is candidate %d, want %d", round, p, i, pre[i].idx, want[i].idx)
				}
			}
			if wt := wantTie; (wt < len(pre)) != (tie < len(pre)) || tie < len(pre) && tie != wt {
				t.Fatalf("round %d, prefix of %d (%d ranks): near-tie at %d, want %d", round, p, len(pre), tie, wt)
			}
		}
	}
}

// sortRankKeys sorts like slices.Sort: random keys, float bit patterns of
// skewed scores, duplicates, one outlier stretching the range, all equal.
func TestSortRankKeysMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 7))
	var e Engine
	for round := 0; round < 3000; round++ {
		n := rng.IntN(700)
		keys := make([]uint64, n)
		kind := round % 5
		for i := range keys {
			switch kind {
			case 0:
				keys[i] = rng.Uint64()
			case 1:
				keys[i] = ^(totalKey(100/-Ln(PulsarUnit(rng.Uint64()))) | 0xffff) | uint64(i)
			case 2:
				keys[i] = uint64(rng.IntN(5))
			case 3:
				keys[i] = 1<<40 + uint64(rng.IntN(1000))
				if i == 0 {
					keys[i] = math.MaxUint64
				}
			default:
				keys[i] = 42
			}
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		e.sortRankKeys(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("round %d (kind %d, %d keys): not sorted like slices.Sort", round, kind, n)
		}
	}
}

// windowHash.sum is xxh3.Hash for every length from 17 to 240 bytes (the
// others are left to xxh3.Hash) and every split of it into shared bytes
// (given to init) and bytes that differ, whatever follows them.
func TestWindowHashMatchesXXH3(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 7))
	var w windowHash
	buf, other := make([]byte, 300), make([]byte, 300)
	for round := 0; round < 3; round++ {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		for l := 0; l <= len(buf); l++ {
			for c := 0; c <= l; c++ {
				copy(other, buf[:c])
				for i := c; i < l; i++ {
					other[i] = byte(rng.Uint32())
				}
				w.init(buf, c, l, nil)
				if w.kind == hashOther {
					if l > 16 && l <= 240 {
						t.Fatalf("length %d: no window layout", l)
					}
					continue
				}
				tail := append(slices.Clone(other[c:l]), byte(rng.Uint32()), 1, 2, 3, 4, 5, 6, 7) // any bytes past the end
				if got, want := w.sum(tail), xxh3.Hash(other[:l]); got != want {
					t.Fatalf("length %d, shared %d: %#x, want %#x", l, c, got, want)
				}
			}
		}
	}
}

// candidateHasher.sumAll is PulsarHash for prefixes and cluster ids of
// every length class (ids past idHashClasses too), in runs of one length
// and mixed, and 0 for candidates without a valid weight.
func TestCandidateHasherMatchesPulsarHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 7))
	str := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	var h candidateHasher
	var set rankCandidateSet
	hashes := make([]uint64, 40)
	for round := 0; round < 400; round++ {
		seed, rk, model, key := str(rng.IntN(20)), str(rng.IntN(12)), str(rng.IntN(16)), str(rng.IntN(90))
		prefix := AppendTagged(AppendHashPrefix(nil, seed, rk, model), "cache_affinity_key", key)
		cs := make([]Cluster, len(hashes))
		n := 1 + rng.IntN(idHashClasses+20)
		for i := range cs {
			if rng.IntN(3) == 0 { // mostly runs of one length, as real ids
				n = 1 + rng.IntN(idHashClasses+20)
			}
			cs[i] = cl(str(n), maxTPS(float64(rng.IntN(2))))
		}
		set.update(snapOf(cs...), WeightMaxInputTPS)
		h.reset(prefix)
		cut := rng.Uint64()
		sel := make([]int32, len(hashes))
		k := h.sumAll(&set, hashes, cut, sel)
		var want []int32
		for i, x := range hashes {
			if x >= cut {
				want = append(want, int32(i))
			}
		}
		if !slices.Equal(sel[:k], want) {
			t.Fatalf("round %d: listed %v at or above the cut, want %v", round, sel[:k], want)
		}
		for i, c := range cs {
			want := uint64(0)
			if c.Stats.MaxInputTPS > 0 {
				want = PulsarHash(seed, rk, model, key, c.ClusterID)
			}
			if hashes[i] != want {
				t.Fatalf("round %d: id of %d bytes after a %d-byte prefix: %#x, want %#x", round, len(c.ClusterID), len(prefix), hashes[i], want)
			}
		}
	}
}

// PulsarUnit equals pulsar.md §4.3's formula evaluated literally.
func TestPulsarUnitMatchesFormula(t *testing.T) {
	formula := func(h uint64) float64 {
		return (float64(h) + 1.0) / (float64(uint64(math.MaxUint64)) + 2.0)
	}
	check := func(h uint64) {
		t.Helper()
		if got, want := PulsarUnit(h), formula(h); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("PulsarUnit(%#x) = %v, want %v", h, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(13, 7))
	for i := 0; i < 200_000; i++ {
		check(rng.Uint64())
	}
	for _, base := range []uint64{0, 1 << 32, 1 << 53, 1 << 54, 1 << 63, math.MaxUint64 - 1<<11} {
		for d := uint64(0); d < 4096; d++ {
			check(base + d)
			check(base - d)
		}
	}
}

// genLoadedPulsar loads snap's clusters (concurrency limits, running
// queries, KV free tokens) and draws a Pulsar algorithm and its config,
// sessions and KV gating on or off.
func genLoadedPulsar(t *rapid.T, snap *Snapshot) (Algorithm, *AlgorithmConfig) {
	for i := range snap.Clusters {
		st := &snap.Clusters[i].Stats
		st.MaxEngineConcurrency = rapid.Uint64Range(0, 2).Draw(t, "limit")
		st.NumRunningQueries = rapid.Uint64Range(0, 3).Draw(t, "running")
		st.KVCacheCapacityTokens, st.KVCacheFreeTokens = 1024, rapid.SampledFrom([]uint64{0, 50, 1024}).Draw(t, "kvfree")
	}
	a := rapid.SampledFrom([]Algorithm{Pulsar, PulsarWaitAndWiden}).Draw(t, "alg")
	cfg := genConfig(t, a, rapid.Bool().Draw(t, "sessions"))
	cfg.ConsiderKVFreeTokens = rapid.Bool().Draw(t, "kv")
	return a, cfg
}

// A decision with the cache and the bracketed ranking equals one with the
// trace on (every score computed exactly, nothing cached) on random
// snapshots of 1–300 loaded clusters, with sessions, bands and waits.
func TestPropFastRankingDecidesAsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := genWideSnapshot(t)
		_, cfg := genLoadedPulsar(t, snap)
		fast, exact := NewEngine(cfg), NewEngine(cfg)
		for step := 0; step < 5; step++ {
			r := genRequest(t)
			if rapid.Bool().Draw(t, "hint") {
				r.LastClusterID = snap.Clusters[rapid.IntRange(0, len(snap.Clusters)-1).Draw(t, "last")].ClusterID
			}
			d1 := fast.Decide(snap, r, seeded(uint64(step)), Options{})
			d2 := exact.Decide(snap, r, seeded(uint64(step)), Options{Trace: true})
			if !same(d1, d2) || d1.Ambiguous != d2.Ambiguous || d1.Session != d2.Session || !slices.Equal(d1.AffinityOrder, d2.AffinityOrder) || !slices.Equal(d1.OpenSet, d2.OpenSet) {
				brief := func(d Decision) string {
					return fmt.Sprintf("%v %s depth %d wait %v reason %v ambiguous %v session %v order %v", d.Kind, d.ClusterID, d.RankDepth,
						d.Wait, d.Reason, d.Ambiguous, d.Session, IDs(snap, d.AffinityOrder[:min(8, len(d.AffinityOrder))]))
				}
				t.Fatalf("step %d: fast %s\nexact %s (or the order or open set past rank 8 differs)", step, brief(d1), brief(d2))
			}
		}
	})
}

// rankCacheEntry's packed fields read back as set, at their limits too.
func TestRankCacheEntryMeta(t *testing.T) {
	var e rankCacheEntry
	for _, c := range []struct {
		stored, total, tie int
		valid              bool
	}{{0, 0, noTie, false}, {1, 1, noTie, true}, {8, 256, 3, true}, {65536, 65536, 65535, false}, {65536, 65536, noTie, true}, {4, 9, 4, true}} {
		e.setMeta(c.stored, c.total, c.tie, c.valid)
		wantTie := c.tie
		if wantTie >= c.stored {
			wantTie = noTie
		}
		if e.stored() != c.stored || e.total() != c.total || e.tie() != wantTie || e.validAll() != c.valid {
			t.Fatalf("%+v: got %d %d %d %v", c, e.stored(), e.total(), e.tie(), e.validAll())
		}
	}
	if s := unsafe.Sizeof(rankCacheEntry{}); s != 64 {
		t.Fatalf("rankCacheEntry is %d bytes, want one 64-byte line", s)
	}
}

// A caller that keeps Snapshot.Version's promise gets the decisions of one
// that does not set it: an engine given the versioned snapshot (a new
// Version whenever ids, order, statuses or weights change; none for load)
// decides like one given the same snapshot with Version 0, through load
// changes, weight and status changes, reordering, removals and resets.
func TestPropSnapshotVersionIsTransparent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.SampledFrom([]Algorithm{Pulsar, PulsarWaitAndWiden}).Draw(t, "alg")
		cfg := genConfig(t, a, rapid.Bool().Draw(t, "sessions"))
		versioned, plain := NewEngine(cfg), NewEngine(cfg)
		s := genSnapshotOf(t, rapid.SampledFrom([]int{1, 3, 8, 24, 40}).Draw(t, "n"))
		ver := uint64(1)
		for step := 0; step < 16; step++ {
			i := rapid.IntRange(0, len(s.Clusters)-1).Draw(t, "i")
			c := &s.Clusters[i]
			switch rapid.IntRange(0, 6).Draw(t, "change") {
			case 0: // live load: the same Version
				c.Stats.NumRunningQueries = rapid.Uint64Range(0, 4).Draw(t, "running")
				c.Stats.QueuedInputSize = rapid.SampledFrom([]uint64{0, 100, 5000}).Draw(t, "queued")
			case 1:
				c.Stats.MaxInputTPS = rapid.SampledFrom([]float64{0, 1, 100, 400}).Draw(t, "max")
				c.Stats.LastMeanInputTPS = rapid.SampledFrom([]float64{0, 100, 5000}).Draw(t, "tps")
				ver++
			case 2:
				c.Status = rapid.SampledFrom([]Status{StatusActive, StatusInactive}).Draw(t, "status")
				ver++
			case 3:
				j := rapid.IntRange(0, len(s.Clusters)-1).Draw(t, "j")
				s.Clusters[i], s.Clusters[j] = s.Clusters[j], s.Clusters[i]
				ver++
			case 4:
				if len(s.Clusters) > 1 {
					s.Clusters = append(s.Clusters[:i], s.Clusters[i+1:]...)
					ver++
				}
			case 5:
				versioned.ResetState()
				plain.ResetState()
			}
			r := rq(key(rapid.SampledFrom([]string{"k1", "k2", "session-6"}).Draw(t, "key")),
				at(rapid.SampledFrom([]float64{0, 120, 301, 5000}).Draw(t, "elapsed")))
			if rapid.Bool().Draw(t, "hint") {
				r.LastClusterID = s.Clusters[rapid.IntRange(0, len(s.Clusters)-1).Draw(t, "last")].ClusterID
			}
			opt := Options{PartialOrder: rapid.Bool().Draw(t, "partial")}
			s.Version = ver
			st1 := versioned.Step(s, r, seeded(uint64(step)), opt)
			d1 := st1.Decision.Clone()
			s.Version = 0
			st2 := plain.Step(s, r, seeded(uint64(step)), opt)
			d2 := st2.Decision
			if st1.Outcome != st2.Outcome || !same(d1, d2) || d1.Ambiguous != d2.Ambiguous ||
				!equalStrings(IDs(s, d1.AffinityOrder), IDs(s, d2.AffinityOrder)) || !equalStrings(IDs(s, d1.OpenSet), IDs(s, d2.OpenSet)) {
				t.Fatalf("step %d (version %d): versioned %v %s %v vs plain %v %s %v", step, ver,
					st1.Outcome, d1.ClusterID, IDs(s, d1.AffinityOrder), st2.Outcome, d2.ClusterID, IDs(s, d2.AffinityOrder))
			}
		}
	})
}

// With a Version it has seen, the engine takes the caller's word and does
// not compare the candidate set: a weight changed without a new Version
// keeps the cached ranking, which Version 0 (or a new Version) replaces.
func TestSnapshotVersionSkipsTheCheck(t *testing.T) {
	s := snapOf(cl("a", maxTPS(100)), cl("b", maxTPS(100)), cl("c", maxTPS(100)))
	s.Version = 7
	e := NewEngine(cfgOf(Pulsar, withSeed("v")))
	r := rq(key("k"))
	first := IDs(s, e.Decide(s, r, nil, Options{}).AffinityOrder)
	e.Decide(s, r, nil, Options{}) // the set now describes s: Version 7 is recorded
	// Make the last-ranked cluster the heaviest by far: it ranks first
	// in any fresh ranking of this key.
	w := s.Index(first[len(first)-1])
	s.Clusters[w].Stats.MaxInputTPS = 1e9
	if got := IDs(s, e.Decide(s, r, nil, Options{}).AffinityOrder); !equalStrings(got, first) {
		t.Fatalf("same Version: order %v, want the cached %v", got, first)
	}
	s.Version = 8
	if got := IDs(s, e.Decide(s, r, nil, Options{}).AffinityOrder); got[0] != s.Clusters[w].ClusterID {
		t.Fatalf("new Version: order %v, want %s first", got, s.Clusters[w].ClusterID)
	}
	s.Version = 0
	if got := IDs(s, e.Decide(s, r, nil, Options{}).AffinityOrder); got[0] != s.Clusters[w].ClusterID {
		t.Fatalf("Version 0: order %v, want %s first", got, s.Clusters[w].ClusterID)
	}
}

// Short ids (the simulator's c0 … c299, three lengths) and longer ones
// (cluster-0 …), with some invalid weights cutting the runs, after
// prefixes of every length from 60 to 260 bytes hash as PulsarHash: this
// takes every class path of sumAll, the long path with one varying window
// a round (sumRunLong1) and its one-word form (sumRunWord) among them.
func TestCandidateHasherShortIDs(t *testing.T) {
	paths := map[string]int{}
	for _, name := range []string{"c", "cluster-"} {
		cs := make([]Cluster, 300)
		for i := range cs {
			w := 1000.0
			if i%41 == 7 || i == 299 {
				w = 0
			}
			cs[i] = cl(name+strconv.Itoa(i), maxTPS(w))
		}
		var set rankCandidateSet
		set.update(snapOf(cs...), WeightMaxInputTPS)
		var h candidateHasher
		hashes, sel := make([]uint64, len(cs)), make([]int32, len(cs))
		for pad := 0; pad <= 200; pad++ {
			key := strings.Repeat("k", pad)
			prefix := AppendTagged(AppendHashPrefix(nil, "s", "rk", "m"), "cache_affinity_key", key)
			h.reset(prefix)
			for n := len(name) + 1; n <= len(name)+3; n++ {
				switch w := h.class(n); {
				case w.word:
					paths["word"]++
				case w.kind == hashLong && w.nv == 1 && w.nv2 == 1:
					paths["long1"]++
				default:
					paths["other"]++
				}
			}
			cut := uint64(pad) << 56
			k := h.sumAll(&set, hashes, cut, sel)
			var want []int32
			for i, c := range cs {
				x := uint64(0)
				if c.Stats.MaxInputTPS > 0 {
					x = PulsarHash("s", "rk", "m", key, c.ClusterID)
				}
				if hashes[i] != x {
					t.Fatalf("key of %d bytes, id %s: %#x, want %#x", pad, c.ClusterID, hashes[i], x)
				}
				if c.Stats.MaxInputTPS > 0 && x >= cut {
					want = append(want, int32(i)) // invalid weights are never listed
				}
			}
			if !slices.Equal(sel[:k], want) {
				t.Fatalf("ids %s…, key of %d bytes: listed %v at or above the cut, want %v", name, pad, sel[:k], want)
			}
		}
	}
	if paths["word"] == 0 || paths["long1"] == 0 || paths["other"] == 0 {
		t.Fatalf("paths taken %v: want the one-word and one-window long paths and others", paths)
	}
}

// sumRunWord (in assembly on amd64) gives sumRunWordGo's hashes, listed
// candidates and count for random constants, id lengths, offsets, cuts
// and run lengths (0 to 40 ids).
func TestSumRunWordMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	for round := 0; round < 2000; round++ {
		var w windowHash
		w.word = true
		w.acc, w.acc2 = rng.Uint64(), rng.Uint64()
		word := func() varyingWord {
			return varyingWord{other: rng.Uint64(), fixed: rng.Uint64(), mul: 1 << rng.IntN(64), at: uint8(rng.IntN(56))}
		}
		w.w1, w.w2 = word(), word()
		n, count := 1+rng.IntN(20), rng.IntN(41)
		ids := make([]byte, count*n+idPad)
		for i := range ids {
			ids[i] = byte(rng.Uint32())
		}
		k, first := rng.IntN(5), int32(rng.IntN(1000))
		cut := rng.Uint64()
		if round%4 == 0 {
			cut = 0
		}
		out, want := make([]uint64, count), make([]uint64, count)
		sel, wantSel := make([]int32, k+count), make([]int32, k+count)
		got := sumRunWord(&w, ids, n, out, first, sel, k, cut)
		exp := sumRunWordGo(&w, ids, n, want, first, wantSel, k, cut)
		if got != exp || !slices.Equal(out, want) || !slices.Equal(sel[:got], wantSel[:exp]) {
			t.Fatalf("round %d (%d ids of %d bytes): count %d, want %d; hashes %x, want %x; listed %v, want %v", round, count, n, got, exp, out, want, sel[:got], wantSel[:exp])
		}
	}
}
