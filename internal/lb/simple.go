package lb

import "math/big"

// eligibleList fills e.list with the non-excluded candidates in slice order.
func (e *Engine) eligibleList(snap *Snapshot) []int {
	list := e.list[:0]
	for i := range snap.Clusters {
		if !e.excl[i] {
			list = append(list, i)
		}
	}
	e.list = list
	return list
}

func emptyReason(snap *Snapshot) Reason {
	if len(snap.Clusters) == 0 {
		return ReasonNoCandidates
	}
	return ReasonAllExcluded
}

// decidePowerOfN is power-of-n (upstream power_of_n.rs): a uniform sample
// of min(sample_count, eligible) non-excluded candidates, the lowest
// comparator score wins, uniformly among ties. Rank depth 1.
func (e *Engine) decidePowerOfN(snap *Snapshot, rv *reqView, eligible int, rng Rand, opt Options, d *Decision) {
	d.Phase = PhaseSample
	if eligible == 0 {
		d.Reason = emptyReason(snap)
		return
	}
	list := e.eligibleList(snap)
	d.OpenSet = list
	ests := e.ests[:0]
	capl := e.capl[:0]
	// Scores are needed for every candidate only for probabilities and
	// the trace; otherwise only the sampled ones are scored.
	scoreAll := opt.Probabilities || d.Trace != nil
	for i, idx := range list {
		x := est{idx: int32(idx), trace: -1}
		if scoreAll {
			e.scorePowerOfN(snap, rv, &x)
		}
		ests = append(ests, x)
		capl = append(capl, int32(i))
	}
	e.ests, e.capl = ests, capl
	m := min(e.n, len(capl))
	if opt.Probabilities {
		e.selectProbabilities(snap, ests, capl, m, d)
	}
	shufflePrefix(capl, m, rng)
	if !scoreAll {
		for _, p := range capl[:m] {
			e.scorePowerOfN(snap, rv, &ests[p])
		}
	}
	best := capl[0]
	for _, p := range capl[1:m] {
		if ests[best].key > ests[p].key {
			best = p
		}
	}
	d.selected(int(ests[best].idx), 1, PhaseSample)
	if d.Trace != nil {
		pt := PhaseTrace{Phase: PhaseSample, Scale: 1, Result: KindSelected, Chosen: snap.Clusters[ests[best].idx].ClusterID}
		for i := range ests {
			x := &ests[i]
			t := EstimateTTFT(&snap.Clusters[x.idx], rv.inputTokens, rv.priority, 1.0, false, false)
			pt.Candidates = append(pt.Candidates, CandidateTrace{ClusterID: snap.Clusters[x.idx].ClusterID, Cluster: int(x.idx),
				RTTMs: Millis(t.RTTMs), QueueMs: Millis(t.QueueMs), PrefillMs: Millis(t.PrefillMs),
				BucketTTFTMs: Millis(t.BucketMs), ScoreMs: Millis(x.score), SLOEligible: true, Bucket: -1, HasCapacity: true,
				Why: "not sampled"})
		}
		for _, p := range capl[:m] {
			ct := &pt.Candidates[p]
			ct.Sampled = true
			ct.Why = "sampled; another sampled candidate came first with a lower or equal score"
			pt.Sampled = append(pt.Sampled, ct.ClusterID)
		}
		pt.Candidates[best].Chosen = true
		pt.Candidates[best].Why = "chosen: lowest comparator score among the sampled candidates"
		d.Trace.Phases = append(d.Trace.Phases, pt)
	}
}

// scorePowerOfN fills x's TTFT (scale 1, no ignore flags) and comparator
// score.
func (e *Engine) scorePowerOfN(snap *Snapshot, rv *reqView, x *est) {
	c := &snap.Clusters[x.idx]
	t := EstimateTTFT(c, rv.inputTokens, rv.priority, 1.0, false, false)
	x.bucket, x.queue = t.BucketMs, t.QueueMs
	x.score, x.key = comparatorScore(e.cfg.Comparator, c, &t, rv.inputTokens)
}

// decideRandom is random (upstream random.rs): uniform over the
// non-excluded candidates (the rejection-sampling shortcut has the same
// distribution).
func (e *Engine) decideRandom(snap *Snapshot, eligible int, rng Rand, opt Options, d *Decision) {
	d.Phase = PhaseSample
	if eligible == 0 {
		d.Reason = emptyReason(snap)
		return
	}
	list := e.eligibleList(snap)
	d.OpenSet = list
	d.selected(list[rng.IntN(len(list))], 1, PhaseSample)
	if opt.Probabilities {
		p := big.NewRat(1, int64(len(list)))
		f, _ := p.Float64()
		for _, idx := range list {
			e.choices = append(e.choices, Choice{Cluster: idx, P: f, Exact: p})
		}
		d.ChoicesExact = true
	}
}

// decideRoundRobin is round-robin (upstream round_robin.rs): the engine's
// counter modulo the number of non-excluded candidates picks the n-th of
// them in slice order; the counter advances only when a cluster is chosen.
// Deterministic given the counter.
func (e *Engine) decideRoundRobin(snap *Snapshot, eligible int, d *Decision) {
	d.Phase = PhaseSample
	if eligible == 0 {
		d.Reason = emptyReason(snap)
		return
	}
	list := e.eligibleList(snap)
	d.OpenSet = list
	slot := e.rr % uint64(len(list))
	e.rr++
	d.selected(list[slot], 1, PhaseSample)
}

// RoundRobinCounter returns the engine's round-robin counter (the number
// of round-robin choices made so far, modulo 2^64).
func (e *Engine) RoundRobinCounter() uint64 { return e.rr }

// SetRoundRobinCounter sets the counter, e.g. to replay a recorded state.
func (e *Engine) SetRoundRobinCounter(v uint64) { e.rr = v }
