package lb

import (
	"math"
	"testing"
)

// wait-and-widen.md §7 worked examples E1–E21 (E22 is configuration
// validation and lives in internal/validate).

func TestWWE1TTFTComponents(t *testing.T) {
	c := cl("c", rttMs(7), tps(100), queued(999), prio(4, 25), load(0, 0))
	for _, tc := range []struct {
		scale          float64
		iq, ip         bool
		bucket, compar float64
	}{
		{1, false, false, 2032, 2032},
		{0.1, false, false, 232, 232},
		{1, true, false, 2007, 2032},
		{1, false, true, 32, 2032},
	} {
		got := EstimateTTFT(&c, 200, 4, tc.scale, tc.iq, tc.ip)
		if got.QueueMs != 25 || math.Abs(got.BucketMs-tc.bucket) > 1e-9 || math.Abs(got.ComparatorMs-tc.compar) > 1e-9 {
			t.Errorf("%+v: got %+v", tc, got)
		}
	}
}

func TestWWE2FreeSlot(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withSLO(100, 100), withMaxQueued(1))
	for _, pm := range [][]uint64{nil, {0, 10000}} {
		c := cl("free-slot", tps(8000), queued(80000), load(24, 25), prio(pm...))
		d := decide(t, cfg, snapOf(c), rq(input(8000)))
		wantDispatch(t, d, "free-slot", 1)
		if tr := d.Trace.Phases[0].Candidates[0]; float64(tr.BucketTTFTMs) != 1005 || tr.QueueMs != 0 {
			t.Fatalf("trace %+v", tr)
		}
		for _, l := range [][2]uint64{{25, 25}, {26, 25}, {24, 0}} {
			c := cl("free-slot", tps(8000), queued(80000), load(l[0], l[1]), prio(pm...))
			d := decide(t, cfg, snapOf(c), rq(input(8000)))
			wantUnavailable(t, d)
			st := NewEngine(cfg).Step(snapOf(c), rq(input(8000)), nil, Options{})
			if st.Outcome != OutcomeReject {
				t.Fatalf("load %v: outcome %v", l, st.Outcome)
			}
		}
	}
}

func TestWWE3InvalidCapacity(t *testing.T) {
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		c := cl("c", tps(v))
		if got := EstimateTTFT(&c, 200, 0, 0, false, false); !math.IsInf(got.BucketMs, 1) {
			t.Errorf("tps %v: bucket %v", v, got.BucketMs)
		}
	}
	c := cl("c", tps(100))
	if got := EstimateTTFT(&c, 200, 0, 0, false, false); got.BucketMs != 5 {
		t.Errorf("valid tps scale 0: %v", got.BucketMs)
	}
}

func e4Snap() *Snapshot {
	return snapOf(cl("fast-a", tps(20000), load(4, 4)), cl("fast-b", tps(20000), load(4, 4)),
		cl("fast-c", tps(20000), load(4, 4)), cl("slow-idle", tps(5000), load(0, 4)))
}

func TestWWE4SlowerBucket(t *testing.T) {
	cfg := cfgOf(WaitAndWiden)
	wantWait(t, decide(t, cfg, e4Snap(), rq(input(4000), at(0))), 150)
	d := decide(t, cfg, e4Snap(), rq(input(4000), at(0)))
	if DurationMs(d.RetryAt) != 150 {
		t.Fatalf("retry at %v", d.RetryAt)
	}
	wantWait(t, decide(t, cfg, e4Snap(), rq(input(4000), at(149))), 1)
	wantDispatch(t, decide(t, cfg, e4Snap(), rq(input(4000), at(150))), "slow-idle", 1)
	wantDispatch(t, decide(t, cfg, e4Snap(), rq(input(4000), at(151))), "slow-idle", 1)
}

func TestWWE5NoBucketCapacity(t *testing.T) {
	cfg := cfgOf(WaitAndWiden)
	s := snapOf(cl("fast-full", tps(20000), load(4, 4)), cl("slow-full", tps(5000), load(4, 4)))
	for _, ms := range []float64{0, 150, 10000} {
		wantUnavailable(t, decide(t, cfg, s, rq(input(4000), at(ms))))
		if st := NewEngine(cfg).Step(s, rq(input(4000), at(ms)), nil, Options{}); st.Outcome != OutcomeReject || st.HTTPStatus != 503 {
			t.Fatalf("elapsed %v: %v %d", ms, st.Outcome, st.HTTPStatus)
		}
	}
	// With an x-max-wait-ms budget left the proxy retries.
	if st := NewEngine(cfg).Step(s, rq(input(4000), maxWait(500)), nil, Options{}); st.Outcome != OutcomeWait || !st.GenericRetry {
		t.Fatalf("budget: %+v", st)
	}
}

func TestWWE6FastBucketWithCapacity(t *testing.T) {
	s := snapOf(cl("fast-full", tps(20000), load(4, 4)), cl("fast-available", tps(20000), load(3, 4)), cl("slow-idle", tps(5000), load(0, 4)))
	wantDispatch(t, decide(t, cfgOf(WaitAndWiden), s, rq(input(4000))), "fast-available", 1)
}

func TestWWE7InterpolatedSLO(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withK(2), withSLO(100, 300), withIgnoreQueue())
	s := snapOf(cl("a", rttMs(1000)), cl("b"), cl("c", prio(0, 250)))
	d := decide(t, cfg, s, rq(key("prefix"), input(1), slo(60000), at(30000)))
	if g := ids(s, d.AffinityGroup); !equalStrings(g, []string{"c", "a"}) {
		t.Fatalf("group %v", g)
	}
	wantDispatch(t, d, "a", 1)
	if got := float64(d.Trace.Phases[0].QueueLimitMs); got != 200 {
		t.Fatalf("limit %v", got)
	}
	e := NewEngine(cfg)
	for _, tc := range []struct {
		r    *Request
		want float64
	}{
		{rq(slo(1000), at(500)), 200}, {rq(), 300}, {rq(slo(0), at(500)), 300},
	} {
		rv := e.view(tc.r)
		e.prepare(s, tc.r, &rv)
		if e.maxQueueMs != tc.want {
			t.Errorf("limit %v want %v", e.maxQueueMs, tc.want)
		}
	}
}

func e8Snap(mod ...func([]Cluster)) *Snapshot {
	cs := []Cluster{cl("a", rttMs(100), full), cl("b", rttMs(300), load(1, 10)), cl("c", rttMs(500), load(0, 10))}
	for _, m := range mod {
		m(cs)
	}
	return snapOf(cs...)
}

func TestWWE8AffinityDeadline(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withSeed("seed-1"), withK(1), withX(200), withCmp(CompareUtilization), withN(2))
	r := func(ms float64) *Request { return rq(key("cached-prefix"), input(100), at(ms)) }
	d := decide(t, cfg, e8Snap(), r(0))
	if g := ids(e8Snap(), d.AffinityGroup); !equalStrings(g, []string{"a"}) {
		t.Fatalf("group %v", g)
	}
	wantWait(t, d, 200)
	wantWait(t, decide(t, cfg, e8Snap(), r(199)), 1)
	wantWait(t, decide(t, cfg, e8Snap(), r(200)), 50)
	wantDispatch(t, decide(t, cfg, e8Snap(), r(250)), "b", 2)
	wantDispatch(t, decide(t, cfg, e8Snap(), r(299)), "b", 2)
	wantDispatch(t, decide(t, cfg, e8Snap(), r(300)), "c", 2)
	bFull := func(cs []Cluster) { cs[1].Stats.NumRunningQueries = 10 }
	wantWait(t, decide(t, cfg, e8Snap(bFull), r(250)), 50)
	wantDispatch(t, decide(t, cfg, e8Snap(bFull), r(300)), "c", 2)
	cFull := func(cs []Cluster) { cs[2].Stats.NumRunningQueries = 10 }
	wantUnavailable(t, decide(t, cfg, e8Snap(bFull, cFull), r(200)))
	aFree := func(cs []Cluster) { cs[0].Stats.NumRunningQueries = 0 }
	wantDispatch(t, decide(t, cfg, e8Snap(aFree), r(50)), "a", 1)
}

func TestWWE9GlobalFullPrefill(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withK(2), withX(200), withScale(0.1), withCmp(CompareUtilization), withMaxQueued(1), withSLO(100, 5000))
	mk := func(aRun uint64) *Snapshot {
		return snapOf(cl("a", rttMs(0), tps(7000), load(aRun, 25)), cl("b", rttMs(2500), tps(14000), load(0, 25)))
	}
	r := func(ms float64) *Request { return rq(key("long-context"), input(80000), at(ms)) }
	wantWait(t, decide(t, cfg, mk(26), r(199)), 1)
	wantDispatch(t, decide(t, cfg, mk(26), r(200)), "b", 3)
	wantDispatch(t, decide(t, cfg, mk(0), r(201)), "a", 1)
	four := snapOf(cl("a", rttMs(0), tps(7000), load(26, 25)), cl("b", rttMs(2500), tps(14000), load(0, 25)),
		cl("c", rttMs(10000), tps(7000), load(0, 25)), cl("d", rttMs(0), tps(7000), load(26, 25)))
	// Group [d, a]: d takes a's role, a takes b's.
	four.Clusters[0] = cl("a", rttMs(2500), tps(14000), load(0, 25))
	four.Clusters[1] = cl("b", rttMs(10000), tps(7000), load(0, 25))
	d := decide(t, cfg, four, r(200))
	if g := ids(four, d.AffinityGroup); !equalStrings(g, []string{"d", "a"}) {
		t.Fatalf("group %v", g)
	}
	wantDispatch(t, d, "a", 3)
}

func TestWWE10AffinityWaitKeepsBucketWakeup(t *testing.T) {
	s := snapOf(cl("full-first-bucket", rttMs(10), tps(1000), full), cl("available-next-bucket", rttMs(50), tps(1000), free))
	r := func(ms float64) *Request { return rq(key("prefix"), input(100), at(ms)) }
	c200 := cfgOf(WaitAndWiden, withK(2), withX(200))
	c5 := cfgOf(WaitAndWiden, withK(2), withX(5))
	wantWait(t, decide(t, c200, s, r(0)), 10)
	wantWait(t, decide(t, c200, s, r(5)), 5)
	wantWait(t, decide(t, c5, s, r(0)), 5)
	wantWait(t, decide(t, c5, s, r(5)), 5)
	wantDispatch(t, decide(t, c200, s, r(10)), "available-next-bucket", 1)
	wantDispatch(t, decide(t, c5, s, r(10)), "available-next-bucket", 1)
}

func sessionCfg(k int, more ...cfgOpt) *AlgorithmConfig {
	return cfgOf(WaitAndWiden, append([]cfgOpt{withSeed("seed-1"), withV(8), withK(k), withN(2), withX(300), withScale(0.1), withSessions()}, more...)...)
}

func TestWWE11NewStaleOverflow(t *testing.T) {
	s := snapOf(cl("a", free), cl("b", full))
	for _, tc := range []struct {
		hint  string
		state SessionState
	}{{"", SessionNew}, {"gone", SessionStale}} {
		d := decide(t, sessionCfg(1), s, rq(key("session-prefix"), input(100), last(tc.hint)))
		if g := ids(s, d.AffinityGroup); !equalStrings(g, []string{"b"}) {
			t.Fatalf("group %v", g)
		}
		wantDispatch(t, d, "a", 2)
		if d.Session != tc.state || d.Promoted {
			t.Fatalf("state %v promoted %v", d.Session, d.Promoted)
		}
	}
	off := cfgOf(WaitAndWiden, withSeed("seed-1"), withV(8), withK(1), withN(2), withX(300), withScale(0.1))
	d := decide(t, off, s, rq(key("session-prefix"), input(100)))
	wantWait(t, d, 300)
	if d.Session != SessionNone {
		t.Fatal("flag off classified")
	}
}

func TestWWE12ReturningWaits(t *testing.T) {
	s := snapOf(cl("a"), cl("b", full), cl("c", free))
	r := func(ms float64) *Request { return rq(key("session-prefix"), input(100), last("b"), at(ms)) }
	d := decide(t, sessionCfg(1), s, r(0))
	wantWait(t, d, 300)
	if d.Session != SessionReturning || !d.Promoted {
		t.Fatalf("state %v promoted %v", d.Session, d.Promoted)
	}
	if !equalStrings(ids(s, d.AffinityOrder), []string{"b"}) || !equalStrings(ids(s, d.AffinityGroup), []string{"b"}) ||
		!equalStrings(ids(s, d.OriginalOrder), []string{"c"}) {
		t.Fatalf("orders %v %v %v", ids(s, d.OriginalOrder), ids(s, d.AffinityOrder), ids(s, d.AffinityGroup))
	}
	if !equalStrings(d.Trace.Ring.Walk, []string{"c", "b", "a"}) {
		t.Fatalf("walk %v", d.Trace.Ring.Walk)
	}
	wantWait(t, decide(t, sessionCfg(1), s, r(150)), 150)
	wantWait(t, decide(t, sessionCfg(1), s, r(299)), 1)
	s.Clusters[1] = cl("b", free)
	wantDispatch(t, decide(t, sessionCfg(1), s, r(0)), "b", 1)
}

func TestWWE13InsertAndTruncate(t *testing.T) {
	s := snapOf(cl("a"), cl("b"), cl("c"), cl("d"))
	r := func(ms float64) *Request { return rq(key("session-prefix"), input(100), last("a"), at(ms)) }
	d := decide(t, sessionCfg(2), s, r(0))
	if !equalStrings(ids(s, d.OriginalOrder), []string{"c", "b"}) || !equalStrings(ids(s, d.AffinityOrder), []string{"a", "c"}) {
		t.Fatalf("orders %v %v", ids(s, d.OriginalOrder), ids(s, d.AffinityOrder))
	}
	wantOneOf(t, d, "a", "c")
	s2 := snapOf(cl("a", full), cl("b", free), cl("c", full), cl("d", full))
	wantWait(t, decide(t, sessionCfg(2), s2, r(100)), 200)
	wantDispatch(t, decide(t, sessionCfg(2), s2, r(300)), "b", 3)
}

func TestWWE14SessionTimeline(t *testing.T) {
	mk := func(aFull, cFull bool) *Snapshot {
		a, c := cl("a", rttMs(100)), cl("c", rttMs(60))
		if aFull {
			full(&a)
		}
		if cFull {
			full(&c)
		}
		return snapOf(a, cl("b", rttMs(20)), c, cl("d", rttMs(140)))
	}
	cfg := sessionCfg(2, withN(4))
	r := func(ms float64) *Request { return rq(key("session-prefix"), input(100), last("a"), at(ms)) }
	wantDispatch(t, decide(t, cfg, mk(false, false), r(0)), "c", 1)
	wantWait(t, decide(t, cfg, mk(true, true), r(150)), 150)
	wantDispatch(t, decide(t, cfg, mk(true, true), r(300)), "b", 3)
	wantDispatch(t, decide(t, cfg, mk(true, true), r(1000)), "b", 3)
}

func TestWWE15DiscountOnlyLastCluster(t *testing.T) {
	s := snapOf(cl("a", rttMs(500), tps(1000)), cl("b", full), cl("c", rttMs(1), tps(500)))
	wantDispatch(t, decide(t, sessionCfg(1), s, rq(key("session-prefix"), input(1000), last("b"), at(300))), "a", 2)
	off := cfgOf(WaitAndWiden, withSeed("seed-1"), withV(8), withK(1), withN(2), withX(300), withScale(0.1))
	wantDispatch(t, decide(t, off, s, rq(key("session-prefix"), input(1000), last("b"))), "c", 1)
}

func TestWWE16RetryKeepsBackup(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withSeed("seed-1"), withV(8), withK(2), withN(2))
	s := snapOf(cl("a"), cl("b"), cl("c"))
	d := decide(t, cfg, s, rq(key("prefix"), input(1), exclude("a")))
	if !equalStrings(ids(s, d.AffinityGroup), []string{"a", "c"}) {
		t.Fatalf("group %v", ids(s, d.AffinityGroup))
	}
	wantDispatch(t, d, "c", 1)
	wantOneOf(t, decide(t, cfg, s, rq(key("prefix"), input(1))), "a", "c")
}

func TestWWE17DiscountSurvivesFlags(t *testing.T) {
	s := snapOf(cl("higher-rtt-fast-prefill", rttMs(50), tps(10000)), cl("lower-rtt-slow-prefill", rttMs(1), tps(2000)))
	for _, flags := range [][]cfgOpt{nil, {withIgnoreQueue()}, {withIgnorePrefill()}} {
		cfg := cfgOf(WaitAndWiden, append([]cfgOpt{withK(2), withScale(0.1), withX(100), withBucket(100), withN(2)}, flags...)...)
		wantDispatch(t, decide(t, cfg, s, rq(key("prefix"), input(1000))), "lower-rtt-slow-prefill", 1)
	}
}

func TestWWE18IgnoreQueueRanksByQueue(t *testing.T) {
	s := snapOf(cl("higher-queue", queued(2)), cl("lower-queue", queued(1)))
	wantDispatch(t, decide(t, cfgOf(WaitAndWiden, withN(2), withIgnoreQueue()), s, rq(input(512))), "lower-queue", 1)
}

func TestWWE19PriorityQueue(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withCmp(CompareQueueTime), withN(2))
	s := snapOf(cl("low", queued(100), load(1, 0), prio(0, 1000, 4, 5)), cl("high", prio(0, 0, 4, 500)))
	wantDispatch(t, decide(t, cfg, s, rq(priority(4))), "low", 1)
	wantDispatch(t, decide(t, cfg, s, rq(priority(0))), "high", 1)
	c := cl("x", prio(2, 5))
	for _, p := range []uint32{3, 10} {
		if QueueMs(&c.Stats, p) != 5 {
			t.Fatal("map key 2 not used")
		}
	}
	c = cl("y", prio(4, 0), queued(1000))
	if QueueMs(&c.Stats, 0) != 0 {
		t.Fatal("no qualifying key must be 0")
	}
}

func TestWWE20ShortMaxWait(t *testing.T) {
	cfg := cfgOf(WaitAndWiden, withSeed("seed-1"), withK(1), withX(200), withN(2))
	s := snapOf(cl("a", full), cl("b", free), cl("c", free))
	e := NewEngine(cfg)
	st := e.Step(s, rq(key("cached-prefix"), input(100), maxWait(10)), nil, Options{})
	if st.Outcome != OutcomeWait || DurationMs(st.RetryAt) != 10 || DurationMs(st.Decision.Wait) != 200 {
		t.Fatalf("elapsed 0: %v retry %v wait %v", st.Outcome, st.RetryAt, st.Decision.Wait)
	}
	st = e.Step(s, rq(key("cached-prefix"), input(100), maxWait(10), at(10)), nil, Options{})
	if st.Outcome != OutcomeReject || st.HTTPStatus != 503 || DurationMs(st.Decision.Wait) != 190 {
		t.Fatalf("elapsed 10: %+v", st)
	}
	for _, mw := range []ropt{maxWait(500), func(*Request) {}} {
		wantWait(t, decide(t, cfg, s, rq(key("cached-prefix"), input(100), mw, at(199))), 1)
		d := decide(t, cfg, s, rq(key("cached-prefix"), input(100), mw, at(200)))
		wantOneOf(t, d, "b", "c")
		if d.RankDepth != 2 {
			t.Fatalf("depth %d", d.RankDepth)
		}
	}
}

func TestWWE21RingGroups(t *testing.T) {
	s := snapOf(cl("A"), cl("B"), cl("C"))
	for _, tc := range []struct {
		key  string
		k    int
		want []string
	}{{"key-1", 1, []string{"C"}}, {"key-12", 1, []string{"A"}}, {"key-1", 2, []string{"C", "B"}}, {"key-12", 2, []string{"A", "C"}}} {
		cfg := cfgOf(WaitAndWiden, withSeed("s1"), withV(2), withK(tc.k))
		d := decide(t, cfg, s, rq(key(tc.key)))
		if g := ids(s, d.AffinityGroup); !equalStrings(g, tc.want) {
			t.Errorf("%s k=%d: %v want %v", tc.key, tc.k, g, tc.want)
		}
	}
}

// §4.5 table of groups used by the examples.
func TestWWRingGroupTable(t *testing.T) {
	for _, tc := range []struct {
		seed string
		v    int
		key  string
		ids  []string
		walk []string
	}{
		{"seed-1", 8, "session-prefix", []string{"a", "b"}, []string{"b", "a"}},
		{"seed-1", 8, "session-prefix", []string{"a", "b", "c"}, []string{"c", "b", "a"}},
		{"seed-1", 8, "session-prefix", []string{"a", "b", "c", "d"}, []string{"c", "b", "a", "d"}},
		{"seed-1", 8, "prefix", []string{"a", "b", "c"}, []string{"a", "c", "b"}},
		{"seed-1", 150, "cached-prefix", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"", 150, "long-context", []string{"a", "b"}, []string{"a", "b"}},
		{"", 150, "long-context", []string{"a", "b", "c", "d"}, []string{"d", "a", "c", "b"}},
		{"", 150, "prefix", []string{"a", "b", "c"}, []string{"c", "a", "b"}},
	} {
		var cs []Cluster
		for _, id := range tc.ids {
			cs = append(cs, cl(id))
		}
		s := snapOf(cs...)
		cfg := cfgOf(WaitAndWiden, withSeed(tc.seed), withV(tc.v), withK(1))
		d := decide(t, cfg, s, rq(key(tc.key)))
		if !equalStrings(d.Trace.Ring.Walk, tc.walk) {
			t.Errorf("%+v: walk %v", tc, d.Trace.Ring.Walk)
		}
	}
}

// §2.3: queued 161 at 10 tok/s is 16101 ms (operation order).
func TestWWQueueOperationOrder(t *testing.T) {
	c := cl("c", queued(161), tps(10))
	if got := QueueMs(&c.Stats, 0); got != 16101 {
		t.Fatalf("queue %v", got)
	}
	c = cl("c", queued(1), tps(0))
	if !math.IsInf(QueueMs(&c.Stats, 0), 1) {
		t.Fatal("invalid tps must give +Inf queue")
	}
}

// §2.7: max_queued = u64::MAX saturates instead of wrapping.
func TestWWHasCapacitySaturates(t *testing.T) {
	c := cl("c", load(10, 5))
	if !HasCapacity(&c.Stats, math.MaxUint64) || HasCapacity(&c.Stats, 5) || !HasCapacity(&c.Stats, 6) {
		t.Fatal("capacity")
	}
	c = cl("c", load(math.MaxUint64, 5))
	if HasCapacity(&c.Stats, math.MaxUint64) {
		t.Fatal("running u64::MAX must not be admitted")
	}
}
