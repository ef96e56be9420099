package sim

// chainCache is blockCache for block ids with structure: the blocks of
// synthetic workloads and CSV traces belong to chains (a model's system
// prompt, a hot set prefix, a session's conversation), block i of a chain
// standing for the chain's first i+1 blocks after the chain's start. It
// keeps exactly the state blockCache would keep for those ids, in
// O(runs) instead of O(blocks) per request:
//
//   - A request references a leading run [0, h) of each chain it uses, so
//     the referenced blocks of a chain are a prefix [0, f), f the largest
//     h of the chain's running requests (its holders).
//   - A request frees its blocks last first, so the free blocks of one
//     release, [f', h), form a batch whose recency falls with the index,
//     and the batches of a chain are ordered: the lower the indices, the
//     more recent. The least recently freed block of the whole cache is
//     therefore the highest block of the oldest batch, which is also its
//     chain's highest cached block: the cached blocks of a chain stay a
//     prefix [0, cached).
//
// A batch is a run [lo, hi) in the global eviction list (head = most
// recent); a chain keeps its runs in index order in a list of its own
// through the runs (first = lowest indices). Chains hold no pointers: the
// largest hold sits in the chain and the rare further ones (requests of
// one chain holding different lengths at once) in a side table, so the
// chain table grows without write barriers and the collector never scans
// it. TestChainCacheMatchesBlockCache checks the equivalence on random
// workloads.
type chainCache struct {
	index     u64Index // chain key → chains index
	chains    []chain
	runs      []run
	head      int32 // most recent run; -1 none
	tail      int32 // least recent run; -1 none
	total     int64 // cached blocks
	capBlocks int64
	freeRun   []int32
	freeCh    []int32
	more      map[int32][]holder // chain → its holds below the largest, largest first
	evictions int64
}

type chain struct {
	key         uint64
	cached      int64
	top         holder // the largest hold (n == 0: nobody holds the chain)
	nMore       int32  // holds in more[chain]
	first, last int32  // free runs, lowest indices (most recent) first; -1 none
	live        bool
}

type holder struct {
	h, n int64
}

type run struct {
	chain        int32
	lo, hi       int64
	prev, next   int32 // the global eviction list
	cprev, cnext int32 // the chain's list
}

func newChainCache(capBlocks int64) chainCache {
	return chainCache{head: -1, tail: -1, capBlocks: capBlocks}
}

// find returns the chain of key, -1 when it has no blocks and no holders.
func (c *chainCache) find(key uint64) int32 {
	if i, ok := c.index.get(key); ok {
		return i
	}
	return -1
}

// at returns hint when it is key's chain (a position a request noted
// earlier), else -1: a live chain with the key is the one the index
// maps it to, so a request that remembers where its chains are skips the
// index (a cache miss per lookup on wide scenarios) and gets the same
// chain find would.
func (c *chainCache) at(hint int32, key uint64) int32 {
	if hint >= 0 && int(hint) < len(c.chains) {
		if ch := &c.chains[hint]; ch.live && ch.key == key {
			return hint
		}
	}
	return -1
}

func (c *chainCache) obtain(key uint64, hint int32) int32 {
	if i := c.at(hint, key); i >= 0 {
		return i
	}
	p, found := c.index.upsert(key)
	if found {
		return *p
	}
	var i int32
	if n := len(c.freeCh); n > 0 {
		i = c.freeCh[n-1]
		c.freeCh = c.freeCh[:n-1]
	} else {
		c.chains = append(c.chains, chain{})
		i = int32(len(c.chains) - 1)
	}
	*p = i
	c.chains[i] = chain{key: key, first: -1, last: -1, live: true}
	return i
}

// dropIfEmpty forgets a chain without blocks and holders.
func (c *chainCache) dropIfEmpty(ci int32) {
	ch := &c.chains[ci]
	if ch.cached == 0 && ch.top.n == 0 && ch.live {
		ch.live = false
		c.index.del(ch.key)
		c.freeCh = append(c.freeCh, ci)
	}
}

func (ch *chain) maxHeld() int64 {
	if ch.top.n == 0 {
		return 0
	}
	return ch.top.h
}

// addHolder counts a hold of h blocks on chain ci.
func (c *chainCache) addHolder(ci int32, h int64) {
	if h <= 0 {
		return
	}
	ch := &c.chains[ci]
	switch {
	case ch.top.n == 0:
		ch.top = holder{h: h, n: 1}
		return
	case ch.top.h == h:
		ch.top.n++
		return
	case ch.top.h < h:
		// The new hold is the largest: the old largest heads the rest.
		c.insertMore(ci, 0, ch.top)
		ch.top = holder{h: h, n: 1}
		return
	}
	more := c.more[ci]
	for i := range more {
		if more[i].h == h {
			more[i].n++
			return
		}
		if more[i].h < h {
			c.insertMore(ci, i, holder{h: h, n: 1})
			return
		}
	}
	c.insertMore(ci, len(more), holder{h: h, n: 1})
}

func (c *chainCache) insertMore(ci int32, i int, hd holder) {
	if c.more == nil {
		c.more = map[int32][]holder{}
	}
	more := append(c.more[ci], holder{})
	copy(more[i+1:], more[i:])
	more[i] = hd
	c.more[ci] = more
	c.chains[ci].nMore++
}

// removeHolder drops one hold of h blocks from chain ci.
func (c *chainCache) removeHolder(ci int32, h int64) {
	if h <= 0 {
		return
	}
	ch := &c.chains[ci]
	if ch.top.n > 0 && ch.top.h == h {
		if ch.top.n--; ch.top.n > 0 {
			return
		}
		if ch.nMore == 0 {
			ch.top = holder{}
			return
		}
		more := c.more[ci]
		ch.top = more[0]
		c.deleteMore(ci, more, 0)
		return
	}
	if ch.nMore == 0 {
		return
	}
	more := c.more[ci]
	for i := range more {
		if more[i].h == h {
			if more[i].n--; more[i].n == 0 {
				c.deleteMore(ci, more, i)
			}
			return
		}
	}
}

func (c *chainCache) deleteMore(ci int32, more []holder, i int) {
	more = append(more[:i], more[i+1:]...)
	if len(more) == 0 {
		delete(c.more, ci)
	} else {
		c.more[ci] = more
	}
	c.chains[ci].nMore--
}

// unlinkRun takes run ri out of the eviction list and frees it (its
// chain's list is the caller's).
func (c *chainCache) unlinkRun(ri int32) {
	r := &c.runs[ri]
	if r.prev >= 0 {
		c.runs[r.prev].next = r.next
	} else {
		c.head = r.next
	}
	if r.next >= 0 {
		c.runs[r.next].prev = r.prev
	} else {
		c.tail = r.prev
	}
	c.freeRun = append(c.freeRun, ri)
}

// dropChainRun takes run ri out of its chain's list (the eviction list
// is unlinkRun's).
func (c *chainCache) dropChainRun(ch *chain, ri int32) {
	r := &c.runs[ri]
	if r.cprev >= 0 {
		c.runs[r.cprev].cnext = r.cnext
	} else {
		ch.first = r.cnext
	}
	if r.cnext >= 0 {
		c.runs[r.cnext].cprev = r.cprev
	} else {
		ch.last = r.cprev
	}
}

// reference marks the chain's blocks [0, upto) referenced: free runs
// below upto lose those blocks (they sit at the front of the chain's
// runs).
func (c *chainCache) reference(ch *chain, upto int64) {
	for ch.first >= 0 {
		ri := ch.first
		r := &c.runs[ri]
		if r.lo >= upto {
			return
		}
		if r.hi <= upto {
			c.dropChainRun(ch, ri)
			c.unlinkRun(ri)
			continue
		}
		r.lo = upto
		return
	}
}

// match references the longest cached leading run of the chain up to
// want blocks and returns its length and the chain's position (-1 when
// the chain has no blocks; hint as for extend).
func (c *chainCache) match(key uint64, hint int32, want int64) (int64, int32) {
	ci := c.at(hint, key)
	if ci < 0 {
		ci = c.find(key)
	}
	if ci < 0 || want <= 0 {
		return 0, ci
	}
	ch := &c.chains[ci]
	m := min(ch.cached, want)
	if m > 0 {
		if m > ch.maxHeld() {
			c.reference(ch, m)
		}
		c.addHolder(ci, m)
	}
	return m, ci
}

// extend takes a request's hold on the chain from [0, from) to
// [0, upto): cached blocks are referenced, missing ones written, each
// evicting the least recently freed block when the cache is full. It
// returns the new hold, short of upto when no block could be evicted,
// and the chain's position (hint: where the caller saw the chain last,
// -1 unknown), -1 when the chain was dropped.
func (c *chainCache) extend(key uint64, hint int32, from, upto int64) (int64, int32) {
	if upto <= from {
		return from, hint
	}
	ci := c.obtain(key, hint)
	h := c.fill(ci, from, upto)
	c.removeHolder(ci, from)
	c.addHolder(ci, h)
	if h == 0 {
		c.dropIfEmpty(ci)
		return h, -1
	}
	return h, ci
}

// fill is the common part of extend and extendRelease: it references
// chain ci's cached blocks up to upto (in blocks' tokens), caches what is
// missing above them when the chain is cached to its end (making room by
// dropping other chains), and returns the request's new hold, at least
// from.
func (c *chainCache) fill(ci int32, from, upto int64) int64 {
	ch := &c.chains[ci]
	h := min(ch.cached, upto)
	if h > ch.maxHeld() {
		c.reference(ch, h)
	}
	if need := upto - max(h, from); need > 0 && h == ch.cached {
		got := c.makeRoom(need)
		ch = &c.chains[ci] // makeRoom may drop other chains, never this one
		ch.cached += got
		c.total += got
		h = ch.cached
	}
	return max(h, from)
}

// extendRelease is extend followed by release of the hold extend
// returns (when it is not empty), in one step; it returns the chain's
// position as extend does. The request's holds before and after are
// [0, from) and nothing: the chain's holder counts lose from, and the
// blocks above the other holders' largest hold become the most recently
// freed batch, as release would make them.
func (c *chainCache) extendRelease(key uint64, hint int32, from, upto int64) int32 {
	if upto <= from {
		if from > 0 {
			c.release(key, hint, from)
		}
		return hint
	}
	ci := c.obtain(key, hint)
	h := c.fill(ci, from, upto)
	c.removeHolder(ci, from)
	if h == 0 {
		c.dropIfEmpty(ci)
		return -1
	}
	// release(h) after addHolder(h): the largest hold was max(lo, h) and
	// becomes lo, the others' largest; h ≤ cached.
	if lo := c.chains[ci].maxHeld(); lo < h {
		c.pushRun(ci, lo, h)
	}
	c.dropIfEmpty(ci)
	return ci
}

// makeRoom frees up to n places, evicting least recently freed blocks,
// and returns how many places there are for new blocks (≤ n).
func (c *chainCache) makeRoom(n int64) int64 {
	room := min(max(c.capBlocks-c.total, 0), n)
	for room < n && c.tail >= 0 {
		ri := c.tail
		r := &c.runs[ri]
		ci := r.chain
		ch := &c.chains[ci]
		k := min(n-room, r.hi-r.lo)
		r.hi -= k
		ch.cached -= k
		c.total -= k
		c.evictions += k
		room += k
		if r.hi == r.lo {
			c.dropChainRun(ch, ri) // the oldest run, the chain's last
			c.unlinkRun(ri)
			c.dropIfEmpty(ci)
		}
	}
	return room
}

// release drops a hold of h blocks; the blocks nobody holds any more
// become the most recently freed batch (hint as for extend).
func (c *chainCache) release(key uint64, hint int32, h int64) {
	ci := c.at(hint, key)
	if ci < 0 {
		ci = c.find(key)
	}
	if ci < 0 || h <= 0 {
		return
	}
	ch := &c.chains[ci]
	before := ch.maxHeld()
	c.removeHolder(ci, h)
	lo := ch.maxHeld()
	if hi := min(h, before, ch.cached); lo < hi && hi == before {
		c.pushRun(ci, lo, hi)
	}
	c.dropIfEmpty(ci)
}

// pushRun makes chain ci's blocks [lo, hi) the most recently freed batch
// (the chain's lowest free run).
func (c *chainCache) pushRun(ci int32, lo, hi int64) {
	ch := &c.chains[ci]
	var ri int32
	if n := len(c.freeRun); n > 0 {
		ri = c.freeRun[n-1]
		c.freeRun = c.freeRun[:n-1]
	} else {
		c.runs = append(c.runs, run{})
		ri = int32(len(c.runs) - 1)
	}
	c.runs[ri] = run{chain: ci, lo: lo, hi: hi, prev: -1, next: c.head, cprev: -1, cnext: ch.first}
	if c.head >= 0 {
		c.runs[c.head].prev = ri
	}
	c.head = ri
	if c.tail < 0 {
		c.tail = ri
	}
	if ch.first >= 0 {
		c.runs[ch.first].cprev = ri
	} else {
		ch.last = ri
	}
	ch.first = ri
}

// clear drops every block and hold (a failed cluster).
func (c *chainCache) clear() {
	c.index.clear()
	c.chains = c.chains[:0]
	c.freeCh = c.freeCh[:0]
	c.runs = c.runs[:0]
	c.freeRun = c.freeRun[:0]
	clear(c.more)
	c.head, c.tail = -1, -1
	c.total = 0
}
