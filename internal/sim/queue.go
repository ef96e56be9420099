package sim

import (
	"math/bits"
	"slices"
)

// evKind is the kind of a simulation event.
type evKind uint8

const (
	evSessionArrival evKind = iota // the workload generator's next session
	evTraceRecord                  // the next trace record is due
	evTurn                         // a session's next turn arrives at the gateway (a = session, b = turnHint)
	evRoute                        // a waiting request decides again (a = request, b = epoch)
	evArrive                       // a dispatched request reaches its cluster (a = request, b = epoch)
	evRefused                      // a refusal reaches the router (a = request, b = epoch)
	evPrefillDone                  // a cluster's prefill pipeline finishes its head (a = cluster, b = cluster epoch)
	evDecodeDone                   // a request finishes decoding (a = request, b = epoch)
	evPublish                      // clusters publish ModelStats
	evDeliver                      // a published snapshot reaches the router (a = slot)
	evCluster                      // a scenario cluster event (a = event index)
	evStep                         // a batched cluster's iteration ends (a = cluster, b = step sequence)
	evDeferred                     // a closed-loop trace request is due (a = deferred record)
)

// event is one scheduled event (24 bytes). Events are ordered by time,
// then by the order they were scheduled, which makes the run
// deterministic: seqKind holds the scheduling sequence number in its high
// 56 bits and the kind in its low 8, so comparing it compares the
// sequence numbers.
type event struct {
	at      int64 // simulated time, ns
	seqKind uint64
	a       int32
	b       uint32
}

func (e *event) kind() evKind { return evKind(e.seqKind) }

func (e *event) before(f *event) bool {
	if e.at != f.at {
		return e.at < f.at
	}
	return e.seqKind < f.seqKind
}

// eventQueue is a radix heap of events stored by value, popped in (at,
// seq) order. It relies on the simulation clock being monotone: events are
// scheduled at or after the time of the last popped event (every push in
// run.go is at r.now or later), which makes push O(1) and pop amortised
// O(1) plus a few bucket moves per event, where a binary or 4-ary heap
// pays O(log n) comparisons; nothing is allocated once the buckets have
// grown to their peak sizes. An event scheduled before the last popped
// time is still ordered correctly (it joins bucket 0 in order), only
// slower.
//
// Bucket 0 holds the events whose key equals last (the key of the last
// popped event), sorted by (at, seq), consumed from head; bucket i ≥ 1
// holds the events whose key differs from last first in bit i−1 (counting
// from 0 at the least significant bit), unordered. The smallest event is
// always in the lowest non-empty bucket.
type eventQueue struct {
	b0   []event // bucket 0, sorted; b0[head:] are pending
	head int
	bkt  [64][]event // bkt[i] is bucket i+1
	nmin [64]uint64  // ^(smallest key in bkt[i]); 0 when empty (^ of the largest key), so that max(nmin[i], ^k) keeps it branch-free
	full uint64      // bit i set: bkt[i] is not empty
	last uint64      // key of the last popped event
	n    int
	seq  uint64
}

// key maps a time to an unsigned key with the same order.
func key(at int64) uint64 { return uint64(at) ^ 1<<63 }

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(at int64, kind evKind, a int32, b uint32) {
	q.seq++
	q.n++
	e := event{at: at, seqKind: q.seq<<8 | uint64(kind), a: a, b: b}
	k := key(at)
	if k <= q.last {
		q.pushB0(e)
		return
	}
	q.add(bits.Len64(k^q.last)-1, k, &e)
}

// add appends e (key k) to bucket i+1 (0 ≤ i < 64).
func (q *eventQueue) add(i int, k uint64, e *event) {
	i &= 63
	q.full |= 1 << i
	q.nmin[i] = max(q.nmin[i], ^k)
	q.bkt[i] = append(q.bkt[i], *e)
}

// pushB0 adds e to bucket 0 in (at, seq) order: at the end when its key is
// the largest there (always, with a monotone clock: key == last and seq
// the newest), else by insertion.
func (q *eventQueue) pushB0(e event) {
	if q.head == len(q.b0) {
		q.b0, q.head = q.b0[:0], 0
	}
	q.b0 = appendDoubling(q.b0, e)
	for j := len(q.b0) - 1; j > q.head && e.before(&q.b0[j-1]); j-- {
		q.b0[j], q.b0[j-1] = q.b0[j-1], e
	}
}

func (q *eventQueue) pop() event {
	if q.head == len(q.b0) {
		q.refill()
	}
	e := q.b0[q.head]
	q.head++
	q.n--
	return e
}

// refill empties the lowest non-empty bucket. A bucket of at most
// sortSmall events is sorted into bucket 0 whole, its largest key
// becoming last: the buckets above stay valid for it (it agrees with the
// old last above the bucket's bit), and bucket 0 may then hold several
// keys, all below every other bucket's, in (at, seq) order (pushB0 keeps
// it so). A larger bucket is split: its minimum key becomes last, the
// events with that key land in bucket 0, sorted by seq, the others in
// lower buckets. Bucket 0 is empty when it is called.
func (q *eventQueue) refill() {
	i := bits.TrailingZeros64(q.full) & 63 // full is not empty
	src := q.bkt[i]
	m := ^q.nmin[i]
	q.full &^= 1 << i
	q.nmin[i] = 0
	q.head = 0
	if len(src) <= sortSmall {
		// The bucket becomes bucket 0 (the two swap their storage), sorted
		// in place.
		q.bkt[i] = q.b0[:0]
		b := src
		for j := 1; j < len(b); j++ {
			for k := j; k > 0 && b[k].before(&b[k-1]); k-- {
				b[k], b[k-1] = b[k-1], b[k]
			}
		}
		q.last = key(b[len(b)-1].at)
		q.b0 = b
		return
	}
	q.bkt[i] = src[:0]
	b := q.b0[:0]
	q.last = m
	for j := range src {
		e := &src[j]
		k := key(e.at)
		if k == m {
			b = appendDoubling(b, *e)
			continue
		}
		q.add(bits.Len64(k^m)-1, k, e) // below i: k and m agree above bit i
	}
	// The bucket was unordered: order the events that share the minimum
	// key by seq (usually one).
	for j := 1; j < len(b); j++ {
		for k := j; k > 0 && b[k].seqKind < b[k-1].seqKind; k-- {
			b[k], b[k-1] = b[k-1], b[k]
		}
	}
	q.b0 = b
}

// sortSmall is the largest bucket refill sorts into bucket 0 instead of
// splitting.
const sortSmall = 8

// appendDoubling is append(s, v) that doubles the capacity when it
// grows (append grows a large slice by about a quarter at a time: the
// pools and event buckets that grow through a run would be allocated and
// copied about five times their final size instead of twice).
func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 16))
	}
	return append(s, v)
}

// fifo is a growable ring buffer queue. Its buffer's length is 0 or a
// power of two (16, 32, …), so positions wrap with a mask, not a
// division.
type fifo[T any] struct {
	head, size int // size first: publish reads it beside the cluster's other counters
	buf        []T
}

func (f *fifo[T]) len() int { return f.size }

func (f *fifo[T]) push(v T) {
	if f.size == len(f.buf) {
		nb := make([]T, max(16, 2*len(f.buf)))
		for i := 0; i < f.size; i++ {
			nb[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.size)&(len(f.buf)-1)] = v
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

func (f *fifo[T]) at(i int) T { return f.buf[(f.head+i)&(len(f.buf)-1)] }

func (f *fifo[T]) clear() {
	clear(f.buf)
	f.head, f.size = 0, 0
}
