package sim

// blockCache is one cluster's prefix cache at block granularity, the way
// vLLM's automatic prefix caching keeps it (vllm/v1/core/block_pool.py,
// kv_cache_manager.py): the KV cache holds fixed-size blocks of
// block_tokens tokens, each identified by a chained id that stands for the
// whole prefix up to and including the block, so two requests share
// exactly their common leading run of ids. A block is referenced while a
// request that uses it runs and cannot be evicted then; an unreferenced
// block stays cached and is evicted least recently freed first when a new
// block needs its room. The cache never holds more than capBlocks blocks,
// referenced or not.
//
// Ids live in a u64Index (block id → node); the nodes sit in a slice with
// a free list and the unreferenced ones form a doubly linked eviction
// list, so steady-state use allocates nothing.
type blockCache struct {
	index      u64Index
	nodes      []blockNode
	free       []int32
	head, tail int32 // most and least recently freed unreferenced blocks; -1 when none
	capBlocks  int64
	evictions  int64
}

type blockNode struct {
	id         uint64
	ref        int32
	prev, next int32 // eviction list links while ref == 0
}

func newBlockCache(capBlocks int64) blockCache {
	return blockCache{head: -1, tail: -1, capBlocks: capBlocks}
}

// blocks is the number of blocks held (referenced or not).
func (c *blockCache) blocks() int { return c.index.len() }

func (c *blockCache) unlink(i int32) {
	n := &c.nodes[i]
	if n.prev >= 0 {
		c.nodes[n.prev].next = n.next
	} else {
		c.head = n.next
	}
	if n.next >= 0 {
		c.nodes[n.next].prev = n.prev
	} else {
		c.tail = n.prev
	}
	n.prev, n.next = -1, -1
}

func (c *blockCache) linkFront(i int32) {
	n := &c.nodes[i]
	n.prev, n.next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = i
	}
	c.head = i
	if c.tail < 0 {
		c.tail = i
	}
}

// hit references a cached block and reports whether it was there (a
// prefix match takes blocks with hit until the first miss).
func (c *blockCache) hit(id uint64) bool {
	i, ok := c.index.get(id)
	if !ok {
		return false
	}
	n := &c.nodes[i]
	if n.ref == 0 {
		c.unlink(i)
	}
	n.ref++
	return true
}

// acquire references block id, writing it into the cache when absent. A
// new block takes a free place or evicts the least recently freed
// unreferenced block; when every held block is referenced (or the
// capacity is 0) there is no room and acquire reports false: the request
// computes the block but nobody can reuse it.
func (c *blockCache) acquire(id uint64) bool {
	if c.hit(id) {
		return true
	}
	if int64(c.index.len()) >= c.capBlocks {
		if c.tail < 0 {
			return false
		}
		c.evict(c.tail)
	}
	var i int32
	if n := len(c.free); n > 0 {
		i = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.nodes = append(c.nodes, blockNode{})
		i = int32(len(c.nodes) - 1)
	}
	c.nodes[i] = blockNode{id: id, ref: 1, prev: -1, next: -1}
	c.index.put(id, i)
	return true
}

func (c *blockCache) evict(i int32) {
	c.unlink(i)
	c.index.del(c.nodes[i].id)
	c.free = append(c.free, i)
	c.evictions++
}

// release drops one reference to block id; an unreferenced block becomes
// the most recently freed. Releasing a block that is not held is a no-op
// (the cluster failed and was cleared meanwhile).
func (c *blockCache) release(id uint64) {
	i, ok := c.index.get(id)
	if !ok {
		return
	}
	n := &c.nodes[i]
	if n.ref <= 0 {
		return
	}
	if n.ref--; n.ref == 0 {
		c.linkFront(i)
	}
}

// clear drops every block (a failed cluster loses its KV cache).
func (c *blockCache) clear() {
	c.index.clear()
	c.nodes = c.nodes[:0]
	c.free = c.free[:0]
	c.head, c.tail = -1, -1
}
