package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refQueue is a plain binary heap ordered by (at, seq): the reference the
// radix heap must match pop for pop.
type refQueue struct {
	h   []event
	seq uint64
}

func (q *refQueue) push(at int64, kind evKind, a int32, b uint32) {
	q.seq++
	q.h = append(q.h, event{at: at, seqKind: q.seq<<8 | uint64(kind), a: a, b: b})
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.h[i].before(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *refQueue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && q.h[l].before(&q.h[m]) {
			m = l
		}
		if r < n && q.h[r].before(&q.h[m]) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

// The radix heap pops exactly what a reference heap pops, for interleaved
// pushes and pops with a monotone clock (times at or after the last pop,
// many equal, spanning ns to hours and negative times), and also when an
// event is scheduled before the last popped time.
func TestEventQueueMatchesReferenceHeap(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		var q eventQueue
		var ref refQueue
		now := int64(-5_000_000_000) + rng.Int64N(10_000_000_000)
		push := func(at int64) {
			a := int32(rng.IntN(1000))
			q.push(at, evKind(a%11), a, uint32(a))
			ref.push(at, evKind(a%11), a, uint32(a))
		}
		for i := 0; i < 20000; i++ {
			switch r := rng.IntN(10); {
			case r < 5 || ref.h == nil || len(ref.h) == 0:
				var d int64
				switch rng.IntN(6) {
				case 0:
					d = 0 // same instant
				case 1:
					d = rng.Int64N(10)
				case 2:
					d = rng.Int64N(25_000_000)
				case 3:
					d = rng.Int64N(10_000_000_000)
				case 4:
					d = rng.Int64N(math.MaxInt64 / 4)
				default:
					d = rng.Int64N(1000)
				}
				at := now + d
				if seed%4 == 0 && rng.IntN(50) == 0 {
					at = now - rng.Int64N(1000) // out of order: before the last pop
				}
				push(at)
			default:
				if q.len() != len(ref.h) {
					t.Fatalf("seed %d: len %d, reference %d", seed, q.len(), len(ref.h))
				}
				got, want := q.pop(), ref.pop()
				if got != want {
					t.Fatalf("seed %d step %d: popped %+v, reference %+v", seed, i, got, want)
				}
				now = max(now, got.at)
			}
		}
		for len(ref.h) > 0 {
			if got, want := q.pop(), ref.pop(); got != want {
				t.Fatalf("seed %d drain: popped %+v, reference %+v", seed, got, want)
			}
		}
		if q.len() != 0 {
			t.Fatalf("seed %d: %d left", seed, q.len())
		}
	}
}

func BenchmarkEventQueue(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q eventQueue
	for i := 0; i < 2000; i++ {
		q.push(rng.Int64N(5e9), evTurn, 0, 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		e := q.pop()
		q.push(e.at+rng.Int64N(5e9), evTurn, 0, 0)
	}
}
