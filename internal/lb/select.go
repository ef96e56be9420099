package lb

import (
	"math"
	"strings"
	"time"
)

// est is one surviving candidate of a selection run.
type est struct {
	idx   int32   // candidate index in the snapshot
	trace int32   // index into the phase trace's Candidates, or -1
	key   uint64  // comparator key (unsigned order = comparator order)
	score float64 // comparator value, for explain
	t     TTFT
}

// selResult is the result of one selection run (SELECT / WWSelect).
type selResult struct {
	kind   Kind
	idx    int           // chosen candidate (Selected)
	wait   time.Duration // Wait
	reason Reason        // Unavailable / Wait
}

// wwSelect is wait-and-widen's core selection over an ordered candidate
// list (wait-and-widen.md §3.3; pulsar.md §7.4 WWSelect): exclusions and
// the queue-SLO filter, the single-bucket shortcut, the bucket walk with
// unlock budget `unlock`, queue admission with slack mq, uniform sampling
// of min(n, count) candidates and the comparator. Both upstream shortcuts
// (two-ready pair, fast path; §3.4) have the same result distribution and
// are not reproduced separately.
func (e *Engine) wwSelect(snap *Snapshot, rv *reqView, list []int, scale float64, unlock time.Duration, mq uint64, phase Phase, rng Rand, opt Options, d *Decision) selResult {
	var pt *PhaseTrace
	if d.Trace != nil {
		d.Trace.Phases = append(d.Trace.Phases, PhaseTrace{Phase: phase, Scale: scale, ClockMs: Millis(DurationMs(unlock)),
			MaxQueued: mq, QueueLimitMs: Millis(e.maxQueueMs), HasQueueLimit: e.hasSLO, BucketMs: Millis(e.bucketMs)})
		pt = &d.Trace.Phases[len(d.Trace.Phases)-1]
	}
	ests := e.ests[:0]
	fastest, slowest := math.Inf(1), math.Inf(-1)
	allFinite := true
	sloDropped, excluded := 0, 0
	for pos, idx := range list {
		c := &snap.Clusters[idx]
		ti := int32(-1)
		if pt != nil {
			ti = int32(len(pt.Candidates))
			pt.Candidates = append(pt.Candidates, CandidateTrace{ClusterID: c.ClusterID, Cluster: idx, Rank: pos + 1, Bucket: -1})
		}
		if e.excl[idx] {
			excluded++
			if pt != nil {
				pt.Candidates[ti].Excluded = true
				pt.Candidates[ti].Why = "excluded: already tried by an earlier attempt"
			}
			continue
		}
		t := EstimateTTFT(c, rv.inputTokens, rv.priority, scale, e.cfg.IgnoreQueueTime, e.cfg.IgnoreInputProcessingTime)
		var score float64
		var key uint64
		if !e.pww {
			score, key = comparatorScore(e.cfg.Comparator, c, &t, rv.inputTokens)
		} else {
			score = t.QueueMs
		}
		slo := !e.hasSLO || t.QueueMs <= e.maxQueueMs
		if pt != nil {
			ct := &pt.Candidates[ti]
			ct.RTTMs, ct.QueueMs, ct.PrefillMs = Millis(t.RTTMs), Millis(t.QueueMs), Millis(t.PrefillMs)
			ct.BucketTTFTMs, ct.ScoreMs = Millis(t.BucketMs), Millis(score)
			ct.ComparatorTTFTMs = Millis(t.ComparatorMs)
			ct.UnlockAtMs = Millis(math.Inf(1))
			ct.SLOEligible = slo
			ct.HasCapacity = HasCapacity(&c.Stats, mq)
			if !slo {
				ct.Why = "queue estimate above the queue-SLO limit"
			}
		}
		if !slo {
			sloDropped++
			continue
		}
		if isFinite(t.BucketMs) {
			if t.BucketMs < fastest {
				fastest = t.BucketMs
			}
			if t.BucketMs > slowest {
				slowest = t.BucketMs
			}
		} else {
			allFinite = false
		}
		ests = append(ests, est{idx: int32(idx), trace: ti, key: key, score: score, t: t})
	}
	e.ests = ests
	res := selResult{kind: KindUnavailable, idx: -1}
	if len(ests) == 0 {
		switch {
		case sloDropped > 0:
			res.reason = ReasonQueueSLO
		case excluded > 0:
			res.reason = ReasonAllExcluded
		default:
			res.reason = ReasonNoCandidates
		}
		e.finishPhase(pt, res)
		return res
	}
	if !isFinite(fastest) {
		res.reason = ReasonNoFiniteTTFT
		if pt != nil {
			for i := range ests {
				pt.Candidates[ests[i].trace].Why = "TTFT is infinite (no valid capacity signal)"
			}
		}
		e.finishPhase(pt, res)
		return res
	}
	unlocked := len(ests)
	var nextWait time.Duration
	hasNext := false
	// originMs is the phase clock's origin as request elapsed time (trace
	// only: bucket unlock instants).
	originMs := DurationMs(rv.elapsed - unlock)
	if allFinite && slowest-fastest <= e.bucketMs {
		if pt != nil {
			pt.SingleBucket = true
			for i := range ests {
				ct := &pt.Candidates[ests[i].trace]
				ct.Bucket, ct.Unlocked, ct.UnlockAtMs = 0, true, Millis(originMs)
			}
		}
	} else {
		sortEsts(ests, snap)
		budget := DurationMs(unlock)
		start := math.NaN()
		bucket := 0
		cum := 0.0 // trace only: unlock budget spent up to the current bucket
		unlocked = 0
		for i := range ests {
			b := ests[i].t.BucketMs
			if !isFinite(b) {
				break
			}
			if math.IsNaN(start) {
				start = b
			}
			gap := b - start
			if gap > e.bucketMs {
				need := gap * e.cfg.NextBucketUnlockFactor
				if budget < need {
					for j := i; j < len(ests); j++ {
						if isFinite(ests[j].t.BucketMs) && HasCapacity(&snap.Clusters[ests[j].idx].Stats, mq) {
							if w, ok := durationFromSecsF64((need - budget) / 1000.0); ok {
								nextWait, hasNext = w.duration(), true
							}
							break
						}
					}
					if pt != nil {
						lcum, lbucket, lstart := cum, bucket, start
						for j := i; j < len(ests); j++ {
							ct := &pt.Candidates[ests[j].trace]
							bj := ests[j].t.BucketMs
							if !isFinite(bj) {
								ct.Why = "TTFT is infinite (no valid capacity signal)"
								continue
							}
							if bj-lstart > e.bucketMs {
								lcum += (bj - lstart) * e.cfg.NextBucketUnlockFactor
								lbucket++
								lstart = bj
							}
							ct.Why = "in a TTFT bucket that is still locked"
							ct.Bucket, ct.UnlockAtMs = lbucket, Millis(originMs+lcum)
						}
					}
					break
				}
				budget -= need
				cum += need
				start = b
				bucket++
			}
			if pt != nil {
				ct := &pt.Candidates[ests[i].trace]
				ct.Bucket, ct.Unlocked, ct.UnlockAtMs = bucket, true, Millis(originMs+cum)
			}
			unlocked++
		}
		if pt != nil {
			for j := unlocked; j < len(ests); j++ {
				if !isFinite(ests[j].t.BucketMs) {
					pt.Candidates[ests[j].trace].Why = "TTFT is infinite (no valid capacity signal)"
				}
			}
		}
	}
	capl := e.capl[:0]
	for i := 0; i < unlocked; i++ {
		if HasCapacity(&snap.Clusters[ests[i].idx].Stats, mq) {
			capl = append(capl, int32(i))
		} else if pt != nil {
			pt.Candidates[ests[i].trace].Why = "unlocked but no capacity (queue admission)"
		}
	}
	e.capl = capl
	if len(capl) == 0 {
		if hasNext {
			res.kind, res.wait, res.reason = KindWait, nextWait, ReasonBucketUnlock
		} else {
			res.reason = ReasonNoCapacity
		}
		e.finishPhase(pt, res)
		return res
	}
	m := e.n
	if m > len(capl) {
		m = len(capl)
	}
	if opt.Probabilities {
		e.selectProbabilities(snap, ests, capl, m, d)
	}
	for i := 0; i < m; i++ {
		j := i + rng.IntN(len(capl)-i)
		capl[i], capl[j] = capl[j], capl[i]
	}
	best := capl[0]
	for _, p := range capl[1:m] {
		if e.lessSampled(snap, &ests[best], &ests[p]) {
			best = p
		}
	}
	res.kind, res.idx = KindSelected, int(ests[best].idx)
	if pt != nil {
		for _, p := range capl[:m] {
			ct := &pt.Candidates[ests[p].trace]
			ct.Sampled = true
			pt.Sampled = append(pt.Sampled, ct.ClusterID)
			ct.Why = "sampled; a lower comparator score won"
		}
		for _, p := range capl[m:] {
			pt.Candidates[ests[p].trace].Why = "unlocked with capacity; not sampled"
		}
		ct := &pt.Candidates[ests[best].trace]
		ct.Chosen = true
		ct.Why = "chosen: lowest comparator score among the sampled candidates"
	}
	e.finishPhase(pt, res)
	if pt != nil {
		pt.Chosen = snap.Clusters[res.idx].ClusterID
	}
	return res
}

// lessSampled reports whether y replaces the current best in the sampled
// scan: Rust's Iterator::min_by keeps the first minimum, replacing it only
// when compare(best, y) is Greater.
func (e *Engine) lessSampled(snap *Snapshot, best, y *est) bool {
	if !e.pww {
		return best.key > y.key
	}
	return compareLeastQueue(&snap.Clusters[best.idx], &snap.Clusters[y.idx], best.t.QueueMs, y.t.QueueMs) > 0
}

func (e *Engine) finishPhase(pt *PhaseTrace, r selResult) {
	if pt == nil {
		return
	}
	pt.Result = r.kind
	if r.kind == KindWait {
		pt.WaitMs = Millis(DurationMs(r.wait))
	}
}

// sortEsts sorts by (bucket TTFT in total order, cluster id bytes), the
// bucket walk's order (wait-and-widen.md §3.3 step 4). Insertion sort for
// the usual small lists, a merge-free shell of it otherwise.
func sortEsts(s []est, snap *Snapshot) {
	less := func(a, b *est) bool {
		ka, kb := totalKey(a.t.BucketMs), totalKey(b.t.BucketMs)
		if ka != kb {
			return ka < kb
		}
		return strings.Compare(snap.Clusters[a.idx].ClusterID, snap.Clusters[b.idx].ClusterID) < 0
	}
	// Shell sort with insertion-sort gaps; exact for any ordering.
	gaps := [...]int{57, 23, 10, 4, 1}
	for _, g := range gaps {
		if g >= len(s) {
			continue
		}
		for i := g; i < len(s); i++ {
			v := s[i]
			j := i
			for ; j >= g && less(&v, &s[j-g]); j -= g {
				s[j] = s[j-g]
			}
			s[j] = v
		}
	}
}

func isFinite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }
