package lb

import "fmt"

// decideWaitAndWiden is wait-and-widen's decide (wait-and-widen.md §3.2,
// upstream wait_and_widen.rs decide_at): ring group, session plan, the
// affinity phase on every attempt, the affinity wait X, then global
// fallback with rank depth len(group)+1.
func (e *Engine) decideWaitAndWiden(snap *Snapshot, rv *reqView, rng Rand, opt Options, d *Decision) {
	n := len(snap.Clusters)
	if !(rv.hasKey && e.k > 0 && n > 0) {
		if n == 0 {
			d.Reason = ReasonNoCandidates
			return
		}
		if e.k > 0 && !rv.hasKey {
			d.note("no cache affinity key: no affinity group, no affinity wait, no discount")
		}
		d.OpenSet = e.all
		g := e.wwSelect(snap, rv, e.all, 1.0, rv.elapsed, e.cfg.MaxQueued, PhaseGlobal, rng, opt, d)
		e.applyResult(d, g, 1, PhaseGlobal)
		return
	}
	r := e.ringFor(rv.routingKey, rv.model, snap.Clusters)
	keyHash, b := r.keyHash(e.hashBuf, rv.key)
	e.hashBuf = b
	start := r.start(keyHash)
	kp := min(e.k, n)
	clear(e.seen)
	group := r.walk(start, kp, e.orig[:0], e.seen)
	e.orig = group
	if d.Trace != nil {
		clear(e.seen)
		walk := r.walk(start, n, nil, e.seen)
		d.Trace.Ring = &RingTrace{KeyHash: keyHash, Start: start, Entries: len(r.entries), Walk: IDs(snap, walk)}
		d.note(fmt.Sprintf("ring group (k'=%d): %v", kp, IDs(snap, group)))
	}
	order, x, scale := e.plan(snap, rv, group, true, false, d)
	d.OriginalOrder, d.AffinityOrder, d.AffinityGroup = group, order, order
	d.AffinityWait = x
	a := e.wwSelect(snap, rv, order, scale, rv.elapsed, e.cfg.MaxQueued, PhaseAffinity, rng, opt, d)
	if a.kind == KindSelected {
		d.OpenSet = order
		d.selected(a.idx, 1, PhaseAffinity)
		return
	}
	aw, awOK := a.wait, a.kind == KindWait
	if rv.elapsed < x {
		d.OpenSet = order
		rem := x - rv.elapsed
		d.Kind, d.Phase = KindWait, PhaseAffinity
		if awOK && aw < rem {
			d.Wait, d.Reason = aw, ReasonBucketUnlock
		} else {
			d.Wait, d.Reason = rem, ReasonAffinityWait
		}
		if d.Trace != nil { // formatting allocates: only for a trace
			d.note(fmt.Sprintf("affinity wait: global fallback opens at %.6g ms", DurationMs(x)))
		}
		return
	}
	d.OpenSet = e.all
	unlock := rv.elapsed - x
	g := e.wwSelect(snap, rv, e.all, 1.0, unlock, e.cfg.MaxQueued, PhaseGlobal, rng, opt, d)
	switch g.kind {
	case KindSelected:
		d.selected(g.idx, len(order)+1, PhaseGlobal)
	case KindWait:
		w, _ := minWait(aw, awOK, g.wait, true)
		d.Kind, d.Wait, d.Reason, d.Phase = KindWait, w, ReasonBucketUnlock, PhaseGlobal
	default:
		if awOK {
			d.Kind, d.Wait, d.Reason, d.Phase = KindWait, aw, ReasonBucketUnlock, PhaseAffinity
		} else {
			d.Kind, d.Reason, d.Phase = KindUnavailable, g.reason, PhaseGlobal
		}
	}
}

// applyResult copies a single-phase selection result into d.
func (e *Engine) applyResult(d *Decision, r selResult, depth int, phase Phase) {
	d.Phase = phase
	switch r.kind {
	case KindSelected:
		d.selected(r.idx, depth, phase)
	case KindWait:
		d.Kind, d.Wait, d.Reason = KindWait, r.wait, r.reason
	default:
		d.Kind, d.Reason = KindUnavailable, r.reason
	}
}
