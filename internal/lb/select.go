package lb

import (
	"math"
	"slices"
	"strings"
	"time"
)

// est is one surviving candidate of a selection run.
type est struct {
	idx    int32   // candidate index in the snapshot
	trace  int32   // index into the phase trace's Candidates, or -1
	key    uint64  // comparator key (unsigned order = comparator order)
	score  float64 // comparator value, for explain
	bucket float64 // bucket TTFT (ms)
	queue  float64 // queue estimate (ms)
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
		ests = append(ests, est{idx: int32(idx), trace: ti, key: key, score: score, bucket: t.BucketMs, queue: t.QueueMs})
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
	sorted := false
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
		order := e.sortEsts(ests, snap)
		sorted = true
		budget := DurationMs(unlock)
		start := math.NaN()
		bucket := 0
		cum := 0.0 // trace only: unlock budget spent up to the current bucket
		unlocked = 0
		for i := range order {
			b := ests[order[i]].bucket
			if !isFinite(b) {
				break
			}
			if math.IsNaN(start) {
				start = b
			}
			gap := b - start
			if gap > e.bucketMs {
				need := float64(gap * e.cfg.NextBucketUnlockFactor) // unfused, as Rust
				if budget < need {
					for j := i; j < len(order); j++ {
						if x := &ests[order[j]]; isFinite(x.bucket) && HasCapacity(&snap.Clusters[x.idx].Stats, mq) {
							if w, ok := durationFromSecsF64((need - budget) / 1000.0); ok {
								nextWait, hasNext = w.duration(), true
							}
							break
						}
					}
					if pt != nil {
						lcum, lbucket, lstart := cum, bucket, start
						for j := i; j < len(order); j++ {
							ct := &pt.Candidates[ests[order[j]].trace]
							bj := ests[order[j]].bucket
							if !isFinite(bj) {
								ct.Why = "TTFT is infinite (no valid capacity signal)"
								continue
							}
							if bj-lstart > e.bucketMs {
								lcum += float64((bj - lstart) * e.cfg.NextBucketUnlockFactor)
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
				ct := &pt.Candidates[ests[order[i]].trace]
				ct.Bucket, ct.Unlocked, ct.UnlockAtMs = bucket, true, Millis(originMs+cum)
			}
			unlocked++
		}
		if pt != nil {
			for j := unlocked; j < len(order); j++ {
				if !isFinite(ests[order[j]].bucket) {
					pt.Candidates[ests[order[j]].trace].Why = "TTFT is infinite (no valid capacity signal)"
				}
			}
		}
	}
	capl := e.capl[:0]
	for i := 0; i < unlocked; i++ {
		p := int32(i)
		if sorted {
			p = e.sorted[i].pos
		}
		if HasCapacity(&snap.Clusters[ests[p].idx].Stats, mq) {
			capl = append(capl, p)
		} else if pt != nil {
			pt.Candidates[ests[p].trace].Why = "unlocked but no capacity (queue admission)"
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
	shufflePrefix(capl, m, rng)
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
			ct.Why = "sampled; another sampled candidate came first with a lower or equal score"
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

// shufflePrefix is the partial Fisher–Yates shuffle of wait-and-widen.md
// §3.3 step 7: for i in [0, m) swap position i with a uniform position in
// [i, len). The draw for the last position (a range of one) is skipped.
func shufflePrefix(s []int32, m int, rng Rand) {
	for i := 0; i < m; i++ {
		if n := len(s) - i; n > 1 {
			j := i + rng.IntN(n)
			s[i], s[j] = s[j], s[i]
		}
	}
}

// lessSampled reports whether y replaces the current best in the sampled
// scan: Rust's Iterator::min_by keeps the first minimum, replacing it only
// when compare(best, y) is Greater.
func (e *Engine) lessSampled(snap *Snapshot, best, y *est) bool {
	if !e.pww {
		return best.key > y.key
	}
	return compareLeastQueue(&snap.Clusters[best.idx], &snap.Clusters[y.idx], best.queue, y.queue) > 0
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

// smallSort is the length up to which insertion sort beats slices.SortFunc.
const smallSort = 12

// sortKey is a compact sort entry: the total-order key and the position
// in the caller's slice (ests or the Pulsar ranking).
type sortKey struct {
	key uint64
	pos int32
}

// sortKeys orders keys by (key, id) in place, id(pos) giving the cluster id
// of the entry at pos: ids are unique, so the order is strict. Both the
// bucket walk (wait-and-widen.md §3.3 step 4) and the Pulsar ranking
// (pulsar.md §4.4) sort this way. id is called only on equal keys.
func sortKeys(keys []sortKey, id func(pos int32) string) {
	cmp := func(a, b sortKey) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return strings.Compare(id(a.pos), id(b.pos))
	}
	if len(keys) > smallSort {
		slices.SortFunc(keys, cmp)
		return
	}
	for i := 1; i < len(keys); i++ {
		v := keys[i]
		j := i
		for ; j > 0 && cmp(v, keys[j-1]) < 0; j-- {
			keys[j] = keys[j-1]
		}
		keys[j] = v
	}
}

// sortEsts orders the survivors by (bucket TTFT in total order, cluster id
// bytes), the bucket walk's order (wait-and-widen.md §3.3 step 4; ids are
// unique, so the order is strict). It sorts compact keys in e.sorted and
// returns the positions in order (e.order32).
func (e *Engine) sortEsts(ests []est, snap *Snapshot) []int32 {
	keys := e.sorted[:0]
	for i := range ests {
		keys = append(keys, sortKey{totalKey(ests[i].bucket), int32(i)})
	}
	sortKeys(keys, func(pos int32) string { return snap.Clusters[ests[pos].idx].ClusterID })
	e.sorted = keys
	order := e.order32[:0]
	for _, k := range keys {
		order = append(order, k.pos)
	}
	e.order32 = order
	return order
}

func isFinite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }
