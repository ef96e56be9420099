package sim

import (
	"time"

	"github.com/lcctl/lcctl/internal/lb"
)

// ---- snapshots ----

// publish records every cluster's ModelStats as the router will see them.
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
	for i := range r.clusters {
		c := &r.clusters[i]
		s := c.spec
		p.up[i] = c.up
		st := &p.stats[i]
		maxIn := s.MaxInputTPS
		if maxIn == 0 {
			maxIn = s.PrefillTPS
		}
		used := min(max(c.kvInUse, 0), s.KVCacheTokens)
		// Field by field: the struct also holds the (always empty) per-priority
		// estimates slice, and a whole-struct store would go through the
		// pointer-aware copy; copyStats lists every field (TestCopyStats).
		st.LastMeanInputTPS = s.PrefillTPS
		st.MaxInputTPS = maxIn
		st.OutputTPS = float64(c.busy-c.prefill.len()) * s.DecodeTPS
		st.MaxOutputTPS = float64(s.Concurrency) * s.DecodeTPS
		st.QueueSize = uint64(c.queue.len())
		st.QueuedInputSize = uint64(max(c.queuedIn+c.pendingIn, 0))
		st.KVCacheCapacityTokens = uint64(s.KVCacheTokens)
		st.KVCacheUsedTokens = uint64(used)
		st.KVCacheFreeTokens = uint64(s.KVCacheTokens - used)
		st.NumRunningQueries = uint64(c.busy + c.queue.len())
		st.MaxEngineConcurrency = uint64(s.Concurrency)
		st.TotalQueryInputSize = 0
		st.InputProcessingQueries = uint64(c.prefill.len())
		st.OutputGenerationQueries = uint64(c.busy - c.prefill.len())
		if schedule {
			r.m.series.Load[bin*len(r.clusters)+i] += float64(c.busy) / float64(s.Concurrency)
		}
	}
	if !schedule {
		return
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
// published).
func (r *runner) deliver(slot int) {
	p := &r.pub[slot]
	changed := r.snap.Clusters == nil
	for i := range r.clusters {
		if r.viewUp[i] != p.up[i] {
			changed = true
		}
		for r.res[i].len() > 0 && r.res[i].front() <= p.at {
			r.res[i].pop()
		}
	}
	if changed {
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
	}
	for pos, ci := range r.viewIdx {
		dst := &r.snap.Clusters[pos].Stats
		copyStats(dst, &p.stats[ci])
		dst.NumRunningQueries += uint64(r.res[ci].len())
	}
}

// copyStats copies the published stats into the router's view. The
// simulator never publishes per-priority queue estimates (the slice stays
// nil), so the scalar fields are the whole value; TestCopyStats checks
// that every other field of lb.Stats is listed here.
func copyStats(dst, src *lb.Stats) {
	dst.LastMeanInputTPS = src.LastMeanInputTPS
	dst.MaxInputTPS = src.MaxInputTPS
	dst.OutputTPS = src.OutputTPS
	dst.MaxOutputTPS = src.MaxOutputTPS
	dst.QueueSize = src.QueueSize
	dst.QueuedInputSize = src.QueuedInputSize
	dst.KVCacheCapacityTokens = src.KVCacheCapacityTokens
	dst.KVCacheUsedTokens = src.KVCacheUsedTokens
	dst.KVCacheFreeTokens = src.KVCacheFreeTokens
	dst.NumRunningQueries = src.NumRunningQueries
	dst.MaxEngineConcurrency = src.MaxEngineConcurrency
	dst.TotalQueryInputSize = src.TotalQueryInputSize
	dst.InputProcessingQueries = src.InputProcessingQueries
	dst.OutputGenerationQueries = src.OutputGenerationQueries
}
