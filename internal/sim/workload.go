package sim

import (
	"math"
	"strconv"
)

// ---- workload ----

// rateAt returns the session rate multiplier at t (s) and the next time
// it may change.
func (r *runner) rateAt(t float64) (mult, next float64) {
	mult, next = 1, math.Inf(1)
	for _, b := range r.wl.Bursts {
		start := b.StartS
		if b.EveryS > 0 && t >= start {
			k := math.Floor((t - start) / b.EveryS)
			start += k * b.EveryS
		}
		end := start + b.DurationS
		switch {
		case t < start:
			next = math.Min(next, start)
		case t < end:
			mult *= b.RateMultiplier
			next = math.Min(next, end)
		default:
			if b.EveryS > 0 {
				next = math.Min(next, start+b.EveryS)
			}
		}
	}
	return mult, next
}

// scheduleSession schedules the next session arrival after t (ns) of the
// non-homogeneous Poisson process, or ends the generator.
func (r *runner) scheduleSession(t int64) {
	w := r.wl
	if (w.Sessions > 0 && r.nextSession >= w.Sessions) || (w.MaxRequests > 0 && r.issued >= w.MaxRequests) {
		r.genDone = true
		return
	}
	limit := float64(MaxSeconds) // without duration_s, arrivals stop at MaxSeconds
	if w.DurationS > 0 {
		limit = w.DurationS
	}
	ts := float64(t) / 1e9
	need := r.arrRng.ExpFloat64() // unit-rate exponential
	for ts < limit {
		mult, next := r.rateAt(ts)
		rate := w.SessionRate * mult
		seg := math.Min(next, limit) - ts
		if rate > 0 && need <= rate*seg {
			ts += need / rate
			break
		}
		if math.IsInf(seg, 1) {
			ts = math.Inf(1)
			break
		}
		need -= rate * seg
		ts += seg
	}
	if ts >= limit {
		r.genDone = true
		return
	}
	r.q.push(max(int64(ts*1e9), t), evSessionArrival, 0, 0)
}

func (r *runner) sessionArrival() {
	k := r.nextSession
	r.nextSession++
	var si int32
	if n := len(r.freeSess); n > 0 {
		si = r.freeSess[n-1]
		r.freeSess = r.freeSess[:n-1]
	} else {
		r.sessions = appendDoubling(r.sessions, session{})
		r.sessKeys = appendDoubling(r.sessKeys, "")
		si = int32(len(r.sessions) - 1)
	}
	s := &r.sessions[si]
	a, b := seedForHash(r.sc.Seed, sessionPurpose, uint64(k)) // seedFor(r.sc.Seed, "session", k)
	*s = session{id: uint64(k) + 1, live: true, hot: -1, rk: -1}
	r.sessKeys[si] = r.keyBatch.key(s.id)
	s.pcg.Seed(a, b)
	r.srcProxy.p = &s.pcg
	w := r.wl
	s.turnsLeft = int32(min(max(math.Round(r.dTurns.sample(r.srng)), 1), maxTurns))
	s.model = pick(r.srng, r.modelCum)
	if len(r.rkCum) > 0 {
		s.rk = pick(r.srng, r.rkCum)
	}
	s.payload = r.srng.Float64() < w.PayloadShare
	if len(r.hotCum) > 0 && r.srng.Float64() < w.HotSet.Share {
		s.hot = pick(r.srng, r.hotCum)
	}
	r.liveSess++
	r.scheduleSession(r.now)
	r.issueTurn(si, 0)
}

func (r *runner) endSession(si int32) {
	s := &r.sessions[si]
	if r.sll != nil && r.pol.Sticky.FinishSessions && !s.payload {
		r.sll.FinishSession(r.sessKeys[si])
	}
	s.live = false
	r.freeSess = append(r.freeSess, si)
	r.liveSess--
}

func (r *runner) stopIssuing() bool {
	return r.wl.MaxRequests > 0 && r.issued >= r.wl.MaxRequests
}

// issueTurn starts a session's next turn now (prev: where its previous
// turn left its chain, 0 none).
func (r *runner) issueTurn(si int32, prev turnHint) {
	s := &r.sessions[si]
	if r.stopIssuing() {
		r.genDone = true
		r.endSession(si)
		return
	}
	r.srcProxy.p = &s.pcg
	w := r.wl
	var input int64
	if s.turn == 0 {
		input = satTokens(r.dFirst.sample(r.srng)) + r.sysTokens
		if s.hot >= 0 {
			input += w.HotSet.PrefixTokens
		}
	} else {
		input = s.context + satTokens(r.dNew.sample(r.srng))
	}
	output := satTokens(r.dOut.sample(r.srng))
	replica := int32(0)
	if len(r.stores) > 1 {
		replica = r.srng.Int32N(int32(len(r.stores)))
	}
	if input > w.MaxContextTokens && s.turn > 0 {
		r.endSession(si)
		return
	}
	qi := r.newRequest()
	q := &r.reqs[qi]
	q.sess, q.sessID, q.hot, q.payload = si, s.id, s.hot, s.payload
	q.rk, q.model, q.turn, q.replica = s.rk, s.model, s.turn, replica
	q.input, q.output = max(input, 0), max(output, 0)
	q.prevTurn = prev
	// The session moves on to its next turn now, not when this one ends,
	// and the think time before it is drawn now, the session's last draw
	// for this turn either way: the session's stream gives the same
	// values, and decodeDone need not touch the session (on a wide
	// scenario a cache miss).
	s.context = q.input + q.output
	s.turn++
	s.turnsLeft--
	if q.lastTurn = s.turnsLeft <= 0; !q.lastTurn {
		q.think = sToNs(r.dThink.sample(r.srng))
	}
	r.startRequest(qi)
}

// traceArrival issues the due trace record and schedules the next one.
func (r *runner) traceArrival() error {
	rec := &r.traceRec
	if !r.stopIssuing() && !r.replayDefer(rec) {
		r.issueTrace(rec)
	}
	return r.nextTrace()
}

// issueTrace starts the request of a trace record now.
func (r *runner) issueTrace(rec *TraceRecord) {
	{
		qi := r.newRequest()
		q := &r.reqs[qi]
		// turn numbers a trace session's requests only to give
		// payload-sourced ones a new key each time.
		q.sess, q.sessID, q.hot, q.turn = -1, rec.Session, -1, int32(r.issued)
		refs := &r.refs[qi]
		refs.key = r.traceKey(rec.Session)
		q.rk = -1
		if rec.RoutingKey != "" {
			i, ok := r.rkIdx[rec.RoutingKey]
			if !ok {
				i = int32(len(r.rks))
				r.rkIdx[rec.RoutingKey] = i
				r.rks = append(r.rks, rec.RoutingKey)
			}
			q.rk = i
		}
		model := rec.Model
		if model == "" {
			model = r.models[0]
		}
		q.model = r.addModel(model)
		q.input, q.output = rec.InputTokens, rec.OutputTokens
		if rec.Blocks != nil {
			refs.blocks = append(refs.blocks[:0], rec.Blocks...)
			q.blocks = true
		}
		// Payload-sourced sessions and replicas are decided per session
		// by hashing, so every policy sees the same split.
		h := rec.Session ^ r.sc.Seed*0x9e3779b97f4a7c15
		h ^= h >> 31
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 29
		q.payload = float64(h>>11)/(1<<53) < r.wl.PayloadShare
		if len(r.stores) > 1 {
			q.replica = int32(h % uint64(len(r.stores)))
		}
		r.replayIssued(rec)
		r.startRequest(qi)
	}
}

func (r *runner) nextTrace() error {
	if r.stopIssuing() {
		r.genDone = true
		return nil
	}
	rec, ok, err := r.trace.next()
	if err != nil {
		return err
	}
	if !ok {
		r.genDone = true
		return nil
	}
	r.traceRec = rec
	r.q.push(max(rec.TimeNs, r.now), evTraceRecord, 0, 0)
	return nil
}

func (r *runner) newRequest() int32 {
	var qi int32
	if n := len(r.freeReqs); n > 0 {
		qi = r.freeReqs[n-1]
		r.freeReqs = r.freeReqs[:n-1]
	} else {
		r.reqs = appendDoubling(r.reqs, request{})
		r.refs = appendDoubling(r.refs, reqRefs{})
		qi = int32(len(r.reqs) - 1)
	}
	q := &r.reqs[qi]
	ep := q.epoch + 1
	*q = request{} // cleared in place: a literal naming q.epoch is built aside and copied
	q.epoch, q.idx, q.cluster, q.hint, q.hot, q.rk = ep, qi, -1, -1, -1, -1
	// Its reqRefs are left as they are: the excluded clusters are the
	// first attempts of them (runner.excluded), the key and blocks are
	// read only where the caller sets them (a trace request).
	r.liveReqs++
	r.issued++
	r.progressAcc++
	if r.progressAcc >= 4096 && r.opt.Progress != nil {
		r.opt.Progress.Add(r.progressAcc)
		r.progressAcc = 0
	}
	return qi
}

func (r *runner) freeRequest(qi int32) {
	q := &r.reqs[qi]
	q.state = stFree
	q.epoch++
	r.freeReqs = append(r.freeReqs, qi)
	r.liveReqs--
}

// storeKey derives the gateway store key of (routing key, model, cache
// affinity key) as a number (the real key is lc:v1: + SHA-256 of the
// same triple; only equality matters here).
func storeKey(rk, model int32, affinity uint64) uint64 {
	h := uint64(rk+1)*0x9e3779b97f4a7c15 ^ uint64(model+1)*0xc2b2ae3d27d4eb4f ^ affinity*0x165667b19e3779f9
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h | 1
}

// startRequest runs the gateway lookup and the first routing decision.
func (r *runner) startRequest(qi int32) {
	q := &r.reqs[qi]
	q.arrival = r.now
	q.chainKey = sessionChainKey(q.sessID)
	q.inBlocks = r.inputBlocks(q)
	q.state = stRouting
	q.measured = r.now >= r.warmup
	if q.measured {
		r.m.requests++
	}
	if r.sc.Gateway.Enabled && !q.payload {
		aff := q.sessID
		if q.hot >= 0 {
			aff = 1<<63 | uint64(q.hot)
		}
		q.storeKey = storeKey(q.rk, q.model, aff)
		if r.ownStore && q.sess >= 0 && q.hot < 0 {
			// The entry only this session reads and writes: its previous
			// turn said whether it is still there (ownStore).
			q.ownStore = true
			if c, ok := q.prevTurn.stored(); ok {
				q.hint = c
			}
		} else if c, ok := r.stores[q.replica].get(q.storeKey, r.now); ok {
			q.hint = c
		}
	}
	r.route(qi)
}

// ---- keys ----

// Keys are real strings: the engine may keep the strings of a request
// (its Pulsar ranking cache does), so they must never alias a reused
// buffer. A session's key is built once per session; a payload-sourced
// request gets a new key every turn (one small allocation per such
// request); trace sessions' keys are interned.

// sessionKey returns the x-cache-affinity-key (and sticky-least-loaded
// session ID) of a synthetic session.
func sessionKey(id uint64) string {
	var b [24]byte
	return string(appendSessionKey(b[:0], id))
}

func appendSessionKey(b []byte, id uint64) []byte {
	return strconv.AppendUint(append(b, "s-"...), id, 36)
}

// keyBatchSize is the number of consecutive session keys keyBatch builds
// at once.
const keyBatchSize = 256

// keyBatch hands out the keys of consecutive session ids (sessionKey's
// strings) as substrings of one string built for keyBatchSize ids at a
// time: one allocation per batch instead of one per session. The batch
// strings are never reused or written after they are built, so the
// engine may keep any key.
type keyBatch struct {
	s     string
	ends  [keyBatchSize]uint16 // ends[i]: end of id first+i's key in s
	first uint64               // id of the batch's first key; 0 = no batch
	buf   []byte
}

// key returns sessionKey(id), building a new batch from id when id is
// not in the current one.
func (k *keyBatch) key(id uint64) string {
	if k.first == 0 || id < k.first || id-k.first >= keyBatchSize {
		b := k.buf[:0]
		for i := range k.ends {
			b = appendSessionKey(b, id+uint64(i))
			k.ends[i] = uint16(len(b))
		}
		k.s, k.first, k.buf = string(b), id, b
	}
	i := id - k.first
	start := uint16(0)
	if i > 0 {
		start = k.ends[i-1]
	}
	return k.s[start:k.ends[i]]
}

// traceKey returns a trace session's key, interned while the table is
// below 65,536 entries.
func (r *runner) traceKey(id uint64) string {
	if k, ok := r.traceKeys[id]; ok {
		return k
	}
	k := sessionKey(id)
	if len(r.traceKeys) < 1<<16 {
		r.traceKeys[id] = k
	}
	return k
}

// affinityKey is the request's x-cache-affinity-key: a hot set key shared
// by many sessions, for payload-sourced sessions a new key every turn (the
// hash of the whole message list), else the session's (requestKey).
func (r *runner) affinityKey(qi int32) string {
	q := &r.reqs[qi]
	switch {
	case q.hot >= 0:
		return r.hotKeys[q.hot]
	case q.payload:
		return "p-" + strconv.FormatUint(q.sessID, 36) + "." + strconv.Itoa(int(q.turn))
	}
	return r.requestKey(qi)
}

// requestKey is the key of a request's session: a synthetic session's
// (its slot is not reused before the request ends), else the trace
// session's, set when the request was issued.
func (r *runner) requestKey(qi int32) string {
	if si := r.reqs[qi].sess; si >= 0 {
		return r.sessKeys[si]
	}
	return r.refs[qi].key
}

// excluded is the clusters the request's refused attempts went to, in
// order (refusedBack appends one per refusal it retries).
func (r *runner) excluded(qi int32) []string {
	if n := r.reqs[qi].attempts; n > 0 {
		return r.refs[qi].excluded[:n]
	}
	return nil
}
