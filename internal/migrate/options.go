package migrate

import (
	"fmt"
	"slices"
	"strings"
)

// Strategy is the migration target an operator chooses for no-SLO
// pulsar-wait-and-widen entries (lb-config.md §13.2).
type Strategy uint8

// Strategies.
const (
	// Bounded keeps pulsar-wait-and-widen and bounds the stickiness with
	// max_queued and cache_affinity_wait_ms (M5).
	Bounded Strategy = iota + 1
	// Pulsar switches the entry to pulsar, which keeps unlimited
	// stickiness to an eligible rank 1 (M6).
	Pulsar
)

// String returns the flag spelling: "bounded" or "pulsar".
func (s Strategy) String() string {
	switch s {
	case Bounded:
		return "bounded"
	case Pulsar:
		return "pulsar"
	}
	return "invalid"
}

// MarshalText renders the flag spelling (JSON output).
func (s Strategy) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseStrategy parses "bounded" or "pulsar".
func ParseStrategy(s string) (Strategy, error) {
	switch s {
	case "bounded":
		return Bounded, nil
	case "pulsar":
		return Pulsar, nil
	}
	return 0, fmt.Errorf("invalid strategy %q: want bounded or pulsar", s)
}

// Defaults and limits of the bounded values (lb-config.md M5). The
// defaults are lcctl's choice (the values upstream's acceptance tests use),
// not Stargate defaults; Stargate's own defaults are 0 and 0, which is the
// behaviour change the migration exists to avoid.
const (
	// DefaultMaxQueued is N: requests admitted above a cluster's
	// max_engine_concurrency before a request leaves rank 1.
	DefaultMaxQueued uint64 = 4
	// DefaultAffinityWaitMs is X in ms: how long a request waits for rank 1
	// before the ranking widens.
	DefaultAffinityWaitMs uint64 = 300
	// MaxAffinityWaitMs is the exclusive upper bound for X in ms: routing
	// waits end at 60 s (H7), so X ≥ 60000 sends requests to 503 before
	// they ever widen (W12).
	MaxAffinityWaitMs uint64 = 60000
)

// Options select the target and the scope of a migration.
type Options struct {
	// Strategy is the target (required).
	Strategy Strategy
	// MaxQueued is N, written as max_queued where it is missing (bounded
	// entries, M8 header entries and M9 model entries). Requests.
	MaxQueued uint64
	// AffinityWaitMs is X, written as cache_affinity_wait_ms where it is
	// missing; must be below MaxAffinityWaitMs. Milliseconds.
	AffinityWaitMs uint64
	// Only, when non-empty, limits the run to these model IDs: their
	// `models` entries and those entries' model-level request_algorithms.
	// A listed model without a `models` entry is routed by `default`; with
	// the bounded strategy and a no-SLO pulsar-wait-and-widen `default` it
	// gets a bounded `models` entry of its own (M9). `default` and the
	// top-level request_algorithms, which every model shares, are left
	// unchanged and reported.
	Only []string
	// DefaultModels is the M9 model list for a run over the whole file:
	// each listed model ID without a `models` entry gets a bounded
	// `models` entry and `default` stays as it is. Bounded strategy only.
	DefaultModels []string
	// NoPreserveHeaderMethod turns off M8: when an entry switches to
	// pulsar, no bounded pulsar-wait-and-widen entry is added to keep
	// `x-routing-method: pulsar-wait-and-widen` working.
	NoPreserveHeaderMethod bool
	// DiffName, when not empty, has Migrate make the unified diff of the
	// migration it produces (Result.Diff: UnifiedDiff(DiffName, DiffName,
	// Input, Output)) before it makes the change list, so that the diff's
	// working memory and the change list are never held at once (on
	// 124,000 entries the two together were the peak of `lcctl migrate`'s
	// RSS). It changes nothing else.
	DiffName string
}

// DefaultOptions returns options with N and X at their defaults and no
// strategy chosen.
func DefaultOptions() Options {
	return Options{MaxQueued: DefaultMaxQueued, AffinityWaitMs: DefaultAffinityWaitMs}
}

// Check reports the first problem with the options, worded for a command
// line: no strategy, X ≥ 60000 ms (W12), --default-models with the pulsar
// strategy, or an empty model ID.
func (o *Options) Check() error {
	switch o.Strategy {
	case Bounded, Pulsar:
	default:
		return fmt.Errorf("choose a strategy: --strategy bounded (keep pulsar-wait-and-widen, bound the stickiness) or --strategy pulsar (keep unlimited stickiness)")
	}
	if o.AffinityWaitMs >= MaxAffinityWaitMs {
		return fmt.Errorf("--affinity-wait-ms %d is too long: routing waits end at 60000 ms (x-max-wait-ms is capped there), so requests would get HTTP 503 before rank 1's wait ever ends; use less than 60000 (default %d)", o.AffinityWaitMs, DefaultAffinityWaitMs)
	}
	if o.Strategy == Pulsar && len(o.DefaultModels) > 0 {
		return fmt.Errorf("--default-models works with --strategy bounded only: with --strategy pulsar, `default` itself becomes pulsar (M9)")
	}
	for _, l := range [][]string{o.Only, o.DefaultModels} {
		for _, id := range l {
			if strings.TrimSpace(id) == "" {
				return fmt.Errorf("empty model ID in a model list")
			}
		}
	}
	return nil
}

// selectedModel reports whether model m is in scope under Only.
func (o *Options) selectedModel(m string) bool {
	return len(o.Only) == 0 || slices.Contains(o.Only, m)
}

// sharedInScope reports whether `default` and the top-level
// request_algorithms are in scope (no --only).
func (o *Options) sharedInScope() bool { return len(o.Only) == 0 }
