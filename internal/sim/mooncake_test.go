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
	path := filepath.Join(testutil.SharedDir(t), "traces", "mooncake", "conversation_trace.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the shared Mooncake trace is missing: %v", err)
	}
	y := fmt.Sprintf(`
clusters:
  - {id: only, concurrency: 4096, queue_capacity: -1, prefill_tps: 100000000, decode_tps: 100000, rtt_ms: 0, kv_cache_tokens: %d}
workload: {trace: %q}
`, kvTokens, path)
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
