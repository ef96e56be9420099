package lb

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Status is a cluster's inference-server status for the model (formats.md
// "status"; Stargate's InferenceServerStatus). Only StatusActive clusters
// are routing candidates: Stargate puts a backend into a routing target
// only when its model registration is Active (any other status, including
// Unknown and unparseable values, removes it), and a cluster is in the
// candidate slice only while it has such a backend (upstream
// routing_state apply_registration_update and cluster_snapshots
// backend_aggregate). The engine therefore drops non-active clusters from
// the snapshot before the proxy rules and the load balancer run; see
// Engine.Step and Routable.
type Status uint8

// Status values, by their formats.md spelling.
const (
	// StatusActive is "active", the default.
	StatusActive Status = iota
	// StatusInactive is "inactive".
	StatusInactive
	// StatusUnknown is "unknown".
	StatusUnknown
)

var statusNames = [...]string{"active", "inactive", "unknown"}

// String returns the formats.md spelling.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "invalid"
}

// MarshalText renders the formats.md spelling.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Routable reports whether a cluster with this status is a routing
// candidate: only StatusActive is (wait-and-widen.md §8 item 7, decided
// from upstream routing_state; docs/engine.md).
func (s Status) Routable() bool { return s == StatusActive }

// ParseStatus parses the formats.md spelling (exact, case-sensitive).
func ParseStatus(s string) (Status, bool) {
	for i, n := range statusNames {
		if n == s {
			return Status(i), true
		}
	}
	return 0, false
}

// PriorityEstimate is one entry of ModelStats.queue_time_estimate_ms_by_priority:
// the published queue-time estimate for requests of Priority (lower is more
// urgent).
type PriorityEstimate struct {
	// Priority is the x-priority value the estimate applies to.
	Priority uint32 `json:"priority"`
	// QueueTimeMs is the estimated queue time in milliseconds.
	QueueTimeMs uint64 `json:"queue_time_ms"`
}

// Stats is the part of Stargate's ModelStats protobuf the load balancers
// read (formats.md "stats"). Float fields may be NaN, ±Inf or negative in a
// snapshot: every consumer treats such a rate as "no valid capacity signal"
// (wait-and-widen.md §2.1, pulsar.md §4.1) rather than failing.
type Stats struct {
	// LastMeanInputTPS is the mean prefill rate (tokens/s); valid when > 0
	// and finite.
	LastMeanInputTPS float64 `json:"last_mean_input_tps"`
	// MaxInputTPS is the generation maximum input rate (tokens/s); 0 means
	// "not reported" (Pulsar weight in max-input-tps mode).
	MaxInputTPS float64 `json:"max_input_tps"`
	// OutputTPS is the current decode rate (tokens/s); not read by the engine.
	OutputTPS float64 `json:"output_tps"`
	// MaxOutputTPS is the maximum decode rate (tokens/s); not read.
	MaxOutputTPS float64 `json:"max_output_tps"`
	// QueueSize is the number of queued requests (num-requests-queued
	// comparator).
	QueueSize uint64 `json:"queue_size"`
	// QueuedInputSize is the number of queued input tokens.
	QueuedInputSize uint64 `json:"queued_input_size"`
	// KVCacheCapacityTokens, KVCacheUsedTokens and KVCacheFreeTokens are the
	// KV-cache sizes in tokens (Pulsar KV gate, pulsar.md §5).
	KVCacheCapacityTokens uint64 `json:"kv_cache_capacity_tokens"`
	KVCacheUsedTokens     uint64 `json:"kv_cache_used_tokens"`
	KVCacheFreeTokens     uint64 `json:"kv_cache_free_tokens"`
	// NumRunningQueries is the number of requests currently running
	// (pending local reservations included).
	NumRunningQueries uint64 `json:"num_running_queries"`
	// MaxEngineConcurrency is the engine's concurrency limit; 0 = unknown
	// (never full, never a free slot).
	MaxEngineConcurrency uint64 `json:"max_engine_concurrency"`
	// TotalQueryInputSize is informational (not read).
	TotalQueryInputSize uint64 `json:"total_query_input_size"`
	// QueueTimeEstimateMsByPriority holds the published per-priority queue
	// estimates sorted by ascending Priority without duplicates (the
	// decoder guarantees it; SortPriorityEstimates restores it for values
	// built in Go).
	QueueTimeEstimateMsByPriority []PriorityEstimate `json:"queue_time_estimate_ms_by_priority"`
	// InputProcessingQueries and OutputGenerationQueries are informational.
	InputProcessingQueries  uint64 `json:"input_processing_queries"`
	OutputGenerationQueries uint64 `json:"output_generation_queries"`
}

// SortPriorityEstimates sorts the priority map by ascending priority in
// place (insertion sort: the maps are tiny); for equal priorities the last
// entry wins, like a map insert.
func (s *Stats) SortPriorityEstimates() {
	p := s.QueueTimeEstimateMsByPriority
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j-1].Priority > p[j].Priority; j-- {
			p[j-1], p[j] = p[j], p[j-1]
		}
	}
	out := p[:0]
	for i := range p {
		if len(out) > 0 && out[len(out)-1].Priority == p[i].Priority {
			out[len(out)-1] = p[i]
			continue
		}
		out = append(out, p[i])
	}
	s.QueueTimeEstimateMsByPriority = out
}

// Cluster is one candidate of a routing snapshot (Stargate's
// RoutedClusterSnapshot).
type Cluster struct {
	// ClusterID identifies the cluster; non-empty and unique in a snapshot.
	ClusterID string `json:"cluster_id"`
	// RTT is the forwarded health round-trip time as an exact nanosecond
	// duration (formats.md rtt_ms converted with RTTFromMs).
	RTT time.Duration `json:"rtt_ns"`
	// Status decides whether the cluster is a routing candidate: only
	// StatusActive (the zero value) is; see Status.
	Status Status `json:"status"`
	// ActiveBackendCount is informational (not read): a cluster Stargate
	// lists always has at least one active backend, and 0 is the formats
	// default of an omitted field, so it is not a filter (docs/engine.md).
	ActiveBackendCount uint64 `json:"active_backend_count"`
	// Stats are the cluster's model statistics.
	Stats Stats `json:"stats"`
}

// Snapshot is what Stargate knows of the clusters serving one model at
// decision time, pending local reservations already applied (formats.md
// "Snapshot"). Its routable clusters (Status.Routable), in order, are the
// candidate slice the load balancer sees; candidate order is Stargate's
// slice order and matters for ring construction ties and for round-robin.
// Decision indices always refer to positions in Clusters.
type Snapshot struct {
	// Model is informational; the request's model wins.
	Model string `json:"model,omitempty"`
	// Clusters are the candidates in slice order.
	Clusters []Cluster `json:"clusters"`
	// Version, when not 0, names the snapshot's candidate set for the
	// engines it is given to: the clusters' count and order, their
	// ClusterID and Status, and the rendezvous weight fields
	// (Stats.LastMeanInputTPS, Stats.MaxInputTPS). A caller that sets it
	// promises that every snapshot it gives one engine with the same
	// non-zero Version has the same candidate set, and gives a new Version
	// whenever any of those changes; live load (every other field) may
	// change freely. The pulsar and pulsar-wait-and-widen engines then skip
	// the pass over every cluster that checks, on each decision, that the
	// candidate set their ranking cache belongs to still describes the
	// snapshot (upstream compares its candidate signature on every lookup).
	// 0, the default, promises nothing: the engine compares on every
	// decision. Decisions are the same either way for a caller that keeps
	// the promise. Not part of the JSON form.
	Version uint64 `json:"-"`
}

// Index returns the position of the cluster with id in s, or -1.
func (s *Snapshot) Index(id string) int {
	for i := range s.Clusters {
		if sameID(s.Clusters[i].ClusterID, id) {
			return i
		}
	}
	return -1
}

// SessionState is the session classification of session.md §3. The zero
// value SessionNone means "not classified" (a gate of session.md §2 failed)
// or, in Request.FirstClassification, "this is the request's first
// decision".
type SessionState uint8

// Session states.
const (
	// SessionNone: not classified / not pinned yet.
	SessionNone SessionState = iota
	// SessionNew: no last-cluster hint.
	SessionNew
	// SessionReturning: the hint names a current candidate.
	SessionReturning
	// SessionStale: the hint names no current candidate (routed as new).
	SessionStale
)

var sessionNames = [...]string{"", "new", "returning", "stale"}

// String returns "new", "returning", "stale", or "" for SessionNone.
func (s SessionState) String() string {
	if int(s) < len(sessionNames) {
		return sessionNames[s]
	}
	return "invalid"
}

// ParseSessionState parses "new", "returning" or "stale".
func ParseSessionState(s string) (SessionState, bool) {
	for i := 1; i < len(sessionNames); i++ {
		if sessionNames[i] == s {
			return SessionState(i), true
		}
	}
	return SessionNone, false
}

// OptionalU64 is an optional unsigned header value (x-request-slo-ms,
// x-max-wait-ms), kept allocation-free.
type OptionalU64 struct {
	// Value is meaningful only when Set.
	Value uint64
	// Set reports whether the header was present.
	Set bool
}

// Some returns a set OptionalU64.
func Some(v uint64) OptionalU64 { return OptionalU64{Value: v, Set: true} }

// Request is one routing request as the load balancer and the proxy rules
// see it (formats.md "Request"; headers of lb-config.md §11). String fields
// hold header values; the engine applies the proxy's normalisation itself
// (trimmed; blank or not visible ASCII = absent, see HeaderString), so raw
// values are accepted.
type Request struct {
	// Model is x-model (hash input model_id).
	Model string `json:"model"`
	// RoutingKey is x-routing-key; "" = absent (hashes as empty).
	RoutingKey string `json:"routing_key,omitempty"`
	// RoutingMethod is x-routing-method; only Config.Resolve reads it.
	RoutingMethod OptionalString `json:"routing_method"`
	// CacheAffinityKey is x-cache-affinity-key; blank = absent.
	CacheAffinityKey string `json:"cache_affinity_key,omitempty"`
	// InputTokens is x-input-tokens (tokens); HasInputTokens false makes
	// the proxy answer 400 (H4).
	InputTokens    uint64 `json:"input_tokens"`
	HasInputTokens bool   `json:"-"`
	// Priority is x-priority (default 0; lower is more urgent).
	Priority uint32 `json:"priority"`
	// RequestSLOMs is x-request-slo-ms; absent and 0 both mean "no SLO"
	// (queue limit = ceiling).
	RequestSLOMs OptionalU64 `json:"request_slo_ms"`
	// MaxWaitMs is x-max-wait-ms, the routing wait budget from arrival
	// (ms; capped at 60000).
	MaxWaitMs OptionalU64 `json:"max_wait_ms"`
	// LastClusterID is x-stargate-last-cluster-id; blank = absent.
	LastClusterID string `json:"last_cluster_id,omitempty"`
	// ExcludedClusterIDs are the clusters earlier attempts of this request
	// already tried (retries).
	ExcludedClusterIDs []string `json:"excluded_cluster_ids,omitempty"`
	// Elapsed is the time since the request was received (exact ns; see
	// DurationFromMs for the conversion of elapsed_ms).
	Elapsed time.Duration `json:"elapsed_ns"`
	// FirstClassification is the session state pinned by the request's
	// first decision (session.md §3); SessionNone = this is the first
	// decision.
	FirstClassification SessionState `json:"first_classification"`
}

// OptionalString is an optional header value whose absence differs from
// blank (x-routing-method: blank is a 400, absent selects the default).
type OptionalString struct {
	// Value is meaningful only when Set.
	Value string
	// Set reports whether the header was present.
	Set bool
}

// DurationFromMs converts a millisecond value of the lcctl file formats
// (rtt_ms, elapsed_ms; float allowed) to an exact duration by rounding
// value·1e6 to the nearest nanosecond (wait-and-widen.md §1.4). ok is false
// for NaN, negative values and values beyond time.Duration's range.
func DurationFromMs(ms float64) (d time.Duration, ok bool) {
	if math.IsNaN(ms) || ms < 0 {
		return 0, false
	}
	ns := math.Round(ms * 1e6)
	if ns >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(ns), true
}

// DurationMs is ms(d) of wait-and-widen.md §1.4: whole seconds plus
// sub-second nanoseconds, as Rust's Duration::as_secs_f64()·1000. Negative
// durations are treated as 0.
func DurationMs(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	secs := int64(d) / 1e9
	nanos := int64(d) % 1e9
	return float64((float64(secs) + float64(nanos)/1e9) * 1000.0) // never fused into a caller's sum
}

// millisMs is ms(Duration::from_millis(v)) computed without overflowing a
// time.Duration (v may be any u64).
func millisMs(v uint64) float64 {
	secs := v / 1000
	nanos := (v % 1000) * 1_000_000
	return float64((float64(secs) + float64(nanos)/1e9) * 1000.0) // never fused into a caller's sum
}

// millisSecs is secs(Duration::from_millis(v)).
func millisSecs(v uint64) float64 {
	secs := v / 1000
	nanos := (v % 1000) * 1_000_000
	return float64(secs) + float64(nanos)/1e9
}

// durationFromMillis is Duration::from_millis(v), saturating at the
// largest time.Duration (≈292 years) instead of overflowing.
func durationFromMillis(v uint64) time.Duration {
	if v > math.MaxInt64/1_000_000 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(v * 1_000_000)
}

// MarshalJSON renders the value, or null when absent.
func (o OptionalU64) MarshalJSON() ([]byte, error) {
	if !o.Set {
		return []byte("null"), nil
	}
	return strconv.AppendUint(nil, o.Value, 10), nil
}

// MarshalJSON renders the value, or null when absent.
func (o OptionalString) MarshalJSON() ([]byte, error) {
	if !o.Set {
		return []byte("null"), nil
	}
	return json.Marshal(o.Value)
}
