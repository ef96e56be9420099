package lb

import (
	"fmt"
	"testing"
)

// The cache-thrash scenario of the design (session.md §0): with k = 1, the
// session's rank-1 cluster A is full, so the first request (no hint) goes
// to B; A drains; the next 10 requests carry last cluster B. With
// last_cluster_affinity they stay on B (KV cache kept); with the flag off
// they go back to A.
func TestCacheThrashScenario(t *testing.T) {
	for _, a := range []Algorithm{WaitAndWiden, PulsarWaitAndWiden} {
		for _, flag := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/flag=%v", a, flag), func(t *testing.T) {
				cfg := cfgOf(a, withSeed("thrash-seed"), withK(1), withX(300), withScale(0.1), withN(2), withV(8))
				cfg.LastClusterAffinity = flag
				// Pick a session key whose rank-1 / ring primary is A.
				sessionKey := ""
				for i := 0; i < 1000 && sessionKey == ""; i++ {
					k := fmt.Sprintf("session-%d", i)
					d := NewEngine(cfg).Decide(snapOf(cl("A", maxTPS(100)), cl("B", maxTPS(100))), rq(key(k)), nil, Options{})
					if len(d.AffinityGroup) == 1 && d.AffinityGroup[0] == 0 {
						sessionKey = k
					}
				}
				if sessionKey == "" {
					t.Fatal("no key with primary A")
				}
				e := NewEngine(cfg)
				aFull := snapOf(cl("A", maxTPS(100), full), cl("B", maxTPS(100), free))
				first := rq(key(sessionKey), input(100))
				st := e.Step(aFull, first, seeded(1), Options{})
				if flag {
					// New session: no wait, overflow at once.
					if st.Outcome != OutcomeDispatch || st.Decision.ClusterID != "B" || st.Decision.Session != SessionNew {
						t.Fatalf("first request: %v %s %v", st.Outcome, st.Decision.ClusterID, st.Decision.Session)
					}
				} else {
					// Flag off: the request waits X for A, then overflows to B.
					if st.Outcome != OutcomeWait || DurationMs(st.RetryAt) != 300 {
						t.Fatalf("first request (flag off): %v %v", st.Outcome, st.RetryAt)
					}
					first.Elapsed = 300e6
					st = e.Step(aFull, first, seeded(1), Options{})
					if st.Outcome != OutcomeDispatch || st.Decision.ClusterID != "B" {
						t.Fatalf("first request at X: %v %s", st.Outcome, st.Decision.ClusterID)
					}
				}
				lastCluster := st.Decision.ClusterID
				drained := snapOf(cl("A", maxTPS(100), free), cl("B", maxTPS(100), free))
				for i := 0; i < 10; i++ {
					st := e.Step(drained, rq(key(sessionKey), input(100), last(lastCluster)), seeded(uint64(i)), Options{})
					want := "A"
					if flag {
						want = "B"
					}
					if st.Outcome != OutcomeDispatch || st.Decision.ClusterID != want {
						t.Fatalf("follow-up %d: %v %s, want %s", i, st.Outcome, st.Decision.ClusterID, want)
					}
					if flag && (st.Decision.Session != SessionReturning || st.Decision.RankDepth != 1) {
						t.Fatalf("follow-up %d: %v depth %d", i, st.Decision.Session, st.Decision.RankDepth)
					}
					lastCluster = st.Decision.ClusterID
				}
			})
		}
	}
}
