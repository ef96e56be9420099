package lb

import (
	"math"
	"math/bits"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// The Pulsar ranking cache, per engine and keyed per request, as upstream
// keeps one per Pulsar balancer (pulsar/ranking.rs PulsarRankingStore;
// pulsar.md §4.7):
//
//   - It is keyed by the cache affinity key (upstream) and also by the
//     routing key and model. Upstream holds the rankings of one routing
//     target (routing key, model) at a time and clears them when another
//     target's request arrives; lcctl keeps every target's rankings apart
//     instead, so an engine fed interleaved routing keys (the simulator)
//     does not thrash. Either way a hit is the ranking a fresh computation
//     gives.
//   - It belongs to one candidate set: the candidate ids in slice order and
//     each one's selected weight bits (rankCandidateSet). Any change empties
//     it, as upstream's candidate signature does; live load never does.
//   - An entry names its routing target by a number (rankCache.targets);
//     the cache numbers up to maxRankTargets (routing key, model) pairs
//     and empties when a request brings one more (upstream keeps one).
//   - Keys longer than 256 bytes are never cached (upstream's
//     MAX_CACHE_AFFINITY_CACHE_KEY_BYTES); they take the full computation.
//   - Upstream holds 4096 keys, evicts the oldest first, and once full
//     admits a key only on its second miss (a 4096-key probation list).
//     lcctl evicts the oldest first too but holds up to maxRankCacheEntries
//     keys (fewer when their rankings would exceed maxRankCacheBytes) and
//     has no probation: the simulator keeps a key per live session (about
//     14,000 at 256 clusters), and a probation would compute every
//     session's second ranking too. Capacity and admission never change a
//     decision (TestPropCachesAreTransparent, TestPropRankCachePerKey).
//
// Pulsar-wait-and-widen upstream computes its ranking fresh on every
// decision (pulsar_wait_and_widen.rs decide_at → compute_ranking); lcctl
// serves it from the same cache, which gives the same ranking.
const (
	maxCachedKeyBytes   = 256
	minRankCacheEntries = 256
	maxRankCacheEntries = 32768
	// maxRankCacheBytes bounds the ranked indices (2 bytes each): 16,384
	// keys at 256 clusters, 32,768 up to 128.
	maxRankCacheBytes = 8 << 20
)

// rankCache holds rankings for one candidate set version. Entries are
// stored in insertion order in a ring (the oldest is overwritten first once
// the cache is full); index is an open-addressing table (linear probing)
// of entry numbers + 1 by key hash.
type rankCache struct {
	gen     uint64 // candidate set version of every entry; 0 = empty
	stride  int    // ranked indices reserved per entry (the candidate count)
	limit   int    // entries at most, for this stride
	entries []rankCacheEntry
	next    int // the ring position overwritten next once full
	// chunks hold the ranks, stride per entry, 1<<shift entries a chunk
	// (one chunk when the limit is below minRankCacheEntries), so growing
	// adds chunks and copies none.
	chunks [][]uint16
	shift  uint
	index  []int32
	// targets numbers the (routing key, model) pairs of the entries
	// (rankCacheEntry.target), at most maxRankTargets; byTarget finds
	// them, and last remembers the pair asked last (the very same
	// strings: an engine mostly sees one pair) and its number.
	targets  []rankTargetKey
	byTarget map[rankTargetKey]int
	last     rankTargetKey
	lastNum  int
	lastOK   bool // last is numbered lastNum
}

// rankTargetKey is a routing target: the routing key and model.
type rankTargetKey struct{ routingKey, model string }

// maxRankTargets is the most (routing key, model) pairs the cache numbers
// (12 bits of rankCacheEntry.meta); a new one past them empties it.
const maxRankTargets = 1 << 12

// headRanks is the most ranks an entry keeps in its own line
// (rankCacheEntry.head); more go to its chunk slot.
const headRanks = 16

// rankCacheEntry is one cached ranking: its first ranks (every rank
// unless a decision under Options.PartialOrder computed only a prefix;
// rankprefix.go), in head when there are at most headRanks of them (a
// partial decision's, mostly), else in the entry's chunk slot. It fills
// one 64-byte cache line: a hit reads its key and ranks from one line.
type rankCacheEntry struct {
	hash uint64
	key  string
	// meta packs, 17 bits each from the lowest: the ranks stored, the
	// ranked candidates, the first stored rank (0-based) whose score
	// near-ties the one before it (metaNoTie if none among the stored
	// ranks); then one bit: every candidate with a valid weight is ranked
	// (none has u = 1), so a candidate is ranked iff its weight is valid;
	// then, from bit 52, the number of the entry's routing target
	// (rankCache.targets).
	meta uint64
	head [headRanks]uint16
}

// metaNoTie is the tie field of rankCacheEntry.meta without a near-tie.
const metaNoTie = 1<<17 - 1

func (e *rankCacheEntry) stored() int    { return int(e.meta & metaNoTie) }
func (e *rankCacheEntry) total() int     { return int(e.meta >> 17 & metaNoTie) }
func (e *rankCacheEntry) validAll() bool { return e.meta>>51&1 == 1 }
func (e *rankCacheEntry) target() int    { return int(e.meta >> 52) }

// tie returns the near-tie rank, noTie if none.
func (e *rankCacheEntry) tie() int {
	if t := int(e.meta >> 34 & metaNoTie); t != metaNoTie {
		return t
	}
	return noTie
}

// setMeta sets meta from its fields (each count at most 65,536; a tie at
// or past stored counts as none).
func (e *rankCacheEntry) setMeta(stored, total, tie int, validAll bool) {
	t := uint64(metaNoTie)
	if tie < stored {
		t = uint64(tie)
	}
	e.meta = e.meta&^(1<<52-1) | uint64(stored) | uint64(total)<<17 | t<<34
	if validAll {
		e.meta |= 1 << 51
	}
}

// rankTargetHash is the routing key and model part of keyHash.
func rankTargetHash(routingKey, model string) uint64 {
	return bits.RotateLeft64(xxh3.HashString(routingKey), 21) ^ bits.RotateLeft64(xxh3.HashString(model), 42)
}

// rankTargetMemo remembers the last routing key and model hashed: an
// engine mostly sees the same ones (the simulator passes the very same
// strings), so a lookup hashes only the affinity key.
type rankTargetMemo struct {
	routingKey, model string
	h                 uint64
	ok                bool
}

// keyHash hashes a request's (cache affinity key, routing key, model) for
// the cache index (hits compare the strings too), reusing the routing key
// and model part for the very same strings (same bytes in memory) as last
// time.
func (m *rankTargetMemo) keyHash(rv *reqView) uint64 {
	same := func(a, b string) bool { return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b) }
	if !m.ok || !same(m.routingKey, rv.routingKey) || !same(m.model, rv.model) {
		m.routingKey, m.model, m.h, m.ok = rv.routingKey, rv.model, rankTargetHash(rv.routingKey, rv.model), true
	}
	return xxh3.HashString(rv.key) ^ m.h
}

// rankCacheable reports whether rankings for rv on n candidates are cached.
func rankCacheable(rv *reqView, n int) bool {
	return len(rv.key) <= maxCachedKeyBytes && n <= math.MaxUint16+1
}

// lookup returns the entry number of rv's ranking under candidate set
// version gen.
func (c *rankCache) lookup(gen, h uint64, rv *reqView) (int, bool) {
	if c.gen != gen || len(c.index) == 0 {
		return -1, false
	}
	t, ok := c.target(rv, false)
	if !ok {
		return -1, false // no entry has rv's routing target
	}
	mask := len(c.index) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		id := c.index[i]
		if id == 0 {
			return -1, false
		}
		e := &c.entries[id-1]
		if e.hash == h && e.target() == t && e.key == rv.key {
			return int(id - 1), true
		}
	}
}

// target returns the number of rv's routing target (routing key, model),
// numbering it when add is set and it has none (emptying the cache first
// when maxRankTargets are numbered); without add, false when it has none.
func (c *rankCache) target(rv *reqView, add bool) (int, bool) {
	same := func(a, b string) bool { return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b) }
	if c.lastOK && same(c.last.routingKey, rv.routingKey) && same(c.last.model, rv.model) {
		return c.lastNum, true
	}
	k := rankTargetKey{rv.routingKey, rv.model}
	t, ok := c.byTarget[k]
	if !ok {
		if !add {
			return -1, false
		}
		if len(c.targets) == maxRankTargets {
			c.reset(c.gen, c.stride)
		}
		if c.byTarget == nil {
			c.byTarget = make(map[rankTargetKey]int)
		}
		t = len(c.targets)
		c.targets = append(c.targets, k)
		c.byTarget[k] = t
	}
	c.last, c.lastNum, c.lastOK = k, t, true
	return t, true
}

// ranks returns the stored ranks of entry id.
func (c *rankCache) ranks(id int) []uint16 {
	e := &c.entries[id]
	if n := e.stored(); n <= headRanks {
		return e.head[:n]
	}
	return c.slot(id)[:e.stored()]
}

// slot returns the stride ranks reserved for entry id.
func (c *rankCache) slot(id int) []uint16 {
	p := (id & (1<<c.shift - 1)) * c.stride
	return c.chunks[id>>c.shift][p : p+c.stride]
}

// cover adds chunks until n entries have their slots.
func (c *rankCache) cover(n int) {
	per := min(1<<c.shift, c.limit)
	for len(c.chunks)*per < n {
		c.chunks = append(c.chunks, make([]uint16, per*c.stride))
	}
}

// store saves the first ranks of rv's ranking (ranked, in rank order; rs
// gives the ranked count, the near-tie rank and validAll) under candidate
// set version gen for n candidates: into entry id when id ≥ 0 (rv's entry,
// found by lookup in the same decision), else as a new entry, evicting the
// oldest when full. It returns the entry number.
func (c *rankCache) store(gen uint64, n int, h uint64, rv *reqView, ranked []rankEntry, rs *rankState, id int) int {
	if id < 0 || c.gen != gen || c.stride != n {
		id = c.insert(gen, n, h, rv)
	}
	e := &c.entries[id]
	e.setMeta(len(ranked), rs.total, rs.tie, rs.validAll)
	var dst []uint16
	if len(ranked) <= headRanks {
		dst = e.head[:len(ranked)]
	} else {
		dst = c.slot(id)[:len(ranked)]
	}
	for i := range ranked {
		dst[i] = uint16(ranked[i].idx)
	}
	return id
}

// insert adds an entry for rv (no ranks yet) under candidate set version
// gen for n candidates, evicting the oldest entry when full, and returns
// its number. The key must not be cached yet (callers insert after a
// missed lookup).
func (c *rankCache) insert(gen uint64, n int, h uint64, rv *reqView) int {
	if c.gen != gen || c.stride != n {
		c.reset(gen, n)
	}
	t, _ := c.target(rv, true) // may empty the cache
	var id int
	switch {
	case len(c.entries) < cap(c.entries):
		id = len(c.entries)
		c.entries = c.entries[:id+1]
	case cap(c.entries) < c.limit:
		c.grow()
		id = len(c.entries)
		c.entries = c.entries[:id+1]
	default:
		id = c.next
		c.next = (c.next + 1) % len(c.entries)
		c.remove(id)
	}
	c.entries[id] = rankCacheEntry{hash: h, key: rv.key, meta: uint64(t) << 52}
	c.place(id)
	return id
}

// reset empties the cache for version gen with stride n, keeping its
// memory when the stride allows.
func (c *rankCache) reset(gen uint64, n int) {
	c.gen, c.stride, c.next = gen, n, 0
	clear(c.targets) // drop the old pairs' strings
	c.targets, c.last, c.lastOK = c.targets[:0], rankTargetKey{}, false
	clear(c.byTarget)
	c.limit = max(1, min(maxRankCacheEntries, maxRankCacheBytes/(2*max(n, 1))))
	size := min(minRankCacheEntries, c.limit)
	if cap(c.entries) < size || cap(c.entries) > c.limit {
		c.entries = make([]rankCacheEntry, 0, size)
	}
	clear(c.entries[:cap(c.entries)]) // drop the old keys' strings
	c.entries = c.entries[:0]
	shift := uint(bits.Len(minRankCacheEntries - 1))
	if c.limit < minRankCacheEntries {
		shift = 30 // one chunk
	}
	if c.shift != shift || len(c.chunks) > 0 && len(c.chunks[0]) != min(1<<shift, c.limit)*n {
		c.chunks = nil
	}
	c.shift = shift
	c.cover(cap(c.entries))
	c.setIndex(cap(c.entries))
}

// grow doubles the entry capacity (up to limit) and rebuilds the index.
func (c *rankCache) grow() {
	size := min(2*cap(c.entries), c.limit)
	entries := make([]rankCacheEntry, len(c.entries), size)
	copy(entries, c.entries)
	c.entries = entries
	c.cover(size)
	c.setIndex(size)
	for id := range c.entries {
		c.place(id)
	}
}

// setIndex makes an empty index for up to n entries (load ≤ 1/2).
func (c *rankCache) setIndex(n int) {
	size := 1 << bits.Len(uint(2*n-1))
	if len(c.index) != size {
		c.index = make([]int32, size)
		return
	}
	clear(c.index)
}

// place adds entry id to the index.
func (c *rankCache) place(id int) {
	mask := len(c.index) - 1
	i := int(c.entries[id].hash) & mask
	for c.index[i] != 0 {
		i = (i + 1) & mask
	}
	c.index[i] = int32(id + 1)
}

// remove deletes entry id from the index (backward-shift deletion, so
// probes never need tombstones).
func (c *rankCache) remove(id int) {
	mask := len(c.index) - 1
	i := int(c.entries[id].hash) & mask
	for c.index[i] != int32(id+1) {
		i = (i + 1) & mask
	}
	for j := i; ; {
		j = (j + 1) & mask
		x := c.index[j]
		if x == 0 {
			break
		}
		home := int(c.entries[x-1].hash) & mask
		// Entry x may move to the hole at i unless its home lies in (i, j].
		if (i < j && i < home && home <= j) || (i > j && (home > i || home <= j)) {
			continue
		}
		c.index[i] = x
		i = j
	}
	c.index[i] = 0
}

// clearRankCache forgets every cached ranking and starts a new candidate
// set version.
func (e *Engine) clearRankCache() {
	e.rankCache = rankCache{}
	e.rankSet.gen++
}

// rankCandidateSet is the part of a ranking input shared by every key: the
// candidate ids in slice order and their weight bits (upstream's candidate
// signature). The engine keeps the current one and numbers its versions;
// the cache holds rankings of one version only.
type rankCandidateSet struct {
	gen uint64 // version, from 1; never reused
	ids []string
	// raw holds the bits of each candidate's selected weight field as
	// given (valid or not): equal bits give an equal weight and validity,
	// so the check per decision reads one field and compares.
	raw  []uint64
	mode RendezvousWeight
	// The hash loop's inputs, laid out in a row: each candidate's weight
	// (0 when not valid; pulsar.md §4.1) and its id's bytes,
	// idData[idStart[i]:idStart[i+1]]; maxWeight is the largest valid
	// weight (0 if none). idData ends with idPad zero bytes.
	weights   []float64
	idData    []byte
	idStart   []int32
	maxWeight float64
	valid     int // candidates with a valid weight
	// runs cover, in order, the candidates with a valid weight: each run
	// is consecutive candidates whose ids have one length (sumAll).
	runs []idRun
	// pos maps each id to its first position (Snapshot.Index).
	pos map[string]int32
}

// idRun is a run of rankCandidateSet: candidates from to to−1, each with
// a valid weight and an id of the same length as the others.
type idRun struct{ from, to int32 }

// index is Snapshot.Index(id) of the snapshot the set describes.
func (s *rankCandidateSet) index(id string) int {
	if i, ok := s.pos[id]; ok {
		return int(i)
	}
	return -1
}

// describesRoutable reports, in one pass, whether the set describes snap
// (ids and weight bits, as update compares them) and every cluster of
// snap is routable (Status.Routable: StatusActive): then snap is its own candidate slice
// and update would change nothing.
func (s *rankCandidateSet) describesRoutable(snap *Snapshot, mode RendezvousWeight) bool {
	cs := snap.Clusters
	if s.gen == 0 || len(s.ids) != len(cs) || s.mode != mode {
		return false
	}
	ids, raw := s.ids[:len(cs)], s.raw[:len(cs)]
	if mode == WeightLastMeanInputTPS {
		for i := range cs {
			c := &cs[i]
			a, b := ids[i], c.ClusterID
			if c.Status != StatusActive || math.Float64bits(c.Stats.LastMeanInputTPS) != raw[i] || len(a) != len(b) || (unsafe.StringData(a) != unsafe.StringData(b) && a != b) {
				return false
			}
		}
		return true
	}
	for i := range cs { // weightField's other mode: max_input_tps
		c := &cs[i]
		a, b := ids[i], c.ClusterID
		if c.Status != StatusActive || math.Float64bits(c.Stats.MaxInputTPS) != raw[i] || len(a) != len(b) || (unsafe.StringData(a) != unsafe.StringData(b) && a != b) {
			return false
		}
	}
	return true
}

// update makes the set describe snap, starting a new version when anything
// differs. It runs on every ranking lookup (upstream compares its candidate
// signature on every lookup too), so the loop only compares.
func (s *rankCandidateSet) update(snap *Snapshot, mode RendezvousWeight) {
	cs := snap.Clusters
	same := s.gen != 0 && len(s.ids) == len(cs) && s.mode == mode
	if same {
		ids, raw := s.ids[:len(cs)], s.raw[:len(cs)]
		for i := range cs {
			c := &cs[i]
			a, b := ids[i], c.ClusterID
			if math.Float64bits(weightField(mode, &c.Stats)) != raw[i] || len(a) != len(b) || (unsafe.StringData(a) != unsafe.StringData(b) && a != b) {
				same = false
				break
			}
		}
	}
	if same {
		return
	}
	s.gen++
	s.mode = mode
	s.ids, s.raw = s.ids[:0], s.raw[:0]
	s.weights, s.idData, s.idStart = s.weights[:0], s.idData[:0], append(s.idStart[:0], 0)
	s.maxWeight, s.valid = 0, 0
	s.runs = s.runs[:0]
	if s.pos == nil {
		s.pos = make(map[string]int32, len(cs))
	}
	clear(s.pos)
	for i := range cs {
		c := &cs[i]
		if _, dup := s.pos[c.ClusterID]; !dup {
			s.pos[c.ClusterID] = int32(i)
		}
		s.ids = append(s.ids, c.ClusterID)
		w := weightField(mode, &c.Stats)
		s.raw = append(s.raw, math.Float64bits(w))
		if !TPSValid(w) {
			w = 0
		}
		s.weights = append(s.weights, w)
		s.maxWeight = max(s.maxWeight, w)
		if w != 0 {
			s.valid++
			if r := len(s.runs) - 1; r >= 0 && s.runs[r].to == int32(i) && len(s.ids[i-1]) == len(c.ClusterID) {
				s.runs[r].to++
			} else {
				s.runs = append(s.runs, idRun{int32(i), int32(i + 1)})
			}
		}
		s.idData = append(s.idData, c.ClusterID...)
		s.idStart = append(s.idStart, int32(len(s.idData)))
	}
	s.idData = append(s.idData, make([]byte, idPad)...)
}

// idPad is the number of bytes after the last id in idData: the hash
// reads 8-byte words that may reach past an id, up to idSpan bytes from
// its start (candidateHasher.sumAll).
const idPad = idSpan
