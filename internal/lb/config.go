// Package lb is a pure-Go implementation of Stargate's load-balancer
// decisions (NVIDIA/nvcf, crates/stargate/src/load_balancer): the typed
// configuration the decision engine consumes, the algorithms, the hash ring,
// the Pulsar ranking, session rules and the proxy rules around them. It does
// no I/O, holds no globals and logs nothing; randomness is injected.
package lb

import "slices"

// Algorithm identifies one of Stargate's six load-balancing algorithms
// (lb-config.md §4). The zero value is not a valid algorithm.
type Algorithm uint8

// The six algorithms, by canonical name.
const (
	// PowerOfN is "power-of-n" (aliases power-of-two, powerOf2, powerOfN,
	// powerof2, powerofn).
	PowerOfN Algorithm = iota + 1
	// WaitAndWiden is "wait-and-widen" (alias groq-multiregion).
	WaitAndWiden
	// RoundRobin is "round-robin".
	RoundRobin
	// Random is "random".
	Random
	// Pulsar is "pulsar".
	Pulsar
	// PulsarWaitAndWiden is "pulsar-wait-and-widen" (alias pulsar-multiregion).
	PulsarWaitAndWiden
)

// Algorithms lists every algorithm in canonical order.
var Algorithms = [...]Algorithm{PowerOfN, WaitAndWiden, RoundRobin, Random, Pulsar, PulsarWaitAndWiden}

var canonicalNames = [...]string{
	PowerOfN:           "power-of-n",
	WaitAndWiden:       "wait-and-widen",
	RoundRobin:         "round-robin",
	Random:             "random",
	Pulsar:             "pulsar",
	PulsarWaitAndWiden: "pulsar-wait-and-widen",
}

// String returns the canonical name Stargate prints in every message, or
// "invalid" for the zero value.
func (a Algorithm) String() string {
	if a == 0 || int(a) >= len(canonicalNames) {
		return "invalid"
	}
	return canonicalNames[a]
}

// MarshalText renders the canonical name (used by JSON output).
func (a Algorithm) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// fileSpellings maps every spelling Stargate accepts in the config file
// (exact, case-sensitive; lb-config.md §4) to its algorithm.
var fileSpellings = map[string]Algorithm{
	"power-of-n": PowerOfN, "power-of-two": PowerOfN, "powerOf2": PowerOfN,
	"powerOfN": PowerOfN, "powerof2": PowerOfN, "powerofn": PowerOfN,
	"wait-and-widen": WaitAndWiden, "groq-multiregion": WaitAndWiden,
	"round-robin":           RoundRobin,
	"random":                Random,
	"pulsar":                Pulsar,
	"pulsar-wait-and-widen": PulsarWaitAndWiden, "pulsar-multiregion": PulsarWaitAndWiden,
}

// ParseAlgorithmName resolves a name exactly as written in an lb-config file
// (canonical names and the aliases of lb-config.md §4; case-sensitive, no
// trimming). ok is false for anything else (rule V5/V6/V9/V10).
func ParseAlgorithmName(s string) (a Algorithm, ok bool) {
	a, ok = fileSpellings[s]
	return a, ok
}

// IsDeprecatedSpelling reports whether s is an accepted alias rather than a
// canonical name (warning W14).
func IsDeprecatedSpelling(s string) bool {
	a, ok := fileSpellings[s]
	return ok && canonicalNames[a] != s
}

// Comparator ranks sampled candidates in power-of-n and wait-and-widen
// (wait-and-widen.md §2.10). The zero value is CompareTTFT, the default.
type Comparator uint8

// Comparator values, by their lb-config spelling.
const (
	// CompareTTFT is "ttft": estimated time to first token, ms.
	CompareTTFT Comparator = iota
	// CompareQueueTime is "queue-time": queue estimate, ms.
	CompareQueueTime
	// CompareInputWorkSeconds is "input-work-seconds": (queued + request
	// input tokens) / input tokens/s.
	CompareInputWorkSeconds
	// CompareUtilization is "utilization": running / max(concurrency, 1).
	CompareUtilization
	// CompareNumRequestsQueued is "num-requests-queued": queue_size.
	CompareNumRequestsQueued
)

var comparatorNames = [...]string{"ttft", "queue-time", "input-work-seconds", "utilization", "num-requests-queued"}

// String returns the lb-config spelling.
func (c Comparator) String() string {
	if int(c) >= len(comparatorNames) {
		return "invalid"
	}
	return comparatorNames[c]
}

// MarshalText renders the lb-config spelling.
func (c Comparator) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// ParseComparator parses the exact, case-sensitive lb-config spelling.
func ParseComparator(s string) (Comparator, bool) {
	for i, n := range comparatorNames {
		if n == s {
			return Comparator(i), true
		}
	}
	return 0, false
}

// RendezvousWeight selects the per-cluster weight of the Pulsar ranking
// (pulsar.md). The zero value is WeightMaxInputTPS, the default.
type RendezvousWeight uint8

// RendezvousWeight values, by their lb-config spelling.
const (
	// WeightMaxInputTPS is "max-input-tps": stats.max_input_tps (tokens/s).
	WeightMaxInputTPS RendezvousWeight = iota
	// WeightLastMeanInputTPS is "last-mean-input-tps":
	// stats.last_mean_input_tps (tokens/s).
	WeightLastMeanInputTPS
)

// String returns the lb-config spelling.
func (w RendezvousWeight) String() string {
	if w == WeightLastMeanInputTPS {
		return "last-mean-input-tps"
	}
	return "max-input-tps"
}

// MarshalText renders the lb-config spelling.
func (w RendezvousWeight) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// ParseRendezvousWeight parses the exact lb-config spelling.
func ParseRendezvousWeight(s string) (RendezvousWeight, bool) {
	switch s {
	case "max-input-tps":
		return WeightMaxInputTPS, true
	case "last-mean-input-tps":
		return WeightLastMeanInputTPS, true
	}
	return 0, false
}

// AlgorithmConfig is one validated, normalised lb-config entry (string or
// detailed form, lb-config.md §5–6) with Stargate's defaults applied and
// normalisations done (n 0→1, virtual nodes 0→1, selection count 0→unset).
// Fields that do not belong to Algorithm keep their zero value. Produced by
// internal/validate; consumed by the engine without re-parsing.
type AlgorithmConfig struct {
	// Algorithm is the resolved algorithm (aliases resolved).
	Algorithm Algorithm `json:"algorithm"`
	// Spelling is the name as written in the file ("pulsar-multiregion"),
	// empty when it equals the canonical name or the entry was synthesised.
	Spelling string `json:"spelling,omitempty"`

	// Common fields (§6.1).

	// RequireCacheAffinityKey makes the proxy answer 400 when
	// x-cache-affinity-key is absent or blank (H8).
	RequireCacheAffinityKey bool `json:"require_cache_affinity_key"`
	// RequireInputTokens is declarative; the proxy always requires
	// x-input-tokens.
	RequireInputTokens bool `json:"require_input_tokens"`
	// MaxInputWorkSeconds, when non-nil, enables input-work admission
	// (seconds; wait-and-widen.md §3.7).
	MaxInputWorkSeconds *float64 `json:"max_input_work_seconds,omitempty"`

	// power-of-n (§6.2).

	// SampleCount is power-of-n's sample size, 1–64 (default 2).
	SampleCount int `json:"sample_count,omitempty"`
	// Comparator ranks sampled candidates (power-of-n, wait-and-widen).
	Comparator Comparator `json:"comparator"`

	// wait-and-widen and pulsar-wait-and-widen (§6.3, §6.6).

	// Seed is the hash seed of the affinity ring / Pulsar ranking; an absent
	// seed is the empty string.
	Seed string `json:"seed"`
	// N is wait-and-widen's sample count, ≥ 1 after normalisation
	// (default 2).
	N int `json:"n,omitempty"`
	// MaxQueued is the number of requests admitted above
	// max_engine_concurrency (requests; default 0).
	MaxQueued uint64 `json:"max_queued"`
	// MaxQueueTimeFloorMs and MaxQueueTimeCeilMs bound the queue SLO (ms);
	// the SLO applies only when both are non-nil.
	MaxQueueTimeFloorMs *uint64 `json:"max_queue_time_floor_ms,omitempty"`
	MaxQueueTimeCeilMs  *uint64 `json:"max_queue_time_ceil_ms,omitempty"`
	// TTFTBucketSizeMs is the TTFT bucket width (ms; default 20; 0 allowed).
	TTFTBucketSizeMs uint64 `json:"ttft_bucket_size_ms"`
	// NextBucketUnlockFactor is the fraction of a TTFT gap waited before the
	// next bucket unlocks (default 0.25; not range-checked).
	NextBucketUnlockFactor float64 `json:"next_bucket_unlock_factor"`
	// IgnoreQueueTime drops the queue term from the bucket TTFT only.
	IgnoreQueueTime bool `json:"ignore_queue_time"`
	// IgnoreInputProcessingTime drops the prefill term from the bucket TTFT only.
	IgnoreInputProcessingTime bool `json:"ignore_input_processing_time"`
	// CacheAffinityVirtualNodes is the ring's virtual nodes per cluster
	// (≥ 1 after normalisation; default 150; ignored by pulsar-wait-and-widen).
	CacheAffinityVirtualNodes int `json:"cache_affinity_virtual_nodes,omitempty"`
	// CacheAffinityBackendSelectionCount is k, the affinity group size;
	// 0 means unset (wait-and-widen: no group; pulsar-wait-and-widen: k=1).
	CacheAffinityBackendSelectionCount int `json:"cache_affinity_backend_selection_count"`
	// CacheAffinityWaitMs is X, the affinity wait (ms; default 0).
	CacheAffinityWaitMs uint64 `json:"cache_affinity_wait_ms"`
	// CacheAffinityInputTokensScale is s, the prefill multiplier in the
	// affinity phase (0.0–1.0; default 1.0).
	CacheAffinityInputTokensScale float64 `json:"cache_affinity_input_tokens_scale"`
	// LastClusterAffinity turns on session rules (session.md).
	LastClusterAffinity bool `json:"last_cluster_affinity"`

	// pulsar-wait-and-widen only (§6.6).

	// BandWidenIntervalMs is the time between band openings after the wait
	// (ms); nil means "the request's effective affinity wait".
	BandWidenIntervalMs *uint64 `json:"band_widen_interval_ms,omitempty"`
	// FallbackMaxQueued is max_queued for the open set after the wait
	// (requests; default 0).
	FallbackMaxQueued uint64 `json:"fallback_max_queued"`

	// pulsar and pulsar-wait-and-widen (§6.5).

	// ConsiderKVFreeTokens skips ranked clusters without KV metrics or with
	// fewer free KV tokens than the request's input tokens.
	ConsiderKVFreeTokens bool `json:"consider_kv_free_tokens"`
	// RendezvousWeight selects the Pulsar ranking weight.
	RendezvousWeight RendezvousWeight `json:"rendezvous_weight"`

	// RequestAlgorithms is the model-level request_algorithms map of a
	// models entry (E3.2); nil for every other entry (discarded, W4).
	RequestAlgorithms map[Algorithm]*AlgorithmConfig `json:"request_algorithms,omitempty"`
}

// HasQueueSLO reports whether both queue-SLO bounds are set
// (wait-and-widen.md §2.8; the migration rule M1 is its negation for pwaw).
func (c *AlgorithmConfig) HasQueueSLO() bool {
	return c.MaxQueueTimeFloorMs != nil && c.MaxQueueTimeCeilMs != nil
}

// DefaultAlgorithmConfig returns the settings of a string-form entry for a:
// every field at Stargate's default (lb-config.md §6), as the field
// registry (Fields) gives it.
func DefaultAlgorithmConfig(a Algorithm) AlgorithmConfig {
	if a == 0 || int(a) >= len(defaultConfigs) {
		return AlgorithmConfig{Algorithm: a}
	}
	return defaultConfigs[a]
}

// TopLevelFields are the three top-level fields of an lb-config, in
// Stargate's declaration order (lb-config.md §3: default,
// request_algorithms, models); serde refuses any other top-level key.
var TopLevelFields = [...]string{TopLevelDefault, FieldRequestAlgorithms.Name, TopLevelModels}

// TopLevelDefault and TopLevelModels name the lb-config's top-level
// default and models fields (Config.Default, Config.Models); the third,
// request_algorithms, is the registry's FieldRequestAlgorithms. Code that
// means these keys (paths, key lookups, diagnostic examples) names them
// through these constants, never as strings.
const (
	TopLevelDefault = "default"
	TopLevelModels  = "models"
)

// IsTopLevelField reports whether name is one of TopLevelFields (exact,
// case-sensitive, as serde matches field names).
func IsTopLevelField(name string) bool {
	return slices.Contains(TopLevelFields[:], name)
}

// Config is a whole validated lb-config (lb-config.md §3): the default
// algorithm, the top-level request_algorithms and the models map, with
// duplicates resolved the way Stargate resolves them (last wins).
type Config struct {
	// Default is the algorithm for models without a models entry
	// (default power-of-n); it always runs with default settings.
	Default Algorithm `json:"default"`
	// DefaultSpelling is default as written, empty when canonical or absent.
	DefaultSpelling string `json:"default_spelling,omitempty"`
	// RequestAlgorithms is the top-level map: algorithms x-routing-method
	// may select for every model (E3).
	RequestAlgorithms map[Algorithm]*AlgorithmConfig `json:"request_algorithms"`
	// Models maps an exact, case-sensitive model ID to its entry; an entry's
	// own RequestAlgorithms is its model-level map.
	Models map[string]*AlgorithmConfig `json:"models"`
}

// PermissiveConfig is what Stargate runs without --lb-config-path (E6):
// default power-of-n and every algorithm selectable by header with default
// settings.
func PermissiveConfig() *Config {
	c := &Config{Default: PowerOfN, RequestAlgorithms: map[Algorithm]*AlgorithmConfig{}, Models: map[string]*AlgorithmConfig{}}
	for _, a := range Algorithms {
		ac := DefaultAlgorithmConfig(a)
		c.RequestAlgorithms[a] = &ac
	}
	return c
}
