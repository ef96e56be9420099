package sim

import (
	"math"
)

// ---- clusters ----

func (r *runner) arrive(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	q.clusterArrival = r.now
	switch {
	case !c.up:
		r.refuse(qi)
	case c.busy < c.spec.Concurrency:
		if q.measured {
			c.accepted++
		}
		r.admit(qi)
	case c.spec.QueueCapacity < 0 || c.queue.len() < c.spec.QueueCapacity:
		if q.measured {
			c.accepted++
		}
		c.touch(r.now)
		c.queue.push(qi)
		c.queuedIn += q.input
		q.state = stQueued
	default:
		r.refuse(qi)
	}
}

// refuse sends a refusal back to the router, which retries elsewhere.
func (r *runner) refuse(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	if q.measured {
		c.refused++
	}
	q.state = stRefused
	q.epoch++
	r.q.push(r.now+c.halfRTT, evRefused, qi, q.epoch)
}

func (r *runner) refusedBack(qi int32) {
	q := &r.reqs[qi]
	q.attempts++
	if int(q.attempts) >= r.sc.Router.MaxAttempts {
		r.fail(qi, &r.m.failRefused)
		return
	}
	q.excluded = append(q.excluded, r.clusters[q.cluster].id)
	q.state = stRouting
	r.route(qi)
}

// hotKey is the KV identity of a hot set's shared prefix.
func hotKey(i int32) uint64 { return 1<<63 | uint64(i) }

func (r *runner) admit(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	c.touch(r.now)
	c.busy++
	wait := r.now - q.clusterArrival
	if q.measured {
		r.m.queueWait.Add(wait)
		r.m.routeWait.Add(q.dispatchAt - q.arrival)
		c.waitSum += float64(wait)
		c.waitN++
	}
	cached := min(c.kv.take(q.sessID), q.input)
	if q.hot >= 0 {
		h := min(c.kv.peek(hotKey(q.hot)), r.wl.HotSet.PrefixTokens, q.input)
		cached = max(cached, h)
	}
	q.cached = cached
	c.kvInUse += q.input + q.output
	c.kv.shrink(c.spec.KVCacheTokens - c.kvInUse)
	if q.measured {
		r.m.inTok += q.input
		r.m.cachedTok += cached
		c.inTok += q.input
		c.cachedTok += cached
	}
	b := r.m.series.bin(r.now)
	r.m.series.Bins[b].InputTokens += q.input
	r.m.series.Bins[b].CachedTokens += cached
	q.state = stPrefill
	c.prefill.push(qi)
	c.pendingIn += q.input - cached
	if !c.prefillOn {
		r.startPrefill(q.cluster)
	}
}

func (r *runner) startPrefill(ci int32) {
	c := &r.clusters[ci]
	for c.prefill.len() > 0 {
		qi := c.prefill.front()
		q := &r.reqs[qi]
		tokens := q.input - q.cached
		if tokens <= 0 {
			c.prefill.pop()
			r.firstToken(qi)
			continue
		}
		dur := satNs(math.Ceil(float64(tokens) * c.nsPerIn))
		c.prefillOn, c.prefillAt = true, r.now
		r.q.push(r.now+dur, evPrefillDone, ci, c.epoch)
		return
	}
	c.prefillOn = false
}

func (r *runner) prefillDone(ci int32) {
	c := &r.clusters[ci]
	qi := c.prefill.pop()
	q := &r.reqs[qi]
	c.pendingIn -= q.input - q.cached
	if lo := max(c.prefillAt, c.from); r.now > lo {
		c.prefillArea += float64(r.now - lo)
	}
	c.prefillOn = false
	r.firstToken(qi)
	r.startPrefill(ci)
}

// firstToken: the response headers and first token leave the cluster; they
// reach the gateway half an RTT later, when the gateway writes the store.
func (r *runner) firstToken(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	at := r.now + c.halfRTT
	q.ttft = at - q.arrival
	if q.measured {
		r.m.ttft.Add(q.ttft)
		if q.hint >= 0 {
			r.m.returning++
			if q.hint != q.cluster {
				r.m.left++
			}
		}
	}
	b := r.m.series.bin(at)
	r.m.series.Bins[b].FirstTokens++
	if q.ttft <= r.slo {
		r.m.series.Bins[b].Good++
	}
	if q.storeKey != 0 {
		r.stores[q.replica].set(q.storeKey, q.cluster, at)
	}
	q.state = stDecode
	dur := satNs(math.Ceil(float64(q.output) * c.nsPerOut))
	r.q.push(r.now+dur, evDecodeDone, qi, q.epoch)
}

func (r *runner) decodeDone(qi int32) {
	q := &r.reqs[qi]
	ci := q.cluster
	c := &r.clusters[ci]
	c.touch(r.now)
	c.busy--
	c.kvInUse -= q.input + q.output
	budget := c.spec.KVCacheTokens - c.kvInUse
	if q.hot >= 0 {
		c.kv.insert(hotKey(q.hot), min(r.wl.HotSet.PrefixTokens, q.input), budget)
	}
	c.kv.insert(q.sessID, q.input+q.output, budget)
	if q.measured {
		c.served++
		c.sojourn += float64(r.now - q.clusterArrival)
	}
	end := r.now + c.halfRTT
	r.m.lastEnd = max(r.m.lastEnd, end)
	if q.measured {
		r.m.completed++
		if q.ttft <= r.slo {
			r.m.good++
		}
	}
	if si := q.sess; si >= 0 {
		s := &r.sessions[si]
		s.context = q.input + q.output
		s.turn++
		s.turnsLeft--
		if s.turnsLeft > 0 && !r.stopIssuing() {
			r.srcProxy.p = &s.pcg
			think := sToNs(r.dThink.sample(r.srng))
			r.q.push(end+max(think, 0), evTurn, si, 0)
		} else {
			r.endSession(si)
		}
	}
	r.freeRequest(qi)
	if c.queue.len() > 0 && c.busy < c.spec.Concurrency {
		c.touch(r.now)
		next := c.queue.pop()
		c.queuedIn -= r.reqs[next].input
		r.admit(next)
	}
}

// ---- cluster events ----

func (r *runner) clusterEvent(i int) {
	e := &r.sc.Events[i]
	ci := int32(-1)
	for j := range r.clusters {
		if r.clusters[j].id == e.Cluster {
			ci = int32(j)
		}
	}
	if ci < 0 {
		return
	}
	c := &r.clusters[ci]
	switch e.Action {
	case "drain":
		c.up = false
	case "restore":
		c.up = true
	case "fail":
		c.up = false
		c.touch(r.now)
		c.epoch++
		for qi := range r.reqs {
			q := &r.reqs[qi]
			if q.cluster != ci {
				continue
			}
			switch q.state {
			case stQueued, stPrefill:
				r.refuse(int32(qi))
			case stDecode:
				r.fail(int32(qi), &r.m.failStream)
			}
		}
		c.busy = 0
		c.queue.clear()
		c.prefill.clear()
		c.prefillOn = false
		c.queuedIn, c.pendingIn, c.kvInUse = 0, 0, 0
		c.kv.clear()
	}
}
