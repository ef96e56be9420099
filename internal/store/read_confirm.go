package store

import (
	"context"
	"errors"
)

// confirmAbsent reads again, one DM.GET each (with the client's retry
// policy), the keys of every partition whose pipelined reads all came
// back not found. olric's pipeline (v0.7.4 pipeline.go execOnPartition)
// drops the error of a partition's round trip, and go-redis v9 leaves the
// commands untouched when it cannot get a connection (the member was
// killed, or the pool timed out): such a command has neither an error nor
// a value, which FutureGet.Result reports as ErrKeyNotFound. A partition's
// commands are either all untouched or all answered or given the
// connection's error, so a partition with at least one other outcome was
// answered and its not-founds are facts about the store.
func (c *Client) confirmAbsent(ctx context.Context, keys []string, res []getResult) {
	parts := c.PartitionCount()
	allAbsent := map[uint64]bool{}
	for i, k := range keys {
		p := Partition(c.opts.DMap, k, parts)
		absent := errors.Is(res[i].err, ErrNotFound)
		if prev, ok := allAbsent[p]; ok {
			absent = absent && prev
		}
		allAbsent[p] = absent
	}
	for i, k := range keys {
		if allAbsent[Partition(c.opts.DMap, k, parts)] {
			res[i].entry, res[i].err = c.get(ctx, k)
		}
	}
}
