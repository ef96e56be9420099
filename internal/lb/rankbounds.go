package lb

import (
	"math"
	"math/bits"
	"slices"
)

// A fresh Pulsar ranking without computing every score exactly.
//
// The order of pulsar.md §4.4–4.5 (score = weight / −ln u descending,
// then cluster id) and the near-tie flag (§11 item 3) depend on each
// score only through comparisons with its neighbours. orderByBounds
// brackets every score between bounds from a cheap approximation of
// −ln u whose error is far below negLnBound, sorts the candidates by
// their upper bound, and cuts the sorted run wherever the next upper
// bound lies clearly (more than 2·10⁻⁹ relative) below the lowest lower
// bound seen since the last cut. Candidates of different groups are then
// ordered by the bounds alone, and no two can tie or nearly tie. Only
// candidates that share a group with another (their scores are within
// about 10⁻⁹ of each other, or a bound is infinite or tiny) get their
// exact score (Ln, glibc's log, as rankExact) and are sorted by
// (score, cluster id) with the near-tie check. With random hashes almost
// every group has one member, so a ranking of 256 candidates calls Ln a
// handful of times instead of 256, and sorts plain uint64 keys. The order
// and the flag are those of the full computation
// (TestPropRankingMatchesReference, TestOrderByBoundsMatchesExact); the
// trace path computes every score (it prints them).
//
// A decision that looks at the first ranks only (Options.PartialOrder)
// takes the smallest few sort keys instead of sorting them all (topKeys)
// and keeps the groups that end inside them (cutGroups): the cut rule
// reads the sorted run from its start, so those groups, and the ranks
// they give, are the full computation's (TestOrderByBoundsMatchesExact).

// negLnBound bounds |approxNegLn(u) − Ln-based −ln u| for 0 < u < 1: the
// approximation's own error is below 6·10⁻¹¹ (truncation of the series
// after r³, |r| ≤ 2⁻⁸) plus rounding (under 10⁻¹⁴), and Ln is within an
// ulp (under 10⁻¹⁴ for |ln u| ≤ 45) of the true value.
const negLnBound = 1e-9

// boundSep is the relative gap between groups (see orderByBounds).
const boundSep = 1e-9

// minSeparable is the smallest lower bound a group may be cut at: below
// it scores are subnormal or nearly so, their rounding is not relative,
// and every remaining candidate joins one exactly ordered group.
const minSeparable = 1e-290

// negLnTab holds, for the 128 subintervals [1 + i/128, 1 + (i+1)/128) of
// the mantissa, 1/c (rounded) and −ln of that rounded reciprocal, for c
// the subinterval's midpoint.
var negLnTab = func() (t [128][2]float64) {
	for i := range t {
		inv := 1 / (1 + (float64(i)+0.5)/128)
		t[i] = [2]float64{inv, -math.Log(inv)}
	}
	return t
}()

// approxNegLn approximates −ln u for 0 < u < 1 (u normal) within 10⁻¹⁰:
// u = m·2^E with m in [1, 2), ln u = E·ln 2 + ln(1/inv) + log1p(m·inv − 1)
// with |m·inv − 1| ≤ 2⁻⁸ and log1p(r) ≈ r − r²/2 + r³/3.
func approxNegLn(u float64) float64 {
	b := math.Float64bits(u)
	exp := int(b>>52) - 1023
	i := (b >> 45) & 127
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	inv, lnc := negLnTab[i][0], negLnTab[i][1]
	r := m*inv - 1
	lnm := lnc + r*(1+r*(-0.5+r*(1.0/3)))
	return -(float64(exp)*math.Ln2 + lnm)
}

// noTie is rankState.tie when no near-tie is known.
const noTie = math.MaxInt

// boundKeys brackets the score of every entry of cands (ranked candidates
// with idx, hash, u and weight set; every u < 1, at most 65,536 of them)
// between lo and hi and returns the sort keys (unsorted): descending upper
// bound in the top 48 bits, the position in cands below. Sorting may
// misorder bounds within 2⁻³⁵ relative, which the cut rule's margin
// (cutGroups) covers.
func (e *Engine) boundKeys(cands []rankEntry) (lo, hi []float64, keys []uint64) {
	n := len(cands)
	if cap(e.rankBounds) < 2*n {
		e.rankBounds = make([]float64, 2*n)
	}
	lo, hi = e.rankBounds[:n], e.rankBounds[n:2*n]
	keys = e.rankKeys[:0]
	for p := range cands {
		var k uint64
		lo[p], hi[p], k = scoreBounds(&cands[p])
		keys = append(keys, k|uint64(p))
	}
	e.rankKeys = keys
	return lo, hi, keys
}

// scoreBounds returns the bounds of c's score and its sort key without the
// position (boundKeys).
func scoreBounds(c *rankEntry) (lo, hi float64, key uint64) {
	a := approxNegLn(c.u)
	lo = c.weight / (a + negLnBound)
	hi = math.Inf(1)
	if a > negLnBound {
		hi = c.weight / (a - negLnBound)
	}
	return lo, hi, ^(totalKey(hi) | 0xffff)
}

// orderByBounds returns cands (as boundKeys takes them) in rank order;
// *tie becomes the first rank (0-based) whose score near-ties the one
// before it, if there is one. Entries in groups of one keep score 0.
func (e *Engine) orderByBounds(snap *Snapshot, cands []rankEntry, tie *int) []rankEntry {
	lo, hi, keys := e.boundKeys(cands)
	e.sortRankKeys(keys)
	out := e.cutGroups(snap, cands, lo, hi, keys, true, e.rankedSorted[:0], tie)
	e.rankedSorted = out
	return out
}

// cutGroups appends to out, in exact rank order, the groups of the keys
// sorted ascending (boundKeys): it cuts the sorted run wherever the next
// upper bound lies clearly below the lowest lower bound seen since the
// last cut. With all false keys are only the smallest keys of cands, and
// the run after the last cut is left out: its group may go on past them.
// The groups it returns are those of the whole sorted run (the cut rule
// reads the run from the start), so the result is a prefix of the full
// order. *tie is lowered to the first near-tie rank among them.
func (e *Engine) cutGroups(snap *Snapshot, cands []rankEntry, lo, hi []float64, keys []uint64, all bool, out []rankEntry, tie *int) []rankEntry {
	n := len(keys)
	if n == 0 {
		return out
	}
	start, minLo := 0, lo[keys[0]&0xffff]
	for j := 1; j < n; j++ {
		p := keys[j] & 0xffff
		if minLo >= minSeparable && hi[p]*(1+boundSep) < minLo*(1-boundSep) {
			out = e.appendGroup(snap, cands, keys[start:j], out, tie)
			start, minLo = j, lo[p]
			continue
		}
		minLo = min(minLo, lo[p])
	}
	if all {
		out = e.appendGroup(snap, cands, keys[start:], out, tie)
	}
	return out
}

// appendGroup appends one group of cutGroups in exact rank order.
func (e *Engine) appendGroup(snap *Snapshot, cands []rankEntry, group []uint64, out []rankEntry, tie *int) []rankEntry {
	if len(group) == 1 {
		return append(out, cands[group[0]&0xffff])
	}
	keys := e.sorted[:0]
	for _, k := range group {
		p := int32(k & 0xffff)
		c := &cands[p]
		c.score = c.weight / -Ln(c.u) // u < 1: −ln u > 0 and finite
		c.key = totalKey(c.score)
		keys = append(keys, sortKey{^c.key, p})
	}
	sortKeys(keys, func(pos int32) string { return snap.Clusters[cands[pos].idx].ClusterID })
	e.sorted = keys
	for i, k := range keys {
		out = append(out, cands[k.pos])
		if i > 0 && nearTie(cands[keys[i-1].pos].score, cands[k.pos].score) && len(out)-1 < *tie {
			*tie = len(out) - 1
		}
	}
	return out
}

// topKeys returns the p smallest of keys (distinct) in ascending order,
// in e.rankTop: the first p keys of the sorted run, found by one pass
// that keeps the best p seen so far (with random scores a key beats the
// p-th best rarely, so the pass mostly compares).
func (e *Engine) topKeys(keys []uint64, p int) []uint64 {
	p = min(p, len(keys))
	top := append(e.rankTop[:0], keys[:p]...)
	slices.Sort(top)
	if p > 0 {
		worst := top[p-1]
		for _, k := range keys[p:] {
			if k >= worst {
				continue
			}
			i := p - 1
			for ; i > 0 && top[i-1] > k; i-- {
				top[i] = top[i-1]
			}
			top[i] = k
			worst = top[p-1]
		}
	}
	e.rankTop = top
	return top
}

// sortRankKeys sorts keys ascending, like slices.Sort. Above 64 keys it
// first distributes them into about 2n buckets by their offset from the
// smallest key (a counting sort on the top bits; the keys are float bit
// patterns, so buckets are roughly even in log(score)), then sorts each
// bucket: hashed scores are random, and a comparison sort of them
// mispredicts about every other branch.
func (e *Engine) sortRankKeys(keys []uint64) {
	n := len(keys)
	if n <= 64 {
		slices.Sort(keys)
		return
	}
	lo, hi := keys[0], keys[0]
	for _, k := range keys {
		lo, hi = min(lo, k), max(hi, k)
	}
	nb := bits.Len(uint(n)) + 1
	shift := max(bits.Len64(hi-lo)-nb, 0)
	size := 1<<nb + 1
	if cap(e.rankCounts) < size+1 {
		e.rankCounts = make([]int32, size+1)
	}
	counts := e.rankCounts[:size+1]
	clear(counts)
	for _, k := range keys {
		counts[(k-lo)>>shift+1]++
	}
	for b := 1; b < len(counts); b++ {
		counts[b] += counts[b-1]
	}
	if cap(e.rankTmp) < n {
		e.rankTmp = make([]uint64, n)
	}
	tmp := e.rankTmp[:n]
	for _, k := range keys {
		b := (k - lo) >> shift
		tmp[counts[b]] = k
		counts[b]++
	}
	// counts[b] is now the end of bucket b (and the start of b+1).
	start := int32(0)
	for b := 0; b < size; b++ {
		end := counts[b]
		if end-start > 1 {
			if run := tmp[start:end]; len(run) > 16 {
				slices.Sort(run)
			} else {
				for i := 1; i < len(run); i++ {
					v, j := run[i], i
					for ; j > 0 && run[j-1] > v; j-- {
						run[j] = run[j-1]
					}
					run[j] = v
				}
			}
		}
		start = end
	}
	copy(keys, tmp)
}
