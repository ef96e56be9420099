package lb

import (
	"fmt"
	"math"
	"time"

	"github.com/lcctl/lcctl/internal/plural"
)

// rankEntry is one ranked candidate (pulsar.md §4).
type rankEntry struct {
	idx    int
	key    uint64 // totalKey(score)
	score  float64
	hash   uint64
	u      float64
	weight float64
}

// pulsarWeight is weight(c) of pulsar.md §4.1 (no fallback from the
// maximum to the mean).
func pulsarWeight(mode RendezvousWeight, st *Stats) (float64, bool) {
	v := weightField(mode, st)
	return v, TPSValid(v)
}

// weightField is the stats field mode selects as the weight, as given.
func weightField(mode RendezvousWeight, st *Stats) float64 {
	if mode == WeightLastMeanInputTPS {
		return st.LastMeanInputTPS
	}
	return st.MaxInputTPS
}

// rankedOrder computes the Pulsar ranking of pulsar.md §4 and appends the
// ranked candidate indices to out: weighted rendezvous scores
// weight/−ln u over the candidates with a valid weight, sorted by score
// descending (total order), then cluster id ascending. Excluded and
// KV-infeasible candidates stay ranked. It reads the ranking cache and
// fills it (rankcache.go); with a trace it always computes the ranking
// (the trace needs every score) and returns the entries too.
func (e *Engine) rankedOrder(snap *Snapshot, rv *reqView, d *Decision, out []int) ([]int, []rankEntry) {
	cacheable := rankCacheable(rv, len(snap.Clusters))
	var h uint64
	if cacheable {
		e.rankSet.update(snap, e.cfg.RendezvousWeight)
		h = e.rankTarget.keyHash(rv)
		if d.Trace == nil {
			if cached, amb, ok := e.rankCache.lookup(e.rankSet.gen, h, rv); ok {
				d.Ambiguous = amb
				for _, i := range cached {
					out = append(out, int(i))
				}
				return out, nil
			}
		}
	}
	ranked := e.computeRanking(snap, rv, d)
	for _, r := range ranked {
		out = append(out, r.idx)
	}
	if cacheable && (d.Trace == nil || !e.rankCache.has(e.rankSet.gen, h, rv)) {
		e.rankCache.insert(e.rankSet.gen, len(snap.Clusters), h, rv, ranked, d.Ambiguous)
	}
	return out, ranked
}

// computeRanking computes the ranking without the cache. Without a trace
// it orders the candidates by score bounds and computes exact scores only
// where bounds overlap (orderByBounds; same order and near-tie flag); a
// trace gets every candidate's exact score.
func (e *Engine) computeRanking(snap *Snapshot, rv *reqView, d *Decision) []rankEntry {
	b := AppendHashPrefix(e.hashBuf[:0], e.cfg.Seed, rv.routingKey, rv.model)
	b = AppendTagged(b, "cache_affinity_key", rv.key)
	n := len(b)
	e.prefixHash.reset(b)
	out := e.ranked[:0]
	bounded := d.Trace == nil && len(snap.Clusters) <= 1<<16
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		w, ok := pulsarWeight(e.cfg.RendezvousWeight, &c.Stats)
		if !ok {
			continue
		}
		b = AppendTagged(b[:n], "cluster_id", c.ClusterID)
		h := e.prefixHash.sum(b) // xxh3.Hash(b), the prefix's part once
		u := PulsarUnit(h)
		if bounded {
			// u = 1.0 is the only u whose −ln u is not finite and > 0
			// (pulsar.md §4.4, §11 item 9; Ln(u) < 0 for every u < 1).
			if u < 1 {
				out = append(out, rankEntry{idx: i, hash: h, u: u, weight: w})
			}
			continue
		}
		ln := -Ln(u) // glibc's log, as Stargate's f64::ln (ln.go)
		if !(ln > 0) || math.IsInf(ln, 0) {
			continue // u = 1.0: −ln u = −0 (pulsar.md §4.4, §11 item 9)
		}
		s := w / ln
		out = append(out, rankEntry{idx: i, key: totalKey(s), score: s, hash: h, u: u, weight: w})
	}
	e.hashBuf = b
	e.ranked = out
	if bounded {
		return e.orderByBounds(snap, out, d)
	}
	return e.orderExact(snap, out, d)
}

// orderExact returns the scored candidates (key and score set) in rank
// order, setting d.Ambiguous on a near-tie.
func (e *Engine) orderExact(snap *Snapshot, out []rankEntry, d *Decision) []rankEntry {
	// Score descending, then cluster id ascending (a strict total order:
	// ids are unique). Sort compact keys, then lay the entries out in order.
	keys := e.sorted[:0]
	for i := range out {
		keys = append(keys, sortKey{^out[i].key, int32(i)})
	}
	sortKeys(keys, func(pos int32) string { return snap.Clusters[out[pos].idx].ClusterID })
	e.sorted = keys
	sortedOut := e.rankedSorted[:0]
	for _, k := range keys {
		sortedOut = append(sortedOut, out[k.pos])
	}
	e.rankedSorted = sortedOut
	out = sortedOut
	// Near-ties (pulsar.md §11.3): any relative difference under 1e-12,
	// exact ties included (two +Inf scores too). An exact tie is ordered by
	// cluster id, as upstream's compare_ranked_candidate does (score
	// total_cmp descending, then cluster_id ascending by bytes), so the
	// order is Stargate's; the flag says that a libm other than glibc's
	// FMA log could order the pair differently.
	for i := 1; i < len(out); i++ {
		if nearTie(out[i-1].score, out[i].score) {
			d.Ambiguous = true
		}
	}
	return out
}

// nearTie reports whether two Pulsar scores (> 0, possibly +Inf) tie or
// differ by less than 1e-12 relative (pulsar.md §11.3).
func nearTie(a, b float64) bool {
	return a == b || (!math.IsInf(a, 0) && !math.IsInf(b, 0) && math.Abs(a-b) < 1e-12*math.Max(math.Abs(a), math.Abs(b)))
}

// feasibility is the Pulsar gate of pulsar.md §5 for candidate i.
func (e *Engine) feasibility(snap *Snapshot, rv *reqView, i int) Feasibility {
	if e.excl[i] {
		return RetryExcluded
	}
	if !e.cfg.ConsiderKVFreeTokens {
		return Eligible
	}
	if !rv.hasInputTokens {
		return MissingRequiredInputTokens
	}
	st := &snap.Clusters[i].Stats
	if st.KVCacheCapacityTokens == 0 && st.KVCacheUsedTokens == 0 && st.KVCacheFreeTokens == 0 {
		return MissingKVFreeTokens
	}
	if st.KVCacheFreeTokens < rv.inputTokens {
		return InsufficientKVFreeTokens
	}
	return Eligible
}

// rankingOrder fills e.list with the ranked candidate indices and e.feas
// with their feasibility; it records the ranking in the trace.
func (e *Engine) rankingOrder(snap *Snapshot, rv *reqView, d *Decision) []int {
	list, ranked := e.rankedOrder(snap, rv, d, e.list[:0])
	for _, idx := range list {
		e.feas[idx] = e.feasibility(snap, rv, idx)
	}
	e.list = list
	if d.Trace != nil {
		for p, r := range ranked {
			d.Trace.Ranking = append(d.Trace.Ranking, RankTrace{Rank: p + 1, ClusterID: snap.Clusters[r.idx].ClusterID,
				Hash: r.hash, U: r.u, Weight: r.weight, Score: Millis(r.score), Feasibility: e.feas[r.idx]})
		}
		if len(ranked) < len(snap.Clusters) {
			n := len(snap.Clusters) - len(ranked)
			d.note(fmt.Sprintf("%s without a valid %s weight %s not ranked", plural.Count(n, "candidate", "candidates"), e.cfg.RendezvousWeight, plural.Noun(n, "is", "are")))
		}
	}
	return list
}

// decidePulsar is plain pulsar (pulsar.md §6): the first feasible cluster
// in ranking order; never waits.
func (e *Engine) decidePulsar(snap *Snapshot, rv *reqView, d *Decision) {
	order := e.rankingOrder(snap, rv, d)
	d.AffinityOrder, d.OriginalOrder, d.OpenSet = order, order, order
	if len(order) > 0 {
		d.AffinityGroup = order[:1]
	}
	d.Phase = PhaseRankWalk
	if len(order) == 0 {
		d.Reason = ReasonNothingRanked
		if len(snap.Clusters) == 0 {
			d.Reason = ReasonNoCandidates
		}
		return
	}
	kv := false
	var pt *PhaseTrace
	if d.Trace != nil {
		d.Trace.Phases = append(d.Trace.Phases, PhaseTrace{Phase: PhaseRankWalk, Scale: 1})
		pt = &d.Trace.Phases[len(d.Trace.Phases)-1]
	}
	for p, idx := range order {
		f := e.feas[idx]
		if pt != nil {
			ct := CandidateTrace{ClusterID: snap.Clusters[idx].ClusterID, Cluster: idx, Rank: p + 1, Feasibility: f,
				Excluded: f == RetryExcluded, Bucket: -1, SLOEligible: true, HasCapacity: true, Why: "not reached"}
			switch {
			case f == Eligible:
				ct.Chosen, ct.Why = true, "chosen: first feasible cluster in ranking order"
			default:
				ct.Why = "skipped: " + f.String()
			}
			pt.Candidates = append(pt.Candidates, ct)
		}
		if f == Eligible {
			d.selected(idx, p+1, PhaseRankWalk)
			d.SelectedAfterKVFreeTokensSkip = kv
			if pt != nil {
				pt.Result, pt.Chosen = KindSelected, snap.Clusters[idx].ClusterID
			}
			return
		}
		if f.KVSkip() {
			kv = true
		}
	}
	d.Reason = ReasonNoFeasible
}

// noteGated adds the candidates of list that the feasibility gate removed
// to the last phase trace (pulsar.md §7.2: only feasible members enter
// the selection).
func (e *Engine) noteGated(snap *Snapshot, list []int, d *Decision) {
	if d.Trace == nil || len(d.Trace.Phases) == 0 {
		return
	}
	pt := &d.Trace.Phases[len(d.Trace.Phases)-1]
	for p, idx := range list {
		if f := e.feas[idx]; f != Eligible {
			pt.Candidates = append(pt.Candidates, CandidateTrace{ClusterID: snap.Clusters[idx].ClusterID, Cluster: idx,
				Rank: p + 1, Feasibility: f, Excluded: f == RetryExcluded, Bucket: -1, Why: "removed by the feasibility gate: " + f.String()})
		}
	}
}

// decidePulsarWaitAndWiden is pulsar-wait-and-widen (pulsar.md §7.2, the
// newest upstream pulsar_wait_and_widen.rs without the eligible-primary
// shortcut): ranking, session plan (mode keep), affinity group of k, the
// affinity wait, then timed ranking bands with fallback_max_queued.
func (e *Engine) decidePulsarWaitAndWiden(snap *Snapshot, rv *reqView, rng Rand, opt Options, d *Decision) {
	ranking := e.rankingOrder(snap, rv, d)
	if len(ranking) == 0 {
		d.Reason = ReasonNothingRanked
		if len(snap.Clusters) == 0 {
			d.Reason = ReasonNoCandidates
		}
		return
	}
	order, x, scale := e.plan(snap, rv, ranking, false, d)
	s := x
	if e.hasBand {
		s = e.band
	}
	g := min(e.k, len(order))
	d.OriginalOrder, d.AffinityOrder, d.AffinityGroup = ranking, order, order[:g]
	d.AffinityWait, d.BandInterval = x, s

	// Affinity phase over the feasible group members.
	open := e.open[:0]
	for _, idx := range order[:g] {
		if e.feas[idx] == Eligible {
			open = append(open, idx)
		}
	}
	e.open = open
	a := e.wwSelect(snap, rv, open, scale, rv.elapsed, e.cfg.MaxQueued, PhaseAffinity, rng, opt, d)
	e.noteGated(snap, order[:g], d)
	if a.kind == KindSelected {
		d.OpenSet = order[:g]
		e.pulsarChoice(order, a.idx, PhaseAffinity, d)
		return
	}
	aw, awOK := a.wait, a.kind == KindWait
	if rv.elapsed < x {
		d.OpenSet = order[:g]
		rem := x - rv.elapsed
		d.Kind, d.Phase = KindWait, PhaseAffinity
		if awOK && aw < rem {
			d.Wait, d.Reason = aw, ReasonBucketUnlock
		} else {
			d.Wait, d.Reason = rem, ReasonAffinityWait
		}
		return
	}
	w := rv.elapsed - x
	bands := uint64(math.MaxUint64)
	if s > 0 {
		bands = uint64(w/s) + 1
	}
	end, width, opened := g, 2, 0
	for i := uint64(0); i < bands && end < len(order); i++ {
		end = min(end+width, len(order))
		opened++
		if width < 1<<30 {
			width *= 2
		}
	}
	var bandWait time.Duration
	bandOK := end < len(order)
	if bandOK {
		mul := min(bands, math.MaxUint32)
		next := time.Duration(math.MaxInt64)
		if uint64(s) <= math.MaxInt64/mul {
			next = s * time.Duration(mul)
		}
		bandWait = max(next-w, 0)
	}
	d.OpenSet = order[:end]
	if d.Trace != nil {
		if s == 0 {
			d.note(fmt.Sprintf("band interval 0: every rank opens at the end of the affinity wait (ranks 1–%d)", end))
		} else {
			d.note(fmt.Sprintf("%s opened every %g ms since the affinity wait: ranks 1–%d of %d", plural.Count(opened, "band", "bands"), DurationMs(s), end, len(order)))
		}
	}
	open = e.open[:0]
	for _, idx := range order[:end] {
		if e.feas[idx] == Eligible {
			open = append(open, idx)
		}
	}
	e.open = open
	o := e.wwSelect(snap, rv, open, 1.0, w, e.cfg.FallbackMaxQueued, PhaseOpen, rng, opt, d)
	e.noteGated(snap, order[:end], d)
	if o.kind == KindSelected {
		e.pulsarChoice(order, o.idx, PhaseOpen, d)
		return
	}
	wait, ok := aw, awOK
	reason := ReasonBucketUnlock
	if o.kind == KindWait && (!ok || o.wait < wait) {
		wait, ok = o.wait, true
	}
	if bandOK && (!ok || bandWait < wait) {
		wait, ok, reason = bandWait, true, ReasonNextBand
	}
	d.Phase = PhaseOpen
	if ok {
		d.Kind, d.Wait, d.Reason = KindWait, wait, reason
		return
	}
	d.Kind, d.Reason = KindUnavailable, o.reason
	if o.reason == ReasonNoCandidates || o.reason == ReasonAllExcluded {
		d.Reason = ReasonNoFeasible
	}
}

// pulsarChoice records a pww selection: rank depth is the position in the
// (promoted) order; the KV flag is set when an earlier order position has a
// KV skip reason, open or not (pulsar.md §7.6).
func (e *Engine) pulsarChoice(order []int, idx int, phase Phase, d *Decision) {
	kv := false
	for p, o := range order {
		if o == idx {
			d.selected(idx, p+1, phase)
			d.SelectedAfterKVFreeTokensSkip = kv
			return
		}
		if e.feas[o].KVSkip() {
			kv = true
		}
	}
}
