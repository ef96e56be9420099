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
	// hashed: e.hashes holds every candidate's hash for this decision;
	// built: e.ranked every ranked candidate; bounded: lo, hi and keys
	// their bounds and sort keys; streamed: e.rankTop the minTopRanks
	// smallest keys (hashCandidates) over e.streamCands, lo and hi their
	// bounds.
	hashed, built, bounded, streamed bool
	lo, hi                           []float64
	keys                             []uint64
	cacheable                        bool
	h                                uint64 // cache key hash
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
	rs.total, rs.validAll, rs.tie, rs.cached, rs.entry, rs.traced = 0, false, noTie, nil, -1, nil
	rs.hashed, rs.built, rs.bounded, rs.streamed = false, false, false, false
	e.list = e.list[:0]
	// The candidate set is checked on every ranking, cached or not: the
	// hash loop reads its ids and weights. candidates did it already when
	// it found snap fully routable and unchanged (or its Version said so).
	if e.setChecked != snap {
		e.rankSet.update(snap, e.cfg.RendezvousWeight)
	}
	e.setChecked = nil
	rs.cacheable = rankCacheable(rv, n)
	if rs.cacheable {
		rs.h = e.rankTarget.keyHash(rv)
		if id, ok := e.rankCache.lookup(e.rankSet.gen, rs.h, rv); ok {
			rs.entry = id
			if d.Trace == nil {
				ent := &e.rankCache.entries[id]
				rs.total, rs.validAll, rs.tie, rs.cached = ent.total(), ent.validAll(), ent.tie(), e.rankCache.ranks(id)
				return opt.PartialOrder
			}
		}
	}
	if d.Trace != nil || n > 1<<16 {
		e.rankExact(snap, rv)
		return false
	}
	top := 0
	if opt.PartialOrder && minTopRanks < n/2 {
		top = minTopRanks
	}
	e.hashCandidates(rv, top)
	return opt.PartialOrder
}

// hashCandidates hashes every candidate for the request (e.hashes). With
// top = 0 it lays out every ranked candidate in e.ranked (buildRanked).
// With top > 0 it keeps only the top smallest sort keys instead (those of
// topKeys over every candidate), in e.rankTop, over the entries it bounded
// (e.streamCands, bounds in rs.lo and rs.hi), skipping every candidate
// whose u alone shows that it cannot be among them (streamFloor).
func (e *Engine) hashCandidates(rv *reqView, top int) {
	b := AppendHashPrefix(e.hashBuf[:0], e.cfg.Seed, rv.routingKey, rv.model)
	e.hashBuf = AppendTagged(b, "cache_affinity_key", rv.key)
	e.candHash.reset(e.hashBuf)
	cut := uint64(math.MaxUint64)
	if top > 0 {
		cut = hashCut(top, len(e.rankSet.weights))
	}
	hashes, selected := e.hashAll(cut)
	rs := &e.rk
	rs.hashed = true
	if top == 0 {
		e.buildRanked()
		return
	}
	set := &e.rankSet // describes snap (rankStart)
	wmax := set.maxWeight
	// Any top ranked candidates bound the top-th best score from below:
	// the top by hash alone (u grows with the hash) give a floor before
	// the pass; with equal weights they are the best ones.
	floor0 := e.hashFloor(top, selected)
	floor := floor0
	below := hashBelow(floor) // every hash under it has u < floor
	best := e.rankTop[:0]
	cands, lo, hi := e.streamCands[:0], e.streamLo[:0], e.streamHi[:0]
	// With the floor's hash at or above the cut, only the candidates
	// hashAll listed can pass it, and every unranked one (u = 1, a hash
	// within 2¹² of 2⁶⁴) is among them: the pass visits those alone.
	visit := e.hashSel[:selected]
	if below < cut {
		visit = e.hashSel[:len(hashes)]
		for i := range visit {
			visit[i] = int32(i)
		}
	}
	total := set.valid
	for _, i32 := range visit {
		i := int(i32)
		w := set.weights[i]
		if w == 0 {
			continue
		}
		h := hashes[i]
		if h >= nearOneHash && !(PulsarUnit(h) < 1) {
			total--
			continue
		}
		if h < below {
			continue
		}
		u := PulsarUnit(h)
		if u < floor {
			continue
		}
		p := len(cands)
		cands = append(cands, rankEntry{})
		r := &cands[p]
		r.idx, r.hash, r.u, r.weight = i, h, u, w
		l, hh, k := scoreBounds(r)
		lo, hi = append(lo, l), append(hi, hh)
		k |= uint64(p)
		switch {
		case len(best) < top:
			best = append(best, k)
		case k < best[top-1]:
			best[top-1] = k
		default:
			continue
		}
		for j := len(best) - 1; j > 0 && best[j-1] > best[j]; j-- {
			best[j-1], best[j] = best[j], best[j-1]
		}
		if len(best) == top {
			floor = max(floor0, streamFloor(wmax, hi[best[top-1]&0xffff]))
			below = hashBelow(floor)
		}
	}
	e.streamCands, e.streamLo, e.streamHi, e.rankTop = cands, lo, hi, best
	rs.total, rs.validAll, rs.streamed = total, total == set.valid, true
	rs.lo, rs.hi = lo, hi
}

// hashFloor returns a u below which no candidate can be among the top
// best sort keys (streamFloor), from the top ranked candidates with the
// largest hashes (0 when fewer are ranked): it looks among the selected
// candidates hashAll listed above hashCut first (hashes are uniform), at
// every hash when too few of them qualify. The top by hash are kept in
// e.hashTop, largest first.
func (e *Engine) hashFloor(top, selected int) float64 {
	set := &e.rankSet
	hashes, weights := e.hashes, set.weights
	best := e.hashTop[:0]
	// floor is the smallest hash kept once top are: a hash at or below it
	// cannot enter, the usual case, decided by one comparison.
	floor := uint64(0)
	for _, i := range e.hashSel[:selected] {
		if h := hashes[i]; (len(best) < top || h > floor) && weights[i] != 0 && !(h >= nearOneHash && !(PulsarUnit(h) < 1)) {
			best = keepHash(best, top, h, i)
			floor = best[len(best)-1].h
		}
	}
	if len(best) < top {
		best = best[:0]
		for i, h := range hashes {
			if (len(best) < top || h > floor) && weights[i] != 0 && !(h >= nearOneHash && !(PulsarUnit(h) < 1)) {
				best = keepHash(best, top, h, int32(i))
				floor = best[len(best)-1].h
			}
		}
	}
	e.hashTop = best
	if len(best) < top {
		return 0
	}
	hiW := math.Inf(1)
	for _, b := range best {
		r := rankEntry{u: PulsarUnit(b.h), weight: set.weights[b.i]}
		_, hi, _ := scoreBounds(&r)
		hiW = min(hiW, hi)
	}
	return streamFloor(set.maxWeight, hiW)
}

// hashPick is a candidate kept by hashFloor: its hash and index.
type hashPick struct {
	h uint64
	i int32
}

// hashCut returns the hash above which about 3·top of n uniform hashes
// lie (2⁶⁴·(1 − 3·top/n)), where hashFloor looks first; the largest hash
// (nothing collected) when that is not fewer than n.
func hashCut(top, n int) uint64 {
	if 3*top >= n {
		return math.MaxUint64
	}
	return math.MaxUint64 - math.MaxUint64/uint64(n)*uint64(3*top)
}

// keepHash adds candidate i, ranked, with hash h to best (at most top
// ranked candidates, largest hash first), where h is above the smallest
// kept once there are top of them.
func keepHash(best []hashPick, top int, h uint64, i int32) []hashPick {
	if len(best) < top {
		best = append(best, hashPick{})
	}
	j := len(best) - 1
	for ; j > 0 && best[j-1].h < h; j-- {
		best[j] = best[j-1]
	}
	best[j] = hashPick{h, i}
	return best
}

// buildRanked lays out every candidate with a valid weight and u < 1 in
// e.ranked (idx, hash, u, weight; pulsar.md §4.1–4.4), from e.hashes: u =
// 1.0 is the only u whose −ln u is not finite and > 0 (§11 item 9; Ln(u) <
// 0 for every u < 1).
func (e *Engine) buildRanked() {
	set := &e.rankSet
	if cap(e.ranked) < len(set.weights) {
		e.ranked = make([]rankEntry, 0, len(set.weights))
	}
	out := e.ranked[:len(set.weights)]
	np, valid := 0, 0
	for i, w := range set.weights {
		if w == 0 {
			continue
		}
		valid++
		h := e.hashes[i]
		u := PulsarUnit(h)
		if !(u < 1) {
			continue
		}
		r := &out[np] // fields one by one: no copy of a composed entry
		r.idx, r.hash, r.u, r.weight, r.key, r.score = i, h, u, w, 0, 0
		np++
	}
	e.ranked = out[:np]
	rs := &e.rk
	rs.total, rs.validAll, rs.built = np, np == valid, true
}

// hashAll returns every candidate's PulsarHash (0 without a valid weight)
// for the prefix candHash was reset to, in e.hashes, and lists in
// e.hashSel the first of them whose hash is at least cut (sumAll), how
// many in the second result.
func (e *Engine) hashAll(cut uint64) ([]uint64, int) {
	set := &e.rankSet
	n := len(set.weights)
	if cap(e.hashes) < n || cap(e.hashSel) < n {
		e.hashes, e.hashSel = make([]uint64, n), make([]int32, n)
	}
	// e.hashes holds this set's candidates only (hashFloor ranges over
	// it), not those of a longer set before.
	e.hashes = e.hashes[:n]
	hashes := e.hashes
	k := e.candHash.sumAll(set, hashes, cut, e.hashSel[:n]) // the shared part once
	return hashes, k
}

// nearOneHash is a hash below which PulsarUnit is certainly under 1 (u =
// 1 needs float64(h) to round to 2⁶⁴, h within 2¹¹ of it).
const nearOneHash = math.MaxUint64 - 1<<12

// hashBelow returns a hash h0 such that every h < h0 has PulsarUnit(h) <
// u0 (0, skipping nothing, when u0 < 2⁻⁸): u grows with h, and
// PulsarUnit(h) ≤ (h·(1 + 2⁻⁵³) + 1)·2⁻⁶⁴; with h0 below
// u0·2⁶⁴·(1 − 2⁻⁴⁸) (its product rounded twice) that is under
// u0·(1 − 2⁻⁴⁹) + 2⁻⁶⁴ < u0 for u0 ≥ 2⁻⁸ (TestHashBelowIsBelow).
func hashBelow(u0 float64) uint64 {
	if !(u0 >= 0x1p-8) {
		return 0
	}
	if u0 >= 1 {
		return nearOneHash
	}
	return uint64(u0*0x1p64*(1-0x1p-48)) - 2
}

// streamFloor is the u below which no candidate of weight at most wmax
// can have a sort key below that of an upper bound hiW (scoreBounds), so
// hashCandidates skips its bounds. A key below hiW's needs an upper bound
// above hiW·(1 − 2⁻³⁶) (the key keeps 36 mantissa bits), so
// wmax / (a − negLnBound) > hiW·(1 − 10⁻⁹) with a = approxNegLn(u), within
// negLnBound/10 of −ln u: −ln u < A = negLnBound·1.1 + wmax / (hiW·(1 −
// 10⁻⁹)). As −ln u ≥ 1 − u, a candidate with 1 − u > A + 10⁻⁹ (the
// margin covers the rounding of 1 − A) has none. An infinite or NaN A
// gives 0 (skip none).
func streamFloor(wmax, hiW float64) float64 {
	a := negLnBound*1.1 + wmax/(hiW*(1-1e-9))
	if !(a < 1) {
		return 0
	}
	return 1 - a - 1e-9
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
		e.hashCandidates(rv, 0)
	}
	tie := noTie
	var out []rankEntry
	p := max(minTopRanks, 2*m)
	if p == minTopRanks && rs.streamed {
		all := len(e.rankTop) == rs.total
		out = e.cutGroups(snap, e.streamCands, rs.lo, rs.hi, e.rankTop, all, e.rankedSorted[:0], &tie)
	}
	if len(out) < m && !rs.built {
		e.buildRanked()
	}
	if len(out) < m && !rs.bounded {
		rs.lo, rs.hi, rs.keys = e.boundKeys(e.ranked)
		rs.bounded, rs.streamed = true, false
	}
	if len(out) < m && p < len(e.ranked)/2 {
		tie = noTie
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
	e.hashBuf = AppendTagged(b, "cache_affinity_key", rv.key)
	e.candHash.reset(e.hashBuf)
	set := &e.rankSet // describes snap (rankStart)
	hashes, _ := e.hashAll(math.MaxUint64)
	out := e.ranked[:0]
	valid := 0
	for i, w := range set.weights {
		if w == 0 {
			continue
		}
		valid++
		h := hashes[i]
		u := PulsarUnit(h)
		ln := -Ln(u) // glibc's log, as Stargate's f64::ln (ln.go)
		if !(ln > 0) || math.IsInf(ln, 0) {
			continue // u = 1.0: −ln u = −0 (pulsar.md §4.4, §11 item 9)
		}
		s := w / ln
		out = append(out, rankEntry{idx: i, key: totalKey(s), score: s, hash: h, u: u, weight: w})
	}
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
