package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
)

// RunOptions are the knobs of one policy run that are not part of the
// scenario.
type RunOptions struct {
	// Progress, when non-nil, receives the number of requests issued, in
	// batches (for a progress bar).
	Progress *atomic.Int64
	// Trace, when non-nil, opens the scenario's trace file (tests);
	// otherwise the file is opened from disk.
	Trace func() (io.ReadCloser, error)
	// Context, when non-nil, stops the run early with its error when it
	// is cancelled (checked every few thousand events).
	Context context.Context

	// onStep, when set (tests), sees every engine step with its inputs.
	onStep func(snap *lb.Snapshot, req *lb.Request, st lb.Step)
}

// reqState is where a request is.
type reqState uint8

const (
	stFree     reqState = iota
	stRouting           // at the router (deciding or waiting)
	stInFlight          // dispatched, on its way to the cluster
	stQueued            // waiting for a slot
	stPrefill           // holding a slot, in or waiting for the prefill pipeline
	stDecode            // first token sent, decoding
	stRefused           // refused or dropped by a cluster; the refusal travels back
)

// request is one request's state; requests live in a pool and are reused.
type request struct {
	sessID         uint64 // KV prefix identity (the conversation)
	storeKey       uint64 // last-cluster store key; 0 = not eligible
	arrival        int64  // ns, at the gateway/router
	clusterArrival int64
	dispatchAt     int64
	input, output  int64 // tokens
	cached         int64 // tokens served from the KV cache
	ttft           int64 // ns
	excluded       []string
	key            string // the session's cache affinity key
	sess           int32  // session index, -1 for trace requests
	hot            int32  // hot prefix index, -1 none
	cluster        int32
	hint           int32 // last cluster from the store, -1 none
	replica        int32
	turn           int32
	rk, model      int32 // routing key index (-1 none), model index
	epoch          uint32
	attempts       int8
	state          reqState
	pinned         lb.SessionState
	payload        bool
	measured       bool
}

// session is one conversation of the synthetic workload.
type session struct {
	pcg       rand.PCG
	key       string // x-cache-affinity-key
	id        uint64
	context   int64 // tokens of the conversation so far
	turnsLeft int32
	turn      int32
	hot       int32
	rk, model int32
	payload   bool
	live      bool
}

// clusterState is one simulated cluster.
type clusterState struct {
	spec      *ClusterSpec
	id        string
	halfRTT   int64 // ns
	up        bool  // accepting new requests
	epoch     uint32
	busy      int
	queue     fifo[int32]
	prefill   fifo[int32]
	prefillOn bool
	prefillAt int64 // start of the current prefill
	queuedIn  int64 // input tokens waiting for a slot
	pendingIn int64 // uncached tokens admitted but not prefilled
	kv        kvCache
	kvInUse   int64 // tokens held by running requests
	nsPerIn   float64
	nsPerOut  float64

	// accounting: the areas integrate over the measurement window (from
	// the end of the warm-up to the end of the run, Result.MeasuredS);
	// the counts are of measured requests.
	from        int64 // start of the measurement window (the warm-up), ns
	last        int64 // last time busy/queue changed
	busyArea    float64
	sysArea     float64 // ∫ (busy + queued) dt, slot·ns
	prefillArea float64
	accepted    int64
	refused     int64
	served      int64
	sojourn     float64 // Σ completion − cluster arrival, ns
	waitSum     float64 // Σ queue wait of measured requests, ns
	waitN       int64
	inTok       int64
	cachedTok   int64
}

// touch integrates busy slots and requests in the system from the last
// change to now, counting only the part inside the measurement window.
func (c *clusterState) touch(now int64) {
	if lo := max(c.last, c.from); now > lo {
		dt := float64(now - lo)
		c.busyArea += float64(c.busy) * dt
		c.sysArea += float64(c.busy+c.queue.len()) * dt
	}
	c.last = now
}

// pubSlot is one published snapshot on its way to the router.
type pubSlot struct {
	at    int64
	stats []lb.Stats
	up    []bool
}

// runner simulates one policy over one scenario.
type runner struct {
	sc  *Scenario
	pol *Policy
	opt RunOptions

	now int64
	q   eventQueue

	clusters []clusterState
	res      []fifo[int64] // pending reservations: cluster arrival times
	snap     lb.Snapshot
	viewIdx  []int32 // snapshot position → cluster
	snapPos  []int32 // cluster → snapshot position, -1 when out of view
	viewUp   []bool
	pub      []pubSlot
	pubNext  int
	pubEvery int64
	stale    int64

	engines   []*lb.Engine // per model index
	rng       *rand.Rand   // engine sampling and proxy retry sleeps
	ch        *lb.ConsistentHash
	sll       *lb.StickyLeastLoaded
	workers   []string // snapshot cluster ids (sticky-least-loaded)
	healthy   []bool
	req       lb.Request
	traceKeys map[uint64]string
	recheck   int64

	stores []*lcStore

	// workload
	wl *WorkloadSpec
	// Samplers of the workload distributions (constants precomputed).
	dTurns, dFirst, dNew, dOut, dThink distSampler
	models                             []string
	modelIdx                           map[string]int32
	modelCum                           []float64
	rks                                []string
	rkIdx                              map[string]int32
	rkCum                              []float64
	hotCum                             []float64
	hotKeys                            []string
	srcProxy                           pcgProxy
	srng                               *rand.Rand // draws for the current session (through srcProxy)
	arrRng                             *rand.Rand // session arrivals
	nextSession                        int64      // sessions started
	issued                             int64      // requests issued
	genDone                            bool
	trace                              *traceReader
	traceClose                         io.Closer
	traceRec                           TraceRecord
	liveReqs                           int
	published                          int64 // scheduled snapshot publications so far
	liveSess                           int
	progressAcc                        int64

	sessions []session
	freeSess []int32
	reqs     []request
	freeReqs []int32
	warmup   int64
	slo      int64

	m metrics
}

// pcgProxy lets one rand.Rand draw from whichever session's PCG is
// current, so sessions keep their own streams without allocating a
// rand.Rand each.
type pcgProxy struct{ p *rand.PCG }

func (x *pcgProxy) Uint64() uint64 { return x.p.Uint64() }

type metrics struct {
	ttft, queueWait, routeWait *Histogram
	requests, completed, good  int64
	failRejected, failBad      int64
	failRefused, failStream    int64
	decisions, waits           int64
	inTok, cachedTok           int64
	returning, left            int64
	lastEnd                    int64
	series                     *Series
}

// seedFor derives the seed of one random stream from the master seed, a
// purpose and an index (a session number), so that streams are
// independent and adding a policy or a purpose changes no other stream.
func seedFor(master uint64, purpose string, n uint64) (uint64, uint64) {
	p := xxh3.HashString(purpose)
	a := mix64(master ^ mix64(p^0x6c636374) ^ mix64(n+0x9e3779b97f4a7c15))
	return a, mix64(a ^ p ^ (n * 0xbf58476d1ce4e5b9))
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Run simulates one policy over the scenario and returns its metrics. The
// result depends only on the scenario (seed included) and the policy: the
// same inputs give the same result, whatever else runs beside it.
func Run(sc *Scenario, p *Policy, opt RunOptions) (*Result, error) {
	r := &runner{sc: sc, pol: p, opt: opt}
	if err := r.init(); err != nil {
		return nil, err
	}
	defer func() {
		if r.traceClose != nil {
			r.traceClose.Close()
		}
	}()
	if err := r.loop(); err != nil {
		return nil, err
	}
	return r.result(), nil
}

// maxDurNs is the longest duration one step of the simulation adds to the
// clock (ns): MaxSeconds. Conversions saturate there, so a long-tailed
// draw or the prefill of a huge input never overflows int64 time.
const maxDurNs = int64(MaxSeconds * 1e9)

// horizonNs is where a run gives up (ns, about 127 years of simulated
// time): the clock only grows by steps of at most maxDurNs (trace times
// at most 10^18 ns), so it stays far from int64's end.
const horizonNs = int64(4e18)

// snapshotBudget is MaxSnapshots; tests lower it.
var snapshotBudget int64 = MaxSnapshots

func msToNs(ms float64) int64 { return satNs(math.Round(ms * 1e6)) }
func sToNs(s float64) int64   { return satNs(math.Round(s * 1e9)) }

// satNs converts ns to int64, saturating at maxDurNs (NaN too).
func satNs(ns float64) int64 {
	if !(ns < float64(maxDurNs)) {
		return maxDurNs
	}
	return int64(ns)
}

// satTokens rounds a drawn token count and clamps it to 0–MaxTokens.
func satTokens(v float64) int64 {
	v = math.Round(v)
	if !(v < MaxTokens) {
		return MaxTokens
	}
	return max(int64(v), 0)
}

func (r *runner) init() error {
	sc := r.sc
	n := len(sc.Clusters)
	r.clusters = make([]clusterState, n)
	r.res = make([]fifo[int64], n)
	r.snapPos = make([]int32, n)
	r.viewUp = make([]bool, n)
	for i := range sc.Clusters {
		s := &sc.Clusters[i]
		c := &r.clusters[i]
		c.spec, c.id, c.up = s, s.ID, true
		c.halfRTT = msToNs(s.RTTMs) / 2
		c.kv = newKVCache()
		c.nsPerIn = 1e9 / s.PrefillTPS
		c.nsPerOut = 1e9 / s.DecodeTPS
	}
	r.pubEvery = max(msToNs(sc.Router.SnapshotIntervalMs), 1)
	r.stale = msToNs(sc.Router.StalenessMs)
	slots := int(r.stale/r.pubEvery) + 2
	r.pub = make([]pubSlot, slots)
	for i := range r.pub {
		r.pub[i].stats = make([]lb.Stats, n)
		r.pub[i].up = make([]bool, n)
	}
	r.recheck = msToNs(sc.Router.RecheckIntervalMs)
	r.warmup = sToNs(sc.WarmupS)
	for i := range r.clusters {
		r.clusters[i].from = r.warmup
	}
	r.slo = msToNs(sc.SLOTTFTMs)

	// Gateway stores.
	g := &sc.Gateway
	ttl := sToNs(g.TTLS)
	if g.Store == "local" {
		for i := 0; i < g.Replicas; i++ {
			r.stores = append(r.stores, newLCStore(ttl, true, g.MaxEntries))
		}
	} else {
		r.stores = []*lcStore{newLCStore(ttl, false, 0)}
	}

	// Workload tables.
	w := &sc.Workload
	r.wl = w
	r.dTurns, r.dFirst, r.dNew = w.Turns.sampler(), w.FirstInputTokens.sampler(), w.NewInputTokens.sampler()
	r.dOut, r.dThink = w.OutputTokens.sampler(), w.ThinkTimeS.sampler()
	r.modelIdx, r.rkIdx = map[string]int32{}, map[string]int32{}
	r.traceKeys = map[uint64]string{}
	models := w.Models
	if len(models) == 0 {
		models = []WeightedName{{Name: "model", Weight: 1}}
	}
	for _, m := range models {
		r.addModel(m.Name)
		r.modelCum = appendCum(r.modelCum, m.Weight)
	}
	for _, k := range w.RoutingKeys {
		r.rkIdx[k.Name] = int32(len(r.rks))
		r.rks = append(r.rks, k.Name)
		r.rkCum = appendCum(r.rkCum, k.Weight)
	}
	if h := &w.HotSet; h.Prefixes > 0 && h.Share > 0 {
		for i := 0; i < h.Prefixes; i++ {
			r.hotCum = appendCum(r.hotCum, 1/math.Pow(float64(i+1), h.ZipfS))
			r.hotKeys = append(r.hotKeys, "hot-"+strconv.Itoa(i))
		}
	}
	r.srng = rand.New(&r.srcProxy)
	a, b := seedFor(sc.Seed, "arrivals", 0)
	r.arrRng = rand.New(rand.NewPCG(a, b))

	// Router.
	a, b = seedFor(sc.Seed, "router:"+r.pol.Name, 0)
	r.rng = rand.New(rand.NewPCG(a, b))
	switch r.pol.Kind {
	case KindConsistentHash:
		r.ch = lb.NewConsistentHash(r.pol.Seed, r.pol.ConsistentHash.VirtualNodes)
	case KindStickyLeastLoaded:
		s := r.pol.Sticky
		r.sll = lb.NewStickyLeastLoaded(lb.SLLOptions{
			SessionExpiration: time.Duration(sToNs(s.SessionExpirationS)),
			MaxSessions:       s.MaxSessions,
			MaxSessionIDBytes: s.MaxSessionIDBytes,
		}, 0)
	}

	r.m = metrics{ttft: NewHistogram(), queueWait: NewHistogram(), routeWait: NewHistogram()}
	bin := int64(time.Second)
	if w.Trace == "" && w.DurationS > 0 {
		bin = max(sToNs(w.DurationS)/150, int64(time.Millisecond))
	}
	r.m.series = newSeries(n, bin)

	// Initial view: every cluster idle, delivered at time 0.
	r.publish(false)
	r.deliver((r.pubNext + len(r.pub) - 1) % len(r.pub))
	r.q.push(r.pubEvery, evPublish, 0, 0)
	for i, e := range sc.Events {
		r.q.push(sToNs(e.AtS), evCluster, int32(i), 0)
	}
	if w.Trace != "" {
		open := r.opt.Trace
		if open == nil {
			path := sc.resolvePath(w.Trace)
			open = func() (io.ReadCloser, error) { return os.Open(path) }
		}
		f, err := open()
		if err != nil {
			return err
		}
		r.traceClose = f
		r.trace = newTraceReader(w.Trace, f)
		r.nextTrace()
	} else {
		r.scheduleSession(0)
	}
	return nil
}

func appendCum(c []float64, w float64) []float64 {
	s := w
	if len(c) > 0 {
		s += c[len(c)-1]
	}
	return append(c, s)
}

// pick draws an index from cumulative weights.
func pick(rng *rand.Rand, cum []float64) int32 {
	u := rng.Float64() * cum[len(cum)-1]
	lo, hi := 0, len(cum)-1
	for lo < hi {
		m := (lo + hi) / 2
		if cum[m] > u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return int32(lo)
}

func (r *runner) addModel(name string) int32 {
	if i, ok := r.modelIdx[name]; ok {
		return i
	}
	i := int32(len(r.models))
	r.modelIdx[name] = i
	r.models = append(r.models, name)
	var e *lb.Engine
	if r.pol.Kind == KindEngine {
		e = lb.NewEngine(r.pol.configFor(name))
	}
	r.engines = append(r.engines, e)
	return i
}

func (r *runner) loop() error {
	for n := uint32(0); r.q.len() > 0; n++ {
		if r.genDone && r.liveReqs == 0 && r.liveSess == 0 {
			break
		}
		if n%4096 == 0 && r.opt.Context != nil {
			if err := r.opt.Context.Err(); err != nil {
				return err
			}
		}
		e := r.q.pop()
		if e.at > horizonNs {
			return fmt.Errorf("simulated time passed %.0f years at %s: requests take too long to finish (token counts against prefill_tps and decode_tps)",
				float64(e.at)/1e9/(365.25*24*3600), plural.Count(r.issued, "request", "requests"))
		}
		r.now = e.at
		switch e.kind() {
		case evSessionArrival:
			r.sessionArrival()
		case evTraceRecord:
			if err := r.traceArrival(); err != nil {
				return err
			}
		case evTurn:
			r.issueTurn(e.a)
		case evRoute:
			if q := &r.reqs[e.a]; q.epoch == e.b && q.state == stRouting {
				r.route(e.a)
			}
		case evArrive:
			if q := &r.reqs[e.a]; q.epoch == e.b && q.state == stInFlight {
				r.arrive(e.a)
			}
		case evRefused:
			if q := &r.reqs[e.a]; q.epoch == e.b && q.state == stRefused {
				r.refusedBack(e.a)
			}
		case evPrefillDone:
			if c := &r.clusters[e.a]; c.epoch == e.b && c.prefillOn {
				r.prefillDone(e.a)
			}
		case evDecodeDone:
			if q := &r.reqs[e.a]; q.epoch == e.b && q.state == stDecode {
				r.decodeDone(e.a)
			}
		case evPublish:
			if r.published++; r.published > snapshotBudget {
				return fmt.Errorf("gave up at %.0f s of simulated time after %d snapshots, with %s still in flight: requests take too long to finish (token counts against prefill_tps and decode_tps, or a backlog that never drains)",
					float64(r.now)/1e9, snapshotBudget, plural.Count(r.liveReqs, "request", "requests"))
			}
			r.publish(true)
		case evDeliver:
			r.deliver(int(e.a))
		case evCluster:
			r.clusterEvent(int(e.a))
		}
	}
	if r.opt.Progress != nil && r.progressAcc > 0 {
		r.opt.Progress.Add(r.progressAcc)
		r.progressAcc = 0
	}
	for i := range r.clusters {
		r.clusters[i].touch(r.now)
	}
	return nil
}

// ---- workload ----

// rateAt returns the session rate multiplier at t (s) and the next time
// it may change.
func (r *runner) rateAt(t float64) (mult, next float64) {
	mult, next = 1, math.Inf(1)
	for _, b := range r.wl.Bursts {
		start := b.StartS
		if b.EveryS > 0 && t >= start {
			k := math.Floor((t - start) / b.EveryS)
			start += k * b.EveryS
		}
		end := start + b.DurationS
		switch {
		case t < start:
			next = math.Min(next, start)
		case t < end:
			mult *= b.RateMultiplier
			next = math.Min(next, end)
		default:
			if b.EveryS > 0 {
				next = math.Min(next, start+b.EveryS)
			}
		}
	}
	return mult, next
}

// scheduleSession schedules the next session arrival after t (ns) of the
// non-homogeneous Poisson process, or ends the generator.
func (r *runner) scheduleSession(t int64) {
	w := r.wl
	if (w.Sessions > 0 && r.nextSession >= w.Sessions) || (w.MaxRequests > 0 && r.issued >= w.MaxRequests) {
		r.genDone = true
		return
	}
	limit := float64(MaxSeconds) // without duration_s, arrivals stop at MaxSeconds
	if w.DurationS > 0 {
		limit = w.DurationS
	}
	ts := float64(t) / 1e9
	need := r.arrRng.ExpFloat64() // unit-rate exponential
	for ts < limit {
		mult, next := r.rateAt(ts)
		rate := w.SessionRate * mult
		seg := math.Min(next, limit) - ts
		if rate > 0 && need <= rate*seg {
			ts += need / rate
			break
		}
		if math.IsInf(seg, 1) {
			ts = math.Inf(1)
			break
		}
		need -= rate * seg
		ts += seg
	}
	if ts >= limit {
		r.genDone = true
		return
	}
	r.q.push(max(int64(ts*1e9), t), evSessionArrival, 0, 0)
}

func (r *runner) sessionArrival() {
	k := r.nextSession
	r.nextSession++
	var si int32
	if n := len(r.freeSess); n > 0 {
		si = r.freeSess[n-1]
		r.freeSess = r.freeSess[:n-1]
	} else {
		r.sessions = append(r.sessions, session{})
		si = int32(len(r.sessions) - 1)
	}
	s := &r.sessions[si]
	a, b := seedFor(r.sc.Seed, "session", uint64(k))
	*s = session{id: uint64(k) + 1, live: true, hot: -1, rk: -1}
	s.key = sessionKey(s.id)
	s.pcg.Seed(a, b)
	r.srcProxy.p = &s.pcg
	w := r.wl
	s.turnsLeft = int32(min(max(math.Round(r.dTurns.sample(r.srng)), 1), maxTurns))
	s.model = pick(r.srng, r.modelCum)
	if len(r.rkCum) > 0 {
		s.rk = pick(r.srng, r.rkCum)
	}
	s.payload = r.srng.Float64() < w.PayloadShare
	if len(r.hotCum) > 0 && r.srng.Float64() < w.HotSet.Share {
		s.hot = pick(r.srng, r.hotCum)
	}
	r.liveSess++
	r.scheduleSession(r.now)
	r.issueTurn(si)
}

func (r *runner) endSession(si int32) {
	s := &r.sessions[si]
	if r.sll != nil && r.pol.Sticky.FinishSessions && !s.payload {
		r.sll.FinishSession(s.key)
	}
	s.live = false
	r.freeSess = append(r.freeSess, si)
	r.liveSess--
}

func (r *runner) stopIssuing() bool {
	return r.wl.MaxRequests > 0 && r.issued >= r.wl.MaxRequests
}

// issueTurn starts a session's next turn now.
func (r *runner) issueTurn(si int32) {
	s := &r.sessions[si]
	if r.stopIssuing() {
		r.genDone = true
		r.endSession(si)
		return
	}
	r.srcProxy.p = &s.pcg
	w := r.wl
	var input int64
	if s.turn == 0 {
		input = satTokens(r.dFirst.sample(r.srng))
		if s.hot >= 0 {
			input += w.HotSet.PrefixTokens
		}
	} else {
		input = s.context + satTokens(r.dNew.sample(r.srng))
	}
	output := satTokens(r.dOut.sample(r.srng))
	replica := int32(0)
	if len(r.stores) > 1 {
		replica = r.srng.Int32N(int32(len(r.stores)))
	}
	if input > w.MaxContextTokens && s.turn > 0 {
		r.endSession(si)
		return
	}
	qi := r.newRequest()
	q := &r.reqs[qi]
	q.sess, q.sessID, q.hot, q.payload, q.key = si, s.id, s.hot, s.payload, s.key
	q.rk, q.model, q.turn, q.replica = s.rk, s.model, s.turn, replica
	q.input, q.output = max(input, 0), max(output, 0)
	r.startRequest(qi)
}

// traceArrival issues the due trace record and schedules the next one.
func (r *runner) traceArrival() error {
	rec := r.traceRec
	if !r.stopIssuing() {
		qi := r.newRequest()
		q := &r.reqs[qi]
		// turn numbers a trace session's requests only to give
		// payload-sourced ones a new key each time.
		q.sess, q.sessID, q.hot, q.turn = -1, rec.Session, -1, int32(r.issued)
		q.key = r.traceKey(rec.Session)
		q.rk = -1
		if rec.RoutingKey != "" {
			i, ok := r.rkIdx[rec.RoutingKey]
			if !ok {
				i = int32(len(r.rks))
				r.rkIdx[rec.RoutingKey] = i
				r.rks = append(r.rks, rec.RoutingKey)
			}
			q.rk = i
		}
		model := rec.Model
		if model == "" {
			model = r.models[0]
		}
		q.model = r.addModel(model)
		q.input, q.output = rec.InputTokens, rec.OutputTokens
		// Payload-sourced sessions and replicas are decided per session
		// by hashing, so every policy sees the same split.
		h := rec.Session ^ r.sc.Seed*0x9e3779b97f4a7c15
		h ^= h >> 31
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 29
		q.payload = float64(h>>11)/(1<<53) < r.wl.PayloadShare
		if len(r.stores) > 1 {
			q.replica = int32(h % uint64(len(r.stores)))
		}
		r.startRequest(qi)
	}
	return r.nextTrace()
}

func (r *runner) nextTrace() error {
	if r.stopIssuing() {
		r.genDone = true
		return nil
	}
	rec, ok, err := r.trace.next()
	if err != nil {
		return err
	}
	if !ok {
		r.genDone = true
		return nil
	}
	r.traceRec = rec
	r.q.push(max(rec.TimeNs, r.now), evTraceRecord, 0, 0)
	return nil
}

func (r *runner) newRequest() int32 {
	var qi int32
	if n := len(r.freeReqs); n > 0 {
		qi = r.freeReqs[n-1]
		r.freeReqs = r.freeReqs[:n-1]
	} else {
		r.reqs = append(r.reqs, request{})
		qi = int32(len(r.reqs) - 1)
	}
	q := &r.reqs[qi]
	ex, ep := q.excluded[:0], q.epoch+1
	*q = request{excluded: ex, epoch: ep, cluster: -1, hint: -1, hot: -1, rk: -1}
	r.liveReqs++
	r.issued++
	r.progressAcc++
	if r.progressAcc >= 4096 && r.opt.Progress != nil {
		r.opt.Progress.Add(r.progressAcc)
		r.progressAcc = 0
	}
	return qi
}

func (r *runner) freeRequest(qi int32) {
	q := &r.reqs[qi]
	q.state = stFree
	q.epoch++
	r.freeReqs = append(r.freeReqs, qi)
	r.liveReqs--
}

// storeKey derives the gateway store key of (routing key, model, cache
// affinity key) as a number (the real key is lc:v1: + SHA-256 of the
// same triple; only equality matters here).
func storeKey(rk, model int32, affinity uint64) uint64 {
	h := uint64(rk+1)*0x9e3779b97f4a7c15 ^ uint64(model+1)*0xc2b2ae3d27d4eb4f ^ affinity*0x165667b19e3779f9
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h | 1
}

// startRequest runs the gateway lookup and the first routing decision.
func (r *runner) startRequest(qi int32) {
	q := &r.reqs[qi]
	q.arrival = r.now
	q.state = stRouting
	q.measured = r.now >= r.warmup
	if q.measured {
		r.m.requests++
	}
	if r.sc.Gateway.Enabled && !q.payload {
		aff := q.sessID
		if q.hot >= 0 {
			aff = 1<<63 | uint64(q.hot)
		}
		q.storeKey = storeKey(q.rk, q.model, aff)
		if c, ok := r.stores[q.replica].get(q.storeKey, r.now); ok {
			q.hint = c
		}
	}
	r.route(qi)
}

// ---- keys ----

// Keys are real strings: the engine may keep the strings of a request
// (its Pulsar ranking cache does), so they must never alias a reused
// buffer. A session's key is built once per session; a payload-sourced
// request gets a new key every turn (one small allocation per such
// request); trace sessions' keys are interned.

// sessionKey returns the x-cache-affinity-key (and sticky-least-loaded
// session ID) of a synthetic session.
func sessionKey(id uint64) string {
	var b [24]byte
	return string(strconv.AppendUint(append(b[:0], "s-"...), id, 36))
}

// traceKey returns a trace session's key, interned while the table is
// below 65,536 entries.
func (r *runner) traceKey(id uint64) string {
	if k, ok := r.traceKeys[id]; ok {
		return k
	}
	k := sessionKey(id)
	if len(r.traceKeys) < 1<<16 {
		r.traceKeys[id] = k
	}
	return k
}

// affinityKey is the request's x-cache-affinity-key: a hot set key shared
// by many sessions, for payload-sourced sessions a new key every turn (the
// hash of the whole message list), else the session's.
func (r *runner) affinityKey(q *request) string {
	switch {
	case q.hot >= 0:
		return r.hotKeys[q.hot]
	case q.payload:
		return "p-" + strconv.FormatUint(q.sessID, 36) + "." + strconv.Itoa(int(q.turn))
	}
	return q.key
}

// ---- router ----

func (r *runner) route(qi int32) {
	q := &r.reqs[qi]
	r.m.decisions++
	elapsed := r.now - q.arrival
	switch r.pol.Kind {
	case KindEngine:
		rq := &r.req
		*rq = lb.Request{
			Model:               r.models[q.model],
			CacheAffinityKey:    r.affinityKey(q),
			InputTokens:         uint64(q.input),
			HasInputTokens:      true,
			Priority:            r.wl.Priority,
			ExcludedClusterIDs:  q.excluded,
			Elapsed:             time.Duration(elapsed),
			FirstClassification: q.pinned,
		}
		if q.rk >= 0 {
			rq.RoutingKey = r.rks[q.rk]
		}
		if q.hint >= 0 {
			rq.LastClusterID = r.clusters[q.hint].id
		}
		if v := r.wl.MaxWaitMs; v != nil {
			rq.MaxWaitMs = lb.Some(*v)
		}
		if v := r.wl.RequestSLOMs; v != nil {
			rq.RequestSLOMs = lb.Some(*v)
		}
		st := r.engines[q.model].Step(&r.snap, rq, r.rng, lb.Options{})
		if r.opt.onStep != nil {
			r.opt.onStep(&r.snap, rq, st)
		}
		if st.Balanced && q.pinned == lb.SessionNone {
			q.pinned = st.Decision.Session
		}
		switch st.Outcome {
		case lb.OutcomeDispatch:
			r.dispatch(qi, r.viewIdx[st.Decision.Cluster])
		case lb.OutcomeWait:
			r.m.waits++
			next := st.RetryAt
			if !st.GenericRetry && r.recheck > 0 {
				next = min(next, time.Duration(elapsed+r.recheck))
			}
			r.q.push(max(q.arrival+int64(next), r.now+1), evRoute, qi, q.epoch)
		case lb.OutcomeError:
			r.fail(qi, &r.m.failBad)
		default:
			r.fail(qi, &r.m.failRejected)
		}
	case KindConsistentHash:
		rq := &r.req
		*rq = lb.Request{Model: r.models[q.model], CacheAffinityKey: r.affinityKey(q), ExcludedClusterIDs: q.excluded}
		if q.rk >= 0 {
			rq.RoutingKey = r.rks[q.rk]
		}
		if i, _, ok := r.ch.Pick(&r.snap, rq); ok {
			r.dispatch(qi, r.viewIdx[i])
		} else {
			r.fail(qi, &r.m.failRejected)
		}
	case KindStickyLeastLoaded:
		for i := range r.workers {
			r.healthy[i] = true
			for _, x := range q.excluded {
				if x == r.workers[i] {
					r.healthy[i] = false
				}
			}
		}
		id := ""
		if !q.payload {
			id = q.key
		}
		p := r.sll.Route(r.workers, r.healthy, id, time.Duration(r.now))
		if p.Worker >= 0 {
			r.dispatch(qi, r.viewIdx[p.Worker])
		} else {
			r.fail(qi, &r.m.failRejected)
		}
	}
}

// dispatch reserves the cluster locally and sends the request.
func (r *runner) dispatch(qi, ci int32) {
	q := &r.reqs[qi]
	c := &r.clusters[ci]
	q.cluster, q.state, q.dispatchAt = ci, stInFlight, r.now
	if p := r.snapPos[ci]; p >= 0 {
		r.snap.Clusters[p].Stats.NumRunningQueries++
	}
	r.res[ci].push(r.now + c.halfRTT)
	r.q.push(r.now+c.halfRTT, evArrive, qi, q.epoch)
}

func (r *runner) fail(qi int32, counter *int64) {
	q := &r.reqs[qi]
	if q.measured {
		*counter++
	}
	r.m.lastEnd = r.now
	if q.sess >= 0 {
		r.endSession(q.sess)
	}
	r.freeRequest(qi)
}

// ---- clusters ----

func (r *runner) arrive(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	q.clusterArrival = r.now
	switch {
	case !c.up:
		r.refuse(qi)
	case c.busy < c.spec.Concurrency:
		if q.measured {
			c.accepted++
		}
		r.admit(qi)
	case c.spec.QueueCapacity < 0 || c.queue.len() < c.spec.QueueCapacity:
		if q.measured {
			c.accepted++
		}
		c.touch(r.now)
		c.queue.push(qi)
		c.queuedIn += q.input
		q.state = stQueued
	default:
		r.refuse(qi)
	}
}

// refuse sends a refusal back to the router, which retries elsewhere.
func (r *runner) refuse(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	if q.measured {
		c.refused++
	}
	q.state = stRefused
	q.epoch++
	r.q.push(r.now+c.halfRTT, evRefused, qi, q.epoch)
}

func (r *runner) refusedBack(qi int32) {
	q := &r.reqs[qi]
	q.attempts++
	if int(q.attempts) >= r.sc.Router.MaxAttempts {
		r.fail(qi, &r.m.failRefused)
		return
	}
	q.excluded = append(q.excluded, r.clusters[q.cluster].id)
	q.state = stRouting
	r.route(qi)
}

// hotKey is the KV identity of a hot set's shared prefix.
func hotKey(i int32) uint64 { return 1<<63 | uint64(i) }

func (r *runner) admit(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	c.touch(r.now)
	c.busy++
	wait := r.now - q.clusterArrival
	if q.measured {
		r.m.queueWait.Add(wait)
		r.m.routeWait.Add(q.dispatchAt - q.arrival)
		c.waitSum += float64(wait)
		c.waitN++
	}
	cached := min(c.kv.take(q.sessID), q.input)
	if q.hot >= 0 {
		h := min(c.kv.peek(hotKey(q.hot)), r.wl.HotSet.PrefixTokens, q.input)
		cached = max(cached, h)
	}
	q.cached = cached
	c.kvInUse += q.input + q.output
	c.kv.shrink(c.spec.KVCacheTokens - c.kvInUse)
	if q.measured {
		r.m.inTok += q.input
		r.m.cachedTok += cached
		c.inTok += q.input
		c.cachedTok += cached
	}
	b := r.m.series.bin(r.now)
	r.m.series.Bins[b].InputTokens += q.input
	r.m.series.Bins[b].CachedTokens += cached
	q.state = stPrefill
	c.prefill.push(qi)
	c.pendingIn += q.input - cached
	if !c.prefillOn {
		r.startPrefill(q.cluster)
	}
}

func (r *runner) startPrefill(ci int32) {
	c := &r.clusters[ci]
	for c.prefill.len() > 0 {
		qi := c.prefill.front()
		q := &r.reqs[qi]
		tokens := q.input - q.cached
		if tokens <= 0 {
			c.prefill.pop()
			r.firstToken(qi)
			continue
		}
		dur := satNs(math.Ceil(float64(tokens) * c.nsPerIn))
		c.prefillOn, c.prefillAt = true, r.now
		r.q.push(r.now+dur, evPrefillDone, ci, c.epoch)
		return
	}
	c.prefillOn = false
}

func (r *runner) prefillDone(ci int32) {
	c := &r.clusters[ci]
	qi := c.prefill.pop()
	q := &r.reqs[qi]
	c.pendingIn -= q.input - q.cached
	if lo := max(c.prefillAt, c.from); r.now > lo {
		c.prefillArea += float64(r.now - lo)
	}
	c.prefillOn = false
	r.firstToken(qi)
	r.startPrefill(ci)
}

// firstToken: the response headers and first token leave the cluster; they
// reach the gateway half an RTT later, when the gateway writes the store.
func (r *runner) firstToken(qi int32) {
	q := &r.reqs[qi]
	c := &r.clusters[q.cluster]
	at := r.now + c.halfRTT
	q.ttft = at - q.arrival
	if q.measured {
		r.m.ttft.Add(q.ttft)
		if q.hint >= 0 {
			r.m.returning++
			if q.hint != q.cluster {
				r.m.left++
			}
		}
	}
	b := r.m.series.bin(at)
	r.m.series.Bins[b].FirstTokens++
	if q.ttft <= r.slo {
		r.m.series.Bins[b].Good++
	}
	if q.storeKey != 0 {
		r.stores[q.replica].set(q.storeKey, q.cluster, at)
	}
	q.state = stDecode
	dur := satNs(math.Ceil(float64(q.output) * c.nsPerOut))
	r.q.push(r.now+dur, evDecodeDone, qi, q.epoch)
}

func (r *runner) decodeDone(qi int32) {
	q := &r.reqs[qi]
	ci := q.cluster
	c := &r.clusters[ci]
	c.touch(r.now)
	c.busy--
	c.kvInUse -= q.input + q.output
	budget := c.spec.KVCacheTokens - c.kvInUse
	if q.hot >= 0 {
		c.kv.insert(hotKey(q.hot), min(r.wl.HotSet.PrefixTokens, q.input), budget)
	}
	c.kv.insert(q.sessID, q.input+q.output, budget)
	if q.measured {
		c.served++
		c.sojourn += float64(r.now - q.clusterArrival)
	}
	end := r.now + c.halfRTT
	r.m.lastEnd = max(r.m.lastEnd, end)
	if q.measured {
		r.m.completed++
		if q.ttft <= r.slo {
			r.m.good++
		}
	}
	if si := q.sess; si >= 0 {
		s := &r.sessions[si]
		s.context = q.input + q.output
		s.turn++
		s.turnsLeft--
		if s.turnsLeft > 0 && !r.stopIssuing() {
			r.srcProxy.p = &s.pcg
			think := sToNs(r.dThink.sample(r.srng))
			r.q.push(end+max(think, 0), evTurn, si, 0)
		} else {
			r.endSession(si)
		}
	}
	r.freeRequest(qi)
	if c.queue.len() > 0 && c.busy < c.spec.Concurrency {
		c.touch(r.now)
		next := c.queue.pop()
		c.queuedIn -= r.reqs[next].input
		r.admit(next)
	}
}

// ---- snapshots ----

// publish records every cluster's ModelStats as the router will see them.
func (r *runner) publish(schedule bool) {
	slot := r.pubNext
	r.pubNext = (r.pubNext + 1) % len(r.pub)
	p := &r.pub[slot]
	p.at = r.now
	var bin int
	if schedule {
		bin = r.m.series.bin(r.now)
		r.m.series.LoadSamples[bin]++
	}
	for i := range r.clusters {
		c := &r.clusters[i]
		s := c.spec
		p.up[i] = c.up
		st := &p.stats[i]
		maxIn := s.MaxInputTPS
		if maxIn == 0 {
			maxIn = s.PrefillTPS
		}
		used := min(max(c.kvInUse, 0), s.KVCacheTokens)
		// Field by field: the struct also holds the (always empty) per-priority
		// estimates slice, and a whole-struct store would go through the
		// pointer-aware copy; copyStats lists every field (TestCopyStats).
		st.LastMeanInputTPS = s.PrefillTPS
		st.MaxInputTPS = maxIn
		st.OutputTPS = float64(c.busy-c.prefill.len()) * s.DecodeTPS
		st.MaxOutputTPS = float64(s.Concurrency) * s.DecodeTPS
		st.QueueSize = uint64(c.queue.len())
		st.QueuedInputSize = uint64(max(c.queuedIn+c.pendingIn, 0))
		st.KVCacheCapacityTokens = uint64(s.KVCacheTokens)
		st.KVCacheUsedTokens = uint64(used)
		st.KVCacheFreeTokens = uint64(s.KVCacheTokens - used)
		st.NumRunningQueries = uint64(c.busy + c.queue.len())
		st.MaxEngineConcurrency = uint64(s.Concurrency)
		st.TotalQueryInputSize = 0
		st.InputProcessingQueries = uint64(c.prefill.len())
		st.OutputGenerationQueries = uint64(c.busy - c.prefill.len())
		if schedule {
			r.m.series.Load[bin*len(r.clusters)+i] += float64(c.busy) / float64(s.Concurrency)
		}
	}
	if !schedule {
		return
	}
	if r.stale == 0 {
		r.deliver(slot)
	} else {
		r.q.push(r.now+r.stale, evDeliver, int32(slot), 0)
	}
	for _, s := range r.stores {
		s.sweep(r.now)
	}
	r.q.push(r.now+r.pubEvery, evPublish, 0, 0)
}

// deliver makes a published snapshot the router's view: membership from
// the clusters' status, stats plus the reservations the snapshot does not
// yet account for (requests that reached their cluster after it was
// published).
func (r *runner) deliver(slot int) {
	p := &r.pub[slot]
	changed := r.snap.Clusters == nil
	for i := range r.clusters {
		if r.viewUp[i] != p.up[i] {
			changed = true
		}
		for r.res[i].len() > 0 && r.res[i].front() <= p.at {
			r.res[i].pop()
		}
	}
	if changed {
		copy(r.viewUp, p.up)
		r.snap.Clusters = r.snap.Clusters[:0]
		r.viewIdx = r.viewIdx[:0]
		r.workers = r.workers[:0]
		for i := range r.clusters {
			r.snapPos[i] = -1
			if !p.up[i] {
				continue
			}
			c := &r.clusters[i]
			r.snapPos[i] = int32(len(r.snap.Clusters))
			r.viewIdx = append(r.viewIdx, int32(i))
			r.workers = append(r.workers, c.id)
			r.snap.Clusters = append(r.snap.Clusters, lb.Cluster{
				ClusterID: c.id,
				RTT:       time.Duration(msToNs(c.spec.RTTMs)),
			})
		}
		r.healthy = make([]bool, len(r.workers))
	}
	for pos, ci := range r.viewIdx {
		dst := &r.snap.Clusters[pos].Stats
		copyStats(dst, &p.stats[ci])
		dst.NumRunningQueries += uint64(r.res[ci].len())
	}
}

// copyStats copies the published stats into the router's view. The
// simulator never publishes per-priority queue estimates (the slice stays
// nil), so the scalar fields are the whole value; TestCopyStats checks
// that every other field of lb.Stats is listed here.
func copyStats(dst, src *lb.Stats) {
	dst.LastMeanInputTPS = src.LastMeanInputTPS
	dst.MaxInputTPS = src.MaxInputTPS
	dst.OutputTPS = src.OutputTPS
	dst.MaxOutputTPS = src.MaxOutputTPS
	dst.QueueSize = src.QueueSize
	dst.QueuedInputSize = src.QueuedInputSize
	dst.KVCacheCapacityTokens = src.KVCacheCapacityTokens
	dst.KVCacheUsedTokens = src.KVCacheUsedTokens
	dst.KVCacheFreeTokens = src.KVCacheFreeTokens
	dst.NumRunningQueries = src.NumRunningQueries
	dst.MaxEngineConcurrency = src.MaxEngineConcurrency
	dst.TotalQueryInputSize = src.TotalQueryInputSize
	dst.InputProcessingQueries = src.InputProcessingQueries
	dst.OutputGenerationQueries = src.OutputGenerationQueries
}

// ---- cluster events ----

func (r *runner) clusterEvent(i int) {
	e := &r.sc.Events[i]
	ci := int32(-1)
	for j := range r.clusters {
		if r.clusters[j].id == e.Cluster {
			ci = int32(j)
		}
	}
	if ci < 0 {
		return
	}
	c := &r.clusters[ci]
	switch e.Action {
	case "drain":
		c.up = false
	case "restore":
		c.up = true
	case "fail":
		c.up = false
		c.touch(r.now)
		c.epoch++
		for qi := range r.reqs {
			q := &r.reqs[qi]
			if q.cluster != ci {
				continue
			}
			switch q.state {
			case stQueued, stPrefill:
				r.refuse(int32(qi))
			case stDecode:
				r.fail(int32(qi), &r.m.failStream)
			}
		}
		c.busy = 0
		c.queue.clear()
		c.prefill.clear()
		c.prefillOn = false
		c.queuedIn, c.pendingIn, c.kvInUse = 0, 0, 0
		c.kv.clear()
	}
}

// ---- results ----

func (r *runner) result() *Result {
	m := &r.m
	end := max(r.now, m.lastEnd)
	res := &Result{
		Policy:              r.pol.Name,
		Algorithm:           r.pol.Algorithm(r.models),
		LastClusterAffinity: r.pol.LastClusterAffinity(r.models),
		Source:              r.pol.Source,
		Models:              r.pol.Routes(r.models),
		Requests:            m.requests,
		Completed:           m.completed,
		Good:                m.good,
		Failures: FailureCounts{
			Rejected: m.failRejected, BadRequest: m.failBad,
			Refused: m.failRefused, Stream: m.failStream,
		},
		Decisions:         m.decisions,
		Waits:             m.waits,
		SimulatedS:        round(float64(end)/1e9, 6),
		TTFTMs:            quantiles(m.ttft),
		QueueWaitMs:       quantiles(m.queueWait),
		RouteWaitMs:       quantiles(m.routeWait),
		InputTokens:       m.inTok,
		CachedTokens:      m.cachedTok,
		ReturningRequests: m.returning,
		LeftLastCluster:   m.left,
		TTFT:              m.ttft,
		Series:            m.series,
	}
	res.Failed = m.failRejected + m.failBad + m.failRefused + m.failStream
	span := float64(end-r.warmup) / 1e9
	res.MeasuredS = round(math.Max(span, 0), 6)
	if span > 0 {
		res.GoodputRPS = round(float64(m.good)/span, 6)
		res.ThroughputRPS = round(float64(m.completed)/span, 6)
	}
	res.KVReuse = ratio(m.cachedTok, m.inTok)
	res.LeftLastClusterShare = ratio(m.left, m.returning)
	for i := range r.clusters {
		c := &r.clusters[i]
		cr := ClusterResult{
			ClusterID:    c.id,
			Accepted:     c.accepted,
			Refused:      c.refused,
			Served:       c.served,
			InputTokens:  c.inTok,
			CachedTokens: c.cachedTok,
			KVReuse:      ratio(c.cachedTok, c.inTok),
		}
		if span > 0 {
			ns := span * 1e9
			cr.Utilization = round(c.busyArea/(float64(c.spec.Concurrency)*ns), 6)
			cr.PrefillUtilization = round(c.prefillArea/ns, 6)
			cr.MeanInSystem = round(c.sysArea/ns, 6)
			cr.ArrivalRPS = round(float64(c.accepted)/span, 6)
		}
		if c.served > 0 {
			cr.MeanSojournMs = round(c.sojourn/float64(c.served)/1e6, 6)
		}
		if c.waitN > 0 {
			cr.MeanQueueWaitMs = round(c.waitSum/float64(c.waitN)/1e6, 6)
		}
		res.Clusters = append(res.Clusters, cr)
	}
	return res
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return round(float64(a)/float64(b), 6)
}

// round rounds x to d decimals (report stability; the simulation itself
// is exact).
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

func quantiles(h *Histogram) Quantiles {
	ms := func(ns float64) float64 { return round(ns/1e6, 3) }
	return Quantiles{
		P50:  ms(h.Quantile(0.50)),
		P90:  ms(h.Quantile(0.90)),
		P99:  ms(h.Quantile(0.99)),
		Mean: ms(h.Mean()),
		Max:  ms(float64(h.Max())),
	}
}

var _ = fmt.Sprintf
