package sim

import (
	"time"

	"github.com/lcctl/lcctl/internal/lb"
)

// ---- router ----

func (r *runner) route(qi int32) {
	q := &r.reqs[qi]
	r.m.decisions++
	elapsed := r.now - q.arrival
	switch r.pol.Kind {
	case KindEngine:
		// Cleared, then set field by field: a literal assigned whole is
		// built aside and copied.
		rq := &r.req
		*rq = lb.Request{}
		rq.Model = r.models[q.model]
		rq.CacheAffinityKey = r.affinityKey(qi)
		rq.InputTokens, rq.HasInputTokens = uint64(q.input), true
		rq.Priority = r.wl.Priority
		rq.ExcludedClusterIDs = r.excluded(qi)
		rq.Elapsed = time.Duration(elapsed)
		rq.FirstClassification = q.pinned
		if q.rk >= 0 {
			rq.RoutingKey = r.rks[q.rk]
		}
		if q.hint >= 0 {
			rq.LastClusterID = r.ids[q.hint]
		}
		if v := r.wl.MaxWaitMs; v != nil {
			rq.MaxWaitMs = lb.Some(*v)
		}
		if v := r.wl.RequestSLOMs; v != nil {
			rq.RequestSLOMs = lb.Some(*v)
		}
		// The simulator reads the kind, the cluster and the session state
		// only: the engine may order just the ranks it looks at.
		st := r.engines[q.model].Step(&r.snap, rq, r.rng, lb.Options{PartialOrder: true})
		if r.opt.onStep != nil {
			r.opt.onStep(&r.snap, rq, st)
		}
		if st.Balanced && q.pinned == lb.SessionNone {
			q.pinned = st.Decision.Session
		}
		switch st.Outcome {
		case lb.OutcomeDispatch:
			r.dispatch(qi, r.viewIdx[st.Decision.Cluster])
		case lb.OutcomeWait:
			r.m.waits++
			next := st.RetryAt
			if !st.GenericRetry && r.recheck > 0 {
				next = min(next, time.Duration(elapsed+r.recheck))
			}
			r.q.push(max(q.arrival+int64(next), r.now+1), evRoute, qi, q.epoch)
		case lb.OutcomeError:
			r.fail(qi, &r.m.failBad)
		default:
			r.fail(qi, &r.m.failRejected)
		}
	case KindConsistentHash:
		rq := &r.req
		*rq = lb.Request{Model: r.models[q.model], CacheAffinityKey: r.affinityKey(qi), ExcludedClusterIDs: r.excluded(qi)}
		if q.rk >= 0 {
			rq.RoutingKey = r.rks[q.rk]
		}
		if i, _, ok := r.ch.Pick(&r.snap, rq); ok {
			r.dispatch(qi, r.viewIdx[i])
		} else {
			r.fail(qi, &r.m.failRejected)
		}
	case KindStickyLeastLoaded:
		excluded := r.excluded(qi)
		for i := range r.workers {
			r.healthy[i] = true
			for _, x := range excluded {
				if x == r.workers[i] {
					r.healthy[i] = false
				}
			}
		}
		id := ""
		if !q.payload {
			id = r.requestKey(qi)
		}
		p := r.sll.Route(r.workers, r.healthy, id, time.Duration(r.now))
		if p.Worker >= 0 {
			r.dispatch(qi, r.viewIdx[p.Worker])
		} else {
			r.fail(qi, &r.m.failRejected)
		}
	}
}

// dispatch reserves the cluster locally and sends the request.
func (r *runner) dispatch(qi, ci int32) {
	q := &r.reqs[qi]
	c := &r.clusters[ci]
	q.cluster, q.state, q.dispatchAt = ci, stInFlight, r.now
	if p := r.snapPos[ci]; p >= 0 {
		r.snap.Clusters[p].Stats.NumRunningQueries++
	}
	r.res[ci].push(r.now + c.halfRTT)
	r.q.push(r.now+c.halfRTT, evArrive, qi, q.epoch)
}

func (r *runner) fail(qi int32, counter *int64) {
	q := &r.reqs[qi]
	if q.measured {
		*counter++
	}
	r.m.lastEnd = r.now
	r.replayEnded(q, r.now)
	if q.sess >= 0 {
		r.endSession(q.sess)
	}
	r.freeRequest(qi)
}
