package sim

import (
	"math"
)

// ---- clusters ----

func (r *runner) arrive(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	q.clusterArrival = r.now
	if c.batched {
		r.batchArrive(qi)
		return
	}
	switch {
	case !c.up:
		r.refuse(qi)
	case c.busy < c.concurrency:
		if q.measured {
			c.accepted++
		}
		r.admit(qi)
	case c.queueCap < 0 || c.queue.len() < c.queueCap:
		r.enqueue(qi)
	default:
		r.refuse(qi)
	}
}

// enqueue accepts a request onto its cluster's queue (both engines): it
// counts a measured request as accepted, records the queue's load and
// marks the request queued.
func (r *runner) enqueue(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	if q.measured {
		c.accepted++
	}
	c.touch(r.now)
	c.queue.push(qi)
	c.queuedIn += q.input
	q.state = stQueued
}

// refuse sends a refusal back to the router, which retries elsewhere.
func (r *runner) refuse(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	if q.measured {
		c.refused++
	}
	q.state = stRefused
	q.admitted, q.counted = false, false
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
	refs := &r.refs[qi]
	refs.excluded = append(refs.excluded[:q.attempts-1], r.ids[q.cluster])
	q.state = stRouting
	r.route(qi)
}

func (r *runner) admit(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	c.touch(r.now)
	c.busy++
	r.recordWait(q, c)
	cached := r.matchPrefix(q, c)
	q.cached = cached
	c.kvInUse += q.input + q.output
	r.countInput(q, c, cached)
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
	q.firstAt = r.now
	r.emitFirstToken(qi)
	dur := satNs(math.Ceil(float64(q.output) * c.nsPerOut))
	r.q.push(r.now+dur, evDecodeDone, qi, q.epoch)
}

// emitFirstToken records the first token (TTFT, the gateway's store
// write, the prompt's blocks) and moves the request to decode.
func (r *runner) emitFirstToken(qi int32) {
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
	switch {
	case q.ownStore:
		q.stored, q.storedAt = true, at
	case q.storeKey != 0:
		r.stores[q.replica].set(q.storeKey, q.cluster, at)
	}
	// The prompt's blocks are computed: later requests can reuse them.
	q.wrote = true
	r.writeBlocks(q, c, q.inBlocks)
	q.state = stDecode
}

func (r *runner) decodeDone(qi int32) {
	q := &r.reqs[qi]
	ci := q.cluster
	c := &r.clusters[ci]
	c.touch(r.now)
	c.busy--
	c.kvInUse -= q.input + q.output
	var buf [3]segment
	var segs []segment
	if !q.blocks {
		segs = r.segments(q, &buf)
	}
	r.finishSegments(q, c, segs)
	if q.measured {
		c.served++
		c.sojourn += float64(r.now - q.clusterArrival)
		if q.output > 1 {
			r.m.tpot.Add((r.now - q.firstAt) / (q.output - 1))
		}
	}
	end := r.now + c.halfRTT
	r.m.lastEnd = max(r.m.lastEnd, end)
	if q.measured {
		r.m.completed++
		if q.ttft <= r.slo {
			r.m.good++
		}
	}
	r.replayEnded(q, end)
	if si := q.sess; si >= 0 {
		// issueTurn advanced the session and drew the think time.
		if !q.lastTurn && !r.stopIssuing() {
			pos := q.chainAt[len(segs)-1]
			next := end + max(q.think, 0)
			// The store answers the next turn's lookup at next with this
			// turn's write while it is younger than the TTL (lcStore.get).
			stored := q.stored && next < q.storedAt+r.lcTTL
			r.q.push(next, evTurn, si, uint32(newTurnHint(q.cluster, pos, stored)))
		} else {
			r.endSession(si)
		}
	}
	r.freeRequest(qi)
	if !c.batched && c.queue.len() > 0 && c.busy < c.concurrency {
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
			q.held, q.noRoom = 0, false // the cache is cleared below
			switch q.state {
			case stQueued, stPrefill:
				r.refuse(int32(qi))
			case stDecode:
				r.fail(int32(qi), &r.m.failStream)
			}
		}
		c.busy = 0
		c.batch.run = c.batch.run[:0]
		c.batch.preempted.clear()
		c.batch.stepOn = false
		c.batch.seq++ // the iteration in flight is void
		c.queue.clear()
		c.prefill.clear()
		c.prefillOn = false
		c.queuedIn, c.pendingIn, c.kvInUse = 0, 0, 0
		c.kv.clear()
		c.cc.clear()
		c.kvInUse = 0
	}
}

// ---- block cache ----

// Blocks of synthetic and CSV-trace requests form chains: a session's
// prompt is the model's system prompt blocks, then (hot set sessions) the
// hot key's prefix blocks, then the session's own blocks. Only blocks
// wholly inside the system prompt are the model's, wholly inside the
// system prompt plus the hot prefix the hot key's; a block straddling a
// boundary is the next chain's. These requests use the cluster's
// chainCache; trace requests with hash ids use its blockCache with the
// ids themselves. Both hold the same state (chaincache.go).
const (
	saltSystem  = 0x73797374656d0001
	saltHot     = 0x686f747365740002
	saltSession = 0x73657373696f0003
)

// turnHint is what a session's next turn carries from the turn before, in
// its evTurn event: the cluster that served the previous turn (+ 1, in the
// high 12 bits), whether the gateway's store still holds that cluster for
// the session when the next turn arrives (bit 19), and where the session's
// chain sat in that cluster's chain cache (the low 19 bits; all ones when
// unknown or too large); 0 when there is none. The chain position is only
// a hint (chainCache.at checks it): the next prefix match there skips the
// chain index, a cache miss on wide scenarios. The store bit is exact: see
// ownStore.
type turnHint uint32

const (
	hintStored  = 1 << 19     // the store holds the cluster for the session
	hintPosMask = 1<<19 - 1   // the chain position's bits
	hintNoPos   = hintPosMask // no chain position
)

// newTurnHint is the hint of a turn served by cluster whose chain sat at
// pos (-1 unknown), stored telling whether the store still holds cluster
// when the next turn arrives; 0 when the cluster does not fit.
func newTurnHint(cluster, pos int32, stored bool) turnHint {
	if cluster < 0 || cluster+1 >= 1<<12 {
		return 0
	}
	h := uint32(cluster+1) << 20
	if pos < 0 || pos >= hintNoPos {
		h |= hintNoPos
	} else {
		h |= uint32(pos)
	}
	if stored {
		h |= hintStored
	}
	return turnHint(h)
}

// chain returns the hint's cluster and chain position.
func (h turnHint) chain() (cluster, pos int32, ok bool) {
	if h == 0 || h&hintPosMask == hintNoPos {
		return -1, -1, false
	}
	return int32(h>>20) - 1, int32(h & hintPosMask), true
}

// stored returns the cluster the store holds for the session, if any.
func (h turnHint) stored() (cluster int32, ok bool) {
	if h&hintStored == 0 {
		return -1, false
	}
	return int32(h>>20) - 1, true
}

// segment is a request's use of one chain: blocks [lo, hi) of the
// request are the chain's blocks [0, hi−lo).
type segment struct {
	key    uint64
	lo, hi int64
}

// sessionChainKey is the chain key of a session's (or trace session's)
// own blocks.
func sessionChainKey(sessID uint64) uint64 {
	return mix64(saltSession ^ sessID*0x9e3779b97f4a7c15)
}

// segments lists the request's chains in prompt order.
func (r *runner) segments(q *request, out *[3]segment) []segment {
	segs := out[:0]
	sysB, hotB := int64(0), int64(0)
	if q.sess >= 0 {
		sysB = r.sysBlocks
		hotB = sysB
		if q.hot >= 0 {
			hotB = r.hotBlocks
		}
	}
	if sysB > 0 {
		segs = append(segs, segment{key: mix64(saltSystem ^ uint64(q.model)*0x9e3779b97f4a7c15), lo: 0, hi: sysB})
	}
	if hotB > sysB {
		segs = append(segs, segment{key: mix64(saltHot ^ uint64(q.hot)<<24 ^ uint64(q.model)*0x9e3779b97f4a7c15), lo: sysB, hi: hotB})
	}
	return append(segs, segment{key: q.chainKey, lo: hotB, hi: math.MaxInt64})
}

// blockIDs is a trace request's block ids (request.blocks).
func (r *runner) blockIDs(q *request) []uint64 { return r.refs[q.idx].blocks }

// inputBlocks is the number of blocks of a request's prompt: its hash
// ids, else its full blocks (a partial last block is never shared, as in
// vLLM, which caches full blocks only).
func (r *runner) inputBlocks(q *request) int64 {
	if q.blocks {
		return int64(len(r.blockIDs(q)))
	}
	return q.input / r.blockTokens
}

// totalBlocks is the number of blocks a request has written when it
// finishes: its prompt's and its output's full blocks (traces with hash
// ids describe prompts only: their outputs get no ids).
func (r *runner) totalBlocks(q *request) int64 {
	if q.blocks {
		return int64(len(r.blockIDs(q)))
	}
	return (q.input + q.output) / r.blockTokens
}

// matchPrefix references the longest leading run of the request's blocks
// cached on c and returns the cached tokens. The run stops short of the
// prompt's last token, as in vLLM (vllm/v1/core/kv_cache_manager.py,
// get_computed_blocks, max_cache_hit_length = num_tokens − 1, whole
// blocks only): the engine must compute at least that token to produce
// the first output token, so a prompt whose every block is cached still
// prefills its last block (block_tokens tokens, or the partial last block
// of a trace prompt). The returned tokens are what vLLM counts as prefix
// cache hits (its PrefixCacheStats record this capped hit), so the
// recomputed block is not reuse.
func (r *runner) matchPrefix(q *request, c *clusterState) int64 {
	q.held = 0
	most := min(q.inBlocks, max(q.input-1, 0)/r.blockTokens) // blocks a hit may cover
	if q.blocks {
		ids := r.blockIDs(q)
		for i := int64(0); i < most; i++ {
			if !c.kv.hit(ids[i]) {
				break
			}
			q.held = i + 1
		}
	} else {
		q.chainAt = [3]int32{-1, -1, -1}
		var buf [3]segment
		segs := r.segments(q, &buf)
		hint := int32(-1) // the session chain's place, when its last turn ran here
		if pc, pos, ok := q.prevTurn.chain(); ok && pc == q.cluster {
			hint = pos
		}
		// A session's first turn has no chain of its own anywhere until
		// it writes one (a batched engine may preempt it after its first
		// token and admit it again): only the session's requests use its
		// key.
		fresh := q.sess >= 0 && q.turn == 0 && !q.wrote
		for j, s := range segs {
			want := min(s.hi, most) - s.lo
			if want <= 0 {
				break
			}
			h := int32(-1)
			if j == len(segs)-1 {
				if fresh {
					break // match would find no chain: 0 blocks, position -1
				}
				h = hint
			}
			m, ci := c.cc.match(s.key, h, want)
			q.chainAt[j] = ci
			q.held += m
			if m < want {
				break
			}
		}
	}
	return q.held * r.blockTokens
}

// writeBlocks writes the request's blocks from the ones it holds up to
// upto into c's cache. Writing stops at the first block without room
// (every cached block referenced): the blocks after it could never be
// matched without it.
func (r *runner) writeBlocks(q *request, c *clusterState, upto int64) {
	var buf [3]segment
	var segs []segment
	if !q.blocks && !q.noRoom {
		segs = r.segments(q, &buf)
	}
	r.writeSegments(q, c, upto, segs)
}

// writeSegments is writeBlocks with the request's segments (nil for
// trace requests with hash ids).
func (r *runner) writeSegments(q *request, c *clusterState, upto int64, segs []segment) {
	if q.noRoom {
		return
	}
	if q.blocks {
		ids := r.blockIDs(q)
		for q.held < upto {
			if !c.kv.acquire(ids[q.held]) {
				q.noRoom = true
				return
			}
			q.held++
		}
		return
	}
	for j, s := range segs {
		if q.held >= s.hi {
			continue
		}
		if upto <= s.lo || q.held < s.lo {
			return
		}
		to := min(upto, s.hi) - s.lo
		got, ci := c.cc.extend(s.key, q.chainAt[j], q.held-s.lo, to)
		q.chainAt[j] = ci
		q.held = s.lo + got
		if got < to {
			q.noRoom = true
			return
		}
	}
}

// releaseBlocks drops the request's references, last block first, so
// that a prefix's first blocks are the most recently freed and its tail
// is evicted before them (vLLM frees a request's blocks in reverse
// order for the same reason).
func (r *runner) releaseBlocks(q *request, c *clusterState) {
	var buf [3]segment
	var segs []segment
	if !q.blocks {
		segs = r.segments(q, &buf)
	}
	r.releaseSegments(q, c, segs)
}

// releaseSegments is releaseBlocks with the request's segments (nil for
// trace requests with hash ids).
func (r *runner) releaseSegments(q *request, c *clusterState, segs []segment) {
	if q.blocks {
		ids := r.blockIDs(q)
		for i := q.held - 1; i >= 0; i-- {
			c.kv.release(ids[i])
		}
		q.held = 0
		return
	}
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if h := min(q.held, s.hi) - s.lo; h > 0 {
			c.cc.release(s.key, q.chainAt[i], h)
		}
	}
	q.held = 0
}

// finishBlocks writes a finished request's remaining blocks (its prompt
// and output, totalBlocks) and drops its references: writeBlocks, then
// releaseBlocks, with the last chain's write and release in one step
// (chainCache.extendRelease; they are adjacent, as the writes go first to
// last chain and the releases last to first).
func (r *runner) finishBlocks(q *request, c *clusterState) {
	var buf [3]segment
	var segs []segment
	if !q.blocks {
		segs = r.segments(q, &buf)
	}
	r.finishSegments(q, c, segs)
}

// finishSegments is finishBlocks with the request's segments (nil for
// trace requests with hash ids).
func (r *runner) finishSegments(q *request, c *clusterState, segs []segment) {
	upto := r.totalBlocks(q)
	if q.blocks {
		r.writeSegments(q, c, upto, nil)
		r.releaseSegments(q, c, nil)
		return
	}
	last := len(segs) - 1
	lastDone := false // the last chain is written and released
	for j, s := range segs {
		if q.noRoom {
			break
		}
		if q.held >= s.hi {
			continue
		}
		if upto <= s.lo || q.held < s.lo {
			break
		}
		to := min(upto, s.hi) - s.lo
		if j == last {
			q.chainAt[j] = c.cc.extendRelease(s.key, q.chainAt[j], q.held-s.lo, to)
			lastDone = true
			break
		}
		got, ci := c.cc.extend(s.key, q.chainAt[j], q.held-s.lo, to)
		q.chainAt[j] = ci
		q.held = s.lo + got
		if got < to {
			q.noRoom = true
		}
	}
	for i := last; i >= 0; i-- {
		if i == last && lastDone {
			continue
		}
		s := segs[i]
		if h := min(q.held, s.hi) - s.lo; h > 0 {
			c.cc.release(s.key, q.chainAt[i], h)
		}
	}
	q.held = 0
}

// countInput adds a request's input and cached-prefix tokens to the run's,
// the cluster's and the time series' counters (the run's and cluster's only
// for measured requests); both engines count a request once, when its
// cached prefix is first matched.
func (r *runner) countInput(q *request, c *clusterState, cached int64) {
	if q.measured {
		r.m.inTok += q.input
		r.m.cachedTok += cached
		c.inTok += q.input
		c.cachedTok += cached
	}
	b := r.m.series.bin(r.now)
	r.m.series.Bins[b].InputTokens += q.input
	r.m.series.Bins[b].CachedTokens += cached
}

// recordWait adds a measured request's cluster queue wait (ms, from its
// arrival at the cluster to its admission now) and its router wait to the
// run's and the cluster's counters; both engines call it once per request,
// at its first admission.
func (r *runner) recordWait(q *request, c *clusterState) {
	if !q.measured {
		return
	}
	wait := r.now - q.clusterArrival
	r.m.queueWait.Add(wait)
	r.m.routeWait.Add(q.dispatchAt - q.arrival)
	c.waitSum += float64(wait)
	c.waitN++
}
