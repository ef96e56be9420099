package sim

import (
	"fmt"
	"math"
	"testing"
)

// erlangC returns the Erlang-C mean queue wait (s) of an M/M/c queue with
// arrival rate lambda (1/s) and mean service time s (s).
func erlangC(c int, lambda, s float64) float64 {
	a := lambda * s
	rho := a / float64(c)
	term := 1.0 // a^k/k!
	sum := 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term / (1 - rho) // a^c/c! · 1/(1−ρ)
	pw := top / (sum + top)
	return pw / (float64(c)/s - lambda)
}

// mmcScenario is one cluster with c slots, Poisson arrivals at rate
// lambda and exponential service with mean s seconds: single-turn
// sessions without input (no prefill), exponential output at 10,000
// tokens/s (a mean of 1000 tokens and more, so rounding to whole tokens
// does not matter), no RTT, no cache, no gateway store, an unbounded queue.
func mmcScenario(t testing.TB, c int, rho, s float64, requests int64, seed uint64) *Scenario {
	lambda := rho * float64(c) / s
	y := fmt.Sprintf(`
seed: %d
warmup_s: %g
clusters:
  - {id: only, concurrency: %d, queue_capacity: -1, rtt_ms: 0, kv_cache_tokens: 0, decode_tps: 10000}
workload:
  session_rate: %g
  duration_s: 0
  max_requests: %d
  turns: 1
  first_input_tokens: 0
  output_tokens: {distribution: exponential, mean: %g}
gateway: {enabled: false}
router:
  snapshot_interval_ms: 1000
`, seed, 200*s, c, lambda, requests, s*10000)
	sc, err := ParseScenario("mmc.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func runMMC(t testing.TB, c int, rho, s float64, requests int64, seed uint64) *Result {
	sc := mmcScenario(t, c, rho, s, requests, seed)
	pols, err := ResolvePolicies(sc, Selection{Names: []string{PolicyRoundRobin}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(sc, &pols[0], RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestErlangC: one cluster, Poisson arrivals, exponential service, c
// slots, no cache: the mean queue wait is within erlangTolerance of the
// Erlang-C formula at utilisation 0.5, 0.8 and 0.9, and Little's law holds
// within 1 %. The sizes give a standard error of about 1 % (0.9 needs the
// most requests: its waits are long and strongly correlated); race builds
// run a 20× smaller version with a looser bound (queueing_race_test.go).
func TestErlangC(t *testing.T) {
	for _, c := range []struct {
		rho      float64
		slots    int
		requests int64
	}{
		{0.5, 4, 2_000_000},
		{0.8, 4, 2_000_000},
		{0.9, 8, 6_000_000},
	} {
		n := c.requests / erlangDivisor
		s := 0.1 // mean service time, s
		res := runMMC(t, c.slots, c.rho, s, n, 1)
		cl := res.Clusters[0]
		want := erlangC(c.slots, c.rho*float64(c.slots)/s, s) * 1000
		got := cl.MeanQueueWaitMs
		rel := (got - want) / want
		t.Logf("ρ %.1f, c %d, %d requests: mean queue wait %.4f ms, Erlang C %.4f ms (%+.2f %%)", c.rho, c.slots, n, got, want, 100*rel)
		if math.Abs(rel) > erlangTolerance {
			t.Errorf("ρ %.1f: mean queue wait %.4f ms is %+.2f %% off Erlang C %.4f ms", c.rho, got, 100*rel, want)
		}
		if res.Failed != 0 || res.Completed+res.Failed != res.Requests {
			t.Errorf("%d of %d requests failed, %d completed", res.Failed, res.Requests, res.Completed)
		}
		// Little's law over the measurement window: L = λ·W.
		l, lw := cl.MeanInSystem, cl.ArrivalRPS*cl.MeanSojournMs/1000
		if math.Abs(l-lw) > 0.01*lw {
			t.Errorf("ρ %.1f: Little's law: L %.4f, λW %.4f", c.rho, l, lw)
		}
		// The measured utilisation matches ρ.
		if math.Abs(cl.Utilization-c.rho) > 0.02 {
			t.Errorf("ρ %.1f: utilisation %.4f", c.rho, cl.Utilization)
		}
	}
}
