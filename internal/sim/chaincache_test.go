package sim

import (
	"math/rand/v2"
	"testing"
)

// TestChainCacheMatchesBlockCache drives a chain cache (block ranges of
// chains) and a block cache (the same blocks as explicit ids) with the
// same random requests, several running at once on shared and private
// chains, and checks that every prefix match and the number of cached
// blocks agree at every step, under eviction pressure.
func TestChainCacheMatchesBlockCache(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		const sys = 4
		r := &runner{blockTokens: 1, sysTokens: sys, sysBlocks: sys, hotBlocks: sys, wl: &WorkloadSpec{}}
		capBlocks := int64(10 + rng.IntN(80))
		ca := &clusterState{cc: newChainCache(capBlocks)}
		cb := &clusterState{kv: newBlockCache(capBlocks)}
		type pair struct {
			a, b  *request
			ids   []uint64 // b's block ids, prompt and output
			stage int
		}
		var live []*pair
		turns := map[uint64]int32{} // a session's requests so far (its first is turn 0)
		for step := 0; step < 3000; step++ {
			if len(live) < 6 && rng.IntN(3) == 0 {
				sess := uint64(rng.IntN(5))
				in := int64(sys + 1 + rng.IntN(30))
				out := int64(rng.IntN(10))
				a := &request{sess: 0, hot: -1, sessID: sess, chainKey: sessionChainKey(sess), turn: turns[sess], input: in, output: out}
				turns[sess]++
				a.inBlocks = r.inputBlocks(a)
				b := &request{sess: 0, hot: -1, sessID: sess, chainKey: sessionChainKey(sess), input: in, output: out, blocks: true, idx: int32(len(r.refs))}
				// The block ids the chains stand for, one per token
				// (block_tokens 1), output ids after the prompt's.
				var ids []uint64
				var buf [3]segment
				for _, s := range r.segments(a, &buf) {
					for i := s.lo; i < min(s.hi, in+out); i++ {
						ids = append(ids, chainIDForTest(s.key, i-s.lo))
					}
				}
				r.refs = append(r.refs, reqRefs{blocks: ids[:in]})
				b.inBlocks = in
				ma, mb := r.matchPrefix(a, ca), r.matchPrefix(b, cb)
				if ma != mb {
					t.Fatalf("seed %d step %d: chain cache matched %d tokens, block cache %d", seed, step, ma, mb)
				}
				live = append(live, &pair{a: a, b: b, ids: ids})
				continue
			}
			if len(live) == 0 {
				continue
			}
			k := rng.IntN(len(live))
			p := live[k]
			switch p.stage {
			case 0: // prefill done
				r.writeBlocks(p.a, ca, p.a.inBlocks)
				r.writeBlocks(p.b, cb, p.b.inBlocks)
			case 1: // decode done: output blocks, then release
				r.writeBlocks(p.a, ca, r.totalBlocks(p.a))
				r.refs[p.b.idx].blocks = p.ids // output ids too
				r.writeBlocks(p.b, cb, int64(len(p.ids)))
				r.releaseBlocks(p.a, ca)
				r.releaseBlocks(p.b, cb)
				live = append(live[:k], live[k+1:]...)
			}
			p.stage++
			if p.a.held != p.b.held {
				t.Fatalf("seed %d step %d: holds %d and %d blocks", seed, step, p.a.held, p.b.held)
			}
			if ca.cc.total != int64(cb.kv.blocks()) {
				t.Fatalf("seed %d step %d: chain cache holds %d blocks, block cache %d", seed, step, ca.cc.total, cb.kv.blocks())
			}
		}
	}
}

func chainIDForTest(key uint64, i int64) uint64 {
	return mix64(key ^ mix64(uint64(i)+0x51))
}

// refLRU is the block cache at its plainest, the oracle for
// TestChainCacheMatchesReference: a map from block id to its reference
// count and the time it was last freed; a new block, when the cache is
// full, evicts the unreferenced block freed longest ago, found by scanning.
type refLRU struct {
	blocks    map[uint64]*refBlock
	capBlocks int
	clock     int64
	evictions int64
}

type refBlock struct {
	ref   int
	freed int64
}

func (c *refLRU) hit(id uint64) bool {
	b, ok := c.blocks[id]
	if ok {
		b.ref++
	}
	return ok
}

func (c *refLRU) acquire(id uint64) bool {
	if c.hit(id) {
		return true
	}
	if len(c.blocks) >= c.capBlocks {
		victim, oldest := uint64(0), int64(-1)
		for k, b := range c.blocks {
			if b.ref == 0 && (oldest < 0 || b.freed < oldest) {
				victim, oldest = k, b.freed
			}
		}
		if oldest < 0 {
			return false
		}
		delete(c.blocks, victim)
		c.evictions++
	}
	c.blocks[id] = &refBlock{ref: 1}
	return true
}

func (c *refLRU) release(id uint64) {
	b := c.blocks[id]
	if b.ref--; b.ref == 0 {
		c.clock++
		b.freed = c.clock
	}
}

// TestChainCacheMatchesReference drives the chain cache through the
// runner (matchPrefix, writeBlocks, releaseBlocks, as the engines call
// them; finishBlocks for half the completions) and the plain LRU of
// blocks with the same random requests: shared system prompt, hot prefix
// and session chains, several requests of one chain running at once with
// different holds, partial blocks, releases before the output is written
// and the same request matched again (preemption; a session's first turn,
// once written, finds its own chain), capacities from 0 to roomy and
// cluster failures that clear the cache. After every operation the
// matched tokens, the holds, the number of cached blocks and of evictions
// agree, and the blocks the oracle holds for each chain are exactly the
// leading run [0, cached) the chain cache keeps.
func TestChainCacheMatchesReference(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		bt := int64(1 + rng.IntN(4))
		sysB := int64(rng.IntN(4))
		hotB := sysB + int64(rng.IntN(4))
		r := &runner{blockTokens: bt, sysBlocks: sysB, hotBlocks: hotB, wl: &WorkloadSpec{}}
		capBlocks := int64(rng.IntN(120))
		c := &clusterState{cc: newChainCache(capBlocks)}
		ref := &refLRU{blocks: map[uint64]*refBlock{}, capBlocks: int(capBlocks)}
		type live struct {
			q     *request
			ids   []uint64 // the request's block ids, prompt then output
			held  int64    // the oracle's hold
			full  bool     // the oracle found no room
			stage int
		}
		var running []*live
		keys := map[uint64]bool{}
		turns := map[uint64]int32{} // a session's requests so far (its first is turn 0)
		// A session's first turn, until it writes its blocks: no other
		// request of the session starts meanwhile (a session's turns run one
		// after the other; matchPrefix relies on it).
		first := map[uint64]*request{}
		refMatch := func(l *live) int64 {
			l.held, l.full = 0, false
			most := min(l.q.inBlocks, max(l.q.input-1, 0)/bt)
			for l.held < most && ref.hit(l.ids[l.held]) {
				l.held++
			}
			return l.held * bt
		}
		refWrite := func(l *live, upto int64) {
			for !l.full && l.held < upto {
				if !ref.acquire(l.ids[l.held]) {
					l.full = true
					return
				}
				l.held++
			}
		}
		refRelease := func(l *live) {
			for i := l.held - 1; i >= 0; i-- {
				ref.release(l.ids[i])
			}
			l.held, l.full = 0, false
		}
		for step := 0; step < 2500; step++ {
			op := rng.IntN(20)
			switch {
			case op == 0 && step%7 == 0: // the cluster fails
				for _, l := range running {
					l.q.held, l.q.noRoom = 0, false
				}
				running = running[:0]
				clear(first) // those first turns are gone
				c.cc.clear()
				clear(ref.blocks)
			case op < 8 && len(running) < 8: // a request is admitted
				sess := uint64(rng.IntN(6))
				if f := first[sess]; f != nil && !f.wrote {
					continue
				}
				q := &request{sess: 0, hot: int32(rng.IntN(3)) - 1, model: int32(rng.IntN(2)), sessID: sess, chainKey: sessionChainKey(sess), turn: turns[sess]}
				if turns[sess] == 0 {
					first[sess] = q
				}
				turns[sess]++
				q.input = int64(rng.IntN(int(bt*(hotB+12)))) + 1
				q.output = int64(rng.IntN(int(4 * bt)))
				q.inBlocks = r.inputBlocks(q)
				l := &live{q: q}
				var buf [3]segment
				for _, s := range r.segments(q, &buf) {
					keys[s.key] = true
					for i := s.lo; i < min(s.hi, r.totalBlocks(q)); i++ {
						l.ids = append(l.ids, chainIDForTest(s.key, i-s.lo))
					}
				}
				got, want := r.matchPrefix(q, c), refMatch(l)
				if got != want {
					t.Fatalf("seed %d step %d: matched %d tokens, the reference %d", seed, step, got, want)
				}
				running = append(running, l)
			case len(running) > 0:
				k := rng.IntN(len(running))
				l := running[k]
				q := l.q
				switch {
				case rng.IntN(6) == 0: // preempted: released, then matched again (a batched engine admits it again)
					r.releaseBlocks(q, c)
					q.noRoom = false
					refRelease(l)
					got, want := r.matchPrefix(q, c), refMatch(l)
					if got != want {
						t.Fatalf("seed %d step %d: matched %d tokens again, the reference %d", seed, step, got, want)
					}
					l.stage = 0
				case l.stage == 0: // the first token: the prompt's blocks (emitFirstToken)
					q.wrote = true
					r.writeBlocks(q, c, q.inBlocks)
					refWrite(l, q.inBlocks)
					l.stage++
				case rng.IntN(2) == 0: // done, as decodeDone does it (finishBlocks)
					r.finishBlocks(q, c)
					refWrite(l, r.totalBlocks(q))
					refRelease(l)
					running = append(running[:k], running[k+1:]...)
				default: // done: the output's blocks, then release
					r.writeBlocks(q, c, r.totalBlocks(q))
					refWrite(l, r.totalBlocks(q))
					if q.held != l.held {
						t.Fatalf("seed %d step %d: holds %d blocks, the reference %d", seed, step, q.held, l.held)
					}
					r.releaseBlocks(q, c)
					refRelease(l)
					running = append(running[:k], running[k+1:]...)
				}
				if q.held != l.held {
					t.Fatalf("seed %d step %d: holds %d blocks, the reference %d", seed, step, q.held, l.held)
				}
			}
			if c.cc.total != int64(len(ref.blocks)) || c.cc.evictions != ref.evictions {
				t.Fatalf("seed %d step %d: %d blocks cached and %d evicted, the reference %d and %d",
					seed, step, c.cc.total, c.cc.evictions, len(ref.blocks), ref.evictions)
			}
			if step%25 == 0 {
				sum := int64(0)
				for key := range keys {
					n := int64(0)
					if ci := c.cc.find(key); ci >= 0 {
						n = c.cc.chains[ci].cached
					}
					sum += n
					for i := int64(0); i < n; i++ {
						if _, has := ref.blocks[chainIDForTest(key, i)]; !has {
							t.Fatalf("seed %d step %d: chain %x caches [0, %d), the reference lacks block %d", seed, step, key, n, i)
						}
					}
				}
				if sum != int64(len(ref.blocks)) { // the reference holds nothing else
					t.Fatalf("seed %d step %d: the chains cache %d blocks, the reference %d", seed, step, sum, len(ref.blocks))
				}
			}
		}
	}
}

// TestTurnHintRoundTrip: a turn event's hint gives back the cluster,
// chain position and store bit it was made from; a position that does not
// fit in its 19 bits is "unknown" (the match then looks the chain up) and
// a cluster that does not fit in its 12 bits gives no hint at all.
func TestTurnHintRoundTrip(t *testing.T) {
	for _, c := range []struct{ cluster, pos int32 }{{0, 0}, {7, 12345}, {4094, hintNoPos - 1}, {255, 1}} {
		for _, stored := range []bool{false, true} {
			h := newTurnHint(c.cluster, c.pos, stored)
			cl, pos, ok := h.chain()
			if !ok || cl != c.cluster || pos != c.pos {
				t.Errorf("hint of cluster %d, position %d gives %d, %d, %v", c.cluster, c.pos, cl, pos, ok)
			}
			sc, sok := h.stored()
			if sok != stored || (stored && sc != c.cluster) {
				t.Errorf("hint of cluster %d, stored %v: stored() = %d, %v", c.cluster, stored, sc, sok)
			}
		}
	}
	for _, c := range []struct{ cluster, pos int32 }{{0, -1}, {3, hintNoPos}, {9, 1 << 20}} {
		h := newTurnHint(c.cluster, c.pos, true)
		if _, _, ok := h.chain(); ok {
			t.Errorf("cluster %d, position %d: hint %#x names a chain", c.cluster, c.pos, h)
		}
		if cl, ok := h.stored(); !ok || cl != c.cluster {
			t.Errorf("cluster %d, position %d: stored() = %d, %v, want %d, true", c.cluster, c.pos, cl, ok, c.cluster)
		}
	}
	for _, cl := range []int32{-1, 4095} {
		if h := newTurnHint(cl, 0, true); h != 0 {
			t.Errorf("cluster %d: hint %#x, want none", cl, h)
		}
	}
	if _, _, ok := turnHint(0).chain(); ok {
		t.Error("the zero hint names a chain")
	}
	if _, ok := turnHint(0).stored(); ok {
		t.Error("the zero hint names a stored cluster")
	}
}
