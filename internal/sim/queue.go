package sim

// evKind is the kind of a simulation event.
type evKind uint8

const (
	evSessionArrival evKind = iota // the workload generator's next session
	evTraceRecord                  // the next trace record is due
	evTurn                         // a session's next turn arrives at the gateway (a = session)
	evRoute                        // a waiting request decides again (a = request, b = epoch)
	evArrive                       // a dispatched request reaches its cluster (a = request, b = epoch)
	evRefused                      // a refusal reaches the router (a = request, b = epoch)
	evPrefillDone                  // a cluster's prefill pipeline finishes its head (a = cluster, b = cluster epoch)
	evDecodeDone                   // a request finishes decoding (a = request, b = epoch)
	evPublish                      // clusters publish ModelStats
	evDeliver                      // a published snapshot reaches the router (a = slot)
	evCluster                      // a scenario cluster event (a = event index)
)

// event is one scheduled event. Events are ordered by time, then by the
// order they were scheduled (seq), which makes the run deterministic.
type event struct {
	at   int64 // simulated time, ns
	seq  uint64
	a    int32
	b    uint32
	kind evKind
}

func (e *event) before(f *event) bool {
	if e.at != f.at {
		return e.at < f.at
	}
	return e.seq < f.seq
}

// eventQueue is a 4-ary min-heap of events stored by value: pushing and
// popping allocate nothing once the slice has grown to the peak number of
// pending events.
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) push(at int64, kind evKind, a int32, b uint32) {
	q.seq++
	e := event{at: at, seq: q.seq, a: a, b: b, kind: kind}
	h := append(q.h, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if !e.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
	q.h = h
}

func (q *eventQueue) pop() event {
	h := q.h
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	n := len(h)
	if n > 0 {
		i := 0
		for {
			c := 4*i + 1
			if c >= n {
				break
			}
			m := c
			end := min(c+4, n)
			for j := c + 1; j < end; j++ {
				if h[j].before(&h[m]) {
					m = j
				}
			}
			if !h[m].before(&last) {
				break
			}
			h[i] = h[m]
			i = m
		}
		h[i] = last
	}
	q.h = h
	return top
}

// fifo is a growable ring buffer queue.
type fifo[T any] struct {
	buf        []T
	head, size int
}

func (f *fifo[T]) len() int { return f.size }

func (f *fifo[T]) push(v T) {
	if f.size == len(f.buf) {
		nb := make([]T, max(16, 2*len(f.buf)))
		for i := 0; i < f.size; i++ {
			nb[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.size)%len(f.buf)] = v
	f.size++
}

func (f *fifo[T]) front() T { return f.buf[f.head] }

func (f *fifo[T]) pop() T {
	v := f.buf[f.head]
	var zero T
	f.buf[f.head] = zero
	f.head++
	if f.head == len(f.buf) {
		f.head = 0
	}
	f.size--
	return v
}

func (f *fifo[T]) at(i int) T { return f.buf[(f.head+i)%len(f.buf)] }

func (f *fifo[T]) clear() {
	clear(f.buf)
	f.head, f.size = 0, 0
}
