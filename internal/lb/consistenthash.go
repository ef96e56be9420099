package lb

import "github.com/zeebo/xxh3"

// This file is a comparison policy for the simulator, not a Stargate
// algorithm: plain consistent hashing. It uses wait-and-widen's
// cache-affinity ring (wait-and-widen.md §4: the same byte layout, virtual
// nodes and walk) but has no load awareness at all: a request goes to the
// first cluster on the ring walk from its key that an earlier attempt has
// not excluded, however busy that cluster is.

// DefaultConsistentHashVirtualNodes is the virtual nodes per cluster of the
// comparison policy (wait-and-widen's default, 150).
const DefaultConsistentHashVirtualNodes = 150

// ConsistentHash is the plain consistent-hashing comparison policy. The key
// is the request's routing key, model and cache affinity key hashed as
// wait-and-widen's key_hash (an absent affinity key hashes as the empty
// string, so such requests share one ring position). It caches one ring
// per (routing key, model) like the engine. Not safe for concurrent use.
type ConsistentHash struct {
	seed   string
	vnodes int
	rings  map[ringCacheKey]*ring
	last   *ring
	buf    []byte
	excl   []bool
	seen   []bool
}

// NewConsistentHash returns the policy with the ring seed and virtual nodes
// per cluster (values below 1 mean 1).
func NewConsistentHash(seed string, virtualNodes int) *ConsistentHash {
	return &ConsistentHash{seed: seed, vnodes: max(virtualNodes, 1)}
}

// Pick returns the index in snap of the first non-excluded cluster on the
// ring walk for req (request headers normalised like the engine's), and its
// 1-based position among the distinct clusters of the walk. ok is false
// when the snapshot is empty or every cluster is excluded. It never panics.
func (c *ConsistentHash) Pick(snap *Snapshot, req *Request) (idx, depth int, ok bool) {
	if snap == nil || req == nil || len(snap.Clusters) == 0 {
		return -1, 0, false
	}
	routingKey, _ := HeaderString(req.RoutingKey)
	model, _ := HeaderString(req.Model)
	key, _ := HeaderString(req.CacheAffinityKey)
	r := c.ringFor(routingKey, model, snap.Clusters)
	n := len(snap.Clusters)
	if cap(c.excl) < n {
		c.excl = make([]bool, n)
		c.seen = make([]bool, n)
	}
	excl := c.excl[:n]
	clear(excl)
	for i := range snap.Clusters {
		for _, id := range req.ExcludedClusterIDs {
			if id == snap.Clusters[i].ClusterID {
				excl[i] = true
				break
			}
		}
	}
	b := AppendHashPrefix(c.buf[:0], c.seed, routingKey, model)
	b = AppendTagged(b, "cache_affinity_key", key)
	c.buf = b
	start := r.start(xxh3.Hash(b))
	// Walk the ring once; excluded clusters still count towards depth, so
	// depth is the cluster's position in the ring's affinity order.
	seen := c.seen[:n]
	clear(seen)
	depth = 0
	for j := 0; j < len(r.entries); j++ {
		p := start + j
		if p >= len(r.entries) {
			p -= len(r.entries)
		}
		i := int(r.entries[p].idx)
		if seen[i] {
			continue
		}
		seen[i] = true
		depth++
		if !excl[i] {
			return i, depth, true
		}
	}
	return -1, 0, false
}

func (c *ConsistentHash) ringFor(routingKey, model string, clusters []Cluster) *ring {
	if r := c.last; r != nil && r.matches(routingKey, model, clusters) {
		return r
	}
	if c.rings == nil {
		c.rings = make(map[ringCacheKey]*ring)
	}
	r := c.rings[ringCacheKey{routingKey, model}]
	if r == nil || !r.matches(routingKey, model, clusters) {
		if r == nil {
			if len(c.rings) >= maxCachedRings {
				clear(c.rings)
			}
			r = &ring{}
		}
		c.buf = r.build(c.buf, c.seed, routingKey, model, clusters, c.vnodes)
		c.rings[ringCacheKey{r.routingKey, r.model}] = r
	}
	c.last = r
	return r
}
