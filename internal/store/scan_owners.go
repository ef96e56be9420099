package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/plural"
)

// recheckOwnership runs after a scan pass during which partitions changed
// owners (changed, nil when the tracker saw none) or the iterator had to
// restart. A partition is trusted when its scan succeeded under the owners
// it had at the start (they held its entries) and its owners did not
// change during the run. The others are scanned again once the routing
// table has settled, skipping the keys already counted (a member that
// joins or returns brings entries the starting owners did not hold); a
// partition is then trusted when the rescan ran under the settled owners
// and, for one not scanned under its starting owners, a member that held
// a copy at the start is still in the cluster. It fills the report's Settle and partition counts and
// returns the problems to report.
func (st *scanState) recheckOwnership(ctx context.Context, tr *routeTracker, changed []bool, prod producerResult) []string {
	c, rep := st.c, st.rep
	parts := c.PartitionCount()
	// bad: not scanned under the starting owners (their entries may be
	// missing). moved: scanned under them, but the owners changed later
	// in the run: a member that joined or returned (a frozen one that was
	// already dropped when the run started) may have brought entries the
	// starting owners did not hold, so those partitions are scanned again
	// too (after the keys already counted).
	var bad []uint64
	untrusted := make([]bool, parts)
	for p := uint64(0); p < parts; p++ {
		if st.o.partitions != nil && (p >= uint64(len(st.o.partitions)) || !st.o.partitions[p]) {
			continue
		}
		trusted := prod.scanned[p] && tr.start != nil && sameRoute(prod.under[p], tr.start[p])
		moved := p < uint64(len(changed)) && changed[p]
		if !trusted {
			untrusted[p] = true
		}
		if !trusted || moved {
			bad = append(bad, p)
		}
	}
	for _, ch := range changed {
		if ch {
			rep.Settle.ChangedPartitions++
		}
	}
	if len(bad) == 0 && changed == nil {
		return nil
	}
	rep.Settle.Needed = true
	final, members, settled, waited := c.settle(ctx, st.o.SettleTimeout)
	rep.Settle.Settled, rep.Settle.WaitedMs = settled, waited.Milliseconds()
	if members != nil {
		rep.Settle.MembersLeft = append(rep.Settle.MembersLeft, tr.left(members)...)
		rep.Settle.MembersAway = tr.awayWith(members)
	}
	if len(bad) == 0 {
		return nil
	}
	var problems []string
	if !settled || final == nil {
		rep.UnsettledPartitions = len(bad)
		return []string{fmt.Sprintf("the routing table did not settle within %v: %s (%s) not scanned under settled owners; run again",
			st.o.SettleTimeout, plural.Count(len(bad), "partition was", "partitions were"), partList(bad))}
	}
	// A rebalance can move partitions in several waves (on a loaded
	// machine the second wave can start after the table was quiet for
	// settleQuiet): partitions whose owners changed again while they were
	// scanned again are scanned once more after the table settles again,
	// up to maxRescanRounds rounds in all; only what is still unsettled
	// after the last round is reported.
	var lost, unsettled []uint64
	todo := bad
	rounds := 0
	for round := 0; ; round++ {
		rounds = round + 1
		only := make([]bool, parts)
		skip := map[uint64]struct{}{}
		for _, p := range todo {
			only[p] = true
			for _, h := range st.hashes[p] {
				skip[h] = struct{}{}
			}
		}
		rtr := c.trackRoutes(ctx)
		if st.o.rescanStarting != nil {
			st.o.rescanStarting(round, todo)
		}
		again := st.pass(ctx, only, skip)
		changedAgain := rtr.close()
		rep.Restarts += again.restarts
		rep.Ignored += again.ignored
		problems = append(problems, again.problems...)
		unsettled = unsettled[:0]
		for _, p := range todo {
			switch {
			case untrusted[p] && !tr.survived(p, members):
				lost = append(lost, p)
			case again.err != nil || !again.scanned[p] || !sameRoute(again.under[p], final[p]) || (changedAgain != nil && changedAgain[p]):
				unsettled = append(unsettled, p)
			}
		}
		if len(unsettled) == 0 || round+1 >= maxRescanRounds || again.err != nil || st.stopped || ctx.Err() != nil || downWatchFrom(ctx).downErr() != nil {
			break
		}
		var waited time.Duration
		final, members, settled, waited = c.settle(ctx, st.o.SettleTimeout)
		rep.Settle.WaitedMs += waited.Milliseconds()
		if members != nil {
			rep.Settle.MembersLeft = mergeMembers(rep.Settle.MembersLeft, tr.left(members))
			rep.Settle.MembersAway = tr.awayWith(members)
		}
		if !settled || final == nil {
			rep.Settle.Settled = false
			break
		}
		todo = append([]uint64(nil), unsettled...)
	}
	rep.RescannedPartitions = len(bad)
	rep.LostPartitions, rep.UnsettledPartitions = len(lost), len(unsettled)
	if len(lost) > 0 {
		left := tr.left(members)
		problems = append(problems, fmt.Sprintf("%s (%s) had every copy on %s, which left during the scan: their entries are lost, or come back if it returns; run again",
			plural.Count(len(lost), "partition", "partitions"), partList(lost), orList(left)))
	}
	if len(unsettled) > 0 {
		problems = append(problems, fmt.Sprintf("%s (%s) changed owners again while being scanned again (%s); run again",
			plural.Count(len(unsettled), "partition", "partitions"), partList(unsettled), plural.Count(rounds, "rescan", "rescans")))
	}
	return problems
}

// maxRescanRounds bounds how often recheckOwnership scans the same
// partitions again after the routing table settles (each round also waits
// up to SettleTimeout for the table to settle).
const maxRescanRounds = 3

// mergeMembers adds to have the members of more it lacks, in order.
func mergeMembers(have, more []string) []string {
	for _, m := range more {
		if !slices.Contains(have, m) {
			have = append(have, m)
		}
	}
	return have
}

// partList names up to 8 partitions.
func partList(ps []uint64) string {
	var b strings.Builder
	b.WriteString("partition")
	if len(ps) > 1 {
		b.WriteString("s")
	}
	show := plural.Shown(len(ps), 8)
	for i, p := range ps {
		if i == show {
			fmt.Fprintf(&b, " and %d more", len(ps)-show)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", p)
	}
	return b.String()
}

// orList names members: "a member" when none is known.
func orList(ms []string) string {
	if len(ms) == 0 {
		return "a member"
	}
	return strings.Join(ms, ", ")
}
