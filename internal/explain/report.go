// Package explain renders what `lcctl explain` found out about one request:
// the effective algorithm and settings, the affinity order before and after
// session promotion, the per-cluster estimates, the decision, the decisions
// over time and a side-by-side comparison. It takes decision values (built
// by the engine, internal/lb) and writes text (lipgloss, plain when colour
// is off) or JSON; it never decides anything itself. The JSON field names
// are lcctl's stable output schema, documented in docs/explain.md.
package explain

import (
	"encoding/json"
	"time"

	"github.com/lcctl/lcctl/internal/lb"
)

// Report is one `lcctl explain` run: the request, the snapshot it was
// decided against, the primary run (the configuration as given) and, with
// --compare, a second run of the same request.
type Report struct {
	// Model is the request's trimmed x-model.
	Model string `json:"model"`
	// Request is the request as the proxy read it.
	Request Request `json:"request"`
	// Snapshot is the candidate slice as the engine saw it.
	Snapshot *Snapshot `json:"snapshot"`
	// Run is the decision with the configuration as given.
	Run Run `json:"run"`
	// Compare is the --compare run, nil without --compare.
	Compare *Comparison `json:"compare,omitempty"`
	// Notes are remarks about the inputs (ignored headers, assumed
	// defaults, --exclude ids that are not candidates).
	Notes []string `json:"notes,omitempty"`
	// Provenance says where the inputs came from (live or session
	// flags); nil for files only.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Span compares the decision with the one Stargate recorded (--span
	// with --request-id); nil otherwise.
	Span *SpanComparison `json:"span_comparison,omitempty"`
}

// Run is one configuration applied to the request: how the effective
// algorithm was resolved, the effective algorithm entry, the decision at
// the request's elapsed time, the decision at its retry time (Then), and
// the decisions at every change point (Timeline, with --timeline or
// --compare).
type Run struct {
	// Label names the run in a comparison ("last_cluster_affinity off",
	// a file name); "" for a single run.
	Label string `json:"label,omitempty"`
	// Resolution says how the effective algorithm was chosen.
	Resolution Resolution `json:"resolution"`
	// Config is the effective algorithm entry (its own request_algorithms
	// dropped, lb-config.md E4); nil when the request was rejected before
	// an algorithm was resolved.
	Config *lb.AlgorithmConfig `json:"config"`
	// Decision is the decision at the request's elapsed time.
	Decision Decision `json:"decision"`
	// Then is the decision at Decision.RetryAtMs when Decision is a wait
	// (what happens when the wait ends), nil otherwise.
	Then *Decision `json:"then,omitempty"`
	// Timeline lists the decisions at the request's elapsed time and at
	// every later instant where the decision can change (the retry times
	// the engine reports), up to a dispatch, a reject or the wait budget.
	Timeline []Decision `json:"timeline,omitempty"`
	// TimelineTruncated reports that the timeline stopped at its step
	// limit before reaching an end.
	TimelineTruncated bool `json:"timeline_truncated,omitempty"`
}

// Resolution is how the effective algorithm entry was chosen
// (lb-config.md §10).
type Resolution struct {
	// ConfigFile is the lb-config (or --algorithm-config) file, "" for
	// Stargate's permissive default (E6).
	ConfigFile string `json:"config_file"`
	// AlgorithmConfigFile reports that ConfigFile holds one algorithm
	// object (--algorithm-config) rather than a whole lb-config.
	AlgorithmConfigFile bool `json:"algorithm_config_file,omitempty"`
	// Algorithm is the effective algorithm (absent when the request was
	// rejected before resolution); Spelling the name as written when it
	// is an alias.
	Algorithm lb.Algorithm `json:"algorithm,omitempty"`
	Spelling  string       `json:"spelling,omitempty"`
	// Rule is the rule that chose the entry, as the engine reports it:
	// "E2 model entry", "E2 default", "E3.1 own algorithm",
	// "E3.2 model request_algorithms", "E3.2 request_algorithms" or
	// "E3.3 request_algorithms". Path is the entry's place in the file
	// (`models["m"]`, `request_algorithms["pulsar"]`, `default`, or ""
	// for the --algorithm-config object itself).
	Rule string `json:"rule,omitempty"`
	Path string `json:"path,omitempty"`
	// ModelEntry reports whether the config has a models entry for the
	// request's model (E1).
	ModelEntry bool `json:"model_entry"`
	// RoutingMethod is the x-routing-method value, nil without the header;
	// Parameters are the routing-expression parameters applied on top of
	// the entry (lb-config.md §12), in order.
	RoutingMethod *string  `json:"routing_method"`
	Parameters    []string `json:"parameters,omitempty"`
	// Expression is the parsed routing expression (x-routing-method with
	// parameters, lb-config.md §12), nil for a method-only value or when
	// the value did not parse.
	Expression *Expression `json:"expression,omitempty"`
}

// Expression is a routing expression as Stargate parsed it, and what each
// parameter did to the entry's config.
type Expression struct {
	// Token is the algorithm token as written; Algorithm its algorithm.
	Token     string `json:"token"`
	Algorithm string `json:"algorithm"`
	// Parameters are in header order.
	Parameters []ExpressionParam `json:"parameters"`
}

// ExpressionParam is one parameter: Value as written (quotes kept), Type
// its RFC 8941 type (integer, decimal, token, string). Before and After
// are the field's value in the entry's config and after the overlay
// ("unset" for an optional field without a value); both are absent when
// the overlay was rejected before reaching the parameter.
type ExpressionParam struct {
	Key    string  `json:"key"`
	Value  string  `json:"value"`
	Type   string  `json:"type"`
	Before *string `json:"before,omitempty"`
	After  *string `json:"after,omitempty"`
}

// Rejection is Stargate's answer to an x-routing-method value it refuses
// (lb-config.md §10 E3, §12): the HTTP status, the x-stargate-error-code
// header, the routing-expression rule the message names, the raw header
// value Stargate records as requested, and the JSON body it sends.
type Rejection struct {
	Status    int             `json:"status"`
	ErrorCode string          `json:"x_stargate_error_code"`
	Rule      string          `json:"rule,omitempty"`
	Requested string          `json:"requested"`
	Body      json.RawMessage `json:"body"`
}

// Header is one request header as given (-H or a convenience flag).
type Header struct {
	Name  string `json:"name"`  // as given (any case)
	Value string `json:"value"` // raw value
}

// RoutingError is a request Stargate answers with HTTP 400 before routing
// (lb-config.md H1–H9, E3, X1–X6).
type RoutingError struct {
	// Status is the HTTP status (400); Code the machine code
	// ("invalid_header", "unknown_method", "unavailable", …).
	Status int    `json:"status"`
	Code   string `json:"code"`
	// Header names the header at fault; Message is Stargate's text.
	Header  string `json:"header"`
	Message string `json:"message"`
}

// Request is the request as Stargate's proxy read it from the headers
// (formats.md "Request" field names; lb-config.md §11).
type Request struct {
	// Headers are the request headers in order, as given.
	Headers []Header `json:"headers"`
	// RoutingKey, CacheAffinityKey and LastClusterID are the trimmed
	// optional headers ("" = absent).
	RoutingKey       string `json:"routing_key,omitempty"`
	CacheAffinityKey string `json:"cache_affinity_key,omitempty"`
	LastClusterID    string `json:"last_cluster_id,omitempty"`
	// RoutingMethod is the raw x-routing-method, nil when absent.
	RoutingMethod *string `json:"routing_method"`
	// InputTokens is x-input-tokens (tokens), Priority x-priority.
	InputTokens uint64 `json:"input_tokens"`
	Priority    uint32 `json:"priority"`
	// RequestSLOMs and MaxWaitMs are x-request-slo-ms and x-max-wait-ms
	// (ms), nil when absent.
	RequestSLOMs *uint64 `json:"request_slo_ms"`
	MaxWaitMs    *uint64 `json:"max_wait_ms"`
	// ExcludedClusterIDs are the clusters earlier attempts tried; empty
	// (never null in JSON) for a first attempt.
	ExcludedClusterIDs []string `json:"excluded_cluster_ids"`
	// ElapsedMs is the time since the request arrived (ms).
	ElapsedMs float64 `json:"elapsed_ms"`
	// FirstClassification is the session state pinned by the request's
	// first decision, nil when this is the first decision.
	FirstClassification *string `json:"first_classification"`
	// Error is the 400 the proxy answers before routing because of the
	// headers, nil when they are acceptable.
	Error *RoutingError `json:"error,omitempty"`
}

// Choice is one cluster sampling could choose, with its probability.
type Choice struct {
	ClusterID string  `json:"cluster_id"` // the cluster
	P         float64 `json:"p"`          // its probability, 0 < P ≤ 1
	// Fraction is P as an exact fraction ("2/3") when known.
	Fraction string `json:"fraction"`
}

// Decision is one routing decision at one elapsed time: the proxy's
// outcome (lb.Step) and, when the load balancer ran, its decision
// (lb.Decision) with cluster ids instead of snapshot indices and
// milliseconds instead of durations.
type Decision struct {
	// ElapsedMs is the request's elapsed time at this decision (ms).
	ElapsedMs float64 `json:"elapsed_ms"`
	// Outcome is dispatch, wait, reject or error (formats.md).
	Outcome lb.Outcome `json:"outcome"`
	// HTTPStatus (400/404/503) and Code are set for reject and error.
	HTTPStatus int    `json:"http_status,omitempty"`
	Code       string `json:"code,omitempty"`
	// Message is the proxy's one-line explanation.
	Message string `json:"message"`
	// Rejection is Stargate's full answer when x-routing-method is refused
	// (outcome error), nil otherwise.
	Rejection *Rejection `json:"rejection,omitempty"`
	// Balanced reports whether the load balancer ran; Kind is its
	// decision (selected, wait, unavailable), absent when it did not run.
	Balanced bool     `json:"balanced"`
	Kind     *lb.Kind `json:"kind,omitempty"`
	// Cluster is the cluster this run chose (dispatch); RankDepth its
	// 1-based depth in the order it came from; Choices every cluster the
	// sampling could have chosen with its probability (ChoicesExact false
	// when estimated).
	Cluster                       string   `json:"cluster,omitempty"`
	RankDepth                     int      `json:"rank_depth,omitempty"`
	SelectedAfterKVFreeTokensSkip bool     `json:"selected_after_kv_free_tokens_skip"`
	Choices                       []Choice `json:"choices,omitempty"`
	ChoicesExact                  bool     `json:"choices_exact,omitempty"`
	// WaitMs is the load balancer's wait (kind wait); RetryAtMs the
	// elapsed time at which the proxy runs selection again (outcome
	// wait), SleepMs how long it sleeps before re-deciding on a fresh
	// snapshot (≤ 25 ms), GenericRetry marks the random 1–9 ms capacity
	// retry of an explicit x-max-wait-ms.
	WaitMs       *lb.Millis `json:"wait_ms,omitempty"`
	RetryAtMs    *lb.Millis `json:"retry_at_ms,omitempty"`
	SleepMs      *lb.Millis `json:"sleep_ms,omitempty"`
	GenericRetry bool       `json:"generic_retry,omitempty"`
	// WaitDeadlineMs is when timed waits end (arrival + min(x-max-wait-ms,
	// 60000)); RetryDeadlineMs the x-max-wait-ms deadline of the generic
	// retry, nil without the header.
	WaitDeadlineMs  lb.Millis  `json:"wait_deadline_ms"`
	RetryDeadlineMs *lb.Millis `json:"retry_deadline_ms,omitempty"`
	// Reason says why the load balancer is unavailable or what a wait is
	// for; Phase is the selection step that chose or ran last.
	Reason lb.Reason `json:"reason,omitempty"`
	Phase  lb.Phase  `json:"phase,omitempty"`
	// SessionState is new, returning or stale; nil when the request was
	// not classified (session.md §2). Promoted is the classification's
	// promotion flag.
	SessionState *string `json:"session_state"`
	Promoted     bool    `json:"promoted"`
	// OriginalOrder is the affinity order before session promotion,
	// AffinityOrder after it (wait-and-widen: the group of min(k, N)
	// clusters; pulsar-wait-and-widen and pulsar: the ranking),
	// AffinityGroup its first k entries and OpenSet the clusters that
	// could be chosen at this decision. nil when the algorithm has no
	// affinity order for this request.
	OriginalOrder []string `json:"original_order"`
	AffinityOrder []string `json:"affinity_order"`
	AffinityGroup []string `json:"affinity_group"`
	OpenSet       []string `json:"open_set"`
	// AffinityWaitMs is the effective affinity wait X after session rules
	// (ms); BandIntervalMs pulsar-wait-and-widen's effective band interval
	// S; PrefillScale the prefill multiplier of the affinity phase after
	// session rules. Absent when the algorithm has none.
	AffinityWaitMs *lb.Millis `json:"affinity_wait_ms,omitempty"`
	BandIntervalMs *lb.Millis `json:"band_interval_ms,omitempty"`
	PrefillScale   *float64   `json:"prefill_scale,omitempty"`
	// Ambiguous flags a Pulsar ranking near-tie (pulsar.md §11 item 3).
	Ambiguous bool `json:"ambiguous,omitempty"`
	// InputWorkSeconds is the input-work admission estimate (s) when
	// max_input_work_seconds is configured.
	InputWorkSeconds *float64 `json:"input_work_seconds,omitempty"`
	// Trace is the engine's per-phase, per-candidate trace (main decision
	// only).
	Trace *lb.Trace `json:"trace,omitempty"`
}

// ms converts a duration to the Millis of wait-and-widen.md §1.4.
func ms(d time.Duration) lb.Millis { return lb.Millis(lb.DurationMs(d)) }

func msPtr(d time.Duration) *lb.Millis { m := ms(d); return &m }

// NewDecision converts the proxy step st, taken at elapsed against snap,
// into a Decision. withTrace keeps the engine's trace. The conversion
// renames and re-units; it decides nothing.
func NewDecision(st *lb.Step, snap *lb.Snapshot, elapsed time.Duration, withTrace bool) Decision {
	d := Decision{
		ElapsedMs:      float64(ms(elapsed)),
		Outcome:        st.Outcome,
		HTTPStatus:     st.HTTPStatus,
		Code:           st.Code,
		Message:        st.Message,
		Balanced:       st.Balanced,
		GenericRetry:   st.GenericRetry,
		WaitDeadlineMs: ms(st.WaitDeadline),
	}
	if st.HasRetryDeadline {
		d.RetryDeadlineMs = msPtr(st.RetryDeadline)
	}
	if st.Outcome == lb.OutcomeWait {
		d.RetryAtMs = msPtr(st.RetryAt)
		d.SleepMs = msPtr(st.Sleep)
	}
	if st.HasInputWorkSeconds {
		v := st.InputWorkSeconds
		d.InputWorkSeconds = &v
	}
	if !st.Balanced {
		return d
	}
	ld := &st.Decision
	k := ld.Kind
	d.Kind = &k
	d.Reason, d.Phase = ld.Reason, ld.Phase
	if ld.Kind == lb.KindSelected {
		d.Cluster = ld.ClusterID
		d.RankDepth = ld.RankDepth
		d.SelectedAfterKVFreeTokensSkip = ld.SelectedAfterKVFreeTokensSkip
		d.ChoicesExact = ld.ChoicesExact
		for _, c := range ld.Choices {
			d.Choices = append(d.Choices, Choice{ClusterID: c.ClusterID, P: c.P, Fraction: c.Fraction()})
		}
	}
	if ld.Kind == lb.KindWait {
		d.WaitMs = msPtr(ld.Wait)
	}
	if ld.Session != lb.SessionNone {
		s := ld.Session.String()
		d.SessionState = &s
	}
	d.Promoted = ld.Promoted
	d.OriginalOrder = lb.IDs(snap, ld.OriginalOrder)
	d.AffinityOrder = lb.IDs(snap, ld.AffinityOrder)
	d.AffinityGroup = lb.IDs(snap, ld.AffinityGroup)
	d.OpenSet = lb.IDs(snap, ld.OpenSet)
	switch ld.Algorithm {
	case lb.WaitAndWiden, lb.PulsarWaitAndWiden:
		if ld.AffinityOrder != nil {
			d.AffinityWaitMs = msPtr(ld.AffinityWait)
		}
		if ld.Algorithm == lb.PulsarWaitAndWiden && ld.AffinityOrder != nil {
			d.BandIntervalMs = msPtr(ld.BandInterval)
		}
	}
	d.Ambiguous = ld.Ambiguous
	if ld.Trace != nil {
		for _, p := range ld.Trace.Phases {
			if p.Phase == lb.PhaseAffinity {
				s := p.Scale
				d.PrefillScale = &s
				break
			}
		}
		if withTrace {
			d.Trace = ld.Trace
		}
	}
	return d
}

// Final returns the last decision of the timeline (or the decision itself
// without one): where the request ends up with an unchanged snapshot.
func (r *Run) Final() *Decision {
	if n := len(r.Timeline); n > 0 {
		return &r.Timeline[n-1]
	}
	return &r.Decision
}
