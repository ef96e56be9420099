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
