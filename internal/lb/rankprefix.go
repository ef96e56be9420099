package lb

import (
	"math"
	"slices"
)

// The current decision's Pulsar ranking, known up to a prefix of its ranks.
//
// A pulsar or pulsar-wait-and-widen decision reads the ranking from its
// first rank on and mostly stops after a few: the affinity group (k ranks),
// the bands opened so far, plain pulsar's walk to the first feasible
// cluster. Under Options.PartialOrder the engine orders only as many ranks
// as the decision reads (ensureRanks): a fresh ranking still hashes every
// candidate (the first rank is an argmax), but takes the best few by
// their score bounds (topKeys, cutGroups in rankbounds.go) instead of
// sorting all of them, and a cached ranking is read, not copied, up to the
// ranks needed. Without the option every rank is ordered, as before. Both
// give the same ranks (a prefix of the same order), so every field the
// option does not name is the same (TestPropPartialOrderMatchesFull).

// minTopRanks is the fewest ranks a prefix computation takes (topKeys):
// the affinity group and the first bands need a handful.
const minTopRanks = 8

// rankState is what the engine knows of the current decision's ranking.
type rankState struct {
	total    int  // ranked candidates: valid weight and u < 1
	validAll bool // every candidate with a valid weight is ranked
	// tie is the first known rank (0-based) whose score near-ties the
	// one before it (pulsar.md §11 item 3), noTie if none is known.
	tie int
	// cached holds the ranks of the request's cache entry (a hit) while
	// they are all that is known; e.list holds the ranks copied so far.
	cached []uint16
	entry  int // the request's cache entry, -1 if none
	// hashed: e.ranked holds every ranked candidate, hashed this decision;
	// bounded: lo, hi and keys hold their bounds and sort keys.
	hashed, bounded bool
	lo, hi          []float64
	keys            []uint64
	cacheable       bool
	h               uint64 // cache key hash
	// traced holds every ranked entry in rank order with its exact score
	// (a trace, or more candidates than the bounds handle).
	traced []rankEntry
}

// rankStart begins the decision's ranking: the cache lookup, and on a miss
// the candidates' hashes (or, with a trace, the whole exact ranking). It
// returns whether the decision orders only the ranks it reads
// (Options.PartialOrder; never with a trace, which prints every rank).
func (e *Engine) rankStart(snap *Snapshot, rv *reqView, opt Options, d *Decision) bool {
	n := len(snap.Clusters)
	rs := &e.rk
	*rs = rankState{tie: noTie, entry: -1}
	e.list = e.list[:0]
	rs.cacheable = rankCacheable(rv, n)
	if rs.cacheable {
		e.rankSet.update(snap, e.cfg.RendezvousWeight)
		rs.h = e.rankTarget.keyHash(rv)
		if id, ok := e.rankCache.lookup(e.rankSet.gen, rs.h, rv); ok {
			rs.entry = id
			if d.Trace == nil {
				ent := &e.rankCache.entries[id]
				rs.total, rs.validAll, rs.cached = int(ent.total), ent.validAll, e.rankCache.ranks(id)
				if ent.tie != noTieEntry {
					rs.tie = int(ent.tie)
				}
				return opt.PartialOrder
			}
		}
	}
	if d.Trace != nil || n > 1<<16 {
		e.rankExact(snap, rv)
		return false
	}
	e.hashCandidates(snap, rv)
	return opt.PartialOrder
}

// hashCandidates fills e.ranked with every candidate that has a valid
// weight and u < 1 (idx, hash, u, weight; pulsar.md §4.1–4.4): u = 1.0 is
// the only u whose −ln u is not finite and > 0 (§11 item 9; Ln(u) < 0 for
// every u < 1).
func (e *Engine) hashCandidates(snap *Snapshot, rv *reqView) {
	b := AppendHashPrefix(e.hashBuf[:0], e.cfg.Seed, rv.routingKey, rv.model)
	b = AppendTagged(b, "cache_affinity_key", rv.key)
	n := len(b)
	e.prefixHash.reset(b)
	out := e.ranked[:0]
	valid := 0
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		w, ok := pulsarWeight(e.cfg.RendezvousWeight, &c.Stats)
		if !ok {
			continue
		}
		valid++
		b = AppendTagged(b[:n], "cluster_id", c.ClusterID)
		h := e.prefixHash.sum(b) // xxh3.Hash(b), the prefix's part once
		if u := PulsarUnit(h); u < 1 {
			out = append(out, rankEntry{idx: i, hash: h, u: u, weight: w})
		}
	}
	e.hashBuf = b
	e.ranked = out
	rs := &e.rk
	rs.total, rs.validAll, rs.hashed = len(out), len(out) == valid, true
}

// ensureRanks makes the first min(m, total) ranks known and returns the
// known ranks (candidate indices in rank order, at least that many). The
// ranks come from the cache entry when it holds them; otherwise they are
// computed (a prefix when m is small against the candidate count, else
// every rank) and stored in the cache.
func (e *Engine) ensureRanks(snap *Snapshot, rv *reqView, m int) []int {
	rs := &e.rk
	m = min(m, rs.total)
	if len(e.list) >= m {
		return e.list
	}
	if len(rs.cached) >= m {
		for _, i := range rs.cached[len(e.list):m] {
			e.list = append(e.list, int(i))
		}
		return e.list
	}
	if !rs.hashed {
		e.hashCandidates(snap, rv)
	}
	if !rs.bounded {
		rs.lo, rs.hi, rs.keys = e.boundKeys(e.ranked)
		rs.bounded = true
	}
	tie := noTie
	var out []rankEntry
	if p := max(minTopRanks, 2*m); p < len(e.ranked)/2 {
		out = e.cutGroups(snap, e.ranked, rs.lo, rs.hi, e.topKeys(rs.keys, p), false, e.rankedSorted[:0], &tie)
	}
	if len(out) < m {
		tie = noTie
		e.sortRankKeys(rs.keys)
		out = e.cutGroups(snap, e.ranked, rs.lo, rs.hi, rs.keys, true, e.rankedSorted[:0], &tie)
	}
	e.rankedSorted = out
	rs.tie, rs.cached = tie, nil
	e.list = e.list[:0]
	for i := range out {
		e.list = append(e.list, out[i].idx)
	}
	if rs.cacheable {
		rs.entry = e.rankCache.store(e.rankSet.gen, len(snap.Clusters), rs.h, rv, out, rs, rs.entry)
	}
	return e.list
}

// rankExact computes the whole ranking with every exact score (a trace
// prints them; more than 65,536 candidates exceed the bounds' keys) and
// makes every rank known.
func (e *Engine) rankExact(snap *Snapshot, rv *reqView) {
	b := AppendHashPrefix(e.hashBuf[:0], e.cfg.Seed, rv.routingKey, rv.model)
	b = AppendTagged(b, "cache_affinity_key", rv.key)
	n := len(b)
	e.prefixHash.reset(b)
	out := e.ranked[:0]
	valid := 0
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		w, ok := pulsarWeight(e.cfg.RendezvousWeight, &c.Stats)
		if !ok {
			continue
		}
		valid++
		b = AppendTagged(b[:n], "cluster_id", c.ClusterID)
		h := e.prefixHash.sum(b)
		u := PulsarUnit(h)
		ln := -Ln(u) // glibc's log, as Stargate's f64::ln (ln.go)
		if !(ln > 0) || math.IsInf(ln, 0) {
			continue // u = 1.0: −ln u = −0 (pulsar.md §4.4, §11 item 9)
		}
		s := w / ln
		out = append(out, rankEntry{idx: i, key: totalKey(s), score: s, hash: h, u: u, weight: w})
	}
	e.hashBuf = b
	e.ranked = out
	rs := &e.rk
	rs.total, rs.validAll = len(out), len(out) == valid
	rs.traced = e.orderExact(snap, out, &rs.tie)
	e.list = e.list[:0]
	for i := range rs.traced {
		e.list = append(e.list, rs.traced[i].idx)
	}
	if rs.cacheable {
		rs.entry = e.rankCache.store(e.rankSet.gen, len(snap.Clusters), rs.h, rv, rs.traced, rs, rs.entry)
	}
}

// isRanked reports whether candidate i is in the ranking (a valid weight
// and u < 1), without ordering more ranks unless some candidate with a
// valid weight is unranked (u = 1, about once in 2⁵³ candidates).
func (e *Engine) isRanked(snap *Snapshot, rv *reqView, i int) bool {
	if _, ok := pulsarWeight(e.cfg.RendezvousWeight, &snap.Clusters[i].Stats); !ok {
		return false
	}
	if e.rk.validAll {
		return true
	}
	return slices.Contains(e.ensureRanks(snap, rv, e.rk.total), i)
}

// orderPrefix returns the first min(m, total) entries of the
// pulsar-wait-and-widen order: full[:m] when the whole order is known
// (full ≠ nil); otherwise the ranking's, with the returning session's last
// cluster moved to the front when promote is set (session.md §4, mode
// keep), ordering only the ranks it needs.
func (e *Engine) orderPrefix(snap *Snapshot, rv *reqView, full []int, last int, promote bool, m int) []int {
	m = min(m, e.rk.total)
	if full != nil {
		return full[:m]
	}
	ranks := e.ensureRanks(snap, rv, m)[:m]
	if !promote || m == 0 {
		return ranks
	}
	order := append(e.order[:0], last)
	for _, i := range ranks {
		if len(order) == m {
			break
		}
		if i != last {
			order = append(order, i)
		}
	}
	e.order = order
	return order
}
