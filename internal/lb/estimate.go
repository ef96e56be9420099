package lb

import "math"

// TPSValid reports whether a capacity signal (tokens/s) is usable: > 0 and
// finite (wait-and-widen.md §2.1). NaN, negative values and +Inf are not.
func TPSValid(v float64) bool { return v > 0 && v <= math.MaxFloat64 }

// inputTPS is input_tps(c): last_mean_input_tps when valid, else 0.
func inputTPS(st *Stats) float64 {
	if TPSValid(st.LastMeanInputTPS) {
		return st.LastMeanInputTPS
	}
	return 0
}

// FreeSlot reports the free-slot rule of wait-and-widen.md §2.2:
// max_engine_concurrency > 0 and running < max (an unknown limit is never a
// free slot).
func FreeSlot(st *Stats) bool {
	return st.MaxEngineConcurrency > 0 && st.NumRunningQueries < st.MaxEngineConcurrency
}

// QueueMs is the priority-aware queue estimate of wait-and-widen.md §2.3
// (ms): 0 with a free slot; else the published estimate of the largest
// priority ≤ priority (0 when the map has entries but none qualifies);
// else ceil(queued/tps·1000) from the aggregate queue, 0 for an empty
// queue and +Inf without a valid capacity signal.
func QueueMs(st *Stats, priority uint32) float64 {
	if FreeSlot(st) {
		return 0
	}
	if m := st.QueueTimeEstimateMsByPriority; len(m) > 0 {
		for i := len(m) - 1; i >= 0; i-- {
			if m[i].Priority <= priority {
				return float64(m[i].QueueTimeMs)
			}
		}
		return 0
	}
	if st.QueuedInputSize == 0 {
		return 0
	}
	if TPSValid(st.LastMeanInputTPS) {
		return math.Ceil((float64(st.QueuedInputSize) / st.LastMeanInputTPS) * 1000.0)
	}
	return math.Inf(1)
}

// PrefillMs is the request's prefill estimate with scale s of
// wait-and-widen.md §2.4 (ms): 0 for no input tokens, +Inf without a valid
// capacity signal (even at s = 0), else ((tokens·s)/tps)·1000.
func PrefillMs(st *Stats, inputTokens uint64, scale float64) float64 {
	if inputTokens == 0 {
		return 0
	}
	if !TPSValid(st.LastMeanInputTPS) {
		return math.Inf(1)
	}
	// float64() keeps the product unfused with the caller's sum (docs/engine.md,
	// float functions).
	return float64(((float64(inputTokens) * scale) / st.LastMeanInputTPS) * 1000.0)
}

// HasCapacity is queue admission (wait-and-widen.md §2.7, pulsar.md §7.4):
// an unknown limit (0) always admits; otherwise running must be below
// max_engine_concurrency + maxQueued, the sum saturating at 2^64−1.
func HasCapacity(st *Stats, maxQueued uint64) bool {
	if st.MaxEngineConcurrency == 0 {
		return true
	}
	limit := st.MaxEngineConcurrency + maxQueued
	if limit < st.MaxEngineConcurrency {
		limit = math.MaxUint64
	}
	return st.NumRunningQueries < limit
}

// InputWorkSeconds is the input-work-seconds comparator score
// (wait-and-widen.md §2.10): (queued + request tokens) / input_tps seconds,
// 0 for no work, +Inf without a valid rate. No free-slot rule, no scale.
func InputWorkSeconds(st *Stats, inputTokens uint64) float64 {
	work := float64(st.QueuedInputSize) + float64(inputTokens)
	if work == 0 {
		return 0
	}
	rate := inputTPS(st)
	if rate <= 0 {
		return math.Inf(1)
	}
	return work / rate
}

// Utilization is the utilization comparator score: running /
// max(max_engine_concurrency, 1).
func Utilization(st *Stats) float64 {
	m := st.MaxEngineConcurrency
	if m < 1 {
		m = 1
	}
	return float64(st.NumRunningQueries) / float64(m)
}

// TTFT is the estimate triple of wait-and-widen.md §2.6 plus its parts
// (all ms).
type TTFT struct {
	// RTTMs, QueueMs and PrefillMs are the three terms (prefill at the
	// phase's scale).
	RTTMs, QueueMs, PrefillMs float64
	// BucketMs is rtt + queue + prefill with the ignore_* terms dropped;
	// ComparatorMs is rtt + queue + prefill (scale kept, flags ignored).
	BucketMs, ComparatorMs float64
}

// EstimateTTFT computes the TTFT triple of c for a request with
// inputTokens and priority at prefill scale s (wait-and-widen.md §2.6).
func EstimateTTFT(c *Cluster, inputTokens uint64, priority uint32, scale float64, ignoreQueue, ignorePrefill bool) TTFT {
	var t TTFT
	t.RTTMs = DurationMs(c.RTT)
	t.QueueMs = QueueMs(&c.Stats, priority)
	t.PrefillMs = PrefillMs(&c.Stats, inputTokens, scale)
	q, p := t.QueueMs, t.PrefillMs
	if ignoreQueue {
		q = 0
	}
	if ignorePrefill {
		p = 0
	}
	t.BucketMs = t.RTTMs + q + p
	t.ComparatorMs = t.RTTMs + t.QueueMs + t.PrefillMs
	return t
}

// totalKey maps a float64 to a uint64 whose unsigned order is IEEE total
// order (Rust f64::total_cmp): equal keys ⇔ identical bits.
func totalKey(f float64) uint64 {
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// comparatorScore returns the comparator's value for explain and a key
// whose unsigned order is the comparator's order (wait-and-widen.md §2.10;
// ttft and queue-time reuse the phase's estimate).
func comparatorScore(cmp Comparator, c *Cluster, t *TTFT, inputTokens uint64) (float64, uint64) {
	switch cmp {
	case CompareQueueTime:
		return t.QueueMs, totalKey(t.QueueMs)
	case CompareInputWorkSeconds:
		v := InputWorkSeconds(&c.Stats, inputTokens)
		return v, totalKey(v)
	case CompareUtilization:
		v := Utilization(&c.Stats)
		return v, totalKey(v)
	case CompareNumRequestsQueued:
		return float64(c.Stats.QueueSize), c.Stats.QueueSize
	default:
		return t.ComparatorMs, totalKey(t.ComparatorMs)
	}
}

// compareLeastQueue is pulsar-wait-and-widen's fixed comparator (pulsar.md
// §7.4, upstream estimates.rs compare_least_queue_time): least queue
// estimate (total order), then least running/max ratio, comparing running
// counts instead when either limit is 0. It is not always transitive, so
// callers scan with it exactly as Rust's Iterator::min_by does.
func compareLeastQueue(a, b *Cluster, qa, qb float64) int {
	ka, kb := totalKey(qa), totalKey(qb)
	switch {
	case ka < kb:
		return -1
	case ka > kb:
		return 1
	}
	ma, mb := a.Stats.MaxEngineConcurrency, b.Stats.MaxEngineConcurrency
	if ma == 0 || mb == 0 {
		ra, rb := a.Stats.NumRunningQueries, b.Stats.NumRunningQueries
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	}
	pa := totalKey(float64(a.Stats.NumRunningQueries) / float64(ma))
	pb := totalKey(float64(b.Stats.NumRunningQueries) / float64(mb))
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return 0
}
