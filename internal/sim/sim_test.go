package sim

import (
	"errors"
	"runtime"
	"sync/atomic"
	"unsafe"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

const saturatedScenario = "../../examples/scenarios/saturated-rank1.yaml"

func mustScenario(t testing.TB, y string) *Scenario {
	t.Helper()
	sc, err := ParseScenario("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func mustRun(t testing.TB, sc *Scenario, names ...string) []*Result {
	t.Helper()
	pols, err := ResolvePolicies(sc, Selection{Names: names})
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunAll(context.Background(), sc, pols, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func resultJSON(t testing.TB, res []*Result) []byte {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shortSaturated is the saturated scenario cut to 150 s of arrivals.
func shortSaturated(t testing.TB) *Scenario {
	sc, err := LoadScenario(saturatedScenario)
	if err != nil {
		t.Fatal(err)
	}
	sc.Workload.DurationS = 150
	sc.WarmupS = 30
	return sc
}

// TestDeterminism: the same scenario and seed give byte-identical results
// for every policy of the comparison set, run in parallel or not; another
// seed gives different results.
func TestDeterminism(t *testing.T) {
	sc := shortSaturated(t)
	pols, err := ResolvePolicies(sc, Selection{Compare: true})
	if err != nil {
		t.Fatal(err)
	}
	a, err := RunAll(context.Background(), sc, pols, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seq []*Result
	for i := range pols {
		r, err := Run(sc, &pols[i], RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seq = append(seq, r)
	}
	ja, jb := resultJSON(t, a), resultJSON(t, seq)
	if !bytes.Equal(ja, jb) {
		t.Fatal("two runs with the same seed differ")
	}
	sc2 := shortSaturated(t)
	sc2.Seed = 2
	c := mustRun(t, sc2, PolicyPulsarWaitAndWidenOn)
	if bytes.Equal(resultJSON(t, c), resultJSON(t, a[3:4])) {
		t.Fatal("a different seed gave the same result")
	}
}

// TestPolicyIndependence: a policy's result does not depend on which other
// policies run beside it (per-purpose random streams).
func TestPolicyIndependence(t *testing.T) {
	sc := shortSaturated(t)
	alone := mustRun(t, sc, PolicyRandom)
	with := mustRun(t, sc, PolicyPowerOfN, PolicyRandom, PolicyStickyLeastLoaded)
	if !bytes.Equal(resultJSON(t, alone), resultJSON(t, with[1:2])) {
		t.Fatal("random's result changed when other policies were added")
	}
	// Policies see the same workload: with single-turn sessions (no
	// closed loop), every policy gets exactly the same requests and tokens.
	sc.Workload.Turns = Dist{Kind: DistConstant, Value: 1}
	res := mustRun(t, sc, PolicyRandom, PolicyRoundRobin, PolicyConsistentHash)
	for _, r := range res[1:] {
		if r.Requests != res[0].Requests {
			t.Fatalf("%s saw %d requests, random %d", r.Policy, r.Requests, res[0].Requests)
		}
	}
}

// TestSaturatedThrashStory is the design's evidence: on the saturated
// rank-1 scenario, last_cluster_affinity on lowers the share of returning
// requests that left their last cluster and raises KV reuse, for both
// algorithms. The measured sizes are in docs/simulate.md.
func TestSaturatedThrashStory(t *testing.T) {
	sc, err := LoadScenario(saturatedScenario)
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, sc, PolicyWaitAndWidenOff, PolicyWaitAndWidenOn, PolicyPulsarWaitAndWidenOff, PolicyPulsarWaitAndWidenOn)
	for i := 0; i < 4; i += 2 {
		off, on := res[i], res[i+1]
		t.Logf("%s: left %.4f → %.4f, reuse %.4f → %.4f, TTFT p99 %.1f → %.1f ms", off.Algorithm,
			off.LeftLastClusterShare, on.LeftLastClusterShare, off.KVReuse, on.KVReuse, off.TTFTMs.P99, on.TTFTMs.P99)
		if off.ReturningRequests < 10000 || on.ReturningRequests < 10000 {
			t.Fatalf("%s: too few returning requests (%d, %d)", off.Algorithm, off.ReturningRequests, on.ReturningRequests)
		}
		if !(on.LeftLastClusterShare < off.LeftLastClusterShare) {
			t.Errorf("%s: left-last-cluster share did not drop: off %.4f, on %.4f", off.Algorithm, off.LeftLastClusterShare, on.LeftLastClusterShare)
		}
		if !(on.KVReuse > off.KVReuse) {
			t.Errorf("%s: KV reuse did not rise: off %.4f, on %.4f", off.Algorithm, off.KVReuse, on.KVReuse)
		}
		if *off.LastClusterAffinity || !*on.LastClusterAffinity {
			t.Errorf("%s: flags reported wrong", off.Algorithm)
		}
	}
}

const pinnedSession = `
clusters:
  - {id: a, kv_cache_tokens: %d}
  - {id: b, kv_cache_tokens: %d}
  - {id: c, kv_cache_tokens: %d}
workload:
  session_rate: 1
  sessions: 1
  duration_s: 10
  turns: 10
  think_time_s: 1
  first_input_tokens: 1000
  new_input_tokens: 100
  output_tokens: 50
  block_tokens: %d
`

// TestCacheAccounting: a single session pinned to one cluster reuses the
// full blocks of its previous turn's input and output with ample KV
// capacity (with 1-token blocks, all but its new tokens), and nothing
// with capacity 0.
func TestCacheAccounting(t *testing.T) {
	for _, block := range []int64{1, 16} {
		testCacheAccounting(t, block)
	}
}

func testCacheAccounting(t *testing.T, block int64) {
	// Turn 1: 1000 input tokens; turn k: previous input + 50 + 100, of
	// which the full blocks of previous input + 50 are cached.
	var input, reused int64
	in := int64(1000)
	for k := 0; k < 10; k++ {
		input += in
		if k > 0 {
			reused += (in - 100) / block * block
		}
		in += 150
	}
	for _, policy := range []string{PolicyConsistentHash, PolicyStickyLeastLoaded, PolicyWaitAndWidenOn} {
		for _, capacity := range []int64{1 << 40, 0} {
			sc := mustScenario(t, fmt.Sprintf(pinnedSession, capacity, capacity, capacity, block))
			r := mustRun(t, sc, policy)[0]
			if r.Completed != 10 || r.InputTokens != input {
				t.Fatalf("%s: %d requests, %d input tokens; want 10, %d", policy, r.Completed, r.InputTokens, input)
			}
			want := reused
			if capacity == 0 {
				want = 0
			}
			if r.CachedTokens != want {
				t.Errorf("%s capacity %d, %d-token blocks: cached %d tokens, want %d", policy, capacity, block, r.CachedTokens, want)
			}
			served := 0
			for _, c := range r.Clusters {
				if c.Served > 0 {
					served++
				}
			}
			if served != 1 {
				t.Errorf("%s: the session was served by %d clusters", policy, served)
			}
		}
	}
}

// TestKVEviction: with room for one conversation per cluster, two
// sessions pinned to the same one-slot cluster evict each other, so only
// the turns that follow a turn of the same session reuse the cache.
func TestKVEviction(t *testing.T) {
	y := `
clusters:
  - {id: a, concurrency: 1, kv_cache_tokens: 1500}
workload:
  session_rate: 1000
  sessions: 2
  duration_s: 1
  turns: 3
  think_time_s: 0
  first_input_tokens: 500
  new_input_tokens: 10
  output_tokens: 10
`
	r := mustRun(t, mustScenario(t, y), PolicyRoundRobin)[0]
	if r.Completed != 6 {
		t.Fatalf("completed %d", r.Completed)
	}
	// While one request runs it holds its tokens, which leaves too little
	// room for the other session's prefix, so every turn is a miss except
	// when the same session runs back to back.
	if r.CachedTokens >= r.InputTokens-1000 {
		t.Fatalf("cached %d of %d tokens: no eviction happened", r.CachedTokens, r.InputTokens)
	}
}

// TestMemoryBounded: pools grow with concurrent sessions and requests, not
// with the number of requests simulated.
func TestMemoryBounded(t *testing.T) {
	sc := shortSaturated(t)
	sc.Workload.DurationS = 0
	sc.WarmupS = 0
	var pools [2][2]int
	for i, n := range []int64{20000, 80000} {
		sc.Workload.MaxRequests = n
		pols, _ := ResolvePolicies(sc, Selection{Names: []string{PolicyPulsarWaitAndWidenOn}})
		r := &runner{sc: sc, pol: &pols[0]}
		if err := r.init(); err != nil {
			t.Fatal(err)
		}
		if err := r.loop(); err != nil {
			t.Fatal(err)
		}
		if r.issued != n {
			t.Fatalf("issued %d, want %d", r.issued, n)
		}
		pools[i] = [2]int{len(r.reqs), len(r.sessions)}
		if len(r.m.series.Bins) > MaxBins {
			t.Fatalf("series has %d bins", len(r.m.series.Bins))
		}
	}
	for k, name := range []string{"request", "session"} {
		if pools[1][k] > 2*pools[0][k]+64 {
			t.Errorf("%s pool grew from %d to %d with 4× the requests", name, pools[0][k], pools[1][k])
		}
	}
}

// TestGatewayHints: without eligible sessions (gateway off, or every
// session payload-sourced) no request carries a hint, and with the flag
// on nothing is classified returning.
func TestGatewayHints(t *testing.T) {
	for _, mod := range []func(*Scenario){
		func(sc *Scenario) { sc.Gateway.Enabled = false },
		func(sc *Scenario) { sc.Workload.PayloadShare = 1 },
	} {
		sc := shortSaturated(t)
		sc.Workload.DurationS = 60
		mod(sc)
		r := mustRun(t, sc, PolicyPulsarWaitAndWidenOn)[0]
		if r.ReturningRequests != 0 || r.Completed == 0 {
			t.Fatalf("returning %d, completed %d", r.ReturningRequests, r.Completed)
		}
	}
	// A short TTL forgets sessions between turns: fewer hints.
	sc := shortSaturated(t)
	sc.Workload.DurationS = 60
	full := mustRun(t, sc, PolicyPulsarWaitAndWidenOn)[0]
	sc.Gateway.TTLS = 1
	short := mustRun(t, sc, PolicyPulsarWaitAndWidenOn)[0]
	if !(short.ReturningRequests < full.ReturningRequests/2) {
		t.Fatalf("TTL 1 s: %d hints, TTL 600 s: %d", short.ReturningRequests, full.ReturningRequests)
	}
}

// TestDrainAndFail: a drained cluster serves nothing it had not accepted
// before; a failed one drops its requests (retried or failed) and loses
// its cache; requests keep being served elsewhere.
func TestDrainAndFail(t *testing.T) {
	base := `
clusters:
  - {id: a}
  - {id: b}
  - {id: c}
workload:
  session_rate: 2
  duration_s: 120
events:
  - {at_s: 30, cluster: a, action: %s}
`
	drain := mustScenario(t, fmt.Sprintf(base, "drain"))
	none := mustScenario(t, strings.Replace(fmt.Sprintf(base, "drain"), "events:\n  - {at_s: 30, cluster: a, action: drain}\n", "", 1))
	for _, policy := range []string{PolicyPulsarWaitAndWidenOn, PolicyConsistentHash, PolicyStickyLeastLoaded} {
		d := mustRun(t, drain, policy)[0]
		n := mustRun(t, none, policy)[0]
		if !(d.Clusters[0].Served < n.Clusters[0].Served/2) {
			t.Errorf("%s: drained cluster served %d, undrained %d", policy, d.Clusters[0].Served, n.Clusters[0].Served)
		}
		if d.Failed > d.Requests/100 {
			t.Errorf("%s: %d of %d requests failed after a drain", policy, d.Failed, d.Requests)
		}
	}
	fail := mustScenario(t, fmt.Sprintf(base, "fail")+"  - {at_s: 60, cluster: a, action: restore}\n")
	f := mustRun(t, fail, PolicyPulsarWaitAndWidenOff)[0]
	if f.Failures.Stream == 0 {
		t.Errorf("a failure with running requests caused no stream failure: %+v", f.Failures)
	}
	if f.Clusters[0].Served == 0 || f.Completed < f.Requests*9/10 {
		t.Errorf("served on a %d, completed %d of %d", f.Clusters[0].Served, f.Completed, f.Requests)
	}
}

// TestTraceWorkload replays a trace: every record becomes a request with
// its tokens, and a session's later requests reuse its cached prefix.
func TestTraceWorkload(t *testing.T) {
	trace := "time_ms,session,input_tokens,output_tokens,routing_key,model\n" +
		"0,s1,1000,10,rk,m\n" +
		"500,s2,800,10,,\n" +
		"2000,s1,1200,10,rk,m\n" +
		"# comment\n" +
		"4000,s1,1500,10,rk,m\n"
	sc := mustScenario(t, `
clusters: [{id: a}]
workload: {trace: t.csv}
`)
	pols, _ := ResolvePolicies(sc, Selection{Names: []string{PolicyWaitAndWidenOn}})
	r, err := Run(sc, &pols[0], RunOptions{Trace: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(trace)), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 4 || r.InputTokens != 4500 {
		t.Fatalf("completed %d, input %d", r.Completed, r.InputTokens)
	}
	// s1's second request reuses the full 16-token blocks of 1000+10
	// tokens (1008), the third those of 1200+10 (1200).
	if r.CachedTokens != 1008+1200 {
		t.Fatalf("cached %d", r.CachedTokens)
	}
	if r.ReturningRequests != 2 || r.LeftLastCluster != 0 {
		t.Fatalf("returning %d, left %d", r.ReturningRequests, r.LeftLastCluster)
	}
	// A bad trace fails the run with its position.
	_, err = Run(sc, &pols[0], RunOptions{Trace: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("0,a,1,1\n10,b,x,1\n")), nil
	}})
	if err == nil || !strings.Contains(err.Error(), "t.csv:2:6: input_tokens") {
		t.Fatalf("got %v", err)
	}
}

func TestExpectedRequests(t *testing.T) {
	sc := mustScenario(t, `
clusters: [{id: a}]
workload:
  session_rate: 2
  duration_s: 100
  turns: 3
  bursts: [{start_s: 10, duration_s: 10, rate_multiplier: 3}]
`)
	if got := ExpectedRequests(sc, 0); got != (2*90+6*10)*3 {
		t.Fatalf("expected %d", got)
	}
	sc.Workload.MaxRequests = 100
	if got := ExpectedRequests(sc, 0); got != 100 {
		t.Fatalf("with max_requests: %d", got)
	}
}

// TestBurstsRaiseArrivals: a burst multiplies the session rate in its
// window and nowhere else.
func TestBurstsRaiseArrivals(t *testing.T) {
	sc := mustScenario(t, `
clusters: [{id: a, concurrency: 1000}]
workload:
  session_rate: 20
  duration_s: 200
  turns: 1
  first_input_tokens: 0
  output_tokens: 1
  bursts: [{start_s: 50, duration_s: 20, every_s: 100, rate_multiplier: 5}]
`)
	r := mustRun(t, sc, PolicyRandom)[0]
	want := 20.0*160 + 100*40
	if got := float64(r.Requests); got < 0.9*want || got > 1.1*want {
		t.Fatalf("%v requests, want about %v", got, want)
	}
	var inBurst, outside int64
	var inDur, outDur float64
	s := r.Series
	for b, bin := range s.Bins {
		t0 := float64(int64(b)*s.BinNs) / 1e9
		t1 := t0 + float64(s.BinNs)/1e9
		switch {
		case t0 >= 50 && t1 <= 70 || t0 >= 150 && t1 <= 170:
			inBurst += bin.FirstTokens
			inDur += t1 - t0
		case t1 <= 50 || t0 >= 70 && t1 <= 150 || t0 >= 170 && t1 <= 200:
			outside += bin.FirstTokens
			outDur += t1 - t0
		}
	}
	ratio := (float64(inBurst) / inDur) / (float64(outside) / outDur)
	if ratio < 4 || ratio > 6 {
		t.Fatalf("burst rate / base rate = %.2f, want about 5", ratio)
	}
}

// TestDecisionsMatchTheEngine: every decision of the simulation is the
// decision a fresh engine (what lcctl explain runs) makes for the same
// snapshot and request. Plain pulsar is deterministic, so its choice is
// compared; for pulsar-wait-and-widen the ranking (the random part is only
// the sampling inside a set). This also guards against passing the engine
// strings that change later (its ranking cache keeps them).
func TestDecisionsMatchTheEngine(t *testing.T) {
	sc := shortSaturated(t)
	sc.Workload.DurationS = 60
	sc.Workload.PayloadShare = 0.2
	sc.Workload.HotSet = HotSetSpec{Prefixes: 4, Share: 0.3, PrefixTokens: 100, ZipfS: 1}
	for _, name := range []string{PolicyPulsar, PolicyPulsarWaitAndWidenOn} {
		pols, _ := ResolvePolicies(sc, Selection{Names: []string{name}})
		checked := 0
		opt := RunOptions{onStep: func(snap *lb.Snapshot, req *lb.Request, st lb.Step) {
			if !st.Balanced {
				return
			}
			fresh := lb.NewEngine(pols[0].configFor(req.Model))
			d := fresh.Decide(snap, req, rand.New(rand.NewPCG(1, 1)), lb.Options{})
			if name == PolicyPulsar && (d.Kind != st.Decision.Kind || d.Cluster != st.Decision.Cluster) {
				t.Fatalf("%s: simulator %v %d, fresh engine %v %d for key %q", name, st.Decision.Kind, st.Decision.Cluster, d.Kind, d.Cluster, req.CacheAffinityKey)
			}
			// The simulator asks for the ranks its decision reads only
			// (lb.Options.PartialOrder): a prefix of the ranking.
			if got := st.Decision.OriginalOrder; len(got) == 0 || len(got) > len(d.OriginalOrder) || !slices.Equal(got, d.OriginalOrder[:len(got)]) {
				t.Fatalf("%s: ranking %v, fresh engine %v for key %q", name, st.Decision.OriginalOrder, d.OriginalOrder, req.CacheAffinityKey)
			}
			checked++
		}}
		if _, err := Run(sc, &pols[0], opt); err != nil {
			t.Fatal(err)
		}
		if checked < 1000 {
			t.Fatalf("%s: only %d decisions checked", name, checked)
		}
	}
}

// TestMeasurementWindow: the table's utilisation and the charts' load
// series measure the same window, from the end of the warm-up to the end
// of the run with the drain after the arrivals: the time average of the
// series' samples over that window matches Utilization, and the series
// reaches the end of the run. (Utilization once averaged over the whole
// run, warm-up included, while the charts stopped at the end of session
// arrivals: 67.7 % in the table against about 95 % in the chart.)
func TestMeasurementWindow(t *testing.T) {
	sc := mustScenario(t, `
warmup_s: 100
clusters:
  - {id: a, concurrency: 8, prefill_tps: 20000}
  - {id: b, concurrency: 16, prefill_tps: 20000}
workload:
  session_rate: 1.5
  duration_s: 300
  turns: {distribution: geometric, mean: 4}
  think_time_s: 2
router: {snapshot_interval_ms: 100}
`)
	for _, r := range mustRun(t, sc, PolicyWaitAndWidenOff, PolicyConsistentHash) {
		if want := r.SimulatedS - 100; math.Abs(r.MeasuredS-want) > 1e-6 || r.SimulatedS <= 300 {
			t.Fatalf("%s: measured %v s of %v s simulated, want the run after the 100 s warm-up, past the 300 s of arrivals", r.Policy, r.MeasuredS, r.SimulatedS)
		}
		s := r.Series
		if last := float64(len(s.Bins)) * float64(s.BinNs) / 1e9; last < r.SimulatedS-float64(s.BinNs)/1e9 {
			t.Errorf("%s: the series ends at %v s, before the end of the run %v s", r.Policy, last, r.SimulatedS)
		}
		for c, cr := range r.Clusters {
			var sum, n float64
			for b := range s.Bins {
				if float64(b)*float64(s.BinNs)/1e9 < 100 {
					continue // the bins of the warm-up (the window starts on a bin edge here)
				}
				sum += s.Load[b*s.Clusters+c]
				n += float64(s.LoadSamples[b])
			}
			if n == 0 {
				t.Fatalf("%s: no load samples after the warm-up", r.Policy)
			}
			if series := sum / n; math.Abs(series-cr.Utilization) > 0.01 {
				t.Errorf("%s cluster %s: utilisation %.4f, the charts' series average %.4f over the same window", r.Policy, cr.ClusterID, cr.Utilization, series)
			}
			if cr.Utilization < 0.1 {
				t.Errorf("%s cluster %s: utilisation %.4f: the scenario should load the clusters", r.Policy, cr.ClusterID, cr.Utilization)
			}
		}
	}
}

func TestRunAllStopsWhenCancelled(t *testing.T) {
	sc := mustScenario(t, `
clusters: [{id: a}, {id: b}]
workload: {session_rate: 1000, duration_s: 100000, max_requests: 3000000}
`)
	pols, err := ResolvePolicies(sc, Selection{Names: []string{"round-robin"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var issued atomic.Int64
	done := make(chan error, 1)
	go func() {
		_, err := RunAll(ctx, sc, pols, &issued)
		done <- err
	}()
	for issued.Load() == 0 {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunAll after cancel: %v, want context.Canceled", err)
	}
	if n := issued.Load(); n >= 3000000 {
		t.Fatalf("the run finished (%d requests) instead of stopping", n)
	}
}

func TestRequestsThatNeverFinishGiveUp(t *testing.T) {
	defer func(b int64) { snapshotBudget = b }(snapshotBudget)
	snapshotBudget = 100_000 // MaxSnapshots takes about 10 s
	sc := mustScenario(t, `
clusters: [{id: a}]
workload: {duration_s: 1, session_rate: 5, turns: 1, first_input_tokens: 1e12}
`)
	pols, err := ResolvePolicies(sc, Selection{Names: []string{"round-robin"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunAll(context.Background(), sc, pols, nil)
	if err == nil || !strings.Contains(err.Error(), "requests take too long to finish") {
		t.Fatalf("err = %v, want the give-up error", err)
	}
}

func TestLongTailDrawsSaturate(t *testing.T) {
	sc := mustScenario(t, `
clusters: [{id: a, prefill_tps: 1e9, decode_tps: 1e9}]
workload:
  duration_s: 5
  session_rate: 2
  turns: 2
  think_time_s: {distribution: lognormal, mean: 100000000, sigma: 10}
  output_tokens: {distribution: lognormal, mean: 1000000000000, sigma: 10}
`)
	if got := satNs(math.Inf(1)); got != maxDurNs {
		t.Fatalf("satNs(+Inf) = %d", got)
	}
	if got := satTokens(1e300); got != MaxTokens {
		t.Fatalf("satTokens(1e300) = %d", got)
	}
	res := mustRun(t, sc, "round-robin")[0]
	if res.Requests == 0 || res.SimulatedS <= 0 || res.InputTokens < 0 || res.TTFTMs.Max < 0 {
		t.Fatalf("requests %d, simulated %v s, input %d, TTFT max %v", res.Requests, res.SimulatedS, res.InputTokens, res.TTFTMs.Max)
	}
}

// TestKeyBatchMatchesSessionKey checks the batched session keys against
// sessionKey across batch boundaries, in order and out of it, and that a
// key handed out stays the same after later batches are built.
func TestKeyBatchMatchesSessionKey(t *testing.T) {
	var k keyBatch
	first := k.key(1)
	for _, id := range []uint64{1, 2, 255, 256, 257, 258, 511, 512, 513, 100, 1 << 40, 1<<40 + 300, 3, 36, 35, 1296} {
		if got, want := k.key(id), sessionKey(id); got != want {
			t.Errorf("key(%d) = %q, want %q", id, got, want)
		}
	}
	for id := uint64(1); id <= 3*keyBatchSize; id++ {
		if got, want := k.key(id), sessionKey(id); got != want {
			t.Fatalf("key(%d) = %q, want %q", id, got, want)
		}
	}
	if first != "s-1" {
		t.Errorf("the first key changed to %q", first)
	}
}

// TestLayoutCacheLines checks the sizes the layout comments of request,
// session and clusterState promise: whole 64-byte cache lines (the
// comments say which fields share the first ones).
func TestLayoutCacheLines(t *testing.T) {
	for _, c := range []struct {
		name string
		size uintptr
	}{
		{"request", unsafe.Sizeof(request{})},
		{"session", unsafe.Sizeof(session{})},
		{"clusterState", unsafe.Sizeof(clusterState{})},
	} {
		if c.size%64 != 0 {
			t.Errorf("%s is %d bytes, not a whole number of 64-byte lines", c.name, c.size)
		}
	}
	if got := unsafe.Offsetof(clusterState{}.prefill) + unsafe.Offsetof(fifo[int32]{}.size) + unsafe.Sizeof(0); got > 112 {
		t.Errorf("publish reads clusterState's first %d bytes, want at most 112", got)
	}
	if got := unsafe.Sizeof(request{}); got != 3*64 {
		t.Errorf("request is %d bytes, want 3 lines", got)
	}
}
