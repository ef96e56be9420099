package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/lcctl/lcctl/internal/plural"
)

// evictRetryRounds bounds how often verifyEvict handles candidates found
// again after the routing table settled.
const evictRetryRounds = 2

// verifyEvict checks, after the apply phase, what the apply phase could not
// prove (see Evict): the candidates counted deleted (not rewritten) or
// gone in partitions whose owners changed during the run (changed; nil
// when none did), and every failed candidate. It waits for the routing
// table to settle, reads them again and updates results in place.
func (c *Client) verifyEvict(ctx context.Context, o EvictOptions, tr *routeTracker, changed []bool, results []EvictResult, rep *EvictReport) {
	parts := c.PartitionCount()
	for _, ch := range changed {
		if ch {
			rep.Settle.ChangedPartitions++
		}
	}
	suspect := func(r EvictResult) bool {
		switch {
		case r.Outcome == EvictFailed:
			return true
		case changed == nil:
			return false
		case r.Outcome == EvictSkippedGone, r.Outcome == EvictDeleted && !r.Rewritten:
			// Decided before the change was seen is no better: a member
			// is frozen for its failure-detection time before the table
			// shows it, and a delete acknowledged meanwhile (write quorum
			// 1) leaves its copy there.
			p := Partition(c.opts.DMap, r.Key, parts)
			return p >= uint64(len(changed)) || changed[p]
		}
		return false
	}
	var check []int
	for i, r := range results {
		if suspect(r) {
			check = append(check, i)
		}
	}
	if len(check) == 0 && changed == nil {
		return
	}
	rep.Settle.Needed = true
	notify := func(i int) {
		if o.OnResult != nil {
			o.OnResult(results[i])
		}
	}
	if downWatchFrom(ctx).downErr() != nil {
		// No member answers: nothing can be read again.
		for _, i := range check {
			if results[i].Outcome != EvictFailed {
				results[i] = EvictResult{Key: results[i].Key, Outcome: EvictUnverified, Reason: ReasonUnreachable}
				notify(i)
			}
		}
		return
	}
	_, members, settled, waited := c.settle(ctx, o.SettleTimeout)
	rep.Settle.Settled, rep.Settle.WaitedMs = settled, waited.Milliseconds()
	if members != nil {
		rep.Settle.MembersLeft = append(rep.Settle.MembersLeft, tr.left(members)...)
		rep.Settle.MembersAway = tr.awayWith(members)
	}
	if len(check) == 0 {
		return
	}
	if !settled || members == nil {
		reason := ReasonNotSettled
		if downWatchFrom(ctx).downErr() != nil {
			reason = ReasonUnreachable
		}
		for _, i := range check {
			if results[i].Outcome != EvictFailed {
				results[i] = EvictResult{Key: results[i].Key, Outcome: EvictUnverified, Reason: reason}
				notify(i)
			}
		}
		return
	}
	// Rounds in flight finish after an interrupt, as in the apply phase.
	rctx := context.WithoutCancel(ctx)
	for round := 0; round <= evictRetryRounds && len(check) > 0; round++ {
		keys := make([]string, len(check))
		for j, i := range check {
			keys[j] = results[i].Key
		}
		var again []int
		for lo := 0; lo < len(check); lo += o.Batch {
			hi := min(lo+o.Batch, len(check))
			rs := c.readAll(rctx, keys[lo:hi])
			for j, r := range rs {
				i := check[lo+j]
				prev := results[i]
				switch {
				case errors.Is(r.err, ErrNotFound):
					switch {
					case !tr.stayed(Partition(c.opts.DMap, prev.Key, parts), members):
						results[i] = EvictResult{Key: prev.Key, Outcome: EvictUnverified, Reason: ReasonOwnerLeft}
					case prev.Outcome == EvictFailed:
						// Gone after all; the failed call may have been
						// the delete, so it counts as gone, not deleted.
						results[i] = EvictResult{Key: prev.Key, Outcome: EvictSkippedGone, Reason: ReasonAbsentAfterSettle}
					default:
						results[i].Reason = ReasonAbsentAfterSettle
					}
				case r.err != nil:
					results[i] = EvictResult{Key: prev.Key, Outcome: EvictFailed, Reason: ReasonCallFailed, Error: "read after the routing table settled: " + r.err.Error()}
				case r.entry.Cluster != o.Cluster:
					results[i] = EvictResult{Key: prev.Key, Outcome: EvictSkippedChanged, Reason: ReasonValueChanged, Now: r.entry.Cluster}
				default:
					again = append(again, i)
					continue
				}
				if results[i] != prev {
					notify(i)
				}
			}
		}
		if round == evictRetryRounds {
			// Still there after the last round: not done.
			for _, i := range again {
				results[i] = EvictResult{Key: results[i].Key, Outcome: EvictFailed, Reason: ReasonCallFailed, Error: "still there after the routing table settled and a retry"}
				notify(i)
			}
			return
		}
		if len(again) == 0 {
			return
		}
		rep.Retried += len(again)
		check = check[:0]
		for lo := 0; lo < len(again); lo += o.Batch {
			hi := min(lo+o.Batch, len(again))
			keys := make([]string, hi-lo)
			for j, i := range again[lo:hi] {
				keys[j] = results[i].Key
			}
			for j, r := range c.evictRound(rctx, o.Cluster, keys) {
				i := again[lo+j]
				if r.Outcome != EvictFailed && r.Outcome != EvictSkippedChanged {
					r.Reason = ReasonRetried
				}
				// The retry deleted (or found absent) the copies of the
				// settled owners only: a member that left holding a copy
				// brings the entry back if it returns (a frozen one does).
				if (r.Outcome == EvictDeleted || r.Outcome == EvictSkippedGone) && !tr.stayed(Partition(c.opts.DMap, r.Key, parts), members) {
					r = EvictResult{Key: r.Key, Outcome: EvictUnverified, Reason: ReasonOwnerLeft}
				}
				results[i] = r
				notify(i)
				// A retry under settled owners is trusted, unless the
				// table moves again; a failed one is checked again.
				if r.Outcome == EvictFailed {
					check = append(check, i)
				}
			}
		}
	}
}

// sweepMoved runs after verifyEvict when partitions changed owners during
// the run (changed) and the routing table settled: it scans those
// partitions again for entries of o.Cluster and evicts what it finds. A
// member that joined, or returned after it had been dropped before the
// candidates were listed (a frozen one), brings entries the scan never
// saw, and a candidate counted deleted can come back with it. Found keys
// that were candidates are handled again (Retried); the others are added
// as candidates (rep.Late). A key handled here is trusted when the table
// did not move again meanwhile, and otherwise unverified (not_settled).
// It returns the results with the added candidates, and an error wrapping
// ErrIncomplete when the partitions could not be scanned again.
func (c *Client) sweepMoved(ctx context.Context, o EvictOptions, tr *routeTracker, changed []bool, results []EvictResult, rep *EvictReport) ([]EvictResult, error) {
	if changed == nil || ctx.Err() != nil || downWatchFrom(ctx).downErr() != nil {
		return results, nil
	}
	if !rep.Settle.Settled {
		// verifyEvict waited and the table did not settle.
		return results, fmt.Errorf("the routing table did not settle within %v: %s not scanned again: %w",
			o.SettleTimeout, plural.Count(countTrue(changed), "partition whose owners changed was", "partitions whose owners changed were"), ErrIncomplete)
	}
	parts := c.PartitionCount()
	tr2 := c.trackRoutes(ctx)
	so := o.Scan
	so.Cluster, so.Limit, so.Progress, so.partitions = o.Cluster, 0, nil, changed
	if so.SettleTimeout == 0 {
		so.SettleTimeout = o.SettleTimeout
	}
	var found []string
	srep, err := c.Scan(ctx, so, func(e Entry) error {
		found = append(found, e.Key)
		return nil
	})
	if err != nil {
		tr2.close()
		rep.Scan.Problems = append(rep.Scan.Problems, srep.Problems...)
		return results, fmt.Errorf("the partitions whose owners changed could not be scanned again: %w", err)
	}
	if len(found) == 0 {
		tr2.close()
		return results, nil
	}
	at := make(map[string]int, len(results))
	for i, r := range results {
		at[r.Key] = i
	}
	idx := make([]int, len(found))
	for j, k := range found {
		i, ok := at[k]
		if ok {
			rep.Retried++
		} else {
			i = len(results)
			results = append(results, EvictResult{Key: k, Outcome: EvictNotAttempted, Reason: ReasonInterrupted})
			rep.Late++
		}
		idx[j] = i
	}
	rctx := context.WithoutCancel(ctx)
	for lo := 0; lo < len(found); lo += o.Batch {
		hi := min(lo+o.Batch, len(found))
		for j, r := range c.evictRound(rctx, o.Cluster, found[lo:hi]) {
			if r.Outcome != EvictFailed && r.Outcome != EvictSkippedChanged {
				r.Reason = ReasonRetried
			}
			results[idx[lo+j]] = r
		}
	}
	moved := tr2.close()
	for _, i := range idx {
		r := &results[i]
		p := Partition(c.opts.DMap, r.Key, parts)
		if (r.Outcome == EvictDeleted || r.Outcome == EvictSkippedGone) && moved != nil && (p >= uint64(len(moved)) || moved[p]) {
			*r = EvictResult{Key: r.Key, Outcome: EvictUnverified, Reason: ReasonNotSettled}
		}
		if o.OnResult != nil {
			o.OnResult(*r)
		}
	}
	return results, nil
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
