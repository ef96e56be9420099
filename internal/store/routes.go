package store

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/olric-data/olric"
	"github.com/olric-data/olric/stats"
)

// Scan and Evict decide whether they are done from partition ownership,
// not from the absence of errors: while a member is frozen, killed or
// leaving, Olric answers DM.SCAN and DM.GET for its partitions from the
// new owners, which do not hold the entries yet (or never will, with one
// copy), so "no key" and "not found" are not evidence then. A
// routeTracker records the routing table and the members when the run
// starts and polls both while it runs; afterwards the run waits until the
// table settles (Client.settle) and checks again what it could not trust.

// routePollInterval is how often a routeTracker reads the routing table.
const routePollInterval = 250 * time.Millisecond

// DefaultSettleTimeout bounds how long Scan and Evict wait, after a run
// during which partitions changed owners, for the routing table to settle
// before they check again what they could not trust.
const DefaultSettleTimeout = 15 * time.Second

// settleQuiet is how long the routing table and the member list must stay
// the same, with no partition being moved, to count as settled.
const settleQuiet = time.Second

// routeTracker watches the routing table and the members during a run.
type routeTracker struct {
	c       *Client
	ctx     context.Context    // the run's
	start   olric.RoutingTable // nil when it could not be read
	members map[string]bool    // at the start
	// data lists, per partition, the members whose fragment of the
	// scanned DMap held entries at the start (recordData); nil when not
	// recorded or when a member's statistics could not be read.
	data map[uint64][]string

	mu          sync.Mutex
	changed     []bool          // partitions whose owners differed from start at some poll
	away        map[string]bool // members of the start missing from the member list at some poll
	any         bool
	unsubscribe func()
	closeOnce   sync.Once
}

// trackRoutes reads the routing table and the members and subscribes to
// the run's poller (poll.go), which reads them every routePollInterval.
// When the table cannot be read every partition counts as changed.
func (c *Client) trackRoutes(ctx context.Context) *routeTracker {
	t := &routeTracker{c: c, ctx: ctx}
	t.start, t.members = c.readRoutes(ctx)
	t.changed = make([]bool, c.PartitionCount())
	if t.start == nil || uint64(len(t.start)) != c.PartitionCount() {
		t.markAll()
	}
	t.unsubscribe = downWatchFrom(ctx).subscribe(t.observe)
	return t
}

// readRoutes reads the routing table and the member names, each with
// RequestTimeout and up to three tries (a frozen member may be the one
// asked); nil results mean the read failed, at once when the run found
// the cluster down. A refused try (a member that has left is still among
// the addresses the olric client asks in turn) does not count: the client
// forgets the members no longer listed (refreshMembers) and asks again, up
// to maxRefusedReads times. Before, a member that left mid-scan made the
// poller's reads fail now and then, and one failed read marks every
// partition as changed, so a rescan round after the table had settled
// found all its partitions "changed again" (CI, TestScanWhileMemberLeaves:
// 203 partitions unsettled after 3 rescans).
func (c *Client) readRoutes(ctx context.Context) (olric.RoutingTable, map[string]bool) {
	w := downWatchFrom(ctx)
	refused := 0
	for try := 0; try < 3 && ctx.Err() == nil && w.downErr() == nil; {
		rctx, cancel := c.callCtx(ctx)
		rt, err := c.readTable(rctx)
		var ms []olric.Member
		if err == nil {
			ms, err = cutCall(rctx, func() ([]olric.Member, error) { return c.cc.Members(rctx) })
		}
		if err == nil {
			cancel()
			names := make(map[string]bool, len(ms))
			for _, m := range ms {
				names[m.Name] = true
			}
			return rt, names
		}
		if errors.Is(classify(err), ErrUnreachable) && refused < maxRefusedReads {
			refused++
			_ = c.refreshMembers(rctx) // best effort: the next try says whether it helped
			cancel()
			continue
		}
		cancel()
		try++
	}
	return nil, nil
}

// maxRefusedReads bounds the refused tries readRoutes makes on top of its
// three (each is answered at once, and each is followed by a refresh of
// the member list).
const maxRefusedReads = 8

// errEmptyTable is readTable's error for a routing table without
// partitions.
var errEmptyTable = errors.New("the cluster returned an empty routing table")

// readTable reads the routing table (CLUSTER.ROUTINGTABLE) within ctx
// (bound it with callCtx), cut off when the run finds the cluster down
// (cutCall). The error is classified; an empty table is errEmptyTable.
func (c *Client) readTable(ctx context.Context) (olric.RoutingTable, error) {
	rt, err := cutCall(ctx, func() (olric.RoutingTable, error) { return c.cc.RoutingTable(ctx) })
	switch {
	case err != nil:
		return nil, classify(err)
	case len(rt) == 0:
		return nil, errEmptyTable
	}
	return rt, nil
}

func (t *routeTracker) markAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.changed {
		t.changed[p] = true
	}
	t.any = true
}

// observe records one poll.
func (t *routeTracker) observe(rt olric.RoutingTable, ms map[string]bool) {
	if rt == nil {
		// Blind for a moment: a member may be frozen. Nothing read during
		// the run can be trusted without a check afterwards.
		t.markAll()
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.changed {
		if p >= len(t.start) || p >= len(rt) || !sameRoute(t.start[uint64(p)], rt[uint64(p)]) {
			t.changed[p] = true
			t.any = true
		}
	}
	for m := range t.members {
		if !ms[m] {
			t.any = true
			if t.away == nil {
				t.away = map[string]bool{}
			}
			t.away[m] = true
		}
	}
}

// close unsubscribes from the poller, reads the table and the members once more (a
// change in the last poll interval counts too: a run can end within it),
// and reports the partitions whose owners changed (or could not be
// watched) during the run; nil when none did.
func (t *routeTracker) close() []bool {
	t.closeOnce.Do(func() {
		t.unsubscribe()
		if t.ctx.Err() == nil {
			t.observe(t.c.readRoutes(t.ctx))
		}
	})
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.any {
		return nil
	}
	return slices.Clone(t.changed)
}

// recordData reads every member's statistics and records, per partition,
// the members whose fragment of the client's DMap (primary or replica)
// holds entries (t.data). A member that does not answer leaves t.data
// nil: survived then falls back to the routing table's holders.
func (t *routeTracker) recordData(ctx context.Context) {
	if t.members == nil {
		return
	}
	c := t.c
	data := map[uint64][]string{}
	for m := range t.members {
		rctx, cancel := c.callCtx(ctx)
		st, err := cutCall(rctx, func() (stats.Stats, error) { return c.cc.Stats(rctx, m) })
		cancel()
		if err != nil {
			return
		}
		for _, parts := range []map[stats.PartitionID]stats.Partition{st.Partitions, st.Backups} {
			for id, p := range parts {
				if d, ok := p.DMaps[c.opts.DMap]; ok && d.Length > 0 && !slices.Contains(data[uint64(id)], m) {
					data[uint64(id)] = append(data[uint64(id)], m)
				}
			}
		}
	}
	t.data = data
}

// holders returns every member that held a copy of partition p when the
// run started (current and previous primary owners, replica owners).
func (t *routeTracker) holders(p uint64) []string {
	if t.start == nil {
		return nil
	}
	r := t.start[p]
	return append(append([]string(nil), r.PrimaryOwners...), r.ReplicaOwners...)
}

// survived reports whether a member that held a copy of partition p at
// the start is still a member: its copy then reaches the new owners once
// the table has settled. When none is, the partition's entries are lost,
// or come back only if that member returns. With the members' fragment
// sizes recorded (recordData) a holder counts only if its fragment held
// entries: a member killed and started again on its address comes back
// empty and the cluster keeps it as the owner it was (break test,
// TestFaultScanEmptyHolderIsNoCopy: a scan said complete with entries
// listed from the member that then died and no copy left); a partition
// that no member held entries of has nothing to lose.
func (t *routeTracker) survived(p uint64, members map[string]bool) bool {
	if t.data != nil {
		hs := t.data[p]
		if len(hs) == 0 {
			return true
		}
		for _, h := range hs {
			if members[h] {
				return true
			}
		}
		return false
	}
	for _, h := range t.holders(p) {
		if members[h] {
			return true
		}
	}
	return false
}

// stayed reports whether every member that held a copy of partition p at
// the start is still a member and was one at every poll. Olric keeps no
// record of a delete: a member that left holding a copy brings it back
// if it returns (a frozen one does), so an absent entry is known gone
// only when none left, not even for a while (a member that keeps pausing
// is dropped and rejoins over and over: measured, TestFaultEvictMemberFlaps,
// entries read as absent after the table settled with every holder back
// came back later).
func (t *routeTracker) stayed(p uint64, members map[string]bool) bool {
	hs := t.holders(p)
	if len(hs) == 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range hs {
		if !members[h] || t.away[h] {
			return false
		}
	}
	return true
}

// awayWith returns the members of the start that were missing at some
// poll or are not in members, sorted.
func (t *routeTracker) awayWith(members map[string]bool) []string {
	t.mu.Lock()
	set := maps.Clone(t.away)
	t.mu.Unlock()
	if set == nil {
		set = map[string]bool{}
	}
	for _, m := range t.left(members) {
		set[m] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// left returns the members of the start that are not in members, sorted.
func (t *routeTracker) left(members map[string]bool) []string {
	var out []string
	for m := range t.members {
		if !members[m] {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// SettleReport says whether and how long a run waited for the routing
// table to settle after partitions changed owners during it.
type SettleReport struct {
	// Needed is true when partitions changed owners (or the table could
	// not be read) during the run, so the run waited and checked again.
	Needed bool `json:"needed"`
	// Settled is true when the table settled within the wait: the same
	// table and members for 1 s.
	Settled bool `json:"settled"`
	// WaitedMs is how long the run waited, in milliseconds.
	WaitedMs int64 `json:"waited_ms"`
	// ChangedPartitions counts partitions whose owners changed during
	// the run.
	ChangedPartitions int `json:"changed_partitions"`
	// MembersLeft lists members that were in the cluster when the run
	// started and are not at its end; empty (never null) when none.
	MembersLeft []string `json:"members_left"`
	// MembersAway lists the members of the start that were missing from
	// the member list at some poll during the run, back at its end or not
	// (so it includes MembersLeft), sorted; empty (never null) when none.
	// A copy such a member held may come back with it, so a candidate of
	// a partition it held a copy of is never counted gone (EvictUnverified,
	// ReasonOwnerLeft).
	MembersAway []string `json:"members_away"`
}

// settle waits up to timeout until the routing table and the member list
// stayed the same for settleQuiet. Partitions that still list previous
// owners do not hold it up: Olric's reads and scans ask previous owners
// too (dmap lookupOnOwners, ClusterIterator.scanOnOwners). It returns the final table
// and members (nil when they could not be read) and whether it settled.
func (c *Client) settle(ctx context.Context, timeout time.Duration) (olric.RoutingTable, map[string]bool, bool, time.Duration) {
	start := time.Now()
	deadline := start.Add(timeout)
	var last olric.RoutingTable
	var lastMembers map[string]bool
	var since time.Time
	for {
		rt, ms := c.readRoutes(ctx)
		now := time.Now()
		if rt != nil {
			if last == nil || !sameTable(last, rt) || !sameSet(lastMembers, ms) {
				since = now
			}
			last, lastMembers = rt, ms
			if now.Sub(since) >= settleQuiet {
				return rt, ms, true, now.Sub(start)
			}
		}
		if now.After(deadline) || ctx.Err() != nil || downWatchFrom(ctx).downErr() != nil {
			return last, lastMembers, false, now.Sub(start)
		}
		sleepCtx(ctx, routePollInterval)
	}
}

func sameTable(a, b olric.RoutingTable) bool {
	if len(a) != len(b) {
		return false
	}
	for p, r := range a {
		if !sameRoute(r, b[p]) {
			return false
		}
	}
	return true
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
