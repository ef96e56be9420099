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
//     when it has output_tokens tokens. A prompt is never wholly cached
//     (matchPrefix leaves its last block to compute, as vLLM does), so
//     every request with a prompt prefills at least one token; an empty
//     prompt has its first token at the end of its first iteration.
//   - When the decode sequences' new tokens do not fit in the KV capacity,
//     the most recently admitted request is preempted (recompute, vLLM's
//     default): it drops its blocks and progress and waits again, ahead
//     of the queue.

// batchState is the batched engine's per-cluster state.
type batchState struct {
	run       []running   // running requests in admission order
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

// running is a running request's progress, kept beside the others of its
// cluster so that an iteration walks one small array instead of the
// requests themselves.
type running struct {
	qi            int32
	input, output int64 // the request's tokens
	prefillLeft   int64 // uncached prompt tokens still to prefill
	generated     int64 // output tokens so far
	chunk         int64 // prefill tokens in the current iteration
	decoding      bool  // the first token has left: one token per iteration
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
	r.enqueue(qi)
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
		b.run = append(b.run, running{qi: qi, input: q.input, output: q.output, prefillLeft: q.input - cached})
		c.kvInUse += q.input
		c.pendingIn += q.input - cached
		q.state = stPrefill
	}
}

// batchStep forms the next iteration of cluster ci and schedules its end.
func (r *runner) batchStep(ci int32) {
	c := &r.clusters[ci]
	b := &c.batch
	r.batchAdmit(ci)
	// Preempt (recompute) the newest requests until the decode tokens fit.
	decode := int64(0)
	for i := range b.run {
		if b.run[i].decoding {
			decode++
		}
	}
	for len(b.run) > 1 && c.kvInUse+decode > c.spec.KVCacheTokens {
		if b.run[len(b.run)-1].decoding {
			decode--
		}
		r.preempt(ci)
	}
	if len(b.run) == 0 {
		b.stepOn = false
		return
	}
	// Every decode sequence takes one token of the budget, then requests
	// in prefill take chunks in admission order.
	budget := c.spec.MaxNumBatchedTokens - decode
	var prefill, kvRead int64
	firsts := false              // a first token leaves at this iteration's end
	left := int64(math.MaxInt64) // fewest output tokens still to generate
	for i := range b.run {
		e := &b.run[i]
		e.chunk = 0
		switch {
		case e.decoding:
			kvRead += e.input + e.generated
		case e.prefillLeft == 0: // an empty prompt
			firsts = true
		case budget > 0:
			e.chunk = min(e.prefillLeft, budget)
			budget -= e.chunk
			prefill += e.chunk
		}
		left = min(left, e.output-e.generated)
	}
	s := c.spec
	ms := s.StepBaseMs + s.StepPrefillMsPerToken*float64(prefill) + s.StepDecodeMsPerSeq*float64(decode) + s.StepKVReadMsPerToken*float64(kvRead)
	dur := max(satNs(math.Round(ms*1e6)), 1000)
	if prefill > 0 {
		c.prefillOn, c.prefillAt = true, r.now
	}
	// Repeat a decode-only iteration while nothing can change it: no
	// prefill, nobody waiting who could be admitted, the same step time
	// (no KV-read term), until the first completion or the KV limit.
	k := int64(1)
	canAdmit := len(b.run) < c.spec.Concurrency && (c.queue.len() > 0 || b.preempted.len() > 0)
	if !noMacro && prefill == 0 && !firsts && !canAdmit && s.StepKVReadMsPerToken == 0 {
		k = left
		if room := (c.spec.KVCacheTokens - c.kvInUse) / decode; room < k {
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
	e := b.run[len(b.run)-1]
	b.run = b.run[:len(b.run)-1]
	qi := e.qi
	q := &r.reqs[qi]
	c.touch(r.now)
	c.busy--
	c.kvInUse -= q.input + e.generated
	c.pendingIn -= e.prefillLeft
	r.releaseBlocks(q, c)
	q.noRoom = false
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
	// A finished request gives back what it generated beyond output here;
	// decodeDone takes input + output off the KV in use.
	n := 0              // requests kept, compacted in place
	decoded := int64(0) // decode tokens of the iterations
	done := b.done[:0]
	for i := range b.run {
		e := &b.run[i]
		switch {
		case !e.decoding:
			e.prefillLeft -= e.chunk
			c.pendingIn -= e.chunk
			e.chunk = 0
			if e.prefillLeft == 0 {
				e.decoding = true
				e.generated = 1
				c.kvInUse++
				r.reqs[e.qi].firstAt = r.now
				r.emitFirstToken(e.qi)
				if e.generated >= e.output {
					c.kvInUse -= e.generated - e.output
					done = append(done, e.qi)
					continue
				}
			}
		default:
			e.generated += b.k
			decoded += b.k
			if e.generated >= e.output {
				c.kvInUse -= e.generated - e.output
				done = append(done, e.qi)
				continue
			}
		}
		if n != i {
			b.run[n] = *e
		}
		n++
	}
	b.run = b.run[:n]
	c.kvInUse += decoded
	b.done = done
	for _, qi := range done {
		r.decodeDone(qi)
	}
	r.batchStep(ci)
}
