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
			stage int
		}
		var live []*pair
		for step := 0; step < 3000; step++ {
			if len(live) < 6 && rng.IntN(3) == 0 {
				sess := uint64(rng.IntN(5))
				in := int64(sys + 1 + rng.IntN(30))
				out := int64(rng.IntN(10))
				a := &request{sess: 0, hot: -1, sessID: sess, input: in, output: out}
				a.inBlocks = r.inputBlocks(a)
				b := &request{sess: 0, hot: -1, sessID: sess, input: in, output: out}
				// The block ids the chains stand for, one per token
				// (block_tokens 1), output ids after the prompt's.
				var buf [3]segment
				for _, s := range r.segments(a, &buf) {
					for i := s.lo; i < min(s.hi, in+out); i++ {
						b.blockBuf = append(b.blockBuf, chainIDForTest(s.key, i-s.lo))
					}
				}
				b.blocks = b.blockBuf[:in]
				b.inBlocks = in
				ma, mb := r.matchPrefix(a, ca), r.matchPrefix(b, cb)
				if ma != mb {
					t.Fatalf("seed %d step %d: chain cache matched %d tokens, block cache %d", seed, step, ma, mb)
				}
				live = append(live, &pair{a: a, b: b})
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
				p.b.blocks = p.b.blockBuf // output ids too
				r.writeBlocks(p.b, cb, int64(len(p.b.blockBuf)))
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
