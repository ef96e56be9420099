package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// A read after DM.DEL that finds no entry proves only that the members the
// read reached hold no copy. Olric keeps no record of a delete: a member
// that held a copy and was frozen, cut off or dropped while the delete
// ran keeps it, and brings it back when it answers again (measured: three
// members, replica count 2, a copy holder frozen until dropped, `store
// del` read every entry as gone and all of them were back within a second
// of SIGCONT). Delete therefore watches the routing table and the members
// for the whole call, as Scan and Evict do (routes.go), and pings every
// member the table names as holding a copy of the key's partition after
// the confirming read. Whatever it cannot vouch for makes the outcome
// Unconfirmed. A member that was dropped before the call started and is
// named nowhere any more cannot be seen by any client: that blind spot is
// documented (docs/store.md, `store del`).

// confirmAbsent decides whether a delete read as gone is confirmed. tr is
// the tracker started before the first read. It fills res.Holders and, when
// the absence cannot be vouched for, res.Unconfirmed and res.MembersAway,
// and returns Deleted or Unconfirmed.
func (c *Client) confirmAbsent(ctx context.Context, tr *routeTracker, res *DeleteResult) DeleteOutcome {
	changed := tr.close()
	p := Partition(c.opts.DMap, res.Key, c.PartitionCount())
	res.Holders = tr.holders(p)
	res.MembersAway = tr.awayWith(tr.members)
	var why string
	switch {
	case tr.start == nil || tr.members == nil:
		why = "the routing table or the member list could not be read"
	case len(res.Holders) == 0:
		why = fmt.Sprintf("the routing table names no owner of partition %d", p)
	case len(res.MembersAway) > 0:
		why = fmt.Sprintf("%s missing from the member list during the delete", namesVerb(res.MembersAway))
	case changed != nil && (p >= uint64(len(changed)) || changed[p]):
		why = fmt.Sprintf("partition %d changed owners during the delete", p)
	default:
		var stray []string
		for _, h := range res.Holders {
			if !tr.members[h] {
				stray = append(stray, h)
			}
		}
		if len(stray) > 0 {
			why = fmt.Sprintf("the routing table names %s as holding a copy, but the member list does not", strings.Join(stray, ", "))
			break
		}
		if silent := c.silentHolders(ctx, res.Holders); len(silent) > 0 {
			why = fmt.Sprintf("%s, holding a copy of partition %d, did not answer a ping", strings.Join(silent, ", "), p)
		}
	}
	if why == "" {
		return Deleted
	}
	res.Unconfirmed = why
	return Unconfirmed
}

// namesVerb is "member a was" or "members a, b were".
func namesVerb(ms []string) string {
	if len(ms) == 1 {
		return "member " + ms[0] + " was"
	}
	return "members " + strings.Join(ms, ", ") + " were"
}

// silentHolders pings each member in holders at once, each bounded by
// pingTimeout, and returns those that did not answer, sorted.
func (c *Client) silentHolders(ctx context.Context, holders []string) []string {
	pctx, cancel := context.WithTimeout(ctx, c.pingTimeout())
	defer cancel()
	type answer struct {
		member string
		err    error
	}
	answers := make(chan answer, len(holders))
	for _, h := range holders {
		go func() {
			_, err := safeCall(func() (string, error) { return c.cc.Ping(pctx, h, "") })
			answers <- answer{h, err}
		}()
	}
	// A ping still out at pingTimeout counts as silent (answers has room
	// for it to end on its own).
	ok := map[string]bool{}
	for range holders {
		select {
		case a := <-answers:
			if a.err == nil {
				ok[a.member] = true
			}
			continue
		case <-pctx.Done():
		}
		break
	}
	var silent []string
	for _, h := range holders {
		if !ok[h] {
			silent = append(silent, h)
		}
	}
	slices.Sort(silent)
	return slices.Compact(silent)
}
