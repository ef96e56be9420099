package lb

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// ringEntry is one virtual node: its hash and the candidate index.
type ringEntry struct {
	hash uint64
	idx  int32
}

// ring is wait-and-widen's consistent-hash ring for one (seed, routing
// key, model, candidate id list, virtual nodes) (wait-and-widen.md §4.2).
// It depends on nothing else, so the engine caches it (§4.4).
type ring struct {
	routingKey, model string
	ids               []string
	entries           []ringEntry
	// keyPrefix is the hash prefix plus the "cache_affinity_key" tag and
	// separator: a key input is keyPrefix ‖ len(K) ‖ K.
	keyPrefix []byte
	// top[b] is the first entry whose hash's top byte is ≥ b, so a lookup
	// binary-searches only entries sharing the key's top byte.
	top [257]int32
}

// matches reports whether r was built for these inputs.
func (r *ring) matches(routingKey, model string, clusters []Cluster) bool {
	if r.routingKey != routingKey || r.model != model || len(r.ids) != len(clusters) {
		return false
	}
	for i := range clusters {
		a, b := r.ids[i], clusters[i].ClusterID
		// Same backing bytes (the usual case: the same snapshot reused) is
		// equality without a call; otherwise compare the contents.
		if len(a) != len(b) || (unsafe.StringData(a) != unsafe.StringData(b) && a != b) {
			return false
		}
	}
	return true
}

// build fills r for the given inputs: V entries per candidate in slice
// order, sorted by hash, then cluster id bytes, then candidate index
// (wait-and-widen.md §4.2). buf is scratch for the hash input.
func (r *ring) build(buf []byte, seed, routingKey, model string, clusters []Cluster, vnodes int) []byte {
	// Keep the caller's strings (immutable): a snapshot reused across
	// decisions then matches by pointer equality.
	r.routingKey = routingKey
	r.model = model
	r.ids = r.ids[:0]
	for i := range clusters {
		r.ids = append(r.ids, clusters[i].ClusterID)
	}
	r.entries = r.entries[:0]
	r.keyPrefix = AppendHashPrefix(r.keyPrefix[:0], seed, routingKey, model)
	r.keyPrefix = append(r.keyPrefix, "cache_affinity_key\xff"...)
	prefix := AppendHashPrefix(buf[:0], seed, routingKey, model)
	n := len(prefix)
	for i := range clusters {
		b := AppendTagged(prefix[:n], "cluster_id", clusters[i].ClusterID)
		m := len(b)
		for v := 0; v < vnodes; v++ {
			b = appendVirtualNode(b[:m], uint64(v))
			r.entries = append(r.entries, ringEntry{hash: xxh3.Hash(b), idx: int32(i)})
		}
		prefix = b
	}
	ids := r.ids
	slices.SortFunc(r.entries, func(a, b ringEntry) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		if c := strings.Compare(ids[a.idx], ids[b.idx]); c != 0 {
			return c
		}
		return int(a.idx) - int(b.idx)
	})
	j := 0
	for b := 0; b < 256; b++ {
		for j < len(r.entries) && int(r.entries[j].hash>>56) < b {
			j++
		}
		r.top[b] = int32(j)
	}
	r.top[256] = int32(len(r.entries))
	return prefix[:0]
}

// start returns the index of the first entry whose hash is ≥ keyHash
// (len(entries) when none is; the walk then wraps to 0).
func (r *ring) start(keyHash uint64) int {
	b := keyHash >> 56
	lo, hi := int(r.top[b]), int(r.top[b+1])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if r.entries[mid].hash < keyHash {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// keyHash is key_hash(K) of wait-and-widen.md §4.1 for this ring's seed,
// routing key and model; buf is scratch.
func (r *ring) keyHash(buf []byte, key string) (uint64, []byte) {
	b := append(buf[:0], r.keyPrefix...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(key)))
	b = append(b, key...)
	return xxh3.Hash(b), b
}

// walk appends to out, in walk order from start (wrapping once around the
// ring), each candidate index the first time it is seen, until want
// distinct candidates are collected (wait-and-widen.md §4.3). seen is
// scratch of at least len(ids) entries, reset by the caller to false.
func (r *ring) walk(start, want int, out []int, seen []bool) []int {
	n := len(r.entries)
	for j := 0; j < n && len(out) < want; j++ {
		p := start + j
		if p >= n {
			p -= n
		}
		idx := int(r.entries[p].idx)
		if !seen[idx] {
			seen[idx] = true
			out = append(out, idx)
		}
	}
	return out
}

// ringCacheKey identifies a cached ring; the candidate list is verified on
// every hit.
type ringCacheKey struct{ routingKey, model string }

// maxCachedRings bounds the per-engine ring cache.
const maxCachedRings = 256

// ringFor returns the cached ring for the request, building it on a miss.
func (e *Engine) ringFor(routingKey, model string, clusters []Cluster) *ring {
	if r := e.lastRing; r != nil && r.matches(routingKey, model, clusters) {
		return r
	}
	if e.rings == nil {
		e.rings = make(map[ringCacheKey]*ring)
	}
	r := e.rings[ringCacheKey{routingKey, model}]
	if r == nil || !r.matches(routingKey, model, clusters) {
		if r == nil {
			if len(e.rings) >= maxCachedRings {
				clear(e.rings)
			}
			r = &ring{}
		}
		e.hashBuf = r.build(e.hashBuf, e.cfg.Seed, routingKey, model, clusters, e.vnodes)
		e.rings[ringCacheKey{r.routingKey, r.model}] = r
	}
	e.lastRing = r
	return r
}
