package sim

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

// lcEntry is one last-cluster store entry.
type lcEntry struct {
	cluster int32
	expires int64 // ns
}

// lcStore is the gateway's last-cluster store (gateway.md §5): Get
// (absent or expired = miss) and Set (value and TTL reset). The local
// store is an LRU with a cap where a hit refreshes recency but not expiry
// and expired entries linger until read or pushed out (§5.2); the shared
// (Olric) store has no cap and expires entries by TTL (§5.1).
//
// The shared store keeps each entry in its table slot (one cache line per
// Get or Set; a wide scenario's tens of thousands of sessions make every
// store access a miss) and its writes, in order, in a log that sweep
// consumes from the old end: every entry has the same TTL, so the order of
// writes is the order of expiry. A log record whose key was written again
// since, or read after expiry and dropped, no longer matches the table
// and is skipped; the log is compacted when such records outnumber the
// entries, so it stays within twice the live entries (amortised O(1) per
// Set). Only Get's answers are observable, and they are those of the
// table: the latest write, while it is younger than the TTL. The entries
// that belong to one synthetic session are not written here at all: they
// travel with the session's turns (runner.ownStore).
type lcStore struct {
	l     *lru[lcEntry] // local
	tab   u64Map[lcEntry]
	log   fifo[lcWrite] // shared: the writes, oldest first
	ttl   int64         // ns
	cap   int           // 0 = no cap
	local bool
}

// lcWrite is one write of the shared store's log.
type lcWrite struct {
	key     uint64
	expires int64 // ns
}

func newLCStore(ttl int64, local bool, capacity int) *lcStore {
	s := &lcStore{ttl: ttl, local: local}
	if local {
		s.l = newLRU[lcEntry]()
		s.cap = max(capacity, 1)
	}
	return s
}

// len is the number of entries held (expired ones included until swept).
func (s *lcStore) len() int {
	if s.local {
		return s.l.len()
	}
	return s.tab.len()
}

// get returns the stored cluster for key at time now.
func (s *lcStore) get(key uint64, now int64) (int32, bool) {
	if !s.local {
		e := s.tab.ref(key)
		if e == nil {
			return -1, false
		}
		if now >= e.expires {
			s.tab.del(key)
			return -1, false
		}
		return e.cluster, true
	}
	e, ok := s.l.get(key, true)
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
	e := lcEntry{cluster: cluster, expires: at + s.ttl}
	if !s.local {
		p, _ := s.tab.upsert(key)
		*p = e
		s.log.push(lcWrite{key: key, expires: e.expires})
		if s.log.len() > 2*s.tab.len()+64 {
			s.compactLog()
		}
		return
	}
	if s.l.put(key, e) {
		for s.l.len() > s.cap {
			s.l.removeAt(s.l.tail)
		}
	}
}

// current reports whether log record w is its key's latest write still
// in the table.
func (s *lcStore) current(w lcWrite) bool {
	e := s.tab.ref(w.key)
	return e != nil && e.expires == w.expires
}

// compactLog drops the records that no longer match the table, keeping
// the others in order.
func (s *lcStore) compactLog() {
	n := s.log.len()
	for i := 0; i < n; i++ {
		if w := s.log.pop(); s.current(w) {
			s.log.push(w)
		}
	}
}

// sweep drops expired entries from the old end of a shared store (a
// memory bound only: get checks expiry itself).
func (s *lcStore) sweep(now int64) {
	if s.local {
		return
	}
	for s.log.len() > 0 && now >= s.log.front().expires {
		if w := s.log.pop(); s.current(w) {
			s.tab.del(w.key)
		}
	}
}
