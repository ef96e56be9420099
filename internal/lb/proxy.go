package lb

import (
	"fmt"
	"math"
	"time"
)

// Outcome is what the proxy does with a request at one decision point
// (formats.md expect.outcome).
type Outcome uint8

// Outcomes.
const (
	// OutcomeDispatch: reserve and dispatch to the chosen cluster.
	OutcomeDispatch Outcome = iota + 1
	// OutcomeWait: nothing selectable now; the proxy decides again later.
	OutcomeWait
	// OutcomeReject: HTTP 503 (or 404 for an unknown model): no capacity,
	// no candidates, or input-work admission.
	OutcomeReject
	// OutcomeError: HTTP 400 before routing (request policy or headers).
	OutcomeError
)

var outcomeNames = [...]string{"", "dispatch", "wait", "reject", "error"}

// String returns the formats.md spelling.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "invalid"
}

// MarshalText renders String.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ParseOutcome parses the formats.md spelling.
func ParseOutcome(s string) (Outcome, bool) {
	for i := 1; i < len(outcomeNames); i++ {
		if outcomeNames[i] == s {
			return Outcome(i), true
		}
	}
	return 0, false
}

// Proxy timing constants (upstream http_proxy routing: ROUTING_RETRY_*).
const (
	// MaxRoutingWait caps x-max-wait-ms and bounds timed load-balancer
	// waits without it (lb-config.md H7).
	MaxRoutingWait = 60 * time.Second
	// RecheckInterval is the longest the proxy sleeps on a timed wait
	// before deciding again on a fresh snapshot.
	RecheckInterval = 25 * time.Millisecond
	// RetrySleepMin and RetrySleepMax bound the generic capacity retry
	// sleep: a uniform whole number of ms in [1, 9].
	RetrySleepMin = 1 * time.Millisecond
	RetrySleepMax = 9 * time.Millisecond
)

// Step is the proxy's handling of one routing attempt: the request policy
// and admission rules around the load balancer, and what the proxy does
// with its decision (wait-and-widen.md §3.6–3.7, pulsar.md §8, lb-config.md
// H4, H7, H8).
type Step struct {
	// Outcome is dispatch, wait, reject or error.
	Outcome Outcome
	// Balanced reports whether the load balancer ran; Decision is its
	// decision (valid only when Balanced).
	Balanced bool
	Decision Decision
	// RetryAt is, for a wait, the elapsed time (since arrival) at which
	// selection is meant to run again: min(elapsed + LB wait, wait
	// deadline) for a timed wait, elapsed + the random sleep for a generic
	// capacity retry. The proxy still re-decides every Sleep meanwhile.
	RetryAt time.Duration
	// Sleep is how long the proxy actually sleeps before deciding again
	// (≤ 25 ms for timed waits; 1–9 ms, capped at the deadline, for a
	// generic retry).
	Sleep time.Duration
	// GenericRetry marks a wait that is the proxy's capacity retry loop
	// (x-max-wait-ms present, deadline not reached), whose delay is random.
	GenericRetry bool
	// WaitDeadline and RetryDeadline are the proxy deadlines since arrival
	// (RetryDeadline only with x-max-wait-ms; HasRetryDeadline).
	WaitDeadline     time.Duration
	RetryDeadline    time.Duration
	HasRetryDeadline bool
	// HTTPStatus is 400, 404 or 503 for reject/error, else 0; Code is the
	// machine reason (e.g. "missing_cache_affinity_key",
	// "input_work_limit_exceeded", "routing_capacity_unavailable").
	HTTPStatus int
	Code       string
	// InputWorkSeconds is the admission estimate when max_input_work_seconds
	// is configured and it could be computed.
	InputWorkSeconds    float64
	HasInputWorkSeconds bool
	// Message is a one-line human explanation (constant text on the
	// dispatch and wait paths, so Step does not allocate).
	Message string
}

// Step applies the proxy rules around one decision at req.Elapsed and
// returns what the proxy does: request policy (H4 missing x-input-tokens,
// then H2 missing x-model, then H8 require_cache_affinity_key → error/400), the candidate slice (the
// snapshot's routable clusters, Status.Routable; decision indices still
// refer to snap), the candidate check (no clusters at all → reject/404; no
// routable cluster, or all excluded → reject/503), input-work admission (§3.7 →
// reject/503), then Decide, and the wait budget (timed waits until
// min(x-max-wait-ms, 60000) ms; the generic 1–9 ms capacity retry while an
// explicit x-max-wait-ms deadline has not passed; reject otherwise). rng is
// also used for the generic retry sleep.
func (e *Engine) Step(snap *Snapshot, req *Request, rng Rand, opt Options) Step {
	var st Step
	if snap == nil {
		snap = &Snapshot{}
	}
	if req == nil {
		req = &Request{}
	}
	if rng == nil {
		rng = e.rng
	}
	elapsed := max(req.Elapsed, 0)
	waitMs := uint64(60000)
	if req.MaxWaitMs.Set {
		waitMs = min(req.MaxWaitMs.Value, 60000)
		st.RetryDeadline, st.HasRetryDeadline = durationFromMillis(waitMs), true
	}
	st.WaitDeadline = durationFromMillis(waitMs)

	rv := e.view(req)
	// Stargate parses x-input-tokens before x-model (http_proxy/request.rs),
	// so a request missing both reports the input tokens.
	if !req.HasInputTokens {
		return st.fail(OutcomeError, 400, "missing_input_tokens", "x-input-tokens is required (H4)")
	}
	if rv.model == "" {
		return st.fail(OutcomeError, 400, "missing_model", "x-model is missing or blank (H2)")
	}
	if e.cfg.RequireCacheAffinityKey && !rv.hasKey {
		return st.fail(OutcomeError, 400, "missing_cache_affinity_key",
			"require_cache_affinity_key is set and x-cache-affinity-key is absent or blank (H8)")
	}
	cand, filtered := e.candidates(snap)
	eligible := e.prepare(cand, req, &rv)
	// No candidates: upstream answers 404 only when the target has no
	// candidates, no cluster registered the model at all and nothing was
	// excluded (request_routing no_choice / has_registered_model_for_target);
	// a cluster listed with a non-routable status has registered the model,
	// so the request is 503 without retrying (test
	// registered_inactive_target_is_unavailable_without_retrying).
	if len(cand.Clusters) == 0 {
		switch {
		case len(snap.Clusters) > 0:
			return st.fail(OutcomeReject, 503, "no_eligible_candidates",
				"no cluster is a candidate: every cluster of the snapshot is inactive or unknown (the model is registered but not routable)")
		case len(req.ExcludedClusterIDs) == 0:
			return st.fail(OutcomeReject, 404, "no_eligible_candidates", "the snapshot has no candidates for the model")
		}
		return st.fail(OutcomeReject, 503, "no_eligible_candidates", "the snapshot has no candidates")
	}
	if eligible == 0 {
		return st.fail(OutcomeReject, 503, "no_eligible_candidates", "every candidate was already tried by an earlier attempt")
	}
	if lim := e.cfg.MaxInputWorkSeconds; lim != nil {
		secs, ok := e.inputWorkSeconds(cand, &rv)
		st.InputWorkSeconds, st.HasInputWorkSeconds = secs, ok
		switch {
		case !ok:
			return st.fail(OutcomeReject, 503, "input_work_capacity_unavailable",
				"input-work admission: no participating capacity (§3.7)")
		case !(secs <= *lim):
			return st.fail(OutcomeReject, 503, "input_work_limit_exceeded",
				fmt.Sprintf("input-work admission: %.6g s > max_input_work_seconds %.6g", secs, *lim))
		}
	}
	st.Balanced = true
	st.Decision = Decision{Algorithm: e.cfg.Algorithm, Cluster: -1}
	d := &st.Decision
	e.decide(cand, &rv, eligible, rng, opt, d)
	if filtered {
		e.remap(d)
	}
	switch d.Kind {
	case KindSelected:
		st.Outcome = OutcomeDispatch
		st.Message = "dispatch to the chosen cluster"
		return st
	case KindWait:
		if elapsed < st.WaitDeadline {
			sleep := min(d.Wait, RecheckInterval, st.WaitDeadline-elapsed)
			if sleep > 0 {
				st.Outcome = OutcomeWait
				st.Sleep = sleep
				st.RetryAt = min(addSat(elapsed, d.Wait), st.WaitDeadline)
				st.Message = "wait: a timed load-balancer wait; the proxy re-decides at least every 25 ms"
				return st
			}
		}
	}
	if st.HasRetryDeadline && elapsed < st.RetryDeadline {
		remaining := st.RetryDeadline - elapsed
		sleep := min(time.Duration(1+rng.IntN(9))*time.Millisecond, remaining)
		st.Outcome = OutcomeWait
		st.GenericRetry = true
		st.Sleep = sleep
		st.RetryAt = elapsed + sleep
		st.Message = "wait: generic capacity retry (random 1–9 ms) until the x-max-wait-ms deadline"
		return st
	}
	return st.fail(OutcomeReject, 503, "routing_capacity_unavailable", "nothing selectable and no wait budget left")
}

func (st Step) fail(o Outcome, status int, code, msg string) Step {
	st.Outcome, st.HTTPStatus, st.Code, st.Message = o, status, code, msg
	return st
}

// InputWorkSeconds is the admission estimate of wait-and-widen.md §3.7 /
// pulsar.md §6.3: (input tokens + Σ queued input tokens) / Σ valid
// last_mean_input_tps over the participating candidates, in seconds. A
// candidate participates when it is routable (Status.Routable) and not excluded; for pulsar and
// pulsar-wait-and-widen it must also have a valid rendezvous weight and
// pass the feasibility gate (upstream input_work_admission_candidate).
// ok is false when the rate is not positive and finite or the result is
// not finite (input_work_capacity_unavailable).
func (e *Engine) InputWorkSeconds(snap *Snapshot, req *Request) (float64, bool) {
	if snap == nil || req == nil {
		return 0, false
	}
	rv := e.view(req)
	cand, _ := e.candidates(snap)
	e.prepare(cand, req, &rv)
	return e.inputWorkSeconds(cand, &rv)
}

func (e *Engine) inputWorkSeconds(snap *Snapshot, rv *reqView) (float64, bool) {
	work := float64(rv.inputTokens)
	rate := 0.0
	for i := range snap.Clusters {
		c := &snap.Clusters[i]
		if e.excl[i] {
			continue
		}
		if e.cfg.Algorithm == Pulsar || e.cfg.Algorithm == PulsarWaitAndWiden {
			if _, ok := pulsarWeight(e.cfg.RendezvousWeight, &c.Stats); !ok {
				continue
			}
			if e.feasibility(snap, rv, i) != Eligible {
				continue
			}
		}
		work += float64(c.Stats.QueuedInputSize)
		if TPSValid(c.Stats.LastMeanInputTPS) {
			rate += c.Stats.LastMeanInputTPS
		}
	}
	if !(rate > 0) || math.IsInf(rate, 0) {
		return 0, false
	}
	s := work / rate
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return 0, false
	}
	return s, true
}
