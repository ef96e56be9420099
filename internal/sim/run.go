package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/readlimit"
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
// It fills three 64-byte cache lines, in the order most events read
// them: the state, flags, cluster and token counts; the chain positions,
// indices and keys; the times. On a wide scenario a request is cold in
// the CPU caches at every event. It holds no pointers (its strings and
// slices are in reqRefs, beside it): the pool is never scanned by the
// collector and is reset without write barriers.
type request struct {
	epoch    uint32
	state    reqState
	measured bool
	noRoom   bool // a block found no room: write no more
	payload  bool // the cache affinity key comes from the payload: no store entry, no sticky session
	blocks   bool // its reqRefs' blocks are the prompt's block ids (a trace with hash ids); false = derived
	lastTurn bool // the session has no turn after this one
	ownStore bool // the store entry is the session's own (ownStore): it travels with the session
	stored   bool // ownStore: this turn has written its entry, at storedAt
	wrote    bool // it has written blocks (its first token left at least once)
	admitted bool // batched: its queue wait is recorded
	counted  bool // batched: its input and cached tokens are counted
	attempts int8
	cluster  int32 // the cluster it was dispatched to
	sess     int32 // session index, -1 for trace requests
	input    int64 // tokens
	output   int64 // tokens
	cached   int64 // tokens served from the KV cache
	held     int64 // blocks [0, held) referenced in the cluster's cache
	inBlocks int64 // blocks of the prompt

	chainAt  [3]int32 // where its chains sit in the cluster's chain cache (segments order; a hint, -1 unknown)
	hot      int32    // hot prefix index, -1 none
	model    int32    // model index
	hint     int32    // last cluster from the store, -1 none
	replica  int32
	rk       int32 // routing key index (-1 none)
	turn     int32
	idx      int32    // its index in the pool (and of its reqRefs)
	prevTurn turnHint // what the session's previous turn left: its cluster, chain, store entry
	pinned   lb.SessionState
	sessID   uint64 // KV prefix identity (the conversation)
	chainKey uint64 // its chain's key in the chain caches (startRequest)

	storeKey       uint64 // last-cluster store key; 0 = not eligible
	arrival        int64  // ns, at the gateway/router
	clusterArrival int64  // ns
	ttft           int64  // ns
	firstAt        int64  // ns, first token left the cluster
	think          int64  // ns, the session's think time before its next turn (issueTurn draws it)
	storedAt       int64  // ns
	dispatchAt     int64  // ns
}

// reqRefs is the part of a request that holds pointers, in a pool of its
// own (runner.refs, same index).
type reqRefs struct {
	key      string // the session's cache affinity key
	excluded []string
	blocks   []uint64 // the prompt's block ids from the trace (request.blocks)
}

// session is one conversation of the synthetic workload. It holds no
// pointers (its key is in runner.sessKeys, same index) and fills one
// 64-byte cache line.
type session struct {
	pcg       rand.PCG
	id        uint64
	context   int64 // tokens of the conversation so far
	turnsLeft int32
	turn      int32
	hot       int32
	rk, model int32
	payload   bool
	live      bool
	_         [8]byte
}

// clusterState is one simulated cluster. The fields the FIFO engine's
// events read and write come first (a wide scenario's clusters do not all
// stay in the CPU caches), those every publication reads (publish) in the
// first 112 bytes; the accounting of measured requests after. It is a
// whole number of 64-byte cache lines (TestLayoutCacheLines), so that
// those bytes are two lines of every cluster.
type clusterState struct {
	up          bool // accepting new requests
	batched     bool // engine: batched (engine_batch.go)
	prefillOn   bool
	epoch       uint32
	busy        int
	concurrency int   // spec.Concurrency
	queueCap    int   // spec.QueueCapacity (-1 unbounded)
	queuedIn    int64 // input tokens waiting for a slot
	pendingIn   int64 // uncached tokens admitted but not prefilled
	kvInUse     int64 // tokens held by running requests
	queue       fifo[int32]
	prefill     fifo[int32]
	halfRTT     int64 // ns
	nsPerIn     float64
	nsPerOut    float64
	prefillAt   int64 // start of the current prefill
	from        int64 // start of the measurement window (the warm-up), ns
	last        int64 // last time busy/queue changed
	busyArea    float64
	sysArea     float64 // ∫ (busy + queued) dt, slot·ns
	spec        *ClusterSpec
	cc          chainCache // synthetic workloads and CSV traces
	kv          blockCache // hash-id traces
	id          string

	batch       batchState // the batched engine's state
	preemptions int64      // batched: requests preempted (measured or not)

	// accounting: the areas integrate over the measurement window (from
	// the end of the warm-up to the end of the run, Result.MeasuredS);
	// the counts are of measured requests.
	prefillArea float64
	accepted    int64
	refused     int64
	served      int64
	sojourn     float64 // Σ completion − cluster arrival, ns
	waitSum     float64 // Σ queue wait of measured requests, ns
	waitN       int64
	inTok       int64
	cachedTok   int64
	_           [32]byte // to a whole number of cache lines
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
	at   int64
	recs []pubRec // per cluster
	up   []bool
}

// runner simulates one policy over one scenario.
type runner struct {
	sc  *Scenario
	pol *Policy
	opt RunOptions

	now int64
	q   eventQueue

	clusters []clusterState
	ids      []string      // per cluster: its id (ClusterSpec.ID)
	res      []fifo[int64] // pending reservations: cluster arrival times
	snap     lb.Snapshot
	viewIdx  []int32 // snapshot position → cluster
	snapPos  []int32 // cluster → snapshot position, -1 when out of view
	viewUp   []bool
	pub      []pubSlot
	pubConst []pubConst // per cluster
	shown    []pubRec   // per cluster in the view: the record its stats were last filled from (deliver)
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
	// ownStore: the shared store's entries of synthetic sessions outside
	// the hot set travel with their sessions instead of sitting in the
	// store's table. Such an entry's key (routing key, model, the
	// session's own cache affinity key) belongs to one session, whose
	// turns run one after the other: the entry a turn reads is the one
	// the turn before wrote at its first token (the last write, when a
	// preempted request writes again), and the store answers with it
	// while it is younger than the TTL. decodeDone, which schedules the
	// next turn, knows when that turn will look, so the turn's event
	// carries the answer (turnHint) and the table, a cache miss per
	// lookup and per write, is left to the keys sessions share (hot set
	// prefixes, traces). Off with more clusters than the hint holds.
	ownStore bool
	lcTTL    int64 // the store's TTL, ns

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
	blockTokens                        int64 // KV block size (tokens)
	closed                             bool  // workload.replay: closed (replay.go)
	replay                             map[uint64]*replaySess
	deferred                           []TraceRecord
	freeDef                            []int32
	deferredLive                       int
	sysTokens                          int64 // shared system prompt (tokens)
	sysBlocks, hotBlocks               int64 // blocks wholly inside the system prompt, and inside it plus a hot prefix
	liveReqs                           int
	published                          int64 // scheduled snapshot publications so far
	liveSess                           int
	progressAcc                        int64

	sessions []session
	sessKeys []string // per session: its x-cache-affinity-key
	keyBatch keyBatch // keys of the next sessions, built together
	freeSess []int32
	reqs     []request
	refs     []reqRefs // per request: its pointers
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
	tpot                       *Histogram // time per output token after the first, per request
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
	return seedForHash(master, xxh3.HashString(purpose), n)
}

// seedForHash is seedFor with the purpose's hash (xxh3.HashString).
func seedForHash(master, p, n uint64) (uint64, uint64) {
	a := mix64(master ^ mix64(p^0x6c636374) ^ mix64(n+0x9e3779b97f4a7c15))
	return a, mix64(a ^ p ^ (n * 0xbf58476d1ce4e5b9))
}

// sessionPurpose is the hash of the session streams' purpose ("session").
var sessionPurpose = xxh3.HashString("session")

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

// noOwnStore keeps every store entry in the table (tests compare both).
var noOwnStore = false

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
	r.pubConst = make([]pubConst, n)
	r.shown = make([]pubRec, n)
	for i := range sc.Clusters {
		s := &sc.Clusters[i]
		c := &r.clusters[i]
		c.spec, c.id, c.up = s, s.ID, true
		c.concurrency, c.queueCap = s.Concurrency, s.QueueCapacity
		r.ids = append(r.ids, s.ID)
		c.halfRTT = msToNs(s.RTTMs) / 2
		c.nsPerIn = 1e9 / s.PrefillTPS
		c.nsPerOut = 1e9 / s.DecodeTPS
		c.batched = s.Engine == EngineBatched
		r.pubConst[i] = newPubConst(s)
	}
	r.pubEvery = max(msToNs(sc.Router.SnapshotIntervalMs), 1)
	r.stale = msToNs(sc.Router.StalenessMs)
	slots := int(r.stale/r.pubEvery) + 2
	r.pub = make([]pubSlot, slots)
	for i := range r.pub {
		r.pub[i].recs = make([]pubRec, n)
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
		r.ownStore = g.Enabled && n+1 < 1<<12 && !noOwnStore
	}
	r.lcTTL = ttl

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

	r.m = metrics{ttft: NewHistogram(), queueWait: NewHistogram(), routeWait: NewHistogram(), tpot: NewHistogram()}
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
			open = func() (io.ReadCloser, error) { return readlimit.OpenNoStdin(path) }
		}
		f, err := open()
		if err != nil {
			return err
		}
		r.traceClose = f
		r.trace = newTraceReader(w.Trace, f, w.TraceFormat, w.BlockTokens)
		r.closed = w.Replay == ReplayClosed
		r.replay = map[uint64]*replaySess{}
		if err := r.nextTrace(); err != nil {
			return err
		}
		r.blockTokens = r.trace.blockTokens
	} else {
		r.sysTokens = w.SystemPromptTokens
		r.scheduleSession(0)
	}
	if r.blockTokens == 0 {
		r.blockTokens = w.BlockTokens
	}
	if r.blockTokens == 0 {
		r.blockTokens = 16
	}
	r.sysBlocks = r.sysTokens / r.blockTokens
	r.hotBlocks = (r.sysTokens + w.HotSet.PrefixTokens) / r.blockTokens
	for i := range r.clusters {
		c := &r.clusters[i]
		c.kv = newBlockCache(c.spec.KVCacheTokens / r.blockTokens)
		c.cc = newChainCache(c.spec.KVCacheTokens / r.blockTokens)
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
		if r.genDone && r.liveReqs == 0 && r.liveSess == 0 && r.deferredLive == 0 {
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
			r.issueTurn(e.a, turnHint(e.b))
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
		case evDeferred:
			r.deferredArrival(e.a)
		case evStep:
			if c := &r.clusters[e.a]; c.batch.seq == e.b && c.batch.stepOn {
				r.batchStepDone(e.a)
			}
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
