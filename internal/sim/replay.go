package sim

// Closed-loop trace replay (workload.replay: closed). In open mode every
// trace request arrives at its timestamp. In closed mode a request that
// continues a session (a follow-up or branch of a Mooncake or Bailian
// trace, any later request of a CSV session) is issued its original think
// time after the simulated end of the session's previous request, so a
// policy that serves slowly sees fewer requests per second, as real users
// waiting for answers would send. The trace has no completion times, so
// the original think time is the gap between the two requests'
// timestamps (an upper bound: it includes the original service time).
// Requests of a session whose previous request is still running wait for
// it in file order. A session's first request arrives at its timestamp.

// replaySess is one trace session's closed-loop state.
type replaySess struct {
	inFlight bool
	lastTs   int64       // trace time of its latest issued request (ns)
	lastDone int64       // when its latest request ended at the gateway (ns)
	pending  fifo[int32] // deferred records waiting for it, in file order
}

// maxReplaySessions bounds the closed-loop session table; past it the
// table starts afresh (later requests of forgotten sessions arrive at
// their timestamps).
const maxReplaySessions = 1 << 21

// replayDefer holds a continuing request in closed mode and reports
// whether it did.
func (r *runner) replayDefer(rec *TraceRecord) bool {
	if !r.closed {
		return false
	}
	st, ok := r.replay[rec.Session]
	if !ok {
		return false // the session's first request
	}
	di := r.deferRecord(rec)
	if st.inFlight || st.pending.len() > 0 {
		st.pending.push(di)
		return true
	}
	r.scheduleDeferred(st, di)
	return true
}

func (r *runner) deferRecord(rec *TraceRecord) int32 {
	var di int32
	if n := len(r.freeDef); n > 0 {
		di = r.freeDef[n-1]
		r.freeDef = r.freeDef[:n-1]
	} else {
		r.deferred = append(r.deferred, TraceRecord{})
		di = int32(len(r.deferred) - 1)
	}
	d := &r.deferred[di]
	buf := d.Blocks[:0]
	*d = *rec
	if rec.Blocks != nil {
		d.Blocks = append(buf, rec.Blocks...)
	} else {
		d.Blocks = nil
	}
	r.deferredLive++
	return di
}

func (r *runner) scheduleDeferred(st *replaySess, di int32) {
	at := st.lastDone + max(r.deferred[di].TimeNs-st.lastTs, 0)
	r.q.push(max(at, r.now), evDeferred, di, 0)
}

// deferredArrival issues a deferred record.
func (r *runner) deferredArrival(di int32) {
	r.deferredLive--
	rec := &r.deferred[di]
	if !r.stopIssuing() {
		r.issueTrace(rec)
	}
	r.freeDef = append(r.freeDef, di)
}

// replayIssued records that a trace request of the session started.
func (r *runner) replayIssued(rec *TraceRecord) {
	if !r.closed {
		return
	}
	st, ok := r.replay[rec.Session]
	if !ok {
		if len(r.replay) >= maxReplaySessions {
			clear(r.replay)
		}
		st = &replaySess{}
		r.replay[rec.Session] = st
	}
	st.inFlight, st.lastTs = true, rec.TimeNs
}

// replayEnded records that a trace request ended (completed or failed)
// at the gateway at end and releases its session's next request.
func (r *runner) replayEnded(q *request, end int64) {
	if !r.closed || q.sess >= 0 {
		return
	}
	st, ok := r.replay[q.sessID]
	if !ok {
		return
	}
	st.inFlight, st.lastDone = false, end
	if st.pending.len() > 0 {
		// A ring buffer: releasing the head is O(1) however many
		// requests of the session wait behind it.
		r.scheduleDeferred(st, st.pending.pop())
		st.inFlight = true // reserved: the next request is on its way
	}
}
