package lb

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"time"
)

// Rand is the injected source of randomness: the engine draws uniform
// integers from it for sampling (wait-and-widen.md §3.3 steps 7–8,
// power-of-n, random). *math/rand/v2.Rand satisfies it, so a seeded
// rand.New(rand.NewPCG(a, b)) gives reproducible decisions.
type Rand interface {
	// IntN returns a uniformly distributed integer in [0, n); n > 0.
	IntN(n int) int
}

// Options select the optional, more expensive parts of a decision. The
// zero value is the simulator's hot path: no trace, no probabilities, no
// allocation.
type Options struct {
	// Trace records a per-phase, per-candidate trace in Decision.Trace.
	Trace bool
	// Probabilities computes Decision.Choices: every cluster the sampling
	// step could have chosen, with its exact probability.
	Probabilities bool
	// PartialOrder lets pulsar and pulsar-wait-and-widen order only the
	// ranks a decision reads (rankprefix.go): OriginalOrder, AffinityOrder
	// and OpenSet then end where the decision stopped reading (pww: at
	// the end of the open set, the affinity group when the affinity phase
	// chose or waited; pulsar: at the chosen cluster, every rank when none
	// is feasible), OriginalOrder holding the ranks AffinityOrder was built
	// from, and Ambiguous covers only adjacent ranks inside OriginalOrder.
	// Every other field (Kind, Cluster, ClusterID, RankDepth, Wait,
	// RetryAt, Reason, Phase, Session, Promoted, AffinityGroup,
	// AffinityWait, BandInterval, SelectedAfterKVFreeTokensSkip, Choices)
	// is the full decision's, and so are the random draws. It has no effect
	// on other algorithms or with Trace (a trace prints the whole ranking).
	// The simulator sets it; explain and the conformance cases do not.
	PartialOrder bool
}

// Kind is the load balancer's decision kind (Stargate's
// LoadBalancerDecision): Selected, Wait or Unavailable.
type Kind uint8

// Decision kinds.
const (
	// KindUnavailable: nothing selectable and no timed change expected.
	KindUnavailable Kind = iota
	// KindSelected: dispatch to Decision.Cluster.
	KindSelected
	// KindWait: nothing selectable now; run selection again after
	// Decision.Wait.
	KindWait
)

var kindNames = [...]string{"unavailable", "selected", "wait"}

// String returns "selected", "wait" or "unavailable".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// MarshalText renders String.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Reason says why a decision is Unavailable (or, for a Wait, what the wait
// is for).
type Reason uint8

// Reasons.
const (
	// ReasonNone: not applicable.
	ReasonNone Reason = iota
	// ReasonNoCandidates: the snapshot has no clusters.
	ReasonNoCandidates
	// ReasonAllExcluded: every candidate was excluded by earlier attempts.
	ReasonAllExcluded
	// ReasonNothingRanked: no candidate has a valid Pulsar weight
	// (pulsar.md §4.6, P15).
	ReasonNothingRanked
	// ReasonNoFeasible: every ranked candidate failed the Pulsar
	// feasibility gate (pulsar.md §5).
	ReasonNoFeasible
	// ReasonQueueSLO: every remaining candidate is over the queue-SLO limit.
	ReasonQueueSLO
	// ReasonNoFiniteTTFT: no remaining candidate has a finite bucket TTFT.
	ReasonNoFiniteTTFT
	// ReasonNoCapacity: no unlocked candidate passes queue admission and no
	// later bucket, band or affinity deadline is pending.
	ReasonNoCapacity
	// ReasonAffinityWait: waiting for the affinity wait X to end.
	ReasonAffinityWait
	// ReasonBucketUnlock: waiting for a slower TTFT bucket to unlock.
	ReasonBucketUnlock
	// ReasonNextBand: waiting for the next Pulsar ranking band.
	ReasonNextBand
)

var reasonNames = [...]string{"", "no_candidates", "all_excluded", "nothing_ranked", "no_feasible_candidate",
	"queue_slo", "no_finite_ttft", "no_capacity", "affinity_wait", "bucket_unlock", "next_band"}

// String returns the snake_case reason name ("" for ReasonNone).
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "invalid"
}

// MarshalText renders String.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Phase names the selection step that produced (or was evaluated for) a
// decision.
type Phase uint8

// Phases.
const (
	// PhaseNone: no selection ran.
	PhaseNone Phase = iota
	// PhaseAffinity: wait-and-widen affinity group / pww affinity group
	// (discounted prefill, max_queued).
	PhaseAffinity
	// PhaseGlobal: wait-and-widen selection over every candidate (global
	// fallback after X, or the no-affinity path).
	PhaseGlobal
	// PhaseOpen: pww open set (ranking prefix, fallback_max_queued).
	PhaseOpen
	// PhaseRankWalk: plain pulsar's walk down the ranking.
	PhaseRankWalk
	// PhaseSample: power-of-n / random / round-robin.
	PhaseSample
)

var phaseNames = [...]string{"", "affinity", "global", "open", "rank_walk", "sample"}

// String returns the phase name.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "invalid"
}

// MarshalText renders String.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Choice is one cluster the sampling step could have chosen, with its
// probability, computed analytically from the sampling rule (uniform n-of-m
// sample, lowest comparator score wins, uniform among ties).
type Choice struct {
	// Cluster is the candidate index in the snapshot.
	Cluster int `json:"-"`
	// ClusterID is its id.
	ClusterID string `json:"cluster_id"`
	// P is the probability (0 < P ≤ 1).
	P float64 `json:"p"`
	// Exact is P as a reduced fraction; nil when only an approximation was
	// computed (see Decision.ChoicesExact).
	Exact *big.Rat `json:"-"`
}

// Fraction renders the exact probability ("2/3", "1"), or a decimal when
// only an approximation is known.
func (c Choice) Fraction() string {
	if c.Exact == nil {
		return strconv.FormatFloat(c.P, 'g', 6, 64)
	}
	return c.Exact.RatString()
}

// MarshalJSON adds the fraction to the JSON form.
func (c Choice) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ClusterID string  `json:"cluster_id"`
		P         float64 `json:"p"`
		Fraction  string  `json:"fraction"`
	}{c.ClusterID, c.P, c.Fraction()})
}

// Decision is one load-balancer decision (Stargate's LoadBalancerDecision)
// with everything explain and the simulator need to say why.
//
// Slices (AffinityOrder, AffinityGroup, OpenSet, Choices) alias the
// engine's scratch buffers and stay valid only until the next call on the
// same Engine and must not be modified; use Clone to keep or edit them.
type Decision struct {
	// Algorithm is the algorithm that decided.
	Algorithm Algorithm
	// Kind is Selected, Wait or Unavailable.
	Kind Kind
	// Cluster is the chosen candidate's index in the snapshot (-1 unless
	// Selected); ClusterID its id.
	Cluster   int
	ClusterID string
	// RankDepth is the 1-based depth in the order the choice came from
	// (wait-and-widen.md §3.1, pulsar.md §7.6); 0 unless Selected.
	RankDepth int
	// SelectedAfterKVFreeTokensSkip reports that a candidate ranked above
	// the chosen one failed the Pulsar KV check (pulsar.md §5).
	SelectedAfterKVFreeTokensSkip bool
	// Wait is the delay after which selection runs again (Kind == Wait);
	// RetryAt = request elapsed + Wait.
	Wait    time.Duration
	RetryAt time.Duration
	// Reason says why the decision is Unavailable, or what a Wait waits for.
	Reason Reason
	// Phase is the selection step that chose (Selected) or last ran.
	Phase Phase
	// Session is the session state (SessionNone = not classified) and
	// Promoted the classification's promotion flag (session.md §3, §9).
	Session  SessionState
	Promoted bool
	// OriginalOrder is the affinity order before session promotion;
	// AffinityOrder the (possibly promoted) order the decision used
	// (wait-and-widen: the group of k' = min(k, N) clusters; pww: the full
	// ranking); AffinityGroup its first k' entries. Candidate indices; nil
	// when the algorithm has no affinity order for this request.
	OriginalOrder []int
	AffinityOrder []int
	AffinityGroup []int
	// OpenSet are the candidates that could be chosen at this decision
	// (pww: the ranking prefix opened by the bands; wait-and-widen: the
	// group before X, every candidate after).
	OpenSet []int
	// AffinityWait is the effective affinity wait X after session rules,
	// and BandInterval pww's effective band interval S.
	AffinityWait time.Duration
	BandInterval time.Duration
	// Choices lists every cluster the sampling step could have chosen with
	// its probability (Options.Probabilities; Selected only). ChoicesExact
	// is false when the comparator was not a total preorder and the set was
	// too large to enumerate, so the probabilities were estimated.
	Choices      []Choice
	ChoicesExact bool
	// Ambiguous reports a Pulsar ranking near-tie: two adjacent scores that
	// are equal or differ by less than 1e-12 relative (pulsar.md §11 item
	// 3). The ranking itself is Stargate's on Linux x86_64 (Ln is glibc's
	// log bit for bit; exact ties go by cluster id as upstream); the flag
	// says a platform with another libm could order the pair differently.
	Ambiguous bool
	// Trace is the structured trace (Options.Trace), else nil.
	Trace *Trace
}

// Clone returns a copy whose slices no longer alias engine buffers.
func (d Decision) Clone() Decision {
	d.OriginalOrder = cloneInts(d.OriginalOrder)
	d.AffinityOrder = cloneInts(d.AffinityOrder)
	d.AffinityGroup = cloneInts(d.AffinityGroup)
	d.OpenSet = cloneInts(d.OpenSet)
	if d.Choices != nil {
		d.Choices = append([]Choice(nil), d.Choices...)
	}
	return d
}

func cloneInts(s []int) []int {
	if s == nil {
		return nil
	}
	return append([]int(nil), s...)
}

// IDs maps candidate indices to cluster ids of snap (nil for nil).
func IDs(snap *Snapshot, idx []int) []string {
	if idx == nil {
		return nil
	}
	out := make([]string, len(idx))
	for i, j := range idx {
		if j >= 0 && j < len(snap.Clusters) {
			out[i] = snap.Clusters[j].ClusterID
		}
	}
	return out
}

// Millis is a millisecond quantity that may be +Inf; it marshals +Inf as
// the JSON string "inf" (encoding/json cannot encode infinities).
type Millis float64

// MarshalJSON renders finite values as numbers and infinities as strings.
func (m Millis) MarshalJSON() ([]byte, error) {
	f := float64(m)
	switch {
	case math.IsInf(f, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-inf"`), nil
	case math.IsNaN(f):
		return []byte(`"nan"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}
