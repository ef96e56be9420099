// Package conformance evaluates conformance cases (shared/spec/formats.md)
// with the engine and the proxy rules, and checks every `expect` key. It is
// the reproducible core of `lcctl explain --case`; rendering is the
// caller's.
package conformance

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/lb"
)

// RetryAtTolerance is the tolerance of expect.retry_at_ms (ms).
const RetryAtTolerance = 1e-6

// Result is the evaluation of one case.
type Result struct {
	// Case is the evaluated case.
	Case *formats.Case
	// Valid reports, for config cases, whether the config is valid.
	Valid bool
	// Outcome is dispatch, wait, reject or error (decision cases).
	Outcome lb.Outcome
	// Error is the error text for outcome error or an invalid config.
	Error string
	// Step is the proxy step (nil when the config is invalid or the case
	// is config-only).
	Step *lb.Step
	// Mismatches lists every expect key that did not hold, one sentence
	// each; empty means pass.
	Mismatches []string
}

// Pass reports whether every expectation held.
func (r *Result) Pass() bool { return len(r.Mismatches) == 0 }

// Seed is the fixed seed of the sampling source, so a case's printed
// decision is reproducible; checks use the exact choice set instead of the
// drawn sample.
const Seed = 0x6c636374

// Evaluate runs one case: config-only cases through internal/validate,
// decision cases through lb.Engine.Step with a trace and exact choice
// probabilities, then checks the expectations.
func Evaluate(c *formats.Case) *Result {
	r := &Result{Case: c}
	if c.ConfigOnly() {
		r.Valid = c.ConfigValid()
		r.Error = c.ConfigError()
		r.checkConfig()
		return r
	}
	if c.Config == nil {
		r.Outcome = lb.OutcomeError
		r.Error = c.ConfigError()
		if r.Error == "" {
			r.Error = "config is missing"
		}
	} else if cfg, err := effectiveConfig(c); err != nil {
		r.Valid = true
		r.Outcome = lb.OutcomeError
		r.Error = err.Error()
	} else {
		r.Valid = true
		e := lb.NewEngine(cfg)
		st := e.Step(c.Snapshot, c.Request, rand.New(rand.NewPCG(Seed, Seed)), lb.Options{Trace: true, Probabilities: true})
		st.Decision = st.Decision.Clone()
		r.Step = &st
		r.Outcome = st.Outcome
		if st.Outcome == lb.OutcomeError {
			r.Error = st.Message
		}
	}
	r.checkDecision()
	return r
}

// effectiveConfig applies the request's x-routing-method, if any, with the
// case config as the model's entry (lb-config.md E3: the entry itself,
// then its model-level request_algorithms; there is no top-level map in a
// case), including routing-expression overlays (§12).
func effectiveConfig(c *formats.Case) (*lb.AlgorithmConfig, error) {
	if c.Request == nil || !c.Request.RoutingMethod.Set {
		return c.Config, nil
	}
	model, _ := lb.HeaderString(c.Request.Model)
	set := &lb.Config{Default: c.Config.Algorithm, Models: map[string]*lb.AlgorithmConfig{model: c.Config}}
	cfg, _, err := set.Resolve(model, c.Request.RoutingMethod)
	return cfg, err
}

func (r *Result) mismatch(format string, args ...any) {
	r.Mismatches = append(r.Mismatches, fmt.Sprintf(format, args...))
}

func (r *Result) checkConfig() {
	x := &r.Case.Expect
	if x.HasValid && x.Valid != r.Valid {
		r.mismatch("valid: want %v, got %v (%s)", x.Valid, r.Valid, orNone(r.Error))
	}
	if x.HasErrorContains && (r.Valid || !strings.Contains(r.Error, x.ErrorContains)) {
		r.mismatch("error_contains: want an error containing %q, got %s", x.ErrorContains, orNone(r.Error))
	}
	for _, k := range []struct {
		has  bool
		name string
	}{{x.HasOutcome, "outcome"}, {x.HasCluster, "cluster"}, {x.HasOneOf, "one_of"}, {x.HasNever, "never"},
		{x.HasRetryAt, "retry_at_ms"}, {x.HasSessionState, "session_state"}, {x.HasPromoted, "promoted"},
		{x.HasAffinityOrder, "affinity_order"}, {x.HasAffinityGroup, "affinity_group"}, {x.HasRankDepth, "rank_depth"},
		{x.HasKVSkip, "selected_after_kv_free_tokens_skip"}} {
		if k.has {
			r.mismatch("%s: not applicable to a config-only case", k.name)
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "no error"
	}
	return fmt.Sprintf("%q", s)
}

// Support is the set of clusters the decision could have chosen (sorted):
// the exact choice set, or the chosen cluster alone.
func (r *Result) Support() []string {
	if r.Step == nil || r.Outcome != lb.OutcomeDispatch {
		return nil
	}
	d := &r.Step.Decision
	var s []string
	for _, c := range d.Choices {
		s = append(s, c.ClusterID)
	}
	if len(s) == 0 {
		s = []string{d.ClusterID}
	}
	slices.Sort(s)
	return s
}

func (r *Result) checkDecision() {
	x := &r.Case.Expect
	var d *lb.Decision
	if r.Step != nil && r.Step.Balanced {
		d = &r.Step.Decision
	}
	dispatch := r.Outcome == lb.OutcomeDispatch
	support := r.Support()
	got := r.Outcome.String()
	if x.HasValid && x.Valid != r.Valid {
		r.mismatch("valid: want %v, got %v (%s)", x.Valid, r.Valid, orNone(r.Error))
	}
	if x.HasOutcome && x.Outcome != got {
		r.mismatch("outcome: want %s, got %s%s", x.Outcome, got, r.detail())
	}
	if x.HasCluster {
		switch {
		case !dispatch:
			r.mismatch("cluster: want dispatch to %s, got %s%s", x.Cluster, got, r.detail())
		case len(support) != 1 || support[0] != x.Cluster:
			r.mismatch("cluster: want %s, the decision could choose %v", x.Cluster, support)
		}
	}
	if x.HasOneOf {
		if !dispatch {
			r.mismatch("one_of: want dispatch to one of %v, got %s%s", x.OneOf, got, r.detail())
		} else if extra := minus(support, x.OneOf); len(extra) > 0 {
			r.mismatch("one_of: want a choice among %v, the decision could also choose %v", x.OneOf, extra)
		}
	}
	// never (formats.md): the chosen cluster, if any, is not in the list. A
	// wait, a rejection or an unavailable outcome chooses none, so it
	// satisfies any list; a dispatch is required only by outcome: dispatch.
	if x.HasNever && dispatch {
		if bad := intersect(support, x.Never); len(bad) > 0 {
			r.mismatch("never: %v must never be chosen, the decision could choose %v", x.Never, bad)
		}
	}
	if x.HasRetryAt {
		if r.Outcome != lb.OutcomeWait {
			r.mismatch("retry_at_ms: want wait until %v ms, got %s%s", x.RetryAtMs, got, r.detail())
		} else if at := lb.DurationMs(r.Step.RetryAt); math.Abs(at-x.RetryAtMs) > RetryAtTolerance {
			r.mismatch("retry_at_ms: want %v, got %v", x.RetryAtMs, at)
		}
	}
	state := ""
	if d != nil {
		state = d.Session.String()
	}
	if x.HasSessionState && x.SessionState != state {
		r.mismatch("session_state: want %s, got %s", nullable(x.SessionState), nullable(state))
	}
	if x.HasPromoted {
		p := d != nil && d.Promoted
		if p != x.Promoted {
			r.mismatch("promoted: want %v, got %v", x.Promoted, p)
		}
	}
	if x.HasAffinityOrder {
		var o []string
		if d != nil {
			o = lb.IDs(r.Case.Snapshot, d.AffinityOrder)
		}
		if !slices.Equal(o, x.AffinityOrder) {
			r.mismatch("affinity_order: want %v, got %v", x.AffinityOrder, o)
		}
	}
	if x.HasAffinityGroup {
		var g []string
		if d != nil {
			g = lb.IDs(r.Case.Snapshot, d.AffinityGroup)
		}
		if !slices.Equal(g, x.AffinityGroup) {
			r.mismatch("affinity_group: want %v, got %v", x.AffinityGroup, g)
		}
	}
	if x.HasRankDepth {
		if !dispatch {
			r.mismatch("rank_depth: want a dispatch at depth %d, got %s", x.RankDepth, got)
		} else if uint64(d.RankDepth) != x.RankDepth {
			r.mismatch("rank_depth: want %d, got %d", x.RankDepth, d.RankDepth)
		}
	}
	if x.HasKVSkip {
		if !dispatch {
			r.mismatch("selected_after_kv_free_tokens_skip: want a dispatch, got %s", got)
		} else if d.SelectedAfterKVFreeTokensSkip != x.KVSkip {
			r.mismatch("selected_after_kv_free_tokens_skip: want %v, got %v", x.KVSkip, d.SelectedAfterKVFreeTokensSkip)
		}
	}
	if x.HasErrorContains {
		if r.Outcome != lb.OutcomeError {
			r.mismatch("error_contains: want outcome error containing %q, got %s", x.ErrorContains, got)
		} else if !strings.Contains(r.Error, x.ErrorContains) {
			r.mismatch("error_contains: want an error containing %q, got %q", x.ErrorContains, r.Error)
		}
	}
}

func (r *Result) detail() string {
	switch {
	case r.Outcome == lb.OutcomeDispatch:
		return " to " + r.Step.Decision.ClusterID
	case r.Outcome == lb.OutcomeWait:
		return fmt.Sprintf(" until %v ms", lb.DurationMs(r.Step.RetryAt))
	case r.Error != "":
		return ": " + r.Error
	case r.Step != nil && r.Step.Message != "":
		return ": " + r.Step.Message
	}
	return ""
}

func nullable(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
