package lb

import (
	"math"
	"math/rand/v2"
	"time"
	"unsafe"
)

// Engine decides for one algorithm configuration. It keeps what Stargate
// keeps per load-balancer instance (round-robin counter, cache-affinity
// rings; wait-and-widen.md §3.8) plus scratch buffers, so Decide does not
// allocate when Options are zero. An Engine is not safe for concurrent use;
// use one per goroutine.
type Engine struct {
	cfg AlgorithmConfig
	pww bool

	// Derived settings.
	n          int           // sample count (wait-and-widen n, power-of-n sample_count), ≥ 1
	k          int           // affinity group size (0 = no group for wait-and-widen)
	x          time.Duration // configured affinity wait X
	bucketMs   float64       // ms(ttft_bucket_size_ms)
	vnodes     int
	hasSLO     bool
	floorMs    float64
	ceilMs     float64
	band       time.Duration
	hasBand    bool
	maxQueueMs float64 // per decision

	rr  uint64 // round-robin counter
	rng *rand.Rand

	hdr        [4]headerMemo  // model, routing key, cache affinity key, last cluster
	rankCache  rankCache      // Pulsar rankings per key (rankcache.go)
	rankTarget rankTargetMemo // the last routing key and model hashed
	rings      map[ringCacheKey]*ring
	lastRing   *ring
	hashBuf    []byte

	// Scratch, reused across decisions.
	excl    []bool
	seen    []bool
	all     []int
	list    []int
	orig    []int
	order   []int
	open    []int
	ests    []est
	capl    []int32
	sorted  []sortKey
	order32 []int32
	ranked  []rankEntry
	// rankedSorted is the ranking in rank order.
	rankedSorted []rankEntry
	rankBounds   []float64 // orderByBounds: score bounds
	rankKeys     []uint64  // boundKeys: sort keys
	rankTop      []uint64  // topKeys: the smallest sort keys
	rankTmp      []uint64  // sortRankKeys: the distributed keys
	rankCounts   []int32   // sortRankKeys: bucket counts
	choices      []Choice

	// Candidate filtering (only when a snapshot lists a non-routable
	// cluster): the routable clusters, their positions in the caller's
	// snapshot, and the buffer the decision's index slices are mapped into.
	cand     Snapshot
	candIdx  []int
	remapBuf []int

	rankSet rankCandidateSet // the candidates the cached rankings are for
	// candHash hashes the current ranking's candidates (xxh3prefix.go).
	candHash candidateHasher
	// setChecked is the snapshot this decision's candidates call found
	// fully routable and described by rankSet (nil otherwise; reset by
	// every candidates call, which precedes every decision).
	setChecked *Snapshot
	// verSeen is the last non-zero Snapshot.Version that candidates found
	// fully routable and described by rankSet, at rankSet version verGen:
	// a snapshot of that Version skips the check while rankSet has not
	// changed since.
	verSeen, verGen uint64
	// rk is the current decision's Pulsar ranking (rankprefix.go), and
	// the scratch of a fresh one.
	rk      rankState
	hashes  []uint64   // hashCandidates: each candidate's PulsarHash
	hashTop []hashPick // hashFloor: the largest hashes
	hashSel []int32    // hashAll: candidates with a large hash
	// hashCandidates' kept entries and their score bounds.
	streamCands        []rankEntry
	streamLo, streamHi []float64
}

// NewEngine returns an engine for cfg (a validated, normalised config from
// internal/validate, or DefaultAlgorithmConfig). cfg is copied. A nil cfg
// or a zero Algorithm means the default power-of-n.
func NewEngine(cfg *AlgorithmConfig) *Engine {
	e := &Engine{rng: rand.New(rand.NewPCG(0x6c6363746c, 0x656e67696e65))}
	if cfg == nil || cfg.Algorithm == 0 {
		c := DefaultAlgorithmConfig(PowerOfN)
		if cfg != nil {
			c.RequireCacheAffinityKey = cfg.RequireCacheAffinityKey
			c.MaxInputWorkSeconds = cfg.MaxInputWorkSeconds
		}
		cfg = &c
	}
	e.cfg = *cfg
	e.cfg.RequestAlgorithms = nil
	c := &e.cfg
	e.pww = c.Algorithm == PulsarWaitAndWiden
	switch c.Algorithm {
	case PowerOfN:
		e.n = max(c.SampleCount, 1)
	case WaitAndWiden, PulsarWaitAndWiden:
		e.n = max(c.N, 1)
		e.k = max(c.CacheAffinityBackendSelectionCount, 0)
		if e.pww && e.k == 0 {
			e.k = 1
		}
		e.vnodes = max(c.CacheAffinityVirtualNodes, 1)
		e.x = durationFromMillis(c.CacheAffinityWaitMs)
		e.bucketMs = millisMs(c.TTFTBucketSizeMs)
		if c.HasQueueSLO() {
			e.hasSLO = true
			e.floorMs = millisMs(*c.MaxQueueTimeFloorMs)
			e.ceilMs = millisMs(*c.MaxQueueTimeCeilMs)
		}
		if c.BandWidenIntervalMs != nil {
			e.hasBand = true
			e.band = durationFromMillis(*c.BandWidenIntervalMs)
		}
	}
	return e
}

// Config returns the engine's configuration (a copy).
func (e *Engine) Config() AlgorithmConfig { return e.cfg }

// Algorithm returns the engine's algorithm.
func (e *Engine) Algorithm() Algorithm { return e.cfg.Algorithm }

// ResetState forgets per-instance state: the round-robin counter and the
// ring cache (a new routing target generation, wait-and-widen.md §3.8).
func (e *Engine) ResetState() {
	e.rr = 0
	clear(e.rings)
	e.lastRing = nil
	e.clearRankCache()
}

// reqView is the request after the proxy's header normalisation.
type reqView struct {
	model, routingKey string
	key               string
	hasKey            bool
	last              string
	hasLast           bool
	inputTokens       uint64
	hasInputTokens    bool
	priority          uint32
	elapsed           time.Duration
	pinned            SessionState
}

func (e *Engine) view(req *Request) reqView {
	var rv reqView
	rv.model, _ = e.hdr[0].norm(req.Model)
	rv.routingKey, _ = e.hdr[1].norm(req.RoutingKey)
	rv.key, rv.hasKey = e.hdr[2].norm(req.CacheAffinityKey)
	rv.last, rv.hasLast = e.hdr[3].norm(req.LastClusterID)
	rv.inputTokens, rv.hasInputTokens = req.InputTokens, req.HasInputTokens
	rv.priority = req.Priority
	rv.elapsed = max(req.Elapsed, 0)
	rv.pinned = req.FirstClassification
	if rv.pinned > SessionStale {
		rv.pinned = SessionNone
	}
	return rv
}

// headerMemo remembers the last normalisation of one header field: the
// simulator passes the same strings again and again.
type headerMemo struct {
	raw string
	v   string
	ok  bool
}

// norm is HeaderString(raw), reusing the last result when raw is the very
// same string (same bytes in memory).
func (m *headerMemo) norm(raw string) (string, bool) {
	if len(raw) == len(m.raw) && unsafe.StringData(raw) == unsafe.StringData(m.raw) {
		return m.v, m.ok
	}
	m.v, m.ok = HeaderString(raw)
	m.raw = raw
	return m.v, m.ok
}

// prepare sizes the scratch buffers for snap and computes the per-decision
// values shared by every phase: exclusion flags and the queue-SLO limit.
// It returns the number of non-excluded candidates.
func (e *Engine) prepare(snap *Snapshot, req *Request, rv *reqView) int {
	n := len(snap.Clusters)
	if cap(e.excl) < n {
		e.excl = make([]bool, n)
		e.seen = make([]bool, n)
		e.all = make([]int, 0, n)
	}
	e.excl, e.seen = e.excl[:n], e.seen[:n]
	if len(e.all) != n {
		e.all = e.all[:n] // cap(e.all) ≥ n: allocated with the other buffers
		for i := range e.all {
			e.all[i] = i
		}
	}
	eligible := n
	if len(req.ExcludedClusterIDs) == 0 {
		clear(e.excl)
	} else {
		for i := range snap.Clusters {
			x := false
			cid := snap.Clusters[i].ClusterID
			for _, id := range req.ExcludedClusterIDs {
				if sameID(id, cid) {
					x = true
					break
				}
			}
			e.excl[i] = x
			if x {
				eligible--
			}
		}
	}
	if e.hasSLO {
		pct := 1.0
		if req.RequestSLOMs.Set && req.RequestSLOMs.Value != 0 {
			pct = durationSecs(rv.elapsed) / millisSecs(req.RequestSLOMs.Value)
			pct = math.Min(math.Max(pct, 0), 1)
		}
		raw := e.floorMs + (e.ceilMs-e.floorMs)*pct
		if w, ok := durationFromSecsF64(raw / 1000.0); ok {
			e.maxQueueMs = w.ms()
		} else {
			e.maxQueueMs = raw
		}
	}
	return eligible
}

// sameID compares cluster ids, rejecting most unequal ids (which share a
// prefix like "cluster-00") on their last byte before comparing contents.
func sameID(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b
}

// durationSecs is secs(d) of wait-and-widen.md §1.4.
func durationSecs(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(int64(d)/1e9) + float64(int64(d)%1e9)/1e9
}

// Decide runs the load balancer once: config (the engine's), snapshot,
// request (with its elapsed time) in; a Decision out. The balancer sees the
// snapshot's routable clusters only (Status.Routable; see candidates), and
// the decision's indices refer to snap. It reproduces
// Stargate's decide_at for the engine's algorithm (wait-and-widen.md §3,
// pulsar.md §6–7, session.md, upstream power_of_n.rs, round_robin.rs,
// random.rs). rng supplies sampling draws; nil uses the engine's own
// deterministic source. Decide never panics on any input.
func (e *Engine) Decide(snap *Snapshot, req *Request, rng Rand, opt Options) Decision {
	d := Decision{Algorithm: e.cfg.Algorithm, Cluster: -1}
	if snap == nil {
		snap = &Snapshot{}
	}
	if req == nil {
		req = &Request{}
	}
	rv := e.view(req)
	cand, filtered := e.candidates(snap)
	eligible := e.prepare(cand, req, &rv)
	e.decide(cand, &rv, eligible, rng, opt, &d)
	if filtered {
		e.remap(&d)
	}
	return d
}

// candidates returns the candidate slice of snap: the clusters whose
// status is routable (Status.Routable), in snapshot order. It returns snap
// itself when every cluster is routable (the usual case, no copy);
// otherwise an engine-owned snapshot of the routable clusters, with
// filtered true and e.candIdx mapping its positions back to snap's. For
// the Pulsar algorithms a snapshot whose Version it has seen fully
// routable, with the ranking's candidate set unchanged since, is taken at
// the caller's word (Snapshot.Version), without a pass over its clusters.
//
// Upstream (NVIDIA/nvcf stargate routing_state, apply_registration_update)
// adds a backend to a routing target only when the model's effective
// status is Active; Inactive, Unknown and unparseable statuses remove it,
// and a cluster without backends has no routing snapshot
// (cluster_snapshots backend_aggregate), so such clusters never reach the
// load balancer, the session hint match or input-work admission.
func (e *Engine) candidates(snap *Snapshot) (*Snapshot, bool) {
	e.setChecked = nil
	if e.pww || e.cfg.Algorithm == Pulsar {
		if v := snap.Version; v != 0 && v == e.verSeen && e.verGen == e.rankSet.gen && len(snap.Clusters) == len(e.rankSet.ids) {
			// The caller's promise (Snapshot.Version): the same candidate
			// set as when it was last checked.
			e.setChecked = snap
			return snap, false
		}
		if e.rankSet.describesRoutable(snap, e.cfg.RendezvousWeight) {
			// One pass for both checks; rankStart of this decision skips
			// its own (setChecked).
			e.setChecked = snap
			e.verSeen, e.verGen = snap.Version, e.rankSet.gen
			return snap, false
		}
	}
	for i := range snap.Clusters {
		if !snap.Clusters[i].Status.Routable() {
			return e.filterCandidates(snap), true
		}
	}
	return snap, false
}

func (e *Engine) filterCandidates(snap *Snapshot) *Snapshot {
	clear(e.cand.Clusters[:cap(e.cand.Clusters)]) // drop references of earlier snapshots
	e.cand.Model = snap.Model
	e.cand.Clusters = e.cand.Clusters[:0]
	e.candIdx = e.candIdx[:0]
	for i := range snap.Clusters {
		if snap.Clusters[i].Status.Routable() {
			e.cand.Clusters = append(e.cand.Clusters, snap.Clusters[i])
			e.candIdx = append(e.candIdx, i)
		}
	}
	return &e.cand
}

// remap rewrites the candidate indices of d (decided against the filtered
// candidate slice) into positions of the caller's snapshot. The index
// slices are copied into e.remapBuf first: several of them may share one
// engine buffer.
func (e *Engine) remap(d *Decision) {
	m := e.candIdx
	if d.Cluster >= 0 && d.Cluster < len(m) {
		d.Cluster = m[d.Cluster]
	}
	total := len(d.OriginalOrder) + len(d.AffinityOrder) + len(d.AffinityGroup) + len(d.OpenSet)
	if e.remapBuf == nil || cap(e.remapBuf) < total {
		e.remapBuf = make([]int, 0, max(total, 8))
	}
	buf := e.remapBuf[:0]
	mapped := func(s []int) []int {
		if s == nil {
			return nil
		}
		start := len(buf)
		for _, i := range s {
			buf = append(buf, m[i])
		}
		return buf[start:len(buf):len(buf)]
	}
	d.OriginalOrder = mapped(d.OriginalOrder)
	d.AffinityOrder = mapped(d.AffinityOrder)
	d.AffinityGroup = mapped(d.AffinityGroup)
	d.OpenSet = mapped(d.OpenSet)
	e.remapBuf = buf
	for i := range d.Choices {
		d.Choices[i].Cluster = m[d.Choices[i].Cluster]
	}
	if d.Trace != nil {
		for p := range d.Trace.Phases {
			cs := d.Trace.Phases[p].Candidates
			for c := range cs {
				cs[c].Cluster = m[cs[c].Cluster]
			}
		}
	}
}

// decide runs the algorithm on a prepared request (view and prepare done).
func (e *Engine) decide(snap *Snapshot, rv *reqView, eligible int, rng Rand, opt Options, d *Decision) {
	if rng == nil {
		rng = e.rng
	}
	if opt.Trace {
		d.Trace = &Trace{}
	}
	e.choices = e.choices[:0]
	switch e.cfg.Algorithm {
	case WaitAndWiden:
		e.decideWaitAndWiden(snap, rv, rng, opt, d)
	case PulsarWaitAndWiden:
		e.decidePulsarWaitAndWiden(snap, rv, rng, opt, d)
	case Pulsar:
		e.decidePulsar(snap, rv, opt, d)
	case RoundRobin:
		e.decideRoundRobin(snap, eligible, d)
	case Random:
		e.decideRandom(snap, eligible, rng, opt, d)
	default:
		e.decidePowerOfN(snap, rv, eligible, rng, opt, d)
	}
	if e.cfg.Algorithm == Pulsar || e.pww {
		// The near-tie flag covers the reported ranking (every rank unless
		// Options.PartialOrder).
		d.Ambiguous = e.rk.tie < len(d.OriginalOrder)
	}
	switch d.Kind {
	case KindSelected:
		d.ClusterID = snap.Clusters[d.Cluster].ClusterID
		d.Reason = ReasonNone
		if opt.Probabilities {
			if len(e.choices) == 0 {
				e.choices = append(e.choices, Choice{Cluster: d.Cluster, P: 1, Exact: ratOne()})
				d.ChoicesExact = true
			}
			for i := range e.choices {
				e.choices[i].ClusterID = snap.Clusters[e.choices[i].Cluster].ClusterID
			}
			d.Choices = e.choices
		}
	case KindWait:
		d.RetryAt = addSat(rv.elapsed, d.Wait)
	}
}

// addSat adds two non-negative durations, saturating.
func addSat(a, b time.Duration) time.Duration {
	s := a + b
	if s < a {
		return time.Duration(math.MaxInt64)
	}
	return s
}

func (d *Decision) selected(idx, depth int, phase Phase) {
	d.Kind, d.Cluster, d.RankDepth, d.Phase = KindSelected, idx, depth, phase
}

func (d *Decision) note(s string) {
	if d.Trace != nil {
		d.Trace.Notes = append(d.Trace.Notes, s)
	}
}

// minWait combines optional waits: the smaller present value.
func minWait(a time.Duration, aok bool, b time.Duration, bok bool) (time.Duration, bool) {
	switch {
	case aok && bok:
		return min(a, b), true
	case aok:
		return a, true
	}
	return b, bok
}
