package lb

import (
	"math"
	"testing"
)

// pulsar.md §10 worked examples P1–P15 (common setup: seed model-a-v1,
// routing key rk-1, key session-6, clusters A–E with rtt 5, mean 100,
// max 100; input 0).

func pulsarSnap(mods ...func(map[string]*Cluster)) *Snapshot {
	cs := []Cluster{}
	for _, id := range []string{"A", "B", "C", "D", "E"} {
		cs = append(cs, cl(id, maxTPS(100)))
	}
	m := map[string]*Cluster{}
	for i := range cs {
		m[cs[i].ClusterID] = &cs[i]
	}
	for _, f := range mods {
		f(m)
	}
	return snapOf(cs...)
}

func set(id string, opts ...copt) func(map[string]*Cluster) {
	return func(m map[string]*Cluster) {
		for _, o := range opts {
			o(m[id])
		}
	}
}

func prq(opts ...ropt) *Request { return rq(append([]ropt{key("session-6")}, opts...)...) }

func pcfg(a Algorithm, opts ...cfgOpt) *AlgorithmConfig {
	return cfgOf(a, append([]cfgOpt{withSeed("model-a-v1")}, opts...)...)
}

func rankingIDs(t *testing.T, cfg *AlgorithmConfig, s *Snapshot, r *Request) []string {
	t.Helper()
	d := decide(t, cfg, s, r)
	var out []string
	for _, e := range d.Trace.Ranking {
		out = append(out, e.ClusterID)
	}
	return out
}

func TestPulsarScoreTable(t *testing.T) {
	want := map[string]struct {
		h     uint64
		score float64
	}{"A": {0xfc242760d65b5aff, 6584.1047}, "B": {0xd4173b1fff7c9d36, 531.4535}, "C": {0x79239fb03a0ba6c6, 133.6474},
		"D": {0x5aca88699fa40804, 96.4678}, "E": {0x108f387e17247cad, 36.5201}}
	d := decide(t, pcfg(Pulsar), pulsarSnap(), prq())
	if len(d.Trace.Ranking) != 5 {
		t.Fatalf("ranking %v", d.Trace.Ranking)
	}
	for i, e := range d.Trace.Ranking {
		w := want[e.ClusterID]
		if e.ClusterID != "ABCDE"[i:i+1] || e.Hash != w.h || math.Abs(float64(e.Score)-w.score) > 1e-4 {
			t.Errorf("rank %d: %+v want %+v", i+1, e, w)
		}
	}
}

func TestPulsarP2Weights(t *testing.T) {
	if got := rankingIDs(t, pcfg(Pulsar), pulsarSnap(set("D", maxTPS(400))), prq()); !equalStrings(got, []string{"A", "B", "D", "C", "E"}) {
		t.Fatalf("D 400: %v", got)
	}
	if got := rankingIDs(t, pcfg(Pulsar), pulsarSnap(set("A", maxTPS(5))), prq()); !equalStrings(got, []string{"B", "A", "C", "D", "E"}) {
		t.Fatalf("A 5: %v", got)
	}
}

func TestPulsarP3NoFallback(t *testing.T) {
	s := pulsarSnap(set("C", maxTPS(0)))
	if got := rankingIDs(t, pcfg(Pulsar), s, prq()); !equalStrings(got, []string{"A", "B", "D", "E"}) {
		t.Fatalf("default mode: %v", got)
	}
	if got := rankingIDs(t, pcfg(Pulsar, withWeight(WeightLastMeanInputTPS)), s, prq()); !equalStrings(got, []string{"A", "B", "C", "D", "E"}) {
		t.Fatalf("mean mode: %v", got)
	}
	// Changing the mean never changes the default-mode ranking.
	if got := rankingIDs(t, pcfg(Pulsar), pulsarSnap(set("E", tps(1e6))), prq()); !equalStrings(got, []string{"A", "B", "C", "D", "E"}) {
		t.Fatalf("mean change: %v", got)
	}
}

func TestPulsarP4KeylessUnseeded(t *testing.T) {
	s := snapOf(cl("A", maxTPS(100)), cl("B", maxTPS(100)), cl("C", maxTPS(100)))
	d := decide(t, cfgOf(Pulsar), s, rq(noRoutingKey()))
	want := map[string]float64{"A": 20.273, "B": 109.132, "C": 30.573}
	var got []string
	for _, e := range d.Trace.Ranking {
		got = append(got, e.ClusterID)
		if math.Abs(float64(e.Score)-want[e.ClusterID]) > 1e-3 {
			t.Errorf("%s score %v", e.ClusterID, e.Score)
		}
	}
	if !equalStrings(got, []string{"B", "C", "A"}) {
		t.Fatalf("unseeded: %v", got)
	}
	if got := rankingIDs(t, pcfg(Pulsar), pulsarSnap(), rq()); !equalStrings(got, []string{"C", "B", "D", "E", "A"}) {
		t.Fatalf("keyless: %v", got)
	}
}

func TestPulsarP5Retry(t *testing.T) {
	d := decide(t, pcfg(Pulsar), pulsarSnap(), prq(exclude("A")))
	wantDispatch(t, d, "B", 2)
	if d.SelectedAfterKVFreeTokensSkip {
		t.Fatal("retry exclusion is not a KV skip")
	}
	wantUnavailable(t, decide(t, pcfg(Pulsar), pulsarSnap(), prq(exclude("A", "B", "C", "D", "E"))))
	if st := NewEngine(pcfg(Pulsar)).Step(pulsarSnap(), prq(exclude("A", "B", "C", "D", "E")), nil, Options{}); st.Outcome != OutcomeReject {
		t.Fatalf("all excluded: %v", st.Outcome)
	}
}

func TestPulsarP6KVGate(t *testing.T) {
	base := func(extra ...func(map[string]*Cluster)) *Snapshot {
		mods := []func(map[string]*Cluster){set("A", kv(1024, 524, 500))}
		for _, id := range []string{"B", "C", "D", "E"} {
			mods = append(mods, set(id, kv(1024, 0, 1024)))
		}
		return pulsarSnap(append(mods, extra...)...)
	}
	d := decide(t, pcfg(Pulsar, withKV()), base(), prq(input(600)))
	wantDispatch(t, d, "B", 2)
	if !d.SelectedAfterKVFreeTokensSkip {
		t.Fatal("KV flag")
	}
	d = decide(t, pcfg(Pulsar, withKV()), base(set("B", kv(0, 0, 0))), prq(input(600)))
	wantDispatch(t, d, "C", 3)
	if !d.SelectedAfterKVFreeTokensSkip {
		t.Fatal("KV flag")
	}
	d = decide(t, pcfg(Pulsar), base(), prq(input(600)))
	wantDispatch(t, d, "A", 1)
}

func TestPulsarP7ShortcutRemoved(t *testing.T) {
	s := pulsarSnap(set("A", full), set("B", free), set("C", full), set("D", full), set("E", full))
	wantDispatch(t, decide(t, pcfg(PulsarWaitAndWiden), s, prq()), "B", 2)
	s = pulsarSnap(set("A", full), set("B", free), set("C", free), set("D", free), set("E", free))
	wantOneOf(t, decide(t, pcfg(PulsarWaitAndWiden), s, prq()), "B", "C", "D", "E")
	s = pulsarSnap(set("A", load(2, 1)), set("B", free))
	wantDispatch(t, decide(t, pcfg(PulsarWaitAndWiden, withMaxQueued(4)), s, prq()), "A", 1)
}

func TestPulsarP8AffinityWaitThenBand(t *testing.T) {
	s := pulsarSnap(set("A", full), set("B", free), set("C", full), set("D", free), set("E", free))
	cfg := pcfg(PulsarWaitAndWiden, withX(300))
	d := decide(t, cfg, s, prq(at(0)))
	wantWait(t, d, 300)
	d = decide(t, cfg, s, prq(at(120)))
	wantWait(t, d, 180)
	if DurationMs(d.RetryAt) != 300 {
		t.Fatalf("retry at %v", d.RetryAt)
	}
	d = decide(t, cfg, s, prq(at(300)))
	wantDispatch(t, d, "B", 2)
	if !equalStrings(ids(s, d.OpenSet), []string{"A", "B", "C"}) {
		t.Fatalf("open set %v", ids(s, d.OpenSet))
	}
}

func TestPulsarP9TimedBands(t *testing.T) {
	s := pulsarSnap(set("A", full), set("B", full), set("C", full), set("D", full), set("E", free))
	cfg := pcfg(PulsarWaitAndWiden, withX(100), withBand(200))
	for _, tc := range []struct{ at, wait float64 }{{50, 50}, {100, 200}, {250, 50}, {299, 1}} {
		wantWait(t, decide(t, cfg, s, prq(at(tc.at))), tc.wait)
	}
	wantDispatch(t, decide(t, cfg, s, prq(at(300))), "E", 5)
	wantDispatch(t, decide(t, pcfg(PulsarWaitAndWiden, withX(100), withBand(0)), s, prq(at(100))), "E", 5)
}

func TestPulsarP10OverflowGuard(t *testing.T) {
	s := pulsarSnap(set("A", load(2, 1)), set("B", full), set("C", full), set("D", free), set("E", free))
	cfg := pcfg(PulsarWaitAndWiden, withMaxQueued(1), withBand(1000), withSLO(10000, 10000))
	wantWait(t, decide(t, cfg, s, prq(at(0))), 1000)
	d := decide(t, cfg, s, prq(at(1000)))
	wantOneOf(t, d, "D", "E")
	cfg = pcfg(PulsarWaitAndWiden, withMaxQueued(1), withBand(1000), withSLO(10000, 10000), withFallbackQueued(1))
	wantOneOf(t, decide(t, cfg, s, prq(at(0))), "B", "C")
}

func TestPulsarP11LockedBucket(t *testing.T) {
	s := pulsarSnap(set("A", full), set("B", full), set("C", free, rttMs(500)), set("D", full), set("E", full))
	cfg := pcfg(PulsarWaitAndWiden, withSLO(10000, 10000), withBand(0))
	wantWait(t, decide(t, cfg, s, prq(at(0))), 123.75)
	wantWait(t, decide(t, cfg, s, prq(at(100))), 23.75)
	wantDispatch(t, decide(t, cfg, s, prq(at(124))), "C", 3)
	wantDispatch(t, decide(t, cfg, s, prq(at(200))), "C", 3)
}

func TestPulsarP12QueueSLO(t *testing.T) {
	mk := func(aQ, bQ, cQ uint64) *Snapshot {
		return pulsarSnap(set("A", rttMs(500), queued(aQ)), set("B", rttMs(100), queued(bQ)), set("C", rttMs(100), queued(cQ)),
			set("D", rttMs(1)), set("E", rttMs(100), queued(1)))
	}
	cfg := pcfg(PulsarWaitAndWiden, withSLO(100, 100), withBucket(100), withBand(1000))
	wantDispatch(t, decide(t, cfg, mk(20, 0, 1), prq()), "B", 2)
	wantDispatch(t, decide(t, cfg, mk(5, 0, 1), prq()), "A", 1)
	wantWait(t, decide(t, cfg, mk(20, 20, 20), prq()), 1000)
	wantDispatch(t, decide(t, cfg, mk(20, 20, 20), prq(at(1000))), "D", 4)
}

func TestPulsarP13KVInfeasiblePrimary(t *testing.T) {
	s := pulsarSnap(set("A", kv(1024, 974, 50), rttMs(50)), set("B", rttMs(1), kv(1024, 0, 1024)), set("C", rttMs(500), kv(1024, 0, 1024)),
		set("D", rttMs(50), kv(1024, 0, 1024)), set("E", rttMs(50), kv(1024, 0, 1024)))
	d := decide(t, pcfg(PulsarWaitAndWiden, withKV(), withBand(10000)), s, prq(input(100)))
	wantDispatch(t, d, "B", 2)
	if !d.SelectedAfterKVFreeTokensSkip {
		t.Fatal("KV flag")
	}
}

func TestPulsarP14Discount(t *testing.T) {
	s := pulsarSnap(set("A", rttMs(500), tps(1000)), set("B", rttMs(1), tps(500)))
	wantDispatch(t, decide(t, pcfg(PulsarWaitAndWiden, withK(2)), s, prq(input(1000))), "A", 1)
	wantDispatch(t, decide(t, pcfg(PulsarWaitAndWiden, withK(2), withScale(0.1)), s, prq(input(1000))), "B", 2)
}

func TestPulsarP15NothingRanked(t *testing.T) {
	s := pulsarSnap(set("A", maxTPS(0)), set("B", maxTPS(0)), set("C", maxTPS(0)), set("D", maxTPS(0)), set("E", maxTPS(0)))
	for _, a := range []Algorithm{Pulsar, PulsarWaitAndWiden} {
		d := decide(t, pcfg(a, withSessions()), s, prq(last("B")))
		wantUnavailable(t, d)
		if d.Session != SessionNone || d.Reason != ReasonNothingRanked {
			t.Fatalf("%v: session %v reason %v", a, d.Session, d.Reason)
		}
	}
}

// pulsar.md §4.3: float64(hash) rounds to 53 bits; hashes ≥ 2^64−1024
// give u = 1 and are dropped (§11 item 9).
func TestPulsarUnitCorner(t *testing.T) {
	if PulsarUnit(math.MaxUint64) != 1 || PulsarUnit(math.MaxUint64-1023) != 1 {
		t.Fatal("u must round to 1")
	}
	if u := PulsarUnit(0); u <= 0 || u != math.Ldexp(1, -64) {
		t.Fatalf("u(0) = %v", u)
	}
}

// An exact score tie is flagged ambiguous (pulsar.md §11.3: any relative
// difference under 1e-12, 0 included) and ordered by cluster id ascending,
// as upstream's compare_ranked_candidate breaks ties (issue 15).
func TestPulsarExactTieIsAmbiguousAndOrderedByID(t *testing.T) {
	snap := snapOf(cl("B", maxTPS(100)), cl("A", maxTPS(100)))
	d := decide(t, pcfg(Pulsar), snap, prq())
	lnOf := map[string]float64{}
	for _, e := range d.Trace.Ranking {
		lnOf[e.ClusterID] = -Ln(e.U)
	}
	// Weights for A and B whose scores are exactly equal (division by
	// lnOf["B"] skips some doubles, so try a few weights of A).
	wA, wB, found := 0.0, 0.0, false
	for a := 100.0; a < 200 && !found; a++ {
		sA := a / lnOf["A"]
		for b, k := math.Nextafter(sA*lnOf["B"], 0), 0; k < 3 && !found; b, k = math.Nextafter(b, math.Inf(1)), k+1 {
			wA, wB, found = a, b, b/lnOf["B"] == sA
		}
	}
	if !found {
		t.Fatalf("no weights tie the scores of A and B")
	}
	sA := wA / lnOf["A"]
	snap.Clusters[1].Stats.MaxInputTPS = wA
	snap.Clusters[0].Stats.MaxInputTPS = wB
	d = decide(t, pcfg(Pulsar), snap, prq())
	if got := IDs(snap, d.OriginalOrder); !equalStrings(got, []string{"A", "B"}) {
		t.Errorf("exact tie: ranking %v, want [A B] (cluster id ascending)", got)
	}
	if !d.Ambiguous {
		t.Errorf("exact tie (both %v) not flagged ambiguous", sA)
	}
	// A clear gap is not a near-tie.
	snap.Clusters[0].Stats.MaxInputTPS = wB * (1 + 1e-9)
	if d = decide(t, pcfg(Pulsar), snap, prq()); d.Ambiguous {
		t.Errorf("relative difference 1e-9 flagged ambiguous")
	}
	for _, c := range []struct {
		a, b float64
		want bool
	}{{1, 1, true}, {math.Inf(1), math.Inf(1), true}, {1, math.Nextafter(1, 2), true}, {1, 1 + 1e-11, false}, {math.Inf(1), math.MaxFloat64, false}} {
		if got := nearTie(c.a, c.b); got != c.want {
			t.Errorf("nearTie(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
