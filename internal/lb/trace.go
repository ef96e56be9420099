package lb

import "github.com/lcctl/lcctl/internal/jsonobj"

// Trace is the structured explanation of one decision, recorded only with
// Options.Trace. It allocates; the decision itself never depends on it.
type Trace struct {
	// Ring is the cache-affinity ring lookup (wait-and-widen only).
	Ring *RingTrace `json:"ring,omitempty"`
	// Ranking is the Pulsar ranking (pulsar, pulsar-wait-and-widen).
	Ranking []RankTrace `json:"ranking,omitempty"`
	// Phases are the selection steps in evaluation order.
	Phases []PhaseTrace `json:"phases,omitempty"`
	// Notes are one-line statements of the rules applied, in order.
	Notes []string `json:"notes,omitempty"`
}

// RingTrace records the hash-ring lookup of wait-and-widen.md §4.
type RingTrace struct {
	// KeyHash is XXH3-64 of the key input (§4.1).
	KeyHash uint64 `json:"key_hash"`
	// Start is the first ring position whose hash is ≥ KeyHash (may equal
	// the ring length before wrapping).
	Start int `json:"start"`
	// Entries is the ring size (candidates × virtual nodes).
	Entries int `json:"entries"`
	// Walk is the full walk order over every candidate (informational;
	// the group is its first k' entries).
	Walk []string `json:"walk"`
}

// RankTrace is one Pulsar ranking entry (pulsar.md §4).
type RankTrace struct {
	// Rank is 1-based; ClusterID the candidate.
	Rank      int    `json:"rank"`
	ClusterID string `json:"cluster_id"`
	// Hash is XXH3-64 of the §4.2 input; U the unit interval value,
	// Weight the rendezvous weight (tokens/s) and Score weight/−ln u.
	Hash   uint64  `json:"hash"`
	U      float64 `json:"u"`
	Weight float64 `json:"weight"`
	Score  Millis  `json:"score"`
	// Feasibility is the KV/retry gate result (pulsar.md §5).
	Feasibility Feasibility `json:"feasibility"`
}

// Feasibility is the Pulsar feasibility gate result (pulsar.md §5).
type Feasibility uint8

// Feasibility results.
const (
	// Eligible passes the gate.
	Eligible Feasibility = iota
	// RetryExcluded: the cluster was tried by an earlier attempt.
	RetryExcluded
	// MissingRequiredInputTokens: KV gate on but no input tokens.
	MissingRequiredInputTokens
	// MissingKVFreeTokens: all three KV fields are 0 (a KV skip).
	MissingKVFreeTokens
	// InsufficientKVFreeTokens: fewer free KV tokens than input tokens (a
	// KV skip).
	InsufficientKVFreeTokens
)

var feasibilityNames = [...]string{"eligible", "retry_excluded", "missing_required_input_tokens",
	"missing_kv_free_tokens", "insufficient_kv_free_tokens"}

// String returns the snake_case name.
func (f Feasibility) String() string {
	if int(f) < len(feasibilityNames) {
		return feasibilityNames[f]
	}
	return "invalid"
}

// MarshalText renders String.
func (f Feasibility) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// KVSkip reports whether f is a KV skip reason (sets
// selected_after_kv_free_tokens_skip for clusters ranked below).
func (f Feasibility) KVSkip() bool { return f == MissingKVFreeTokens || f == InsufficientKVFreeTokens }

// PhaseTrace is one run of the selection procedure over a candidate list
// (wait-and-widen.md §3.3, pulsar.md §7.4), or plain pulsar's walk.
type PhaseTrace struct {
	// Phase names the step.
	Phase Phase `json:"phase"`
	// Scale is the prefill multiplier; ClockMs the bucket-unlock budget
	// (ms since the phase's clock started); MaxQueued the admission slack
	// (requests): the max_queued or fallback_max_queued setting the phase
	// ran with, written under the field registry's name of max_queued
	// (FieldMaxQueued) right after clock_ms by MarshalJSON.
	Scale     float64 `json:"scale"`
	ClockMs   Millis  `json:"clock_ms"`
	MaxQueued uint64  `json:"-"`
	// QueueLimitMs is the queue-SLO limit (ms) when HasQueueLimit.
	QueueLimitMs  Millis `json:"queue_limit_ms,omitempty"`
	HasQueueLimit bool   `json:"has_queue_limit"`
	// BucketMs is the TTFT bucket width (ms).
	BucketMs Millis `json:"bucket_ms"`
	// SingleBucket reports that every survivor fitted in one bucket
	// (§3.3 step 3).
	SingleBucket bool `json:"single_bucket"`
	// Candidates are the candidates considered, in list order.
	Candidates []CandidateTrace `json:"candidates"`
	// Sampled are the sampled cluster ids in sample order (sampling draws
	// from the injected Rand).
	Sampled []string `json:"sampled,omitempty"`
	// Result is the phase's outcome; WaitMs the phase wait when Result is
	// Wait.
	Result Kind   `json:"result"`
	WaitMs Millis `json:"wait_ms,omitempty"`
	// Chosen is the chosen cluster id when Result is Selected.
	Chosen string `json:"chosen,omitempty"`
}

// MarshalJSON writes the phase as its tags say, with MaxQueued under
// FieldMaxQueued's name after clock_ms (the key of explain's phase trace,
// docs/explain.md "JSON output"; a struct tag cannot name the registry).
// Errors: those of encoding/json.
func (p PhaseTrace) MarshalJSON() ([]byte, error) {
	type plain PhaseTrace // without this method
	return jsonobj.MarshalAfter(plain(p), "clock_ms", jsonobj.Member{Key: FieldMaxQueued.Name, Value: p.MaxQueued})
}

// UnmarshalJSON reads what MarshalJSON writes (explain's JSON decodes
// back into the report). Errors: those of encoding/json.
func (p *PhaseTrace) UnmarshalJSON(data []byte) error {
	type plain PhaseTrace
	return jsonobj.Unmarshal(data, (*plain)(p), jsonobj.Member{Key: FieldMaxQueued.Name, Value: &p.MaxQueued})
}

// CandidateTrace is one candidate inside a phase.
type CandidateTrace struct {
	// ClusterID and Cluster (snapshot index) identify the candidate; Rank
	// is its 1-based position in the phase's order (0 when unordered).
	ClusterID string `json:"cluster_id"`
	Cluster   int    `json:"-"`
	Rank      int    `json:"rank,omitempty"`
	// Excluded: skipped as tried by an earlier attempt.
	Excluded bool `json:"excluded"`
	// Feasibility: Pulsar gate result (pulsar algorithms only).
	Feasibility Feasibility `json:"feasibility"`
	// TTFT parts in ms: RTTMs + QueueMs + PrefillMs (prefill at the phase
	// scale). BucketTTFTMs drops the ignored terms; ScoreMs is the
	// comparator value (ttft/queue ms, seconds for input-work-seconds, a
	// ratio for utilization, a count for num-requests-queued).
	RTTMs        Millis `json:"rtt_ms"`
	QueueMs      Millis `json:"queue_ms"`
	PrefillMs    Millis `json:"prefill_ms"`
	BucketTTFTMs Millis `json:"bucket_ttft_ms"`
	ScoreMs      Millis `json:"score"`
	// ComparatorTTFTMs is comparator_ttft of wait-and-widen.md §2.6:
	// rtt + queue + prefill at the phase scale, ignore_* flags not applied
	// (the ttft comparator's score; informational for other comparators).
	ComparatorTTFTMs Millis `json:"comparator_ttft_ms"`
	// SLOEligible: within the queue-SLO limit.
	SLOEligible bool `json:"slo_eligible"`
	// Bucket is the 0-based TTFT bucket, also for a bucket that is still
	// locked (−1: not bucketed: excluded, over the queue SLO, or an
	// infinite TTFT); Unlocked whether it is open at the phase clock.
	Bucket   int  `json:"bucket"`
	Unlocked bool `json:"unlocked"`
	// UnlockAtMs is the request elapsed time (ms since arrival) at which
	// the candidate's bucket unlocks with an unchanged snapshot: the phase
	// clock's origin (0 for the affinity phase, X for the global phase and
	// the open set) plus the unlock budgets of every bucket boundary up to
	// its bucket (wait-and-widen.md §3.3 step 4). +Inf when not bucketed.
	UnlockAtMs Millis `json:"unlock_at_ms"`
	// HasCapacity is queue admission (running < max + slack, or unknown
	// limit).
	HasCapacity bool `json:"has_capacity"`
	// Sampled and Chosen mark the sampling result.
	Sampled bool `json:"sampled"`
	Chosen  bool `json:"chosen"`
	// Why is a short human reason for the candidate's fate.
	Why string `json:"why"`
}
