package sim

import (
	"fmt"
	"math"
	"testing"
)

// batchScenario is one batched cluster with round numbers: 5 ms per
// iteration, 0.01 ms per prefill token, 1 ms per decode sequence, no RTT.
const batchScenario = `
clusters:
  - {id: a, engine: batched, concurrency: %d, queue_capacity: -1, rtt_ms: 0, kv_cache_tokens: %d,
     max_num_batched_tokens: 4096, step_base_ms: 5, step_prefill_ms_per_token: 0.01, step_decode_ms_per_seq: 1, step_kv_read_ms_per_token: 0}
workload:
  session_rate: %g
  sessions: %d
  duration_s: 1000
  turns: 1
  first_input_tokens: %d
  output_tokens: %d
`

func batchRun(t *testing.T, seqs int, kv int64, rate float64, sessions int, in, out int) *Result {
	t.Helper()
	sc := mustScenario(t, fmt.Sprintf(batchScenario, seqs, kv, rate, sessions, in, out))
	return mustRun(t, sc, PolicyRoundRobin)[0]
}

// TestBatchedStepTimes: one request alone follows the step equation:
// chunked prefill of 10,000 tokens in 4096-token chunks (3 iterations:
// 5 + 40.96, 5 + 40.96, 5 + 18.08 ms), then one decode sequence per
// iteration (5 + 1 ms each).
func TestBatchedStepTimes(t *testing.T) {
	r := batchRun(t, 8, 1<<30, 1, 1, 10000, 4)
	if r.Completed != 1 {
		t.Fatalf("completed %d", r.Completed)
	}
	ttft := 3*5 + 0.01*10000
	if math.Abs(r.TTFTMs.Mean-ttft) > 0.01 {
		t.Errorf("TTFT %.3f ms, want %.3f", r.TTFTMs.Mean, ttft)
	}
	if math.Abs(r.TPOTMs.Mean-6) > 0.01 {
		t.Errorf("TPOT %.3f ms, want 6", r.TPOTMs.Mean)
	}
}

// TestBatchedLittlesLaw: under load (several requests per iteration,
// queueing), L = λ·W at the cluster, and decode iterations slow down as
// the batch grows (TPOT above the one-sequence 6 ms).
func TestBatchedLittlesLaw(t *testing.T) {
	r := batchRun(t, 16, 1<<30, 30, 3000, 500, 50)
	cl := r.Clusters[0]
	if r.Completed != 3000 {
		t.Fatalf("completed %d", r.Completed)
	}
	l, lw := cl.MeanInSystem, cl.ArrivalRPS*cl.MeanSojournMs/1000
	if math.Abs(l-lw) > 0.02*lw {
		t.Errorf("Little's law: L %.4f, λW %.4f", l, lw)
	}
	if !(r.TPOTMs.P50 > 6.5) || !(l > 2) {
		t.Errorf("TPOT p50 %.2f ms, L %.2f: the batch never grew", r.TPOTMs.P50, l)
	}
}

// TestBatchedPreemption: with KV room for about two contexts, long
// decodes run out of room and the newest request is recomputed; every
// request still completes and holds no KV afterwards.
func TestBatchedPreemption(t *testing.T) {
	r := batchRun(t, 8, 2600, 1000, 6, 1000, 400)
	if r.Completed != 6 {
		t.Fatalf("completed %d of 6", r.Completed)
	}
	if r.Clusters[0].Preemptions == 0 {
		t.Fatal("no preemption with room for two of six 1,400-token contexts")
	}
}

// TestBatchedRepeatsMatchSingleIterations: scheduling a repeated
// decode-only iteration as one event (cut when an arrival could be
// admitted) gives exactly the results of one event per iteration.
func TestBatchedRepeatsMatchSingleIterations(t *testing.T) {
	y := `
clusters:
  - {id: a, engine: batched, concurrency: 6, kv_cache_tokens: 30000, max_num_batched_tokens: 2048}
  - {id: b, engine: batched, concurrency: 4, kv_cache_tokens: 9000}
workload:
  session_rate: 6
  duration_s: 60
  turns: {distribution: geometric, mean: 3}
  think_time_s: {distribution: exponential, mean: 1}
  first_input_tokens: {distribution: lognormal, mean: 1500, sigma: 0.6}
  output_tokens: {distribution: lognormal, mean: 150, sigma: 0.8}
`
	sc := mustScenario(t, y)
	fast := resultJSON(t, mustRun(t, sc, PolicyRoundRobin, PolicyWaitAndWidenOn))
	noMacro = true
	defer func() { noMacro = false }()
	slow := resultJSON(t, mustRun(t, sc, PolicyRoundRobin, PolicyWaitAndWidenOn))
	if string(fast) != string(slow) {
		t.Fatalf("repeated iterations changed the results:\n%s\n---\n%s", fast, slow)
	}
}

// fullHitScenario is one session of two turns on one cluster of the given
// engine: 1,000 input tokens and 24 output tokens, then a turn with no new
// input, whose 1,024-token prompt (64 blocks of 16) is wholly cached. The
// fifo cluster prefills 100,000 tokens/s; the batched cluster's steps are
// batchScenario's.
const fullHitScenario = `
clusters:
  - {id: a, engine: %s, concurrency: 4, queue_capacity: -1, rtt_ms: 0, kv_cache_tokens: 1000000,
     prefill_tps: 100000, decode_tps: 1000,
     max_num_batched_tokens: 4096, step_base_ms: 5, step_prefill_ms_per_token: 0.01, step_decode_ms_per_seq: 1, step_kv_read_ms_per_token: 0}
workload:
  session_rate: 1
  sessions: 1
  duration_s: 10
  turns: 2
  think_time_s: 1
  first_input_tokens: 1000
  new_input_tokens: 0
  output_tokens: 24
`

// TestFullPrefixHitRecomputesLastBlock: a prompt whose every block is
// cached still computes its last block, as vLLM does (get_computed_blocks
// caps the hit at prompt length − 1 tokens, whole blocks only), so it
// has a first token after one block of prefill, and the reuse counts the
// 63 matched blocks only (vLLM's prefix cache hits count the capped
// hit). Before, the batched engine never emitted that request's first
// token (its TPOT ran from time 0) and the fifo engine gave it no
// prefill at all.
func TestFullPrefixHitRecomputesLastBlock(t *testing.T) {
	for _, c := range []struct {
		engine       string
		ttft1, ttft2 float64 // ms
	}{
		{"batched", 5 + 0.01*1000, 5 + 0.01*16},
		{"fifo", 1000.0 / 100, 16.0 / 100},
	} {
		r := mustRun(t, mustScenario(t, fmt.Sprintf(fullHitScenario, c.engine)), PolicyRoundRobin)[0]
		if r.Completed != 2 || r.TTFT.Count() != 2 {
			t.Fatalf("%s: %d completed, %d first tokens; want 2 and 2", c.engine, r.Completed, r.TTFT.Count())
		}
		if r.InputTokens != 2024 || r.CachedTokens != 63*16 {
			t.Errorf("%s: %d of %d input tokens cached, want %d of 2024", c.engine, r.CachedTokens, r.InputTokens, 63*16)
		}
		if want := (c.ttft1 + c.ttft2) / 2; math.Abs(r.TTFTMs.Mean-want) > 0.001 || math.Abs(r.TTFTMs.Max-c.ttft1) > 0.001 {
			t.Errorf("%s: TTFT mean %.4f max %.4f ms, want %.4f and %.4f", c.engine, r.TTFTMs.Mean, r.TTFTMs.Max, want, c.ttft1)
		}
		if r.TPOTMs.Max > 10 {
			t.Errorf("%s: TPOT max %.3f ms", c.engine, r.TPOTMs.Max)
		}
	}
}

// TestBatchedEmptyPrompt: a request with no prompt tokens (nothing to
// prefill, cached or not) has its first token at the end of its first
// iteration, one step_base_ms, and then decodes one token per iteration.
func TestBatchedEmptyPrompt(t *testing.T) {
	r := batchRun(t, 8, 1<<30, 1, 1, 0, 4)
	if r.Completed != 1 || r.TTFT.Count() != 1 {
		t.Fatalf("%d completed, %d first tokens; want 1 and 1", r.Completed, r.TTFT.Count())
	}
	if math.Abs(r.TTFTMs.Mean-5) > 0.001 || math.Abs(r.TPOTMs.Mean-6) > 0.001 {
		t.Errorf("TTFT %.4f ms, TPOT %.4f ms; want 5 and 6", r.TTFTMs.Mean, r.TPOTMs.Mean)
	}
}

// TestOwnStoreMatchesTable: a session's own store entries carried by its
// turns (runner.ownStore) give the results the store's table gives, with
// entries expiring between turns (a TTL near the think time, RTTs
// that put the write well after the first token leaves), preempted
// requests writing again, a failed cluster, the hot set's shared keys and
// payload-sourced sessions beside them.
func TestOwnStoreMatchesTable(t *testing.T) {
	y := `
clusters:
  - {id: a, engine: batched, concurrency: 6, kv_cache_tokens: 30000, max_num_batched_tokens: 2048, rtt_ms: 150}
  - {id: b, engine: batched, concurrency: 4, kv_cache_tokens: 9000, rtt_ms: 40}
  - {id: c, concurrency: 4, kv_cache_tokens: 40000, rtt_ms: 90}
workload:
  session_rate: 6
  duration_s: 90
  turns: {distribution: geometric, mean: 4}
  think_time_s: {distribution: exponential, mean: 1}
  first_input_tokens: {distribution: lognormal, mean: 1500, sigma: 0.6}
  output_tokens: {distribution: lognormal, mean: 150, sigma: 0.8}
  payload_share: 0.1
  hot_set: {prefixes: 4, share: 0.3, prefix_tokens: 1000}
gateway: {ttl_s: 1.5}
events:
  - {at_s: 40, cluster: c, action: fail}
  - {at_s: 50, cluster: c, action: restore}
`
	sc := mustScenario(t, y)
	names := []string{PolicyWaitAndWidenOn, PolicyPulsarWaitAndWidenOn}
	own := mustRun(t, sc, names...)
	noOwnStore = true
	defer func() { noOwnStore = false }()
	table := mustRun(t, sc, names...)
	if a, b := resultJSON(t, own), resultJSON(t, table); string(a) != string(b) {
		t.Fatalf("session-held store entries changed the results:\n%s\n---\n%s", a, b)
	}
	for _, r := range own {
		pre := int64(0)
		for _, c := range r.Clusters {
			pre += c.Preemptions
		}
		if r.ReturningRequests == 0 || pre == 0 {
			t.Errorf("%s: %d returning requests, %d preemptions: the test does not exercise the store", r.Policy, r.ReturningRequests, pre)
		}
	}
}
