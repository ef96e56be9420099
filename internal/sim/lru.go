package sim

import "math/bits"

// lru is a map from uint64 keys to values with a recency list, stored in a
// node slice with a free list, so that steady-state use allocates nothing
// (the index keeps its table after deletes).
type lru[V any] struct {
	index      u64Index
	nodes      []lruNode[V]
	free       []int32
	head, tail int32 // most and least recently used; -1 when empty
}

type lruNode[V any] struct {
	key        uint64
	val        V
	prev, next int32
}

func newLRU[V any]() *lru[V] {
	return &lru[V]{head: -1, tail: -1}
}

func (l *lru[V]) len() int { return l.index.len() }

func (l *lru[V]) unlink(i int32) {
	n := &l.nodes[i]
	if n.prev >= 0 {
		l.nodes[n.prev].next = n.next
	} else {
		l.head = n.next
	}
	if n.next >= 0 {
		l.nodes[n.next].prev = n.prev
	} else {
		l.tail = n.prev
	}
}

func (l *lru[V]) linkFront(i int32) {
	n := &l.nodes[i]
	n.prev, n.next = -1, l.head
	if l.head >= 0 {
		l.nodes[l.head].prev = i
	}
	l.head = i
	if l.tail < 0 {
		l.tail = i
	}
}

// get returns the value for key; touch moves it to the front.
func (l *lru[V]) get(key uint64, touch bool) (*V, bool) {
	i, ok := l.index.get(key)
	if !ok {
		return nil, false
	}
	if touch && l.head != i {
		l.unlink(i)
		l.linkFront(i)
	}
	return &l.nodes[i].val, true
}

// put sets key to v and moves it to the front; it reports whether the key
// is new.
func (l *lru[V]) put(key uint64, v V) bool {
	_, isNew := l.swap(key, v)
	return isNew
}

// swap is put that also returns the value it replaced (when not new). One
// index probe finds the key or the place to insert it.
func (l *lru[V]) swap(key uint64, v V) (old V, isNew bool) {
	p, found := l.index.upsert(key)
	if found {
		i := *p
		old, l.nodes[i].val = l.nodes[i].val, v
		if l.head != i {
			l.unlink(i)
			l.linkFront(i)
		}
		return old, false
	}
	var i int32
	if n := len(l.free); n > 0 {
		i = l.free[n-1]
		l.free = l.free[:n-1]
	} else {
		l.nodes = append(l.nodes, lruNode[V]{})
		i = int32(len(l.nodes) - 1)
	}
	*p = i
	l.nodes[i].key, l.nodes[i].val = key, v
	l.linkFront(i)
	return old, true
}

// remove deletes key and returns its value.
func (l *lru[V]) remove(key uint64) (V, bool) {
	i, ok := l.index.get(key)
	if !ok {
		var zero V
		return zero, false
	}
	return l.removeAt(i), true
}

func (l *lru[V]) removeAt(i int32) V {
	n := &l.nodes[i]
	v := n.val
	l.unlink(i)
	l.index.del(n.key)
	var zero V
	n.val = zero
	l.free = append(l.free, i)
	return v
}

// oldest returns the least recently used entry.
func (l *lru[V]) oldest() (uint64, *V, bool) {
	if l.tail < 0 {
		return 0, nil, false
	}
	n := &l.nodes[l.tail]
	return n.key, &n.val, true
}

// lcEntry is one last-cluster store entry.
type lcEntry struct {
	cluster int32
	expires int64 // ns
}

// lcStore is the gateway's last-cluster store (gateway.md §5): Get
// (absent or expired = miss) and Set (value and TTL reset). The local
// store is an LRU with a cap where a hit refreshes recency but not expiry
// and expired entries linger until read or pushed out (§5.2); the shared
// (Olric) store has no cap and expires entries by TTL (§5.1), so it keeps
// its list in write order and sweeps expired entries from the old end.
type lcStore struct {
	l     *lru[lcEntry]
	ttl   int64 // ns
	cap   int   // 0 = no cap
	local bool
}

func newLCStore(ttl int64, local bool, capacity int) *lcStore {
	s := &lcStore{l: newLRU[lcEntry](), ttl: ttl, local: local}
	if local {
		s.cap = max(capacity, 1)
	}
	return s
}

// get returns the stored cluster for key at time now.
func (s *lcStore) get(key uint64, now int64) (int32, bool) {
	e, ok := s.l.get(key, s.local)
	if !ok {
		return -1, false
	}
	if now >= e.expires {
		s.l.remove(key)
		return -1, false
	}
	return e.cluster, true
}

// set writes cluster for key at time at (expiry at + TTL).
func (s *lcStore) set(key uint64, cluster int32, at int64) {
	if s.l.put(key, lcEntry{cluster: cluster, expires: at + s.ttl}) && s.cap > 0 {
		for s.l.len() > s.cap {
			s.l.removeAt(s.l.tail)
		}
	}
}

// sweep drops expired entries from the old end of a shared store (a
// memory bound only: get checks expiry itself).
func (s *lcStore) sweep(now int64) {
	if s.local {
		return
	}
	for {
		_, e, ok := s.l.oldest()
		if !ok || now < e.expires {
			return
		}
		s.l.removeAt(s.l.tail)
	}
}

// u64Index maps uint64 keys to int32 values: an open-addressing table with
// linear probing, Fibonacci hashing and backward-shift deletion (no
// tombstones), kept at most half full. It replaces a Go map on the
// simulator's hot paths (KV caches, last-cluster stores), where the keys
// are session numbers and hashes. A key and its value share a slot (one
// cache line per probe). Slot key 0 means empty; the key 0 itself is kept
// aside.
type u64Index struct {
	slots   []u64Slot
	n       int   // entries in the table (key 0 not counted)
	shift   uint8 // 64 − log2(len(slots))
	zero    int32 // value of key 0 when hasZero
	hasZero bool
}

type u64Slot struct {
	key uint64
	val int32
}

func (m *u64Index) len() int {
	if m.hasZero {
		return m.n + 1
	}
	return m.n
}

// slot is the home slot of k.
func (m *u64Index) slot(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> m.shift) }

func (m *u64Index) get(k uint64) (int32, bool) {
	if k == 0 {
		if !m.hasZero {
			return 0, false
		}
		return m.zero, true
	}
	if m.n == 0 {
		return 0, false
	}
	mask := len(m.slots) - 1
	for i := m.slot(k); ; i = (i + 1) & mask {
		switch s := &m.slots[i]; s.key {
		case k:
			return s.val, true
		case 0:
			return 0, false
		}
	}
}

// upsert returns a pointer to k's value and whether k was present; when
// it was not, k is inserted and the caller must store its value through
// the pointer before the next call.
func (m *u64Index) upsert(k uint64) (*int32, bool) {
	if k == 0 {
		found := m.hasZero
		m.hasZero = true
		return &m.zero, found
	}
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	mask := len(m.slots) - 1
	for i := m.slot(k); ; i = (i + 1) & mask {
		switch s := &m.slots[i]; s.key {
		case k:
			return &s.val, true
		case 0:
			s.key = k
			m.n++
			return &s.val, false
		}
	}
}

// put sets k to v (inserting or replacing).
func (m *u64Index) put(k uint64, v int32) {
	p, _ := m.upsert(k)
	*p = v
}

// del removes k, shifting later entries of its probe run back so that no
// lookup ever crosses an empty slot it should not.
func (m *u64Index) del(k uint64) {
	if k == 0 {
		m.zero, m.hasZero = 0, false
		return
	}
	if m.n == 0 {
		return
	}
	mask := len(m.slots) - 1
	i := m.slot(k)
	for m.slots[i].key != k {
		if m.slots[i].key == 0 {
			return
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; m.slots[j].key != 0; j = (j + 1) & mask {
		// The entry at j may move to the hole at i unless its home slot
		// lies cyclically in (i, j].
		if h := m.slot(m.slots[j].key); (j-h)&mask >= (j-i)&mask {
			m.slots[i] = m.slots[j]
			i = j
		}
	}
	m.slots[i] = u64Slot{}
	m.n--
}

func (m *u64Index) grow() {
	old := m.slots
	size := max(2*len(old), 16)
	m.slots = make([]u64Slot, size)
	m.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	m.n = 0
	mask := size - 1
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		i := m.slot(s.key)
		for m.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		m.slots[i] = s
		m.n++
	}
}

func (m *u64Index) clear() {
	clear(m.slots)
	m.n, m.hasZero = 0, false
}
