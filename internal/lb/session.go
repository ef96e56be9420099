package lb

import (
	"fmt"
	"time"
)

// plan applies session.md §7 steps 2–5 to the algorithm's original
// affinity order orig and returns the plan (order, X, scale). Without the
// flag or without an affinity key the configured X and scale apply to the
// unmodified order and nothing is classified. insertTruncate selects
// wait-and-widen's promotion mode; pww uses "keep" (session.md §4).
// ranked is sessionRules'.
//
// The classification is pinned by Request.FirstClassification; promotion
// is recomputed from the current candidates on every decision. The
// reported Promoted flag of a pinned "returning" request is recomputed
// too: formats.md has no field for the pinned flag (decision recorded in
// the engineering note; session.md §11 item 3).
func (e *Engine) plan(snap *Snapshot, rv *reqView, orig []int, insertTruncate, ranked bool, d *Decision) ([]int, time.Duration, float64) {
	last, x, scale := e.sessionRules(snap, rv, ranked, d)
	if last < 0 {
		return orig, x, scale
	}
	return e.promote(snap, orig, last, insertTruncate, d), x, scale
}

// sessionRules is the classification part of plan (session.md §7 steps
// 2–4): it sets d.Session and returns X, the prefill scale, and the last
// cluster's candidate index when the order is to be promoted (a returning
// session whose last cluster is a candidate), else -1. ranked says that
// e.rankSet describes snap (a Pulsar ranking began this decision): the last
// cluster is then found through its id map instead of a scan.
func (e *Engine) sessionRules(snap *Snapshot, rv *reqView, ranked bool, d *Decision) (int, time.Duration, float64) {
	x, scale := e.x, e.cfg.CacheAffinityInputTokensScale
	if !e.cfg.LastClusterAffinity || !rv.hasKey {
		if e.cfg.LastClusterAffinity {
			d.note("session rules skipped: no cache affinity key")
		}
		return -1, x, scale
	}
	last := -1
	switch {
	case rv.hasLast && ranked && len(snap.Clusters) > indexScanMax:
		last = e.rankSet.index(rv.last)
	case rv.hasLast:
		last = snap.Index(rv.last)
	}
	state := rv.pinned
	if state == SessionNone {
		switch {
		case !rv.hasLast:
			state = SessionNew
		case last < 0:
			state = SessionStale
		default:
			state = SessionReturning
		}
	}
	d.Session = state
	if state != SessionReturning {
		if d.Trace != nil { // formatting allocates: only for a trace
			d.note(fmt.Sprintf("session %s: affinity wait 0, prefill scale 1.0, order unchanged", state))
		}
		return -1, 0, 1.0
	}
	if last < 0 {
		d.note("session returning (pinned) but the last cluster is no longer a candidate: order unchanged")
	}
	return last, x, scale
}

// indexScanMax is the candidate count up to which a scan of the snapshot
// finds a cluster id faster than the candidate set's map.
const indexScanMax = 32

// promote is plan's step 5 for a returning session whose last cluster is
// candidate last: the order with last moved (or, insertTruncate, inserted)
// to the front (session.md §4), in e.order.
func (e *Engine) promote(snap *Snapshot, orig []int, last int, insertTruncate bool, d *Decision) []int {
	order := e.order[:0]
	pos := -1
	for i, idx := range orig {
		if idx == last {
			pos = i
			break
		}
	}
	switch {
	case len(orig) > 0 && pos == 0:
		order = append(order, orig...)
	case pos > 0:
		d.Promoted = true
		order = append(order, last)
		order = append(order, orig[:pos]...)
		order = append(order, orig[pos+1:]...)
	case insertTruncate && len(orig) > 0:
		d.Promoted = true
		order = append(order, last)
		order = append(order, orig[:len(orig)-1]...)
	default:
		order = append(order, orig...)
	}
	e.order = order
	if d.Trace != nil {
		switch {
		case d.Promoted:
			d.note(fmt.Sprintf("session returning: last cluster %s promoted to the front", snap.Clusters[last].ClusterID))
		case pos == 0:
			d.note(fmt.Sprintf("session returning: last cluster %s already first", snap.Clusters[last].ClusterID))
		default:
			d.note(fmt.Sprintf("session returning: last cluster %s is not in the ranking; order kept", snap.Clusters[last].ClusterID))
		}
	}
	return order
}

// SessionSelection returns the `selection` label Stargate records in
// stargate_routing_session_selections_total for a selected, classified
// decision (session.md §6.1): for returning sessions "primary" iff the
// chosen cluster is the hinted last cluster; for new and stale sessions
// "primary" iff rank depth ≤ the configured k (unset or 0 counts as 1 —
// so with fewer candidates than k a wait-and-widen global fallback counts
// as primary, the quirk of wait-and-widen.md §8 item 9). It returns ""
// when the decision did not select or was not classified.
func (e *Engine) SessionSelection(d *Decision, lastClusterID string) string {
	if d.Kind != KindSelected || d.Session == SessionNone {
		return ""
	}
	if d.Session == SessionReturning {
		hint, _ := HeaderString(lastClusterID)
		if d.ClusterID == hint {
			return "primary"
		}
		return "fallback"
	}
	k := max(e.cfg.CacheAffinityBackendSelectionCount, 1)
	if d.RankDepth <= k {
		return "primary"
	}
	return "fallback"
}
