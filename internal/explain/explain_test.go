package explain

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/ui"
)

type cluster struct {
	id            string
	rttMs, tps    float64
	maxTPS        float64
	running, conc uint64
	kvFree        uint64
}

func snapshot(cs ...cluster) *lb.Snapshot {
	s := &lb.Snapshot{Model: "model-a"}
	for _, c := range cs {
		rtt, _ := lb.DurationFromMs(c.rttMs)
		s.Clusters = append(s.Clusters, lb.Cluster{ClusterID: c.id, RTT: rtt, Stats: lb.Stats{
			LastMeanInputTPS: c.tps, MaxInputTPS: c.maxTPS, NumRunningQueries: c.running, MaxEngineConcurrency: c.conc,
			KVCacheCapacityTokens: 1024, KVCacheUsedTokens: 1024 - c.kvFree, KVCacheFreeTokens: c.kvFree}})
	}
	return s
}

// report runs the engine once (and along its waits) and builds a report
// the way lcctl explain does.
// tb is what the helpers need from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
}

func report(t tb, cfg lb.AlgorithmConfig, snap *lb.Snapshot, req lb.Request) *Report {
	t.Helper()
	req.HasInputTokens = true
	e := lb.NewEngine(&cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	st := e.Step(snap, &req, rng, lb.Options{Trace: true, Probabilities: true})
	st.Decision = st.Decision.Clone()
	rep := &Report{Model: req.Model, Snapshot: NewSnapshot(snap), Request: Request{CacheAffinityKey: req.CacheAffinityKey,
		RoutingKey: req.RoutingKey, LastClusterID: req.LastClusterID, InputTokens: req.InputTokens,
		ExcludedClusterIDs: req.ExcludedClusterIDs, ElapsedMs: lb.DurationMs(req.Elapsed)}}
	run := Run{Config: &cfg, Resolution: Resolution{ConfigFile: "test.yaml", Algorithm: cfg.Algorithm,
		Rule: "E2 model entry", Path: `models["model-a"]`, ModelEntry: true}}
	run.Decision = NewDecision(&st, snap, req.Elapsed, true)
	run.Timeline = append(run.Timeline, NewDecision(&st, snap, req.Elapsed, false))
	cur, at := st, req.Elapsed
	for i := 0; i < 50 && cur.Outcome == lb.OutcomeWait && !cur.GenericRetry && cur.RetryAt > at; i++ {
		at = cur.RetryAt
		r := req
		r.Elapsed = at
		cur = e.Step(snap, &r, rng, lb.Options{Probabilities: true})
		cur.Decision = cur.Decision.Clone()
		run.Timeline = append(run.Timeline, NewDecision(&cur, snap, at, false))
	}
	if len(run.Timeline) > 1 && run.Decision.Outcome == lb.OutcomeWait {
		th := run.Timeline[1]
		run.Then = &th
	}
	rep.Run = run
	return rep
}

func plain() *ui.Styles { return ui.NewStyles(&bytes.Buffer{}, false) }

func render(t tb, rep *Report, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Text(&b, rep, plain(), o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func row(t *testing.T, rows []ClusterRow, id string, phase lb.Phase) ClusterRow {
	t.Helper()
	for _, r := range rows {
		if r.Cluster == id && r.Phase == phase {
			return r
		}
	}
	t.Fatalf("no row for %s in phase %v: %+v", id, phase, rows)
	return ClusterRow{}
}

func TestFmtNum(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 5: "5", 123.75: "123.75", 1142.857142: "1142.86", 0.001: "0.001",
		math.Inf(1): "inf", 1e-303: "1e-303", -2.5: "-2.5", 1.999: "2"} {
		if got := fmtNum(in); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", in, got, want)
		}
	}
}

// wait-and-widen.md E4: fast clusters full, the slow bucket unlocks at
// 150 ms: the verdicts say so and the decision waits until 150.
func TestClusterVerdictsBucketLocked(t *testing.T) {
	snap := snapshot(cluster{id: "fast-a", rttMs: 5, tps: 20000, running: 4, conc: 4}, cluster{id: "slow-idle", rttMs: 5, tps: 5000, conc: 4})
	rep := report(t, lb.DefaultAlgorithmConfig(lb.WaitAndWiden), snap, lb.Request{Model: "model-a", InputTokens: 4000})
	rows := ClusterRows(rep, &rep.Run)
	if r := row(t, rows, "fast-a", lb.PhaseGlobal); r.Verdict != "full: no free slot (max_queued 0)" || r.Chosen {
		t.Errorf("fast-a: %q", r.Verdict)
	}
	slow := row(t, rows, "slow-idle", lb.PhaseGlobal)
	if slow.Verdict != "bucket locked until 150 ms" {
		t.Errorf("slow-idle: %q", slow.Verdict)
	}
	cells := clusterCells(&slow, clusterLayouts[0][0])
	if got := strings.Join(cells, "|"); got != "slow-idle|–|global|5|0|800|805|805|1 @150|0/4|0/0|–||bucket locked until 150 ms" {
		t.Errorf("cells: %s", got)
	}
	out := render(t, rep, Options{Timeline: true})
	for _, want := range []string{"Wait until 150 ms: a slower TTFT bucket unlocks.", "Then at 150 ms: Dispatch to slow-idle (rank depth 1, global phase).",
		"no affinity group (cache_affinity_backend_selection_count unset)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// pulsar.md P6: the KV gate skips A, B is chosen with the KV flag, later
// ranks are not reached.
func TestClusterVerdictsPulsarKV(t *testing.T) {
	cfg := lb.DefaultAlgorithmConfig(lb.Pulsar)
	cfg.Seed, cfg.ConsiderKVFreeTokens = "model-a-v1", true
	cs := []cluster{{id: "A", kvFree: 500}, {id: "B", kvFree: 1024}, {id: "C", kvFree: 1024}, {id: "D", kvFree: 1024}, {id: "E", kvFree: 1024}}
	for i := range cs {
		cs[i].rttMs, cs[i].tps, cs[i].maxTPS = 5, 100, 100
	}
	rep := report(t, cfg, snapshot(cs...), lb.Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: "session-6", InputTokens: 600})
	rows := ClusterRows(rep, &rep.Run)
	want := map[string]struct {
		phase   lb.Phase
		verdict string
	}{"A": {lb.PhaseRankWalk, "KV check: 500 free < 600 tokens"}, "B": {lb.PhaseRankWalk, "chosen: first feasible in ranking order"},
		"C": {lb.PhaseNone, "not reached: a higher-ranked cluster was chosen"}}
	for id, w := range want {
		if r := row(t, rows, id, w.phase); r.Verdict != w.verdict {
			t.Errorf("%s: %q, want %q", id, r.Verdict, w.verdict)
		}
	}
	a := row(t, rows, "A", lb.PhaseRankWalk)
	if got := strings.Join(clusterCells(&a, []string{"kv", "rank", "phase", "queue", "ttft bkt"}), "|"); got != "low|1|walk|–|–" || a.Rank != 1 {
		t.Errorf("A cells: %s (the walk has no TTFT estimates)", got)
	}
	out := render(t, rep, Options{})
	if !strings.Contains(out, "Dispatch to B (rank depth 2, rank_walk phase, after a higher-ranked cluster failed the KV check).") {
		t.Errorf("decision sentence:\n%s", out)
	}
}

func TestClusterVerdictsRandomChoices(t *testing.T) {
	snap := snapshot(cluster{id: "A", rttMs: 1, tps: 1}, cluster{id: "B", rttMs: 1, tps: 1}, cluster{id: "C", rttMs: 1, tps: 1}, cluster{id: "D", rttMs: 1, tps: 1})
	rep := report(t, lb.DefaultAlgorithmConfig(lb.Random), snap, lb.Request{Model: "model-a", ExcludedClusterIDs: []string{"D"}})
	rows := ClusterRows(rep, &rep.Run)
	for _, id := range []string{"A", "B", "C"} {
		if r := row(t, rows, id, lb.PhaseNone); r.Verdict != "can win, p 1/3" || !r.Chosen {
			t.Errorf("%s: %q", id, r.Verdict)
		}
	}
	if r := row(t, rows, "D", lb.PhaseNone); r.Verdict != "excluded: tried by an earlier attempt" || !r.Excluded {
		t.Errorf("D: %+v", r)
	}
	if !strings.Contains(render(t, rep, Options{}), "Dispatch to one of A 1/3, B 1/3, C 1/3") {
		t.Error("the decision names every possible choice with its probability")
	}
}

// pww with a queue SLO (pulsar.md P12): a cluster over the limit says so.
func TestClusterVerdictQueueSLO(t *testing.T) {
	cfg := lb.DefaultAlgorithmConfig(lb.PulsarWaitAndWiden)
	floor, ceil := uint64(100), uint64(100)
	cfg.Seed, cfg.MaxQueueTimeFloorMs, cfg.MaxQueueTimeCeilMs = "model-a-v1", &floor, &ceil
	snap := snapshot(cluster{id: "A", rttMs: 500, tps: 100, maxTPS: 100}, cluster{id: "B", rttMs: 100, tps: 100, maxTPS: 100},
		cluster{id: "C", rttMs: 100, tps: 100, maxTPS: 100}, cluster{id: "D", rttMs: 1, tps: 100, maxTPS: 100}, cluster{id: "E", rttMs: 100, tps: 100, maxTPS: 100})
	snap.Clusters[0].Stats.QueuedInputSize = 20
	rep := report(t, cfg, snap, lb.Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: "session-6"})
	if r := row(t, ClusterRows(rep, &rep.Run), "A", lb.PhaseAffinity); r.Verdict != "queue 200 ms over the SLO limit 100 ms" {
		t.Errorf("A: %q", r.Verdict)
	}
}

func TestTextColourAndPlain(t *testing.T) {
	snap := snapshot(cluster{id: "A", rttMs: 5, tps: 100, running: 1, conc: 1}, cluster{id: "B", rttMs: 5, tps: 100, conc: 1})
	rep := report(t, lb.DefaultAlgorithmConfig(lb.WaitAndWiden), snap, lb.Request{Model: "model-a", InputTokens: 10})
	var b bytes.Buffer
	if err := Text(&b, rep, ui.NewStyles(&b, true), Options{Timeline: true, Chart: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[") {
		t.Fatal("colour styles must emit ANSI sequences")
	}
	out := render(t, rep, Options{Timeline: true, Chart: true})
	if strings.Contains(out, "\x1b[") {
		t.Fatal("plain styles must not emit ANSI sequences")
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " ") {
			t.Fatalf("plain output keeps no trailing spaces: %q", l)
		}
	}
	for _, part := range []string{"lcctl explain: model model-a at 0 ms", "Affinity order", "Clusters at 0 ms", "Decision", "Timeline", "Open set over time"} {
		if !strings.Contains(out, part) {
			t.Errorf("missing part %q", part)
		}
	}
}

func TestCompareRowsAndDifferences(t *testing.T) {
	cfg := lb.DefaultAlgorithmConfig(lb.PulsarWaitAndWiden)
	cfg.Seed, cfg.CacheAffinityWaitMs = "model-a-v1", 300
	cs := []cluster{{id: "A", running: 1}, {id: "B"}, {id: "C", running: 1}, {id: "D", running: 1}, {id: "E", running: 1}}
	for i := range cs {
		cs[i].rttMs, cs[i].tps, cs[i].maxTPS, cs[i].conc = 5, 100, 100, 1
	}
	snap := snapshot(cs...)
	req := lb.Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: "session-6"}
	off := report(t, cfg, snap, req)
	cfg.LastClusterAffinity = true
	on := report(t, cfg, snap, req)
	c := &Comparison{What: "flag", Left: off.Run, Right: on.Run}
	c.Left.Label, c.Right.Label = "off", "on"
	diffs := Differences(off, c)
	for _, want := range []string{"last_cluster_affinity", "wait_settings", "session", "open_set", "decision", "final"} {
		found := false
		for _, d := range diffs {
			found = found || d == want
		}
		if !found {
			t.Errorf("difference %q missing from %v", want, diffs)
		}
	}
	same := &Comparison{What: "config", Left: off.Run, Right: off.Run}
	if d := Differences(off, same); len(d) != 0 {
		t.Errorf("identical runs differ in %v", d)
	}
	off.Compare = c
	out := render(t, off, Options{})
	if !strings.Contains(out, "final                  B at 300 ms, rank depth 2") || !strings.Contains(out, "≠") {
		t.Errorf("comparison table:\n%s", out)
	}
}

// Property: for any snapshot, request and width, Text fits the width,
// never panics, and the JSON form decodes back to the same bytes.
func TestRenderProperty(t *testing.T) {
	algs := []lb.Algorithm{lb.WaitAndWiden, lb.PulsarWaitAndWiden, lb.Pulsar, lb.PowerOfN, lb.Random, lb.RoundRobin}
	rapid.Check(t, func(rt *rapid.T) {
		cfg := lb.DefaultAlgorithmConfig(rapid.SampledFrom(algs).Draw(rt, "alg"))
		cfg.Seed = rapid.StringMatching(`[a-z0-9-]{0,8}`).Draw(rt, "seed")
		cfg.CacheAffinityBackendSelectionCount = rapid.IntRange(0, 4).Draw(rt, "k")
		cfg.CacheAffinityWaitMs = rapid.Uint64Range(0, 500).Draw(rt, "x")
		cfg.LastClusterAffinity = (cfg.Algorithm == lb.WaitAndWiden || cfg.Algorithm == lb.PulsarWaitAndWiden) && rapid.Bool().Draw(rt, "flag")
		cfg.ConsiderKVFreeTokens = (cfg.Algorithm == lb.Pulsar || cfg.Algorithm == lb.PulsarWaitAndWiden) && rapid.Bool().Draw(rt, "kv")
		if cfg.Algorithm == lb.PulsarWaitAndWiden && rapid.Bool().Draw(rt, "band") {
			b := rapid.Uint64Range(0, 200).Draw(rt, "bandms")
			cfg.BandWidenIntervalMs = &b
		}
		n := rapid.IntRange(0, 12).Draw(rt, "n")
		var cs []cluster
		for i := 0; i < n; i++ {
			cs = append(cs, cluster{id: rapid.StringMatching(`[A-Za-z][a-z0-9-]{0,20}`).Draw(rt, "id") + string(rune('a'+i)),
				rttMs: rapid.Float64Range(0, 1000).Draw(rt, "rtt"), tps: rapid.SampledFrom([]float64{0, -1, math.NaN(), math.Inf(1), 10, 100, 5000}).Draw(rt, "tps"),
				maxTPS: rapid.SampledFrom([]float64{0, 100, 400}).Draw(rt, "max"), running: rapid.Uint64Range(0, 3).Draw(rt, "run"),
				conc: rapid.Uint64Range(0, 2).Draw(rt, "conc"), kvFree: rapid.Uint64Range(0, 1024).Draw(rt, "kvfree")})
		}
		snap := snapshot(cs...)
		req := lb.Request{Model: "model-a", InputTokens: rapid.Uint64Range(0, 2000).Draw(rt, "tokens"),
			CacheAffinityKey: rapid.SampledFrom([]string{"", "session-6", " k "}).Draw(rt, "key")}
		if n > 0 && rapid.Bool().Draw(rt, "hint") {
			req.LastClusterID = snap.Clusters[rapid.IntRange(0, n-1).Draw(rt, "last")].ClusterID
		}
		if n > 0 && rapid.Bool().Draw(rt, "excl") {
			req.ExcludedClusterIDs = []string{snap.Clusters[0].ClusterID}
		}
		req.Elapsed = time.Duration(rapid.Int64Range(0, 1_000_000_000).Draw(rt, "elapsed"))
		rep := report(rt, cfg, snap, req)
		if rapid.Bool().Draw(rt, "compare") {
			c := cfg
			c.LastClusterAffinity = !c.LastClusterAffinity
			other := report(rt, c, snap, req)
			rep.Compare = &Comparison{What: "flag", Left: rep.Run, Right: other.Run}
			rep.Compare.Differences = Differences(rep, rep.Compare)
		}
		width := rapid.IntRange(MinWidth, 200).Draw(rt, "width")
		out := render(rt, rep, Options{Width: width, Timeline: true, Chart: true})
		for _, l := range strings.Split(out, "\n") {
			if len([]rune(l)) > width {
				rt.Fatalf("line of %d columns > %d: %q", len([]rune(l)), width, l)
			}
		}
		b, err := json.Marshal(rep)
		if err != nil {
			rt.Fatal(err)
		}
		var back Report
		if err := json.Unmarshal(b, &back); err != nil {
			rt.Fatalf("decode: %v", err)
		}
		if b2, err := json.Marshal(&back); err != nil || string(b2) != string(b) {
			rt.Fatalf("JSON round trip differs (%v)", err)
		}
	})
}

// Regressions found by TestRenderProperty: a NaN rate made the JSON encoder
// fail; the comparison title and a long chart label overflowed 60 columns.
func TestRenderRegressions(t *testing.T) {
	snap := snapshot(cluster{id: "A", rttMs: 1, tps: math.NaN()})
	rep := report(t, lb.DefaultAlgorithmConfig(lb.PowerOfN), snap, lb.Request{Model: "model-a"})
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"last_mean_input_tps":"nan"`) {
		t.Fatalf("NaN rate in JSON: %v\n%s", err, b)
	}

	cs := []cluster{{id: "Aa"}, {id: "Ab"}, {id: "Ac"}, {id: "Ad"}}
	for i := range cs {
		cs[i].rttMs, cs[i].tps = 1, 100
	}
	rep = report(t, lb.DefaultAlgorithmConfig(lb.Random), snapshot(cs...), lb.Request{Model: "model-a"})
	rep.Compare = &Comparison{What: "flag", Left: rep.Run, Right: rep.Run}
	out := render(t, rep, Options{Width: 60, Timeline: true, Chart: true})
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 60 {
			t.Fatalf("line over 60 columns: %q", l)
		}
	}
	if !strings.Contains(out, "0 ms │██████████│ 4/4 → one of Aa 1/4, Ab 1/4, Ac 1/4, Ad…\n") {
		t.Fatalf("the chart label is cut with an ellipsis:\n%s", out)
	}
}

// A cluster whose status is not active is not a candidate: the table
// says so instead of dropping it, also when no cluster is routable and
// the proxy rejects before balancing.
func TestClusterVerdictNotACandidate(t *testing.T) {
	snap := snapshot(cluster{id: "A", rttMs: 1, tps: 1e6, conc: 8}, cluster{id: "B", rttMs: 5, tps: 1000, conc: 8},
		cluster{id: "C", rttMs: 1, tps: 1e6, conc: 8})
	snap.Clusters[0].Status, snap.Clusters[2].Status = lb.StatusInactive, lb.StatusUnknown
	rep := report(t, lb.DefaultAlgorithmConfig(lb.PowerOfN), snap, lb.Request{Model: "model-a", InputTokens: 100})
	rows := ClusterRows(rep, &rep.Run)
	if r := row(t, rows, "A", lb.PhaseNone); r.Verdict != "not a candidate: inactive" || r.Chosen {
		t.Errorf("A: %+v", r)
	}
	if r := row(t, rows, "C", lb.PhaseNone); r.Verdict != "not a candidate: unknown" || r.Chosen {
		t.Errorf("C: %+v", r)
	}
	if rep.Run.Decision.Cluster != "B" {
		t.Errorf("chose %q, want the only candidate B", rep.Run.Decision.Cluster)
	}
	snap.Clusters[1].Status = lb.StatusInactive
	rep = report(t, lb.DefaultAlgorithmConfig(lb.PowerOfN), snap, lb.Request{Model: "model-a", InputTokens: 100})
	if d := rep.Run.Decision; d.Outcome != lb.OutcomeReject || d.HTTPStatus != 503 || d.Balanced {
		t.Fatalf("all inactive: %v %d balanced=%v", d.Outcome, d.HTTPStatus, d.Balanced)
	}
	out := render(t, rep, Options{})
	for _, want := range []string{"not a candidate: inactive", "not a candidate: unknown", "Reject: HTTP 503 no_eligible_candidates"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The decision block follows a wait to where the timeline ends, and keeps
// a long chain to its first steps and its end.
func TestDecisionBlockFollowsWaits(t *testing.T) {
	snap := snapshot(cluster{id: "fast-a", rttMs: 5, tps: 20000, running: 4, conc: 4}, cluster{id: "slow-idle", rttMs: 5, tps: 5000, conc: 4})
	rep := report(t, lb.DefaultAlgorithmConfig(lb.WaitAndWiden), snap, lb.Request{Model: "model-a", InputTokens: 4000})
	if len(rep.Run.Timeline) != 2 || rep.Run.Timeline[0].Outcome != lb.OutcomeWait || rep.Run.Timeline[1].Outcome != lb.OutcomeDispatch {
		t.Fatalf("timeline %+v, want a wait then a dispatch", rep.Run.Timeline)
	}
	out := render(t, rep, Options{})
	if strings.Count(out, "Then at ") != 1 || !strings.Contains(out, "Then at 150 ms: Dispatch to slow-idle") {
		t.Errorf("a wait then a dispatch:\n%s", out)
	}
	wait, end := rep.Run.Timeline[0], rep.Run.Timeline[1]
	chain := []Decision{wait}
	for i := 1; i <= 6; i++ {
		w := wait
		w.ElapsedMs = float64(10 * i)
		chain = append(chain, w)
	}
	end.ElapsedMs = 70
	rep.Run.Timeline = append(chain, end)
	rep.Run.Then = &rep.Run.Timeline[1]
	out = render(t, rep, Options{})
	for _, want := range []string{"Then at 10 ms: Wait", "Then at 30 ms: Wait", "… 3 more waits (--timeline lists every step).", "Then at 70 ms: Dispatch to slow-idle"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Then at "); n != maxThenSteps {
		t.Errorf("%d 'Then at' sentences, want %d:\n%s", n, maxThenSteps, out)
	}
}
