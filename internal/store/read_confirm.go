package store

import (
	"context"
	"errors"
)

// retryReads settles the results of one pipelined read: it reads again,
// one DM.GET each with the client's retry policy, the keys whose
// pipelined read failed, and the keys of every partition whose pipelined
// reads all came back not found. olric's pipeline (v0.7.4 pipeline.go
// execOnPartition) drops the error of a partition's round trip, and
// go-redis v9 leaves the commands untouched when it cannot get a
// connection (the member was killed, or the pool timed out): such a
// command has neither an error nor a value, which FutureGet.Result reports
// as ErrKeyNotFound. A partition's commands are either all untouched or
// all answered or given the connection's error, so a partition with at
// least one other outcome was answered and its not-founds are facts.
//
// Once a key's retry fails for a reason other than not-found, the other
// keys of its partition in this batch get the same error without a call:
// a killed member would otherwise cost every key the whole retry policy.
func (c *Client) retryReads(ctx context.Context, keys []string, res []getResult) {
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
	failed := map[uint64]error{}
	for i, k := range keys {
		p := Partition(c.opts.DMap, k, parts)
		if res[i].err == nil || (errors.Is(res[i].err, ErrNotFound) && !allAbsent[p]) {
			continue
		}
		if err, ok := failed[p]; ok {
			res[i] = getResult{err: err}
			continue
		}
		res[i].entry, res[i].err = c.get(ctx, k)
		if res[i].err != nil && !errors.Is(res[i].err, ErrNotFound) {
			failed[p] = res[i].err
		}
	}
}
