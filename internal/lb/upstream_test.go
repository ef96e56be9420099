package lb

import (
	"errors"
	"testing"
)

// Upstream tests whose expectations span several requests or are not a
// decision (round-robin sequences, the session metric label) and so cannot
// be written as conformance cases; the single-decision ones live in
// internal/conformance/testdata/upstream.

// tests.rs default_round_robin_uses_independent_sequences_per_model,
// …_per_routing_target, replacing_target_state_starts_fresh_round_robin_sequence,
// request_round_robin_override_uses_stable_per_target_sequence and
// choose_candidate_returns_slice_index_for_selected_cluster: Stargate keeps
// one round-robin balancer per routing target (and per algorithm
// definition); lcctl keeps one Engine per target, so each engine runs its
// own sequence from 0 and ResetState (a replaced target state) restarts it.
func TestUpstreamRoundRobinSequences(t *testing.T) {
	seq := func(e *Engine, s *Snapshot, n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			d := e.Decide(s, rq(), nil, Options{})
			if d.RankDepth != 1 {
				t.Fatalf("rank depth %d", d.RankDepth)
			}
			out = append(out, d.ClusterID)
		}
		return out
	}
	a, b := NewEngine(cfgOf(RoundRobin)), NewEngine(cfgOf(RoundRobin))
	sa := snapOf(cl("model-a-0"), cl("model-a-1"))
	sb := snapOf(cl("model-b-0"), cl("model-b-1"), cl("model-b-2"))
	var gotA, gotB []string
	for i := 0; i < 3; i++ { // interleaved, as the upstream test does
		gotA = append(gotA, seq(a, sa, 1)...)
		gotB = append(gotB, seq(b, sb, 1)...)
	}
	if !equalStrings(gotA, []string{"model-a-0", "model-a-1", "model-a-0"}) ||
		!equalStrings(gotB, []string{"model-b-0", "model-b-1", "model-b-2"}) {
		t.Fatalf("independent sequences: %v %v", gotA, gotB)
	}
	s := snapOf(cl("cluster-0"), cl("cluster-1"))
	e := NewEngine(cfgOf(RoundRobin))
	if got := seq(e, s, 3); !equalStrings(got, []string{"cluster-0", "cluster-1", "cluster-0"}) {
		t.Fatalf("stable per-target sequence: %v", got)
	}
	e.ResetState()
	if got := seq(e, s, 1); got[0] != "cluster-0" {
		t.Fatalf("a replaced target state starts a fresh sequence, got %v", got)
	}
	// request_excluded_clusters_are_not_selected: the first choice skips the
	// excluded cluster-0.
	if d := NewEngine(cfgOf(RoundRobin)).Decide(s, rq(exclude("cluster-0")), nil, Options{}); d.ClusterID != "cluster-1" {
		t.Fatalf("excluded first choice: %s", d.ClusterID)
	}
}

// round_robin.rs: with one or two excluded ids that are not candidates the
// general path applies (nth eligible candidate); an exclusion set covering
// every candidate leaves the counter alone.
func TestUpstreamRoundRobinUnknownExclusions(t *testing.T) {
	e := NewEngine(cfgOf(RoundRobin))
	s := snapOf(cl("a"), cl("b"), cl("c"))
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, e.Decide(s, rq(exclude("gone", "b")), nil, Options{}).ClusterID)
	}
	if !equalStrings(got, []string{"a", "c", "a", "c"}) {
		t.Fatalf("exclusions with an unknown id: %v", got)
	}
}

// session.rs tests new_session_primary_means_affinity_group,
// returning_session_on_other_cluster_counts_fallback,
// session_metric_starts_every_pair_at_zero_and_counts_selection and
// unclassified_requests_record_nothing: the `selection` label of
// stargate_routing_session_selections_total.
func TestUpstreamSessionSelectionLabel(t *testing.T) {
	sel := func(k int, st SessionState, depth int, cluster, hint string) string {
		e := NewEngine(cfgOf(PulsarWaitAndWiden, withK(k), withSessions()))
		d := Decision{Kind: KindSelected, Session: st, RankDepth: depth, ClusterID: cluster}
		return e.SessionSelection(&d, hint)
	}
	for _, tc := range []struct {
		k     int
		st    SessionState
		depth int
		want  string
	}{
		{2, SessionNew, 1, "primary"},
		{2, SessionNew, 2, "primary"},
		{2, SessionNew, 3, "fallback"},
		{2, SessionStale, 3, "fallback"},
		{0, SessionNew, 1, "primary"}, // unset group size counts as 1
		{0, SessionNew, 2, "fallback"},
	} {
		if got := sel(tc.k, tc.st, tc.depth, "A", ""); got != tc.want {
			t.Errorf("k %d %v depth %d: %q, want %q", tc.k, tc.st, tc.depth, got, tc.want)
		}
	}
	if got := sel(0, SessionReturning, 2, "B", "B"); got != "primary" {
		t.Errorf("returning to its last cluster: %q", got)
	}
	if got := sel(0, SessionReturning, 1, "A", "B"); got != "fallback" {
		t.Errorf("returning elsewhere: %q", got)
	}
	if got := sel(0, SessionNone, 1, "B", "B"); got != "" {
		t.Errorf("unclassified: %q", got)
	}
}

// tests.rs permissive_default_resolves_every_builtin_algorithm,
// permissive_default_resolves_alias_and_underscore_spellings,
// permissive_default_keeps_power_of_n_without_override and
// explicit_config_stays_restrictive (lb-config.md E6, H9).
func TestUpstreamPermissiveDefault(t *testing.T) {
	var none *Config
	for _, a := range Algorithms {
		if c, _, err := none.Resolve("any-model", OptionalString{Value: a.String(), Set: true}); err != nil || c.Algorithm != a {
			t.Errorf("%v: %v %v", a, c, err)
		}
	}
	for spelling, want := range map[string]Algorithm{
		"power_of_n": PowerOfN, "power_of_two": PowerOfN, "round_robin": RoundRobin,
		"groq-multiregion": WaitAndWiden, "groq_multiregion": WaitAndWiden,
		"pulsar-multiregion": PulsarWaitAndWiden, "pulsar_multiregion": PulsarWaitAndWiden,
	} {
		if c, _, err := PermissiveConfig().Resolve("any-model", OptionalString{Value: spelling, Set: true}); err != nil || c.Algorithm != want {
			t.Errorf("%s: %v %v", spelling, c, err)
		}
	}
	if c, _, err := none.Resolve("any-model", OptionalString{}); err != nil || c.Algorithm != PowerOfN {
		t.Errorf("no override: %v %v", c, err)
	}
	rr := DefaultAlgorithmConfig(RoundRobin)
	explicit := &Config{Default: PowerOfN, RequestAlgorithms: map[Algorithm]*AlgorithmConfig{RoundRobin: &rr}}
	var re *RoutingError
	if _, _, err := explicit.Resolve("any-model", OptionalString{Value: "pulsar", Set: true}); !errors.As(err, &re) || re.Code != "unavailable" {
		t.Errorf("explicit config must stay restrictive: %v", err)
	}
}

// http_proxy/routing.rs affinity_wait_rechecks_capacity_and_respects_explicit_deadline
// (routing_wait_delay): a timed load-balancer wait sleeps min(wait, 25 ms,
// time left to the wait deadline) and is no timed wait once the deadline
// has passed; request_routing/tests.rs caps x-max-wait-ms at 60 s.
func TestUpstreamRoutingWaitDelay(t *testing.T) {
	snap := snapOf(cl("a", full))
	step := func(x uint64, opts ...ropt) Step {
		e := NewEngine(cfgOf(WaitAndWiden, withK(1), withX(x)))
		return e.Step(snap, rq(append([]ropt{key("prefix"), input(1)}, opts...)...), seeded(1), Options{})
	}
	for _, tc := range []struct {
		name      string
		x         uint64
		opts      []ropt
		sleep     float64
		retryAtMs float64
	}{
		{"long wait rechecks every 25 ms", 100, nil, 25, 100},
		{"short wait sleeps the wait", 5, nil, 5, 5},
		{"explicit deadline bounds the sleep", 100, []ropt{maxWait(10)}, 10, 10},
		{"no header: 60 s deadline", 120000, nil, 25, 60000},
		{"u64 max header is capped", 120000, []ropt{maxWait(1<<64 - 1)}, 25, 60000},
	} {
		st := step(tc.x, tc.opts...)
		if st.Outcome != OutcomeWait || st.GenericRetry || DurationMs(st.Sleep) != tc.sleep || DurationMs(st.RetryAt) != tc.retryAtMs {
			t.Errorf("%s: %v generic=%v sleep %v retry at %v", tc.name, st.Outcome, st.GenericRetry, DurationMs(st.Sleep), DurationMs(st.RetryAt))
		}
	}
	// At the explicit deadline the timed wait is over and so is the retry budget.
	if st := step(100, maxWait(10), at(10)); st.Outcome != OutcomeReject || st.HTTPStatus != 503 {
		t.Errorf("at the deadline: %v %d", st.Outcome, st.HTTPStatus)
	}
	// Without a header, a wait past 60 s is rejected; x-max-wait-ms 0 never waits.
	if st := step(120000, at(61000)); st.Outcome != OutcomeReject {
		t.Errorf("after 60 s: %v", st.Outcome)
	}
	if st := step(100, maxWait(0)); st.Outcome != OutcomeReject {
		t.Errorf("zero budget: %v", st.Outcome)
	}
	// Unavailable with budget left: the generic 1–9 ms retry, capped at the deadline.
	e := NewEngine(cfgOf(WaitAndWiden))
	for i := 0; i < 50; i++ {
		st := e.Step(snap, rq(input(1), maxWait(60000)), seeded(uint64(i)), Options{})
		if st.Outcome != OutcomeWait || !st.GenericRetry || st.Sleep < RetrySleepMin || st.Sleep > RetrySleepMax {
			t.Fatalf("generic retry: %v %v %v", st.Outcome, st.GenericRetry, st.Sleep)
		}
		st = e.Step(snap, rq(input(1), maxWait(60000), at(59999.5)), seeded(uint64(i)), Options{})
		if !st.GenericRetry || DurationMs(st.Sleep) != 0.5 {
			t.Fatalf("capped generic retry: %v %v", st.GenericRetry, DurationMs(st.Sleep))
		}
	}
}
