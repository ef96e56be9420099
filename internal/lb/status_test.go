package lb

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func status(s Status) copt { return func(c *Cluster) { c.Status = s } }

// http_proxy/request_routing/tests.rs
// registered_inactive_target_is_unavailable_without_retrying: a target
// nobody registered is 404 (NoCandidatesNotFound); once its only cluster
// registered the model as Inactive the request is 503 at once, with no
// retry (even with x-max-wait-ms) and no load-balancer run.
func TestRegisteredInactiveTargetIsUnavailable(t *testing.T) {
	e := NewEngine(cfgOf(WaitAndWiden))
	req := rq(key("prefix"), input(4000), maxWait(60000))
	st := e.Step(snapOf(), req, seeded(1), Options{})
	if st.Outcome != OutcomeReject || st.HTTPStatus != 404 || st.Balanced {
		t.Fatalf("unknown target: %v %d balanced=%v", st.Outcome, st.HTTPStatus, st.Balanced)
	}
	for _, s := range []Status{StatusInactive, StatusUnknown} {
		c := Cluster{ClusterID: "cluster-a", Status: s} // ModelStats::default()
		st := e.Step(snapOf(c), req, seeded(1), Options{Trace: true})
		if st.Outcome != OutcomeReject || st.HTTPStatus != 503 || st.Code != "no_eligible_candidates" ||
			st.Balanced || st.GenericRetry || st.Sleep != 0 {
			t.Fatalf("%s target: %v %d %s balanced=%v retry=%v", s, st.Outcome, st.HTTPStatus, st.Code, st.Balanced, st.GenericRetry)
		}
	}
	// The same cluster active (and idle) is routed: the 503 comes from the
	// status alone.
	st = e.Step(snapOf(Cluster{ClusterID: "cluster-a", Stats: Stats{LastMeanInputTPS: 1000, MaxEngineConcurrency: 1}}), req, seeded(1), Options{})
	if st.Outcome != OutcomeDispatch || st.Decision.ClusterID != "cluster-a" {
		t.Fatalf("active target: %v %q", st.Outcome, st.Decision.ClusterID)
	}
	// Excluded active clusters beside an inactive one: still 503.
	st = e.Step(snapOf(cl("A", status(StatusInactive)), cl("B")), rq(exclude("B"), maxWait(60000)), seeded(1), Options{})
	if st.Outcome != OutcomeReject || st.HTTPStatus != 503 || st.Balanced {
		t.Fatalf("inactive + excluded: %v %d", st.Outcome, st.HTTPStatus)
	}
}

func TestStatusRoutable(t *testing.T) {
	for s, want := range map[Status]bool{StatusActive: true, StatusInactive: false, StatusUnknown: false, Status(9): false} {
		if s.Routable() != want {
			t.Errorf("%v.Routable() = %v", s, !want)
		}
	}
}

// A non-routable cluster is not a candidate: the decision equals the one
// taken on the snapshot without it (same ring, ranking, round-robin
// position, session classification and sampling draws), with indices
// referring to the full snapshot.
func TestPropNonRoutableClustersAreNotCandidates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alg := rapid.SampledFrom([]Algorithm{WaitAndWiden, PulsarWaitAndWiden, Pulsar, PowerOfN, RoundRobin, Random}).Draw(t, "alg")
		base := genSnapshot(t, true)
		cfg := genConfig(t, alg, rapid.Bool().Draw(t, "sessions"))
		if rapid.Bool().Draw(t, "work") {
			lim := rapid.SampledFrom([]float64{0.5, 5, 100}).Draw(t, "limit")
			cfg.MaxInputWorkSeconds = &lim
		}
		req := genRequest(t)
		req.MaxWaitMs = Some(rapid.SampledFrom([]uint64{0, 100, 60000}).Draw(t, "maxwait"))
		// Interleave 1–3 non-routable clusters, idle and fast so they would
		// win if they were candidates.
		full := &Snapshot{Model: base.Model}
		var extra []string
		for i, c := range base.Clusters {
			if rapid.Bool().Draw(t, fmt.Sprintf("insert%d", i)) || (i == 0 && len(extra) == 0) {
				id := fmt.Sprintf("x%d", i)
				extra = append(extra, id)
				full.Clusters = append(full.Clusters, cl(id, status(rapid.SampledFrom([]Status{StatusInactive, StatusUnknown}).Draw(t, "st")),
					maxTPS(1e6), tps(1e6), load(0, 100), kv(1e6, 0, 1e6)))
			}
			full.Clusters = append(full.Clusters, c)
		}
		switch rapid.IntRange(0, 3).Draw(t, "hint") {
		case 1:
			req.LastClusterID = extra[0]
		case 2:
			req.LastClusterID = base.Clusters[0].ClusterID
		}
		if rapid.Bool().Draw(t, "exclude") {
			req.ExcludedClusterIDs = []string{base.Clusters[len(base.Clusters)-1].ClusterID, extra[0]}
		}
		opt := Options{Trace: true, Probabilities: true}
		eb, ef := NewEngine(cfg), NewEngine(cfg)
		for round := 0; round < 2; round++ { // twice: warm caches, round-robin counters in step
			want := eb.Step(base, req, seeded(5), opt)
			want.Decision = want.Decision.Clone()
			got := ef.Step(full, req, seeded(5), opt)
			if got.Outcome != want.Outcome || got.HTTPStatus != want.HTTPStatus || got.Code != want.Code ||
				got.RetryAt != want.RetryAt || got.Balanced != want.Balanced {
				t.Fatalf("step: got %v %d %s %v, want %v %d %s %v", got.Outcome, got.HTTPStatus, got.Code, got.RetryAt,
					want.Outcome, want.HTTPStatus, want.Code, want.RetryAt)
			}
			if !got.Balanced {
				return
			}
			g, w := &got.Decision, &want.Decision
			if g.Kind != w.Kind || g.ClusterID != w.ClusterID || g.RankDepth != w.RankDepth || g.Wait != w.Wait ||
				g.Reason != w.Reason || g.Session != w.Session || g.Promoted != w.Promoted || g.Phase != w.Phase {
				t.Fatalf("decision: got %+v\nwant %+v", *g, *w)
			}
			if g.Kind == KindSelected && full.Clusters[g.Cluster].ClusterID != g.ClusterID {
				t.Fatalf("Cluster %d does not index %s in the full snapshot", g.Cluster, g.ClusterID)
			}
			for _, p := range [][2][]int{{g.OriginalOrder, w.OriginalOrder}, {g.AffinityOrder, w.AffinityOrder},
				{g.AffinityGroup, w.AffinityGroup}, {g.OpenSet, w.OpenSet}} {
				if (p[0] == nil) != (p[1] == nil) || !slices.Equal(IDs(full, p[0]), IDs(base, p[1])) {
					t.Fatalf("orders differ: %v vs %v", IDs(full, p[0]), IDs(base, p[1]))
				}
			}
			if len(g.Choices) != len(w.Choices) {
				t.Fatalf("choices %v vs %v", g.Choices, w.Choices)
			}
			for i := range g.Choices {
				if g.Choices[i].ClusterID != w.Choices[i].ClusterID || g.Choices[i].P != w.Choices[i].P ||
					full.Clusters[g.Choices[i].Cluster].ClusterID != g.Choices[i].ClusterID {
					t.Fatalf("choice %d: %+v vs %+v", i, g.Choices[i], w.Choices[i])
				}
			}
			for _, p := range g.Trace.Phases {
				for _, c := range p.Candidates {
					if full.Clusters[c.Cluster].ClusterID != c.ClusterID {
						t.Fatalf("trace candidate %s has index %d", c.ClusterID, c.Cluster)
					}
					if slices.Contains(extra, c.ClusterID) {
						t.Fatalf("non-routable %s was evaluated", c.ClusterID)
					}
				}
			}
		}
	})
}

// session.rs plan_affinity matches the hint against the candidate slice the
// balancer receives: a hint naming an inactive cluster is stale (routed as
// new: no affinity wait), not returning.
func TestHintNamingInactiveClusterIsStale(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withK(1), withX(300), withSessions())
	snap := snapOf(cl("A", status(StatusInactive)), cl("B", full), cl("C", free))
	d := decide(t, cfg, snap, rq(key("k"), input(100), last("A")))
	if d.Session != SessionStale || d.Promoted {
		t.Fatalf("session %v promoted=%v, want stale", d.Session, d.Promoted)
	}
	wantDispatch(t, d, "C", 0)
	// Active, the same hint makes the session returning.
	snap.Clusters[0].Status = StatusActive
	if d := decide(t, cfg, snap, rq(key("k"), input(100), last("A"))); d.Session != SessionReturning {
		t.Fatalf("active hint: session %v", d.Session)
	}
}

// Input-work admission sums the candidates only (request_routing passes
// the routing snapshot's clusters): an inactive cluster's capacity and
// queue do not count.
func TestInputWorkIgnoresNonRoutableClusters(t *testing.T) {
	lim := 1.0
	cfg := cfgOf(PowerOfN)
	cfg.MaxInputWorkSeconds = &lim
	e := NewEngine(cfg)
	snap := snapOf(cl("A", tps(100), queued(50)), cl("B", tps(10000), queued(1e6), status(StatusInactive)))
	secs, ok := e.InputWorkSeconds(snap, rq(input(100)))
	if !ok || secs != 1.5 {
		t.Fatalf("input work %v %v, want 1.5 s from A alone", secs, ok)
	}
	st := e.Step(snap, rq(input(100)), seeded(1), Options{})
	if st.Outcome != OutcomeReject || st.Code != "input_work_limit_exceeded" {
		t.Fatalf("admission: %v %s", st.Outcome, st.Code)
	}
}

// The filtered path reuses engine buffers: after warm-up a step on a
// snapshot with an inactive cluster does not allocate either.
func TestFilteredStepAllocationFree(t *testing.T) {
	e := NewEngine(cfgOf(WaitAndWiden, withK(2), withX(300), withSessions()))
	snap := snapOf(cl("A"), cl("B", status(StatusInactive)), cl("C", free), cl("D", full))
	req := rq(key("k"), input(100), last("D"))
	rng := seeded(1)
	e.Step(snap, req, rng, Options{})
	if n := testing.AllocsPerRun(100, func() { e.Step(snap, req, rng, Options{}) }); n != 0 {
		t.Fatalf("%v allocs per filtered step", n)
	}
}
