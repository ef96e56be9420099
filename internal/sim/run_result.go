package sim

import (
	"math"
)

// ---- results ----

func (r *runner) result() *Result {
	m := &r.m
	end := max(r.now, m.lastEnd)
	res := &Result{
		Policy:              r.pol.Name,
		Algorithm:           r.pol.Algorithm(r.models),
		LastClusterAffinity: r.pol.LastClusterAffinity(r.models),
		Source:              r.pol.Source,
		Models:              r.pol.Routes(r.models),
		Requests:            m.requests,
		Completed:           m.completed,
		Good:                m.good,
		Failures: FailureCounts{
			Rejected: m.failRejected, BadRequest: m.failBad,
			Refused: m.failRefused, Stream: m.failStream,
		},
		Decisions:         m.decisions,
		Waits:             m.waits,
		SimulatedS:        round(float64(end)/1e9, 6),
		TTFTMs:            quantiles(m.ttft),
		QueueWaitMs:       quantiles(m.queueWait),
		RouteWaitMs:       quantiles(m.routeWait),
		TPOTMs:            quantiles(m.tpot),
		InputTokens:       m.inTok,
		CachedTokens:      m.cachedTok,
		ReturningRequests: m.returning,
		LeftLastCluster:   m.left,
		TTFT:              m.ttft,
		Series:            m.series,
		BlockTokens:       r.blockTokens,
	}
	if r.trace != nil {
		st := r.trace.stats
		res.Trace = &st
	}
	res.Failed = m.failRejected + m.failBad + m.failRefused + m.failStream
	span := float64(end-r.warmup) / 1e9
	res.MeasuredS = round(math.Max(span, 0), 6)
	if span > 0 {
		res.GoodputRPS = round(float64(m.good)/span, 6)
		res.ThroughputRPS = round(float64(m.completed)/span, 6)
	}
	res.KVReuse = ratio(m.cachedTok, m.inTok)
	res.LeftLastClusterShare = ratio(m.left, m.returning)
	for i := range r.clusters {
		c := &r.clusters[i]
		cr := ClusterResult{
			ClusterID:    c.id,
			Accepted:     c.accepted,
			Refused:      c.refused,
			Served:       c.served,
			InputTokens:  c.inTok,
			CachedTokens: c.cachedTok,
			KVReuse:      ratio(c.cachedTok, c.inTok),
			Preemptions:  c.preemptions,
		}
		if span > 0 {
			ns := span * 1e9
			cr.Utilization = round(c.busyArea/(float64(c.spec.Concurrency)*ns), 6)
			cr.PrefillUtilization = round(c.prefillArea/ns, 6)
			cr.MeanInSystem = round(c.sysArea/ns, 6)
			cr.ArrivalRPS = round(float64(c.accepted)/span, 6)
		}
		if c.served > 0 {
			cr.MeanSojournMs = round(c.sojourn/float64(c.served)/1e6, 6)
		}
		if c.waitN > 0 {
			cr.MeanQueueWaitMs = round(c.waitSum/float64(c.waitN)/1e6, 6)
		}
		res.Clusters = append(res.Clusters, cr)
	}
	return res
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return round(float64(a)/float64(b), 6)
}

// round rounds x to d decimals (report stability; the simulation itself
// is exact).
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

func quantiles(h *Histogram) Quantiles {
	ms := func(ns float64) float64 { return round(ns/1e6, 3) }
	return Quantiles{
		P50:  ms(h.Quantile(0.50)),
		P90:  ms(h.Quantile(0.90)),
		P99:  ms(h.Quantile(0.99)),
		Mean: ms(h.Mean()),
		Max:  ms(float64(h.Max())),
	}
}
