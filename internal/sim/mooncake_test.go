package sim

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/testutil"
)

// mooncakeScenario replays the shared Mooncake conversation trace on one
// cluster fast enough that few requests run at once (their blocks are
// referenced, the rest of the cache is the LRU the README's figures
// measure), with the given KV capacity.
func mooncakeScenario(t testing.TB, kvTokens int64) *Scenario {
	return mooncakeEngine(t, "fifo", kvTokens)
}

// mooncakeEngine is mooncakeScenario on the given engine (the batched
// engine ignores prefill_tps and decode_tps and uses its default step
// times).
func mooncakeEngine(t testing.TB, engine string, kvTokens int64) *Scenario {
	path := filepath.Join(testutil.SharedDir(t), "traces", "mooncake", "conversation_trace.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the shared Mooncake trace is missing: %v", err)
	}
	y := fmt.Sprintf(`
clusters:
  - {id: only, engine: %s, concurrency: 4096, queue_capacity: -1, prefill_tps: 100000000, decode_tps: 100000, rtt_ms: 0, kv_cache_tokens: %d}
workload: {trace: %q}
`, engine, kvTokens, path)
	return mustScenario(t, y)
}

// TestMooncakeReuseMatchesBlockLevelTruth is issue 16's acceptance test:
// on the Mooncake conversation trace with one cluster, KV reuse is within
// 1 point of the block-level LRU truth (traces/README.md) without
// eviction pressure and within 2 points at 1M, 3M, 10M and 30M tokens.
func TestMooncakeReuseMatchesBlockLevelTruth(t *testing.T) {
	for _, c := range []struct {
		tokens     int64
		truth, tol float64
	}{
		{1 << 40, 0.374, 0.01},
		{1_000_000, 0.054, 0.02},
		{3_000_000, 0.138, 0.02},
		{10_000_000, 0.291, 0.02},
		{30_000_000, 0.366, 0.02},
	} {
		r := mustRun(t, mooncakeScenario(t, c.tokens), PolicyRoundRobin)[0]
		t.Logf("kv_cache_tokens %d: reuse %.4f (truth %.3f), %d requests", c.tokens, r.KVReuse, c.truth, r.Completed)
		if r.Completed != 12031 {
			t.Errorf("kv_cache_tokens %d: %d requests completed, want all 12031", c.tokens, r.Completed)
		}
		if math.Abs(r.KVReuse-c.truth) > c.tol {
			t.Errorf("kv_cache_tokens %d: reuse %.4f, truth %.3f ± %.2f", c.tokens, r.KVReuse, c.truth, c.tol)
		}
	}
}

// TestMooncakeBatchedFullHitsGetFirstTokens: on the Mooncake trace, some
// requests repeat a prompt whose every block is cached. The batched
// engine recomputes their last block (vLLM's get_computed_blocks caps a
// hit at prompt length − 1), so every completed request has a first
// token and TPOT stays within the run's step times; a request that never
// got one measured its TPOT from time 0 (up to 1,497 s per token).
func TestMooncakeBatchedFullHitsGetFirstTokens(t *testing.T) {
	r := mustRun(t, mooncakeEngine(t, "batched", 1<<40), PolicyRoundRobin)[0]
	if r.Completed != 12031 {
		t.Fatalf("%d requests completed, want all 12031", r.Completed)
	}
	if n := r.TTFT.Count(); n != uint64(r.Completed) {
		t.Errorf("%d of %d completed requests have a first token", n, r.Completed)
	}
	// The longest TPOT is a request decoding beside the largest batch;
	// the run lasts about an hour, so a TPOT over a second is a first
	// token that was never recorded.
	if r.TPOTMs.Max > 1000 {
		t.Errorf("TPOT max %.1f ms, p99 %.1f ms: a request decoded without a first token", r.TPOTMs.Max, r.TPOTMs.P99)
	}
	if math.Abs(r.KVReuse-0.374) > 0.01 {
		t.Errorf("reuse %.4f, truth 0.374 ± 0.01", r.KVReuse)
	}
}
