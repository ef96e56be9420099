package sim

import (
	"slices"
	"time"

	"github.com/lcctl/lcctl/internal/lb"
)

// ---- snapshots ----

// publish records every cluster's state as the router will see it: the
// few numbers its ModelStats are made from (deliver makes them).
func (r *runner) publish(schedule bool) {
	slot := r.pubNext
	r.pubNext = (r.pubNext + 1) % len(r.pub)
	p := &r.pub[slot]
	p.at = r.now
	var bin int
	if schedule {
		bin = r.m.series.bin(r.now)
		r.m.series.LoadSamples[bin]++
	}
	cs := r.clusters
	up, recs := p.up[:len(cs)], p.recs[:len(cs)]
	if !schedule {
		for i := range cs {
			c := &cs[i]
			up[i] = c.up
			recs[i] = pubRec{busy: c.busy, queued: c.queue.len(), prefill: c.prefill.len(), waitIn: c.queuedIn + c.pendingIn, kvInUse: c.kvInUse}
		}
		return
	}
	load := r.m.series.Load[bin*len(cs):][:len(cs)]
	for i := range cs {
		c := &cs[i]
		up[i] = c.up
		recs[i] = pubRec{busy: c.busy, queued: c.queue.len(), prefill: c.prefill.len(), waitIn: c.queuedIn + c.pendingIn, kvInUse: c.kvInUse}
		load[i] += float64(c.busy) / float64(c.concurrency)
	}
	if r.stale == 0 {
		r.deliver(slot)
	} else {
		r.q.push(r.now+r.stale, evDeliver, int32(slot), 0)
	}
	for _, s := range r.stores {
		s.sweep(r.now)
	}
	r.q.push(r.now+r.pubEvery, evPublish, 0, 0)
}

// deliver makes a published snapshot the router's view: membership from
// the clusters' status, stats plus the reservations the snapshot does not
// yet account for (requests that reached their cluster after it was
// published). While the membership stays, a cluster's stats are written
// only when its published record differs from the one the view shows
// (runner.shown) or a reservation of it is dropped: between deliveries
// the view's running count grows by one per dispatch (dispatch), as the
// reservations do, so the fields stay what a fresh fill would write. The
// reservations of clusters out of the view are dropped when the
// membership changes, before the new view is filled.
func (r *runner) deliver(slot int) {
	p := &r.pub[slot]
	if r.snap.Clusters != nil && slices.Equal(r.viewUp, p.up) {
		recs, shown := p.recs[:len(r.clusters)], r.shown[:len(r.clusters)]
		for pos, ci := range r.viewIdx {
			rec := &recs[ci]
			if res := &r.res[ci]; res.len() > 0 && res.front() <= p.at {
				r.dropReservations(ci, p.at)
			} else if *rec == shown[ci] {
				continue
			}
			r.fillView(pos, ci, rec)
		}
		return
	}
	for i := range r.clusters {
		r.dropReservations(int32(i), p.at)
	}
	copy(r.viewUp, p.up)
	r.snap.Clusters = r.snap.Clusters[:0]
	r.viewIdx = r.viewIdx[:0]
	r.workers = r.workers[:0]
	for i := range r.clusters {
		r.snapPos[i] = -1
		if !p.up[i] {
			continue
		}
		c := &r.clusters[i]
		r.snapPos[i] = int32(len(r.snap.Clusters))
		r.viewIdx = append(r.viewIdx, int32(i))
		r.workers = append(r.workers, c.id)
		r.snap.Clusters = append(r.snap.Clusters, lb.Cluster{
			ClusterID: c.id,
			RTT:       time.Duration(msToNs(c.spec.RTTMs)),
		})
	}
	r.healthy = make([]bool, len(r.workers))
	// The candidate set changes here only: ids come from the
	// membership, every status is active, and the weights
	// (LastMeanInputTPS, MaxInputTPS) are the clusters' constant
	// specs, so a new membership is a new lb.Snapshot.Version.
	r.snap.Version++
	for pos, ci := range r.viewIdx {
		r.fillView(pos, ci, &p.recs[ci])
	}
}

// dropReservations drops cluster ci's reservations of requests that
// reached it by at (the snapshot published then counts them) and reports
// whether there were any.
func (r *runner) dropReservations(ci int32, at int64) bool {
	res := &r.res[ci]
	dropped := false
	for res.len() > 0 && res.front() <= at {
		res.pop()
		dropped = true
	}
	return dropped
}

// fillView writes cluster ci's stats at view position pos from its
// published record and its reservations.
func (r *runner) fillView(pos int, ci int32, rec *pubRec) {
	r.shown[ci] = *rec
	dst := &r.snap.Clusters[pos].Stats
	fillStats(dst, &r.pubConst[ci], rec)
	dst.NumRunningQueries += uint64(r.res[ci].len())
}

// pubRec is one cluster's published state.
type pubRec struct {
	busy, queued, prefill int   // slots in use, requests waiting for one, requests in the prefill pipeline
	waitIn                int64 // input tokens queued or admitted and not yet prefilled
	kvInUse               int64 // KV tokens held by running requests
}

// pubConst is what a cluster's ModelStats take from its spec.
type pubConst struct {
	prefillTPS, maxInputTPS, decodeTPS float64 // tokens/s
	concurrency, kvTokens              int64
}

func newPubConst(s *ClusterSpec) pubConst {
	maxIn := s.MaxInputTPS
	if maxIn == 0 {
		maxIn = s.PrefillTPS
	}
	return pubConst{prefillTPS: s.PrefillTPS, maxInputTPS: maxIn, decodeTPS: s.DecodeTPS, concurrency: int64(s.Concurrency), kvTokens: s.KVCacheTokens}
}

// fillStats writes the ModelStats of a cluster's published state into
// the router's view, every field (TestFillStats): the simulator never
// publishes per-priority queue estimates (the slice stays nil), so the
// scalar fields are the whole value. Field by field: a whole-struct store
// would go through the pointer-aware copy.
func fillStats(st *lb.Stats, k *pubConst, p *pubRec) {
	used := min(max(p.kvInUse, 0), k.kvTokens)
	st.LastMeanInputTPS = k.prefillTPS
	st.MaxInputTPS = k.maxInputTPS
	st.OutputTPS = float64(p.busy-p.prefill) * k.decodeTPS
	st.MaxOutputTPS = float64(k.concurrency) * k.decodeTPS
	st.QueueSize = uint64(p.queued)
	st.QueuedInputSize = uint64(max(p.waitIn, 0))
	st.KVCacheCapacityTokens = uint64(k.kvTokens)
	st.KVCacheUsedTokens = uint64(used)
	st.KVCacheFreeTokens = uint64(k.kvTokens - used)
	st.NumRunningQueries = uint64(p.busy + p.queued)
	st.MaxEngineConcurrency = uint64(k.concurrency)
	st.TotalQueryInputSize = 0
	st.InputProcessingQueries = uint64(p.prefill)
	st.OutputGenerationQueries = uint64(p.busy - p.prefill)
}
