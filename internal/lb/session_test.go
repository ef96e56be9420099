package lb

import (
	"fmt"
	"testing"
)

// session.md §10 worked examples (pww setup of pulsar.md §10; session
// config: flag on, X 300, scale 0.1, n 2, k 1).

func scfg(opts ...cfgOpt) *AlgorithmConfig {
	return pcfg(PulsarWaitAndWiden, append([]cfgOpt{withSessions(), withX(300), withScale(0.1), withN(2)}, opts...)...)
}

func freeExcept(fullIDs ...string) *Snapshot {
	var mods []func(map[string]*Cluster)
	for _, id := range []string{"A", "B", "C", "D", "E"} {
		mods = append(mods, set(id, free))
	}
	for _, id := range fullIDs {
		mods = append(mods, set(id, full))
	}
	return pulsarSnap(mods...)
}

func TestSessionS1NewOverflows(t *testing.T) {
	s := freeExcept("A", "C", "D", "E")
	d := decide(t, scfg(), s, prq())
	wantDispatch(t, d, "B", 2)
	if d.Session != SessionNew || d.Promoted {
		t.Fatalf("state %v %v", d.Session, d.Promoted)
	}
	off := pcfg(PulsarWaitAndWiden, withX(300), withScale(0.1), withN(2))
	d = decide(t, off, s, prq())
	wantWait(t, d, 300)
	if d.Session != SessionNone {
		t.Fatal("flag off classified")
	}
}

func TestSessionS2Stale(t *testing.T) {
	d := decide(t, scfg(), freeExcept("A", "C", "D", "E"), prq(last("Z")))
	wantDispatch(t, d, "B", 2)
	if d.Session != SessionStale {
		t.Fatalf("state %v", d.Session)
	}
}

func TestSessionS3DesignExample(t *testing.T) {
	s := freeExcept("A", "B", "D", "E")
	cfg := scfg(withBand(100))
	d := decide(t, cfg, s, prq(last("D")))
	if !equalStrings(ids(s, d.AffinityOrder), []string{"D", "A", "B", "C", "E"}) || !d.Promoted || d.Session != SessionReturning {
		t.Fatalf("order %v promoted %v", ids(s, d.AffinityOrder), d.Promoted)
	}
	wantWait(t, d, 300)
	wantWait(t, decide(t, cfg, s, prq(last("D"), at(299))), 1)
	d = decide(t, cfg, s, prq(last("D"), at(300)))
	wantWait(t, d, 100)
	if DurationMs(d.RetryAt) != 400 {
		t.Fatalf("retry at %v", d.RetryAt)
	}
	wantDispatch(t, decide(t, cfg, s, prq(last("D"), at(400))), "C", 4)
	wantDispatch(t, decide(t, cfg, freeExcept("A", "C", "D", "E"), prq(last("D"), at(300))), "B", 3)
}

func TestSessionS4ReturningWaits(t *testing.T) {
	s := freeExcept("B")
	wantWait(t, decide(t, scfg(), s, prq(last("B"))), 300)
	wantWait(t, decide(t, scfg(), s, prq(last("B"), at(200))), 100)
	d := decide(t, scfg(), s, prq(last("B"), at(300)))
	wantOneOf(t, d, "A", "C")
	wantDispatch(t, decide(t, scfg(), freeExcept(), prq(last("B"))), "B", 1)
}

func TestSessionS5AlreadyFirst(t *testing.T) {
	d := decide(t, scfg(), freeExcept(), prq(last("A")))
	wantDispatch(t, d, "A", 1)
	if d.Session != SessionReturning || d.Promoted || d.AffinityWait != 300e6 {
		t.Fatalf("state %v promoted %v X %v", d.Session, d.Promoted, d.AffinityWait)
	}
}

func TestSessionS6OutsideGroupK2(t *testing.T) {
	s := freeExcept("A", "C", "D")
	cfg := scfg(withK(2))
	d := decide(t, cfg, s, prq(last("C")))
	if !equalStrings(ids(s, d.AffinityOrder), []string{"C", "A", "B", "D", "E"}) || !equalStrings(ids(s, d.AffinityGroup), []string{"C", "A"}) {
		t.Fatalf("order %v group %v", ids(s, d.AffinityOrder), ids(s, d.AffinityGroup))
	}
	wantWait(t, d, 300)
	wantWait(t, decide(t, cfg, s, prq(last("C"), at(100))), 200)
	wantDispatch(t, decide(t, cfg, s, prq(last("C"), at(300))), "B", 3)
}

// S7–S9: wait-and-widen promotion with a premise group [A, B] / [A].
func TestSessionS7S9InsertAndTruncate(t *testing.T) {
	s := snapOf(cl("A"), cl("B"), cl("C"), cl("D"), cl("E"))
	e := NewEngine(cfgOf(WaitAndWiden, withK(2), withX(300), withScale(0.1), withSessions()))
	for _, tc := range []struct {
		group    []int
		hint     string
		want     []string
		promoted bool
	}{
		{[]int{0, 1}, "C", []string{"C", "A"}, true},
		{[]int{0, 1}, "B", []string{"B", "A"}, true},
		{[]int{0, 1}, "A", []string{"A", "B"}, false},
		{[]int{0}, "D", []string{"D"}, true},
	} {
		r := rq(key("k"), last(tc.hint))
		rv := e.view(r)
		e.prepare(s, r, &rv)
		var d Decision
		order, x, scale := e.plan(s, &rv, tc.group, true, false, &d)
		if !equalStrings(ids(s, order), tc.want) || d.Promoted != tc.promoted || x != 300e6 || scale != 0.1 {
			t.Errorf("hint %s: %v promoted %v x %v scale %v", tc.hint, ids(s, order), d.Promoted, x, scale)
		}
		if !equalStrings(ids(s, tc.group), []string{"A", "B"}[:len(tc.group)]) {
			t.Fatal("the original order was modified")
		}
	}
}

func TestSessionS11NotRankable(t *testing.T) {
	s := freeExcept("A")
	set("D", maxTPS(0))(map[string]*Cluster{"D": &s.Clusters[3]})
	d := decide(t, scfg(), s, prq(last("D")))
	if d.Session != SessionReturning || d.Promoted || !equalStrings(ids(s, d.AffinityOrder), []string{"A", "B", "C", "E"}) {
		t.Fatalf("state %v promoted %v order %v", d.Session, d.Promoted, ids(s, d.AffinityOrder))
	}
	wantWait(t, d, 300)
	wantOneOf(t, decide(t, scfg(), s, prq(last("D"), at(300))), "B", "C")
}

func TestSessionS12RetryExcludesLast(t *testing.T) {
	s := freeExcept()
	wantWait(t, decide(t, scfg(), s, prq(last("B"), exclude("B"))), 300)
	d := decide(t, scfg(), s, prq(last("B"), exclude("B"), at(300)))
	wantOneOf(t, d, "A", "C")
	if d.Session != SessionReturning || !d.Promoted {
		t.Fatal("excluded last cluster is still returning and promoted")
	}
}

func TestSessionS13Pinned(t *testing.T) {
	s := snapOf(cl("A", maxTPS(100), full), cl("C", maxTPS(100), free), cl("D", maxTPS(100), free), cl("E", maxTPS(100), free))
	d := decide(t, scfg(), s, prq(last("B"), pinned(SessionReturning), at(50)))
	if d.Session != SessionReturning || d.Promoted {
		t.Fatalf("pinned: %v %v", d.Session, d.Promoted)
	}
	wantWait(t, d, 250)
	wantOneOf(t, decide(t, scfg(), s, prq(last("B"), pinned(SessionReturning), at(300))), "C", "D")
	d = decide(t, scfg(), s, prq(last("B")))
	if d.Session != SessionStale {
		t.Fatalf("fresh: %v", d.Session)
	}
	wantOneOf(t, d, "C", "D", "E")
	// Pinned stale stays routed as new even when the hint is a candidate.
	d = decide(t, scfg(), freeExcept("A"), prq(last("A"), pinned(SessionStale)))
	if d.Session != SessionStale || d.AffinityWait != 0 {
		t.Fatalf("pinned stale: %v %v", d.Session, d.AffinityWait)
	}
}

func TestSessionS14NoKey(t *testing.T) {
	s := freeExcept("C")
	d := decide(t, scfg(), s, rq(last("B")))
	if d.Session != SessionNone {
		t.Fatal("classified without a key")
	}
	if !equalStrings(ids(s, d.AffinityOrder), []string{"C", "B", "D", "E", "A"}) {
		t.Fatalf("order %v", ids(s, d.AffinityOrder))
	}
	wantWait(t, d, 300)
	wantOneOf(t, decide(t, scfg(), s, rq(last("B"), at(300))), "B", "D")
}

func TestSessionS15DiscountOnlyPromoted(t *testing.T) {
	s := freeExcept("B", "D", "E")
	s.Clusters[0].RTT, s.Clusters[0].Stats.LastMeanInputTPS = 1e6, 500
	s.Clusters[2].RTT, s.Clusters[2].Stats.LastMeanInputTPS = 500e6, 1000
	wantWait(t, decide(t, scfg(), s, prq(last("B"), input(1000))), 300)
	wantDispatch(t, decide(t, scfg(), s, prq(last("B"), input(1000), at(300))), "C", 3)
	off := pcfg(PulsarWaitAndWiden, withX(300), withScale(0.1), withN(2))
	wantDispatch(t, decide(t, off, s, prq(last("B"), input(1000))), "A", 1)
}

func TestSessionS16NewWithExplicitBand(t *testing.T) {
	wantDispatch(t, decide(t, scfg(withBand(100)), freeExcept("A", "B", "D", "E"), prq()), "C", 3)
	wantWait(t, decide(t, scfg(withBand(100)), freeExcept("A", "B", "C", "D"), prq()), 100)
}

func TestSessionS17NewK2(t *testing.T) {
	wantDispatch(t, decide(t, scfg(withK(2)), freeExcept("A"), prq()), "B", 2)
	wantDispatch(t, decide(t, scfg(withK(2)), freeExcept("A", "B", "D", "E"), prq()), "C", 3)
}

func TestSessionS18PromotionNotCached(t *testing.T) {
	e := NewEngine(scfg())
	s := freeExcept()
	d := e.Decide(s, prq(last("B")), nil, Options{})
	if d.ClusterID != "B" {
		t.Fatalf("request 1: %s", d.ClusterID)
	}
	d = e.Decide(s, prq(), nil, Options{})
	if d.ClusterID != "A" || d.RankDepth != 1 {
		t.Fatalf("request 2: %s %d", d.ClusterID, d.RankDepth)
	}
	// Same for wait-and-widen's ring cache.
	w := NewEngine(sessionCfg(1))
	ws := snapOf(cl("a"), cl("b"), cl("c"))
	d = w.Decide(ws, rq(key("session-prefix"), last("a")), nil, Options{})
	if !equalStrings(ids(ws, d.AffinityOrder), []string{"a"}) {
		t.Fatalf("ww promoted: %v", ids(ws, d.AffinityOrder))
	}
	d = w.Decide(ws, rq(key("session-prefix")), nil, Options{})
	if !equalStrings(ids(ws, d.AffinityOrder), []string{"c"}) {
		t.Fatalf("ww unpromoted: %v", ids(ws, d.AffinityOrder))
	}
}

// session.md §6.1 and S17: the metric's selection label.
func TestSessionSelectionLabel(t *testing.T) {
	e := NewEngine(scfg(withK(2)))
	for _, tc := range []struct {
		snap *Snapshot
		hint string
		want string
	}{
		{freeExcept("A"), "", "primary"},                 // new, depth 2 ≤ k 2
		{freeExcept("A", "B", "D", "E"), "", "fallback"}, // new, depth 3
	} {
		d := e.Decide(tc.snap, prq(last(tc.hint)), nil, Options{})
		if got := e.SessionSelection(&d, tc.hint); got != tc.want {
			t.Errorf("hint %q: %s depth %d: %q, want %q", tc.hint, d.ClusterID, d.RankDepth, got, tc.want)
		}
	}
	e1 := NewEngine(scfg())
	d := e1.Decide(freeExcept(), prq(last("B")), nil, Options{})
	if d.ClusterID != "B" || e1.SessionSelection(&d, " B ") != "primary" {
		t.Errorf("returning primary: %s %q", d.ClusterID, e1.SessionSelection(&d, "B"))
	}
	d = e.Decide(freeExcept("A", "C", "D", "E"), prq(last("C"), at(300)), nil, Options{})
	if d.ClusterID != "B" || e.SessionSelection(&d, "C") != "fallback" {
		t.Errorf("returning fallback: %s %q", d.ClusterID, e.SessionSelection(&d, "C"))
	}
	off := NewEngine(pcfg(PulsarWaitAndWiden))
	d = off.Decide(freeExcept(), prq(), nil, Options{})
	if off.SessionSelection(&d, "") != "" {
		t.Error("unclassified decisions record nothing")
	}
}

// wwKeyWithGroup returns a session key whose wait-and-widen ring group
// over clusters A–E (k members, flag on, no hint) is exactly want: the
// "given premise" of session.md §10 S7–S10, which take the ring group as
// given rather than computing it.
func wwKeyWithGroup(t *testing.T, cfg *AlgorithmConfig, want ...string) string {
	t.Helper()
	s := snapOf(cl("A", free), cl("B", free), cl("C", free), cl("D", free), cl("E", free))
	for i := 0; i < 10000; i++ {
		k := fmt.Sprintf("session-%d", i)
		d := decide(t, cfg, s, rq(key(k)))
		if equalStrings(ids(s, d.AffinityGroup), want) {
			return k
		}
	}
	t.Fatalf("no key among 10000 has the ring group %v", want)
	return ""
}

// wwSnap is clusters A–E in snapshot order, the listed ones full and the
// others free.
func wwSnap(fullIDs ...string) *Snapshot {
	var cs []Cluster
	for _, id := range []string{"A", "B", "C", "D", "E"} {
		st := free
		for _, f := range fullIDs {
			if f == id {
				st = full
			}
		}
		cs = append(cs, cl(id, st))
	}
	return snapOf(cs...)
}

// session.md §10 S7, S8, S9 and S10 as decisions (TestSessionS7S9InsertAndTruncate
// checks only the promoted order): wait-and-widen, flag on, X 300, scale
// 0.1, n 2, with a key whose ring group is the example's premise.
func TestSessionS7toS10WaitAndWidenDecisions(t *testing.T) {
	cfg2 := cfgOf(WaitAndWiden, withK(2), withX(300), withScale(0.1), withN(2), withSessions())
	k2 := wwKeyWithGroup(t, cfg2, "A", "B")

	// S7: hint C outside the group [A, B] => [C, A], B dropped.
	all := wwSnap()
	d := decide(t, cfg2, all, rq(key(k2), last("C")))
	if d.Session != SessionReturning || !d.Promoted || !equalStrings(ids(all, d.AffinityOrder), []string{"C", "A"}) {
		t.Fatalf("S7: state %v promoted %v order %v", d.Session, d.Promoted, ids(all, d.AffinityOrder))
	}
	wantOneOf(t, d, "C", "A")
	if d.RankDepth != 1 {
		t.Fatalf("S7 all free: rank depth %d, want 1", d.RankDepth)
	}
	onlyB := wwSnap("A", "C", "D", "E")
	wantWait(t, decide(t, cfg2, onlyB, rq(key(k2), last("C"))), 300)
	wantWait(t, decide(t, cfg2, onlyB, rq(key(k2), last("C"), at(100))), 200)
	wantDispatch(t, decide(t, cfg2, onlyB, rq(key(k2), last("C"), at(300))), "B", 3)

	// S8: hint B inside the group => [B, A], same members, promoted.
	d = decide(t, cfg2, all, rq(key(k2), last("B")))
	if d.Session != SessionReturning || !d.Promoted || !equalStrings(ids(all, d.AffinityOrder), []string{"B", "A"}) {
		t.Fatalf("S8: state %v promoted %v order %v", d.Session, d.Promoted, ids(all, d.AffinityOrder))
	}
	wantOneOf(t, d, "B", "A")
	if d.RankDepth != 1 {
		t.Fatalf("S8: rank depth %d, want 1", d.RankDepth)
	}

	// S9: k = 1, premise group [A], hint D => [D]; D full, the rest free:
	// at 100 ms the request waits 200 ms more for D (A left the group).
	cfg1 := cfgOf(WaitAndWiden, withK(1), withX(300), withScale(0.1), withN(2), withSessions())
	k1 := wwKeyWithGroup(t, cfg1, "A")
	onlyDFull := wwSnap("D")
	d = decide(t, cfg1, onlyDFull, rq(key(k1), last("D"), at(100)))
	if !d.Promoted || !equalStrings(ids(onlyDFull, d.AffinityOrder), []string{"D"}) {
		t.Fatalf("S9: promoted %v order %v", d.Promoted, ids(onlyDFull, d.AffinityOrder))
	}
	wantWait(t, d, 200)

	// S10: new session (no hint), group [A, B]; A full, B free => X 0,
	// scale 1, the affinity phase picks B at rank depth 1.
	d = decide(t, cfg2, wwSnap("A"), rq(key(k2)))
	if d.Session != SessionNew || d.AffinityWait != 0 || d.Trace == nil || len(d.Trace.Phases) == 0 || d.Trace.Phases[0].Scale != 1 {
		t.Fatalf("S10: state %v X %v trace %+v", d.Session, d.AffinityWait, d.Trace)
	}
	wantDispatch(t, d, "B", 1)
	// A and B full, C the only free cluster: no wait, the global phase
	// picks C at elapsed 0 with rank depth 3 (len(order) + 1) ...
	onlyC := wwSnap("A", "B", "D", "E")
	wantDispatch(t, decide(t, cfg2, onlyC, rq(key(k2))), "C", 3)
	// ... where the flag off waits X = 300 ms.
	off := cfgOf(WaitAndWiden, withK(2), withX(300), withScale(0.1), withN(2))
	wantWait(t, decide(t, off, onlyC, rq(key(k2))), 300)
}
