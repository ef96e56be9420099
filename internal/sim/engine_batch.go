package sim

import "math"

// The batched engine (clusters[].engine: batched) schedules iterations the
// way vLLM's V1 scheduler does:
//
//   - Waiting requests (the queue, first come first served) are admitted
//     while fewer than max_num_seqs (concurrency) run and the request's
//     whole prompt fits in the KV capacity next to the contexts of the
//     running requests (kv_cache_tokens − Σ running input + generated
//     tokens); an idle cluster always admits its first request. Admission
//     matches the prompt's cached prefix (the block cache).
//   - Each iteration has a budget of max_num_batched_tokens: every
//     running request past its prefill decodes one token, then requests
//     in prefill take chunks of their remaining uncached prompt in
//     admission order (chunked prefill) while the budget lasts.
//   - step_ms = step_base_ms + step_prefill_ms_per_token · prefill tokens
//     + step_decode_ms_per_seq · decode sequences + step_kv_read_ms_per_token
//     · context tokens of the decode sequences (at least 1 µs).
//   - A request's first token leaves at the end of the iteration that
//     finishes its prefill; each later iteration adds one token; it ends
//     when it has output_tokens tokens.
//   - When the decode sequences' new tokens do not fit in the KV capacity,
//     the most recently admitted request is preempted (recompute, vLLM's
//     default): it drops its blocks and progress and waits again, ahead
//     of the queue.

// batchState is the batched engine's per-cluster state.
type batchState struct {
	run       []int32     // running requests in admission order
	preempted fifo[int32] // preempted requests, admitted before the queue
	stepOn    bool
	// A decode-only iteration that nothing can change repeats: the engine
	// schedules k of them as one event (start, dur each). An arrival that
	// could be admitted cuts the run at the next iteration boundary, so
	// every admission still happens at an iteration boundary, as if each
	// iteration were its own event. seq numbers the scheduled events
	// (stale ones are ignored).
	k          int64
	start, dur int64
	seq        uint32
	done       []int32 // batchStepDone's completions (kept to reuse its storage)
}

// noMacro turns the repetition off (tests compare both).
var noMacro = false

// batchArrive queues a request that reached a batched cluster (or
// refuses it) and starts an iteration when the cluster is idle.
func (r *runner) batchArrive(qi int32) {
	q := &r.reqs[qi]
	ci := q.cluster
	c := &r.clusters[ci]
	switch {
	case !c.up:
		r.refuse(qi)
		return
	case c.spec.QueueCapacity >= 0 && c.queue.len() >= c.spec.QueueCapacity && len(c.batch.run) >= c.spec.Concurrency:
		r.refuse(qi)
		return
	}
	if q.measured {
		c.accepted++
	}
	c.touch(r.now)
	c.queue.push(qi)
	c.queuedIn += q.input
	q.state = stQueued
	b := &c.batch
	switch {
	case !b.stepOn:
		r.batchStep(ci)
	case b.k > 1 && len(b.run) < c.spec.Concurrency:
		// Cut a repeated iteration at its next boundary.
		j := (r.now - b.start) / b.dur // whole iterations done
		if j+1 < b.k {
			b.k = j + 1
			b.seq++
			r.q.push(b.start+b.k*b.dur, evStep, ci, b.seq)
		}
	}
}

// batchAdmit admits waiting requests that fit.
func (r *runner) batchAdmit(ci int32) {
	c := &r.clusters[ci]
	b := &c.batch
	for len(b.run) < c.spec.Concurrency {
		var qi int32
		var src *fifo[int32]
		switch {
		case b.preempted.len() > 0:
			src = &b.preempted
		case c.queue.len() > 0:
			src = &c.queue
		default:
			return
		}
		qi = src.front()
		q := &r.reqs[qi]
		if len(b.run) > 0 && c.kvInUse+q.input > c.spec.KVCacheTokens {
			return // head of line waits for room (FCFS)
		}
		src.pop()
		c.touch(r.now)
		if src == &c.queue {
			c.queuedIn -= q.input
		}
		c.busy++
		b.run = append(b.run, qi)
		if !q.admitted {
			q.admitted = true
			r.recordWait(q, c)
		}
		cached := r.matchPrefix(q, c)
		if !q.counted {
			q.counted = true
			q.cached = cached
			r.countInput(q, c, cached)
		}
		q.prefillLeft = q.input - cached
		q.generated = 0
		c.kvInUse += q.input
		c.pendingIn += q.prefillLeft
		q.state = stPrefill
	}
}

// batchStep forms the next iteration of cluster ci and schedules its end.
func (r *runner) batchStep(ci int32) {
	c := &r.clusters[ci]
	b := &c.batch
	r.batchAdmit(ci)
	// Preempt (recompute) the newest requests until the decode tokens fit.
	for len(b.run) > 1 {
		decode := int64(0)
		for _, qi := range b.run {
			if r.reqs[qi].prefillLeft == 0 {
				decode++
			}
		}
		if c.kvInUse+decode <= c.spec.KVCacheTokens {
			break
		}
		r.preempt(ci)
	}
	if len(b.run) == 0 {
		b.stepOn = false
		return
	}
	budget := c.spec.MaxNumBatchedTokens
	var prefill, decodeSeqs, kvRead int64
	for _, qi := range b.run {
		q := &r.reqs[qi]
		q.chunk = 0
		if q.prefillLeft == 0 {
			decodeSeqs++
			kvRead += q.input + q.generated
			budget--
		}
	}
	for _, qi := range b.run {
		q := &r.reqs[qi]
		if q.prefillLeft > 0 && budget > 0 {
			q.chunk = min(q.prefillLeft, budget)
			budget -= q.chunk
			prefill += q.chunk
		}
	}
	s := c.spec
	ms := s.StepBaseMs + s.StepPrefillMsPerToken*float64(prefill) + s.StepDecodeMsPerSeq*float64(decodeSeqs) + s.StepKVReadMsPerToken*float64(kvRead)
	dur := max(satNs(math.Round(ms*1e6)), 1000)
	if prefill > 0 {
		c.prefillOn, c.prefillAt = true, r.now
	}
	// Repeat a decode-only iteration while nothing can change it: no
	// prefill, nobody waiting who could be admitted, the same step time
	// (no KV-read term), until the first completion or the KV limit.
	k := int64(1)
	canAdmit := len(b.run) < c.spec.Concurrency && (c.queue.len() > 0 || b.preempted.len() > 0)
	if !noMacro && prefill == 0 && !canAdmit && s.StepKVReadMsPerToken == 0 {
		k = math.MaxInt64
		for _, qi := range b.run {
			q := &r.reqs[qi]
			k = min(k, q.output-q.generated)
		}
		if room := (c.spec.KVCacheTokens - c.kvInUse) / decodeSeqs; room < k {
			k = room
		}
		k = max(min(k, maxDurNs/dur), 1)
	}
	b.k, b.start, b.dur = k, r.now, dur
	b.stepOn = true
	b.seq++
	r.q.push(r.now+k*dur, evStep, ci, b.seq)
}

// preempt sends the most recently admitted request back to wait.
func (r *runner) preempt(ci int32) {
	c := &r.clusters[ci]
	b := &c.batch
	qi := b.run[len(b.run)-1]
	b.run = b.run[:len(b.run)-1]
	q := &r.reqs[qi]
	c.touch(r.now)
	c.busy--
	c.kvInUse -= q.input + q.generated
	c.pendingIn -= q.prefillLeft
	r.releaseBlocks(q, c)
	q.noRoom = false
	q.prefillLeft, q.generated, q.chunk = 0, 0, 0
	q.state = stQueued
	b.preempted.push(qi)
	c.preemptions++
}

// batchStepDone applies an iteration's progress: prefill chunks, first
// tokens, decode tokens and completions; then starts the next one.
func (r *runner) batchStepDone(ci int32) {
	c := &r.clusters[ci]
	b := &c.batch
	if c.prefillOn {
		if lo := max(c.prefillAt, c.from); r.now > lo {
			c.prefillArea += float64(r.now - lo)
		}
		c.prefillOn = false
	}
	keep := b.run[:0]
	done := b.done[:0]
	for _, qi := range b.run {
		q := &r.reqs[qi]
		switch {
		case q.chunk > 0:
			q.prefillLeft -= q.chunk
			c.pendingIn -= q.chunk
			q.chunk = 0
			if q.prefillLeft == 0 {
				q.generated = 1
				c.kvInUse++
				q.firstAt = r.now
				r.emitFirstToken(qi)
				if q.generated >= q.output {
					done = append(done, qi)
					continue
				}
			}
		case q.prefillLeft == 0:
			q.generated += b.k
			c.kvInUse += b.k
			if q.generated >= q.output {
				done = append(done, qi)
				continue
			}
		}
		keep = append(keep, qi)
	}
	b.run = keep
	b.done = done
	for _, qi := range done {
		q := &r.reqs[qi]
		c.kvInUse -= q.generated - q.output // decodeDone takes input + output
		r.decodeDone(qi)
	}
	r.batchStep(ci)
}
