package sim

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/lcctl/lcctl/internal/jsonobj"
	"github.com/lcctl/lcctl/internal/lb"
)

// Result is one policy's metrics (the `policies[]` objects of `lcctl
// simulate --output json`; docs/simulate.md "JSON output"). Every figure
// covers one measurement window, from the end of the warm-up to the end
// of the run (MeasuredS long): request metrics count the requests that
// arrived in it, rates and time averages divide by its length. The drain
// after session arrivals end is part of it.
type Result struct {
	// Policy is the policy name; Algorithm its algorithm (canonical name,
	// "mixed", or a comparison policy's name); LastClusterAffinity the
	// flag, null unless a model is routed by wait-and-widen or
	// pulsar-wait-and-widen (Policy.LastClusterAffinity), written under
	// the lb-config field's name (lb.FieldLastClusterAffinity) after
	// algorithm by MarshalJSON; Source where it came from.
	Policy              string `json:"policy"`
	Algorithm           string `json:"algorithm"`
	LastClusterAffinity *bool  `json:"-"`
	Source              string `json:"source"`
	// Models says, per workload model, which entry of the lb-config routes
	// it (Policy.Routes); null for policies not read from an lb-config.
	Models []ModelRoute `json:"models"`
	// Requests counts measured requests; Completed those that finished;
	// Good those that finished with TTFT ≤ the SLO; Failed the others
	// (Failures by cause).
	Requests  int64         `json:"requests"`
	Completed int64         `json:"completed"`
	Good      int64         `json:"good"`
	Failed    int64         `json:"failed"`
	Failures  FailureCounts `json:"failures"`
	// Decisions counts routing decisions (every Step, retries and timed
	// re-decisions included); Waits those that waited.
	Decisions int64 `json:"decisions"`
	Waits     int64 `json:"waits"`
	// SimulatedS is the simulated time of the run (s), to the last
	// completion; MeasuredS the measurement window, SimulatedS − warm-up
	// (s), the denominator of every rate and time average.
	SimulatedS float64 `json:"simulated_s"`
	MeasuredS  float64 `json:"measured_s"`
	// GoodputRPS is Good / MeasuredS (requests/s); ThroughputRPS is
	// Completed / MeasuredS (requests/s).
	GoodputRPS    float64 `json:"goodput_rps"`
	ThroughputRPS float64 `json:"throughput_rps"`
	// TTFTMs is the time to first token at the gateway (ms): routing
	// waits, RTT, queue, prefill.
	TTFTMs Quantiles `json:"ttft_ms"`
	// QueueWaitMs is the wait for a slot at the cluster (ms).
	QueueWaitMs Quantiles `json:"queue_wait_ms"`
	// RouteWaitMs is the time from arrival to the final dispatch (ms):
	// timed waits and refused attempts.
	RouteWaitMs Quantiles `json:"route_wait_ms"`
	// TPOTMs is the time per output token after the first (ms), one value
	// per completed request with at least 2 output tokens: (completion −
	// first token) / (output − 1).
	TPOTMs Quantiles `json:"tpot_ms"`
	// InputTokens and CachedTokens sum admitted requests' input and the
	// part reused from the KV cache (tokens); KVReuse = Cached / Input.
	InputTokens  int64   `json:"input_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	KVReuse      float64 `json:"kv_reuse"`
	// ReturningRequests counts served requests that carried a last-cluster
	// hint; LeftLastCluster those served elsewhere; LeftLastClusterShare
	// = Left / Returning.
	ReturningRequests    int64   `json:"returning_requests"`
	LeftLastCluster      int64   `json:"left_last_cluster"`
	LeftLastClusterShare float64 `json:"left_last_cluster_share"`
	// Clusters are per-cluster figures in scenario order.
	Clusters []ClusterResult `json:"clusters"`

	// TTFT is the TTFT histogram and Series the time series (for plots).
	TTFT   *Histogram `json:"-"`
	Series *Series    `json:"-"`
	// Trace describes the trace read (nil for a synthetic workload) and
	// BlockTokens the KV block size used (tokens); the report shows them
	// once per document.
	Trace       *TraceStats `json:"-"`
	BlockTokens int64       `json:"-"`
}

// MarshalJSON writes r as its tags say, with LastClusterAffinity under
// lb.FieldLastClusterAffinity's name after algorithm (docs/simulate.md
// "JSON output"; a struct tag cannot name the registry). Errors: those of
// encoding/json.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // without this method
	return jsonobj.MarshalAfter(plain(r), "algorithm", jsonobj.Member{Key: lb.FieldLastClusterAffinity.Name, Value: r.LastClusterAffinity})
}

// UnmarshalJSON reads what MarshalJSON writes (demo decodes simulate's
// document). Errors: those of encoding/json.
func (r *Result) UnmarshalJSON(data []byte) error {
	type plain Result
	return jsonobj.Unmarshal(data, (*plain)(r), jsonobj.Member{Key: lb.FieldLastClusterAffinity.Name, Value: &r.LastClusterAffinity})
}

// FailureCounts splits failed requests by cause.
type FailureCounts struct {
	// Rejected: the router answered 503 (no capacity within the wait
	// budget, input-work admission, no candidates).
	Rejected int64 `json:"rejected"`
	// BadRequest: the router answered 400 (e.g. require_cache_affinity_key
	// without a key).
	BadRequest int64 `json:"bad_request"`
	// Refused: clusters refused every attempt (full queue, drained or
	// failed) up to router.max_attempts.
	Refused int64 `json:"refused"`
	// Stream: the cluster failed after the first token.
	Stream int64 `json:"stream"`
}

// Quantiles summarises a duration distribution (ms): p50, p90 and p99
// within 0.2 % (Histogram), the exact mean and the maximum.
type Quantiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// ClusterResult is one cluster's figures over the measurement window
// (Result): counts of measured requests, time averages over MeasuredS.
type ClusterResult struct {
	// ClusterID is the cluster id.
	ClusterID string `json:"cluster_id"`
	// Accepted counts measured requests the cluster took (slot or queue);
	// Refused those it turned away; Served those it completed.
	Accepted int64 `json:"accepted"`
	Refused  int64 `json:"refused"`
	Served   int64 `json:"served"`
	// Utilization is the time-average share of busy slots over the
	// measurement window (0–1); PrefillUtilization the busy share of the
	// prefill pipeline over it (0–1).
	Utilization        float64 `json:"utilization"`
	PrefillUtilization float64 `json:"prefill_utilization"`
	// InputTokens, CachedTokens and KVReuse as in Result, for requests
	// admitted here.
	InputTokens  int64   `json:"input_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	KVReuse      float64 `json:"kv_reuse"`
	// MeanQueueWaitMs is the exact mean wait for a slot (ms, measured
	// requests).
	MeanQueueWaitMs float64 `json:"mean_queue_wait_ms"`
	// MeanInSystem is the time-average number of requests at the cluster
	// (slots + queue); ArrivalRPS the accepted arrivals per second; and
	// MeanSojournMs the mean time from arrival to completion (ms): Little's
	// law says MeanInSystem = ArrivalRPS · MeanSojournMs / 1000.
	MeanInSystem  float64 `json:"mean_in_system"`
	ArrivalRPS    float64 `json:"arrival_rps"`
	MeanSojournMs float64 `json:"mean_sojourn_ms"`
	// Preemptions counts requests a batched engine preempted (recompute)
	// for want of KV room, measured or not (0 for the fifo engine).
	Preemptions int64 `json:"preemptions"`
}

// RunAll simulates every policy, at most GOMAXPROCS at a time, and returns
// the results in policy order. Each run is independent and deterministic,
// so the order of completion does not matter. It stops early with ctx's
// error when ctx is cancelled, also in the middle of a run.
func RunAll(ctx context.Context, sc *Scenario, policies []Policy, progress *atomic.Int64) ([]*Result, error) {
	out := make([]*Result, len(policies))
	errs := make([]error, len(policies))
	workers := min(runtime.GOMAXPROCS(0), len(policies))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(policies) {
					return
				}
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				out[i], errs[i] = Run(sc, &policies[i], RunOptions{Progress: progress, Context: ctx})
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ExpectedRequests estimates the requests one policy run issues (for a
// progress bar): the trace length when known (traceRecords), else
// max_requests, else rate · duration · mean turns, bursts included.
func ExpectedRequests(sc *Scenario, traceRecords int64) int64 {
	w := &sc.Workload
	if w.Trace != "" {
		if w.MaxRequests > 0 {
			return min(traceRecords, w.MaxRequests)
		}
		return traceRecords
	}
	turns := w.Turns.MeanValue()
	if w.Turns.HasMax {
		turns = min(turns, w.Turns.Max)
	}
	sessions := 0.0
	if w.DurationS > 0 {
		r := &runner{wl: w}
		for t := 0.0; t < w.DurationS; {
			mult, next := r.rateAt(t)
			end := min(next, w.DurationS)
			sessions += w.SessionRate * mult * (end - t)
			t = end
		}
	}
	if w.Sessions > 0 && (sessions == 0 || float64(w.Sessions) < sessions) {
		sessions = float64(w.Sessions)
	}
	n := int64(math.MaxInt64) // saturate: a huge estimate must not wrap
	if nf := sessions * max(turns, 1); nf < math.MaxInt64 {
		n = int64(nf)
	}
	if w.MaxRequests > 0 && (n == 0 || w.MaxRequests < n) {
		n = w.MaxRequests
	}
	return max(n, 1)
}
