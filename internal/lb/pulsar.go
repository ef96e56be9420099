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

// orderExact returns the scored candidates (key and score set) in rank
// order, lowering *tie to the first rank that near-ties the one before.
func (e *Engine) orderExact(snap *Snapshot, out []rankEntry, tie *int) []rankEntry {
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
			*tie = min(*tie, i)
			break
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

// rankingOrder orders every rank of the ranking rankStart began and
// returns them (e.list); it records the ranking in the trace. The ranked
// candidates are those with a valid weight (pulsar.md §4): weighted
// rendezvous scores weight/−ln u, sorted by score descending (total
// order), then cluster id ascending; excluded and KV-infeasible candidates
// stay ranked.
func (e *Engine) rankingOrder(snap *Snapshot, rv *reqView, d *Decision) []int {
	list := e.ensureRanks(snap, rv, e.rk.total)
	if d.Trace != nil {
		for p, r := range e.rk.traced {
			d.Trace.Ranking = append(d.Trace.Ranking, RankTrace{Rank: p + 1, ClusterID: snap.Clusters[r.idx].ClusterID,
				Hash: r.hash, U: r.u, Weight: r.weight, Score: Millis(r.score), Feasibility: e.feasibility(snap, rv, r.idx)})
		}
		if n := len(snap.Clusters) - e.rk.total; n > 0 {
			d.note(fmt.Sprintf("%s without a valid %s weight %s not ranked", plural.Count(n, "candidate", "candidates"), e.cfg.RendezvousWeight, plural.Noun(n, "is", "are")))
		}
	}
	return list
}

// decidePulsar is plain pulsar (pulsar.md §6): the first feasible cluster
// in ranking order; never waits. Under Options.PartialOrder the reported
// orders end at the chosen cluster's rank.
func (e *Engine) decidePulsar(snap *Snapshot, rv *reqView, opt Options, d *Decision) {
	order := e.list[:0]
	partial := e.rankStart(snap, rv, opt, d)
	if !partial {
		order = e.rankingOrder(snap, rv, d)
	}
	total := e.rk.total
	d.Phase = PhaseRankWalk
	var pt *PhaseTrace
	if d.Trace != nil && total > 0 {
		d.Trace.Phases = append(d.Trace.Phases, PhaseTrace{Phase: PhaseRankWalk, Scale: 1})
		pt = &d.Trace.Phases[len(d.Trace.Phases)-1]
	}
	kv := false
	walked := total
	for p := 0; p < total; p++ {
		var idx int
		if partial {
			idx = e.ensureRanks(snap, rv, p+1)[p]
		} else {
			idx = order[p]
		}
		f := e.feasibility(snap, rv, idx)
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
			walked = p + 1
			break
		}
		if f.KVSkip() {
			kv = true
		}
	}
	if partial {
		order = e.list[:walked]
	}
	d.AffinityOrder, d.OriginalOrder, d.OpenSet = order, order, order
	if len(order) > 0 {
		d.AffinityGroup = order[:1]
	}
	switch {
	case d.Kind == KindSelected:
	case total == 0 && len(snap.Clusters) == 0:
		d.Reason = ReasonNoCandidates
	case total == 0:
		d.Reason = ReasonNothingRanked
	default:
		d.Reason = ReasonNoFeasible
	}
}

// noteGated adds the candidates of list that the feasibility gate removed
// to the last phase trace (pulsar.md §7.2: only feasible members enter
// the selection).
func (e *Engine) noteGated(snap *Snapshot, rv *reqView, list []int, d *Decision) {
	if d.Trace == nil || len(d.Trace.Phases) == 0 {
		return
	}
	pt := &d.Trace.Phases[len(d.Trace.Phases)-1]
	for p, idx := range list {
		if f := e.feasibility(snap, rv, idx); f != Eligible {
			pt.Candidates = append(pt.Candidates, CandidateTrace{ClusterID: snap.Clusters[idx].ClusterID, Cluster: idx,
				Rank: p + 1, Feasibility: f, Excluded: f == RetryExcluded, Bucket: -1, Why: "removed by the feasibility gate: " + f.String()})
		}
	}
}

// feasibleOf returns the members of list that pass the feasibility gate
// (pulsar.md §5), in e.open.
func (e *Engine) feasibleOf(snap *Snapshot, rv *reqView, list []int) []int {
	open := e.open[:0]
	for _, idx := range list {
		if e.feasibility(snap, rv, idx) == Eligible {
			open = append(open, idx)
		}
	}
	e.open = open
	return open
}

// decidePulsarWaitAndWiden is pulsar-wait-and-widen (pulsar.md §7.2, the
// newest upstream pulsar_wait_and_widen.rs without the eligible-primary
// shortcut): ranking, session plan (mode keep), affinity group of k, the
// affinity wait, then timed ranking bands with fallback_max_queued. Under
// Options.PartialOrder the order is built only as far as the open set
// reaches, and the reported orders end there.
func (e *Engine) decidePulsarWaitAndWiden(snap *Snapshot, rv *reqView, rng Rand, opt Options, d *Decision) {
	partial := e.rankStart(snap, rv, opt, d)
	var ranking, order []int // the whole ranking and order (not partial)
	if !partial {
		ranking = e.rankingOrder(snap, rv, d)
	}
	total := e.rk.total
	if total == 0 {
		d.Reason = ReasonNothingRanked
		if len(snap.Clusters) == 0 {
			d.Reason = ReasonNoCandidates
		}
		return
	}
	var x time.Duration
	var scale float64
	last, promote := -1, false
	if partial {
		last, x, scale = e.sessionRules(snap, rv, true, d)
		if last >= 0 && e.ensureRanks(snap, rv, 1)[0] != last && e.isRanked(snap, rv, last) {
			promote, d.Promoted = true, true
		}
	} else {
		order, x, scale = e.plan(snap, rv, ranking, false, true, d)
		d.OriginalOrder, d.AffinityOrder = ranking, order
	}
	s := x
	if e.hasBand {
		s = e.band
	}
	g := min(e.k, total)
	var group []int
	if partial {
		group = e.orderPrefix(snap, rv, nil, last, promote, g)
	} else {
		group = order[:g]
	}
	d.AffinityGroup = group
	d.AffinityWait, d.BandInterval = x, s

	// Affinity phase over the feasible group members.
	open := e.open[:0]
	for _, idx := range group {
		if e.feasibility(snap, rv, idx) == Eligible {
			open = append(open, idx)
		}
	}
	e.open = open
	a := e.wwSelect(snap, rv, open, scale, rv.elapsed, e.cfg.MaxQueued, PhaseAffinity, rng, opt, d)
	e.noteGated(snap, rv, group, d)
	if a.kind == KindSelected {
		d.OpenSet = group
		if partial {
			e.reportPrefix(group, d)
		}
		e.pulsarChoice(snap, rv, group, a.idx, PhaseAffinity, d)
		return
	}
	aw, awOK := a.wait, a.kind == KindWait
	if rv.elapsed < x {
		d.OpenSet = group
		if partial {
			e.reportPrefix(group, d)
		}
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
	for i := uint64(0); i < bands && end < total; i++ {
		end = min(end+width, total)
		opened++
		if width < 1<<30 {
			width *= 2
		}
	}
	var bandWait time.Duration
	bandOK := end < total
	if bandOK {
		mul := min(bands, math.MaxUint32)
		next := time.Duration(math.MaxInt64)
		if uint64(s) <= math.MaxInt64/mul {
			next = s * time.Duration(mul)
		}
		bandWait = max(next-w, 0)
	}
	openSet := e.orderPrefix(snap, rv, order, last, promote, end)
	d.OpenSet = openSet
	if partial {
		e.reportPrefix(openSet, d)
	}
	if d.Trace != nil {
		if s == 0 {
			d.note(fmt.Sprintf("band interval 0: every rank opens at the end of the affinity wait (ranks 1–%d)", end))
		} else {
			d.note(fmt.Sprintf("%s opened every %g ms since the affinity wait: ranks 1–%d of %d", plural.Count(opened, "band", "bands"), DurationMs(s), end, total))
		}
	}
	o := e.wwSelect(snap, rv, e.feasibleOf(snap, rv, openSet), 1.0, w, e.cfg.FallbackMaxQueued, PhaseOpen, rng, opt, d)
	e.noteGated(snap, rv, openSet, d)
	if o.kind == KindSelected {
		e.pulsarChoice(snap, rv, openSet, o.idx, PhaseOpen, d)
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

// reportPrefix sets a partial decision's orders (Options.PartialOrder):
// the order up to the end of prefix, the open set, and the ranks it was
// built from.
func (e *Engine) reportPrefix(prefix []int, d *Decision) {
	d.OriginalOrder, d.AffinityOrder = e.list[:len(prefix)], prefix
}

// pulsarChoice records a pww selection: rank depth is the position in the
// (promoted) order; the KV flag is set when an earlier order position has a
// KV skip reason, open or not (pulsar.md §7.6). order needs to reach idx
// only: positions after it are not read.
func (e *Engine) pulsarChoice(snap *Snapshot, rv *reqView, order []int, idx int, phase Phase, d *Decision) {
	kv := false
	for p, o := range order {
		if o == idx {
			d.selected(idx, p+1, phase)
			d.SelectedAfterKVFreeTokensSkip = kv
			return
		}
		if e.feasibility(snap, rv, o).KVSkip() {
			kv = true
		}
	}
}
