package sim

import "math/bits"

// u64Map maps uint64 keys to values of type V: an open-addressing table with
// linear probing, Fibonacci hashing and backward-shift deletion (no
// tombstones), kept at most half full. It replaces a Go map on the
// simulator's hot paths (KV caches, last-cluster stores), where the keys
// are session numbers and hashes. A key and its value share a slot (one
// cache line per probe, when V is small: the gateway's store keeps its
// whole entry there). Slot key 0 means empty; the key 0 itself is kept
// aside.
type u64Map[V any] struct {
	slots   []u64Slot[V]
	n       int   // entries in the table (key 0 not counted)
	shift   uint8 // 64 − log2(len(slots))
	zero    V     // value of key 0 when hasZero
	hasZero bool
}

// u64Index is the map to positions in a slice.
type u64Index = u64Map[int32]

type u64Slot[V any] struct {
	key uint64
	val V
}

func (m *u64Map[V]) len() int {
	if m.hasZero {
		return m.n + 1
	}
	return m.n
}

// slot is the home slot of k.
func (m *u64Map[V]) slot(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> m.shift) }

func (m *u64Map[V]) get(k uint64) (v V, ok bool) {
	if k == 0 {
		return m.zero, m.hasZero // zero is V's zero value without key 0
	}
	if m.n == 0 {
		return v, false
	}
	mask := len(m.slots) - 1
	for i := m.slot(k); ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.key == k {
			return s.val, true
		}
		if s.key == 0 {
			return v, false
		}
	}
}

// ref returns a pointer to k's value, nil when k is absent; it is valid
// until the next insert or delete.
func (m *u64Map[V]) ref(k uint64) *V {
	if k == 0 {
		if !m.hasZero {
			return nil
		}
		return &m.zero
	}
	if m.n == 0 {
		return nil
	}
	mask := len(m.slots) - 1
	for i := m.slot(k); ; i = (i + 1) & mask {
		switch s := &m.slots[i]; s.key {
		case k:
			return &s.val
		case 0:
			return nil
		}
	}
}

// upsert returns a pointer to k's value and whether k was present; when
// it was not, k is inserted and the caller must store its value through
// the pointer before the next call.
func (m *u64Map[V]) upsert(k uint64) (*V, bool) {
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
func (m *u64Map[V]) put(k uint64, v V) {
	p, _ := m.upsert(k)
	*p = v
}

// del removes k, shifting later entries of its probe run back so that no
// lookup ever crosses an empty slot it should not.
func (m *u64Map[V]) del(k uint64) {
	if k == 0 {
		var zero V
		m.zero, m.hasZero = zero, false
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
	m.slots[i] = u64Slot[V]{}
	m.n--
}

func (m *u64Map[V]) grow() {
	old := m.slots
	size := max(2*len(old), 16)
	m.slots = make([]u64Slot[V], size)
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

func (m *u64Map[V]) clear() {
	clear(m.slots)
	var zero V
	m.n, m.zero, m.hasZero = 0, zero, false
}
