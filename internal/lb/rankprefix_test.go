package lb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// isPrefix reports whether p is a prefix of full.
func isPrefix(p, full []int) bool { return len(p) <= len(full) && slices.Equal(p, full[:len(p)]) }

// Under Options.PartialOrder a decision is the full decision in every
// field the option does not name, and its orders are prefixes of the full
// ones (pww: the same open set), on random snapshots of 1–300 loaded
// clusters with sessions, hints, exclusions, KV gating, bands and elapsed
// times from 0 to past every band. Both engines live across the steps, so
// the partial one serves prefixes from its cache, extends them, and
// sometimes decides in full (which must complete a cached prefix).
func TestPropPartialOrderMatchesFull(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Sizes on both sides of where a prefix is computed (more than
		// 2·minTopRanks candidates); rapid alone mostly draws small ones.
		snap := genSnapshotOf(t, rapid.SampledFrom([]int{1, 3, 8, 16, 17, 18, 24, 40, 64, 129, 256, 300}).Draw(t, "n"))
		a, cfg := genLoadedPulsar(t, snap)
		partial, full := NewEngine(cfg), NewEngine(cfg)
		for step := 0; step < 12; step++ {
			r := rq(key(rapid.SampledFrom([]string{"k1", "session-6", "prefix", "s-9"}).Draw(t, "key")),
				input(rapid.SampledFrom([]uint64{0, 100, 1000}).Draw(t, "input")),
				at(rapid.SampledFrom([]float64{0, 50, 299, 300, 301, 350, 420, 1000, 5000, 60000}).Draw(t, "elapsed")))
			pick := func(label string) string {
				return snap.Clusters[rapid.IntRange(0, len(snap.Clusters)-1).Draw(t, label)].ClusterID
			}
			if rapid.Bool().Draw(t, "hint") {
				r.LastClusterID = pick("last")
			}
			if rapid.IntRange(0, 3).Draw(t, "excl") == 0 {
				r.ExcludedClusterIDs = []string{pick("x1"), pick("x2")}
			}
			opt := Options{Probabilities: rapid.Bool().Draw(t, "probs")}
			popt := opt
			popt.PartialOrder = rapid.IntRange(0, 4).Draw(t, "fullstep") != 0
			d1 := partial.Decide(snap, r, seeded(uint64(step)), popt).Clone()
			d2 := full.Decide(snap, r, seeded(uint64(step)), opt)
			brief := func(d Decision) string {
				return fmt.Sprintf("%v %s depth %d wait %v reason %v phase %v ambiguous %v session %v promoted %v open %d group %v order %v", d.Kind, d.ClusterID,
					d.RankDepth, d.Wait, d.Reason, d.Phase, d.Ambiguous, d.Session, d.Promoted, len(d.OpenSet), IDs(snap, d.AffinityGroup),
					IDs(snap, d.AffinityOrder[:min(8, len(d.AffinityOrder))]))
			}
			fail := func(what string) {
				t.Fatalf("step %d (partial %v): %s differs\npartial %s\nfull    %s", step, popt.PartialOrder, what, brief(d1), brief(d2))
			}
			if !same(d1, d2) || d1.ClusterID != d2.ClusterID || d1.RetryAt != d2.RetryAt || d1.Phase != d2.Phase ||
				d1.Session != d2.Session || d1.Promoted != d2.Promoted || d1.AffinityWait != d2.AffinityWait || d1.BandInterval != d2.BandInterval {
				fail("the decision")
			}
			if !slices.Equal(d1.AffinityGroup, d2.AffinityGroup) {
				fail("the affinity group")
			}
			if len(d1.Choices) != len(d2.Choices) || d1.ChoicesExact != d2.ChoicesExact {
				fail("the choices")
			}
			for i := range d1.Choices {
				if d1.Choices[i].Cluster != d2.Choices[i].Cluster || d1.Choices[i].P != d2.Choices[i].P {
					fail("the choices")
				}
			}
			if !isPrefix(d1.OriginalOrder, d2.OriginalOrder) || !isPrefix(d1.AffinityOrder, d2.AffinityOrder) || !isPrefix(d1.OpenSet, d2.OpenSet) {
				fail("an order")
			}
			if a == PulsarWaitAndWiden && !slices.Equal(d1.OpenSet, d2.OpenSet) {
				fail("the open set")
			}
			if a == PulsarWaitAndWiden && len(d1.AffinityOrder) != len(d1.OpenSet) && popt.PartialOrder {
				fail("the reported order's length")
			}
			if !popt.PartialOrder && (!slices.Equal(d1.OriginalOrder, d2.OriginalOrder) || !slices.Equal(d1.AffinityOrder, d2.AffinityOrder) || d1.Ambiguous != d2.Ambiguous) {
				fail("the full order")
			}
			if d1.Ambiguous && !d2.Ambiguous {
				fail("the near-tie flag")
			}
			if d2.Ambiguous && len(d1.OriginalOrder) == len(d2.OriginalOrder) && !d1.Ambiguous {
				fail("the near-tie flag")
			}
		}
	})
}

// The ranks hashCandidates' kept keys give (the groups cut inside them)
// are the first ranks of the full order, on snapshots of equal, mixed and
// skewed weights (some invalid) and many keys: a floor that skipped a
// candidate of the first ranks would show here.
func TestStreamedPrefixMatchesFull(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 7))
	weightSets := [][]float64{{100}, {8000, 9000, 10000}, {1, 100, 1e4}, {100, 100, 0, 400}, {5e-324, 1e300, 3}}
	for round := 0; round < 300; round++ {
		n := []int{17, 18, 24, 40, 64, 129, 256, 300}[rng.IntN(8)]
		ws := weightSets[rng.IntN(len(weightSets))]
		cs := make([]Cluster, n)
		for i := range cs {
			cs[i] = cl(fmt.Sprintf("c%d", i), maxTPS(ws[rng.IntN(len(ws))]))
		}
		snap := snapOf(cs...)
		e := NewEngine(cfgOf(Pulsar, withSeed("s")))
		e.rankSet.update(snap, WeightMaxInputTPS)
		for k := 0; k < 20; k++ {
			rv := e.view(rq(key(fmt.Sprintf("session-%d-%d", round, k))))
			e.hashCandidates(&rv, minTopRanks)
			tie := noTie
			pre := e.cutGroups(snap, e.streamCands, e.rk.lo, e.rk.hi, e.rankTop, len(e.rankTop) == e.rk.total, nil, &tie)
			e.hashCandidates(&rv, 0)
			fullTie := noTie
			full := e.orderByBounds(snap, e.ranked, &fullTie)
			if len(pre) > len(full) {
				t.Fatalf("round %d key %d: %d ranks kept of %d", round, k, len(pre), len(full))
			}
			for i := range pre {
				if pre[i].idx != full[i].idx {
					t.Fatalf("round %d key %d (%d clusters, weights %v): rank %d is candidate %d, want %d", round, k, n, ws, i, pre[i].idx, full[i].idx)
				}
			}
			if (tie < len(pre)) != (fullTie < len(pre)) {
				t.Fatalf("round %d key %d: near-tie at %d, want %d", round, k, tie, fullTie)
			}
		}
	}
}

// hashBelow is below every hash whose u reaches u0, at the edges of u's
// rounding: the hashes just under it have u < u0, on random and
// edge-case u0.
func TestHashBelowIsBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 7))
	check := func(u0 float64) {
		t.Helper()
		h0 := hashBelow(u0)
		for d := uint64(1); d <= 4096 && d <= h0; d *= 2 {
			if u := PulsarUnit(h0 - d); !(u < u0) {
				t.Fatalf("u0 %v: hash %#x (below %#x) has u %v", u0, h0-d, h0, u)
			}
		}
		if h0 > 0 && !(PulsarUnit(h0-1) < u0) {
			t.Fatalf("u0 %v: hash %#x has u %v", u0, h0-1, PulsarUnit(h0-1))
		}
	}
	for i := 0; i < 200_000; i++ {
		u := PulsarUnit(rng.Uint64())
		check(u)
		check(math.Nextafter(u, 0))
		check(math.Nextafter(u, 2))
	}
	for _, u := range []float64{0x1p-8, math.Nextafter(0x1p-8, 0), 0.5, 1, math.Nextafter(1, 0), 1 - 0x1p-40, 0x1p-7} {
		check(u)
	}
	if hashBelow(0x1p-9) != 0 || hashBelow(math.NaN()) != 0 {
		t.Fatal("a small or NaN floor must skip nothing")
	}
}

// A fresh partial ranking after one on more candidates reads only the
// current candidates' hashes: 20 clusters after 40 (hashFloor looks at
// every hash when few lie above its cut, as with 17 to 24 candidates)
// decide like a fresh engine, and do not read past the candidate set.
func TestPartialOrderAfterMoreCandidates(t *testing.T) {
	wide := make([]Cluster, 40)
	for i := range wide {
		wide[i] = cl(fmt.Sprintf("cluster-%02d", i), maxTPS(100+float64(i)))
	}
	for _, a := range []Algorithm{Pulsar, PulsarWaitAndWiden} {
		cfg := cfgOf(a, withSeed("shrink"))
		e := NewEngine(cfg)
		e.Decide(snapOf(wide...), rq(key("k1")), seeded(1), Options{PartialOrder: true})
		narrow := snapOf(wide[:20]...)
		for _, k := range []string{"k1", "k2", "k3"} {
			d1 := e.Decide(narrow, rq(key(k)), seeded(2), Options{PartialOrder: true})
			d2 := NewEngine(cfg).Decide(narrow, rq(key(k)), seeded(2), Options{PartialOrder: true})
			if !same(d1, d2) || !equalStrings(IDs(narrow, d1.AffinityOrder), IDs(narrow, d2.AffinityOrder)) {
				t.Fatalf("%s key %s: after 40 clusters %v, fresh %v", a, k, IDs(narrow, d1.AffinityOrder), IDs(narrow, d2.AffinityOrder))
			}
		}
	}
}
