package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/olric-data/olric"
)

// nextOrCut calls safeNext through cutCallOr: it returns the run's down
// error as soon as the run finds the cluster down, and the abandoned Next
// closes the iterator when it returns.
func nextOrCut(ctx context.Context, it olric.Iterator) (bool, error) {
	return cutCallOr(ctx, func() (bool, error) { return safeNext(it) }, it.Close)
}

// safeNext calls it.Next, turning a panic in the iterator (it panics when a
// partition is missing from a routing table it fetched) into an error.
func safeNext(it olric.Iterator) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("olric iterator: %v", r)
		}
	}()
	return it.Next(), nil
}

// errRoutesChanged ends an iteration whose routing table is out of date.
var errRoutesChanged = errors.New("the routing table changed (a member joined or left)")

// routeWatch follows the routing table while an iterator runs, fed by
// the run's poller (poll.go). The iterator keeps the table it fetched when
// it started (see iterRefreshGuard), so when a partition it has still to
// scan gets other owners, changed is set and the scan restarts with a
// fresh iterator.
type routeWatch struct {
	table       olric.RoutingTable // read when the watch started; nil if it could not be
	changed     atomic.Bool
	from        atomic.Uint64 // partitions below this one are done
	unsubscribe func()
}

// watchRoutes starts a routeWatch from the current routing table. If the
// table cannot be read the watch never reports a change (the iterator then
// fails on its own if members are gone).
func (c *Client) watchRoutes(ctx context.Context, from uint64) *routeWatch {
	w := &routeWatch{unsubscribe: func() {}}
	w.from.Store(from)
	rctx, cancel := c.callCtx(ctx)
	w.table, _ = c.readTable(rctx)
	cancel()
	if w.table != nil {
		w.unsubscribe = downWatchFrom(ctx).subscribe(w.observe)
	}
	return w
}

// observe compares one poll of the table with the watch's start, from
// the partition being scanned on.
func (w *routeWatch) observe(now olric.RoutingTable, _ map[string]bool) {
	if now == nil || w.changed.Load() {
		return
	}
	for p := w.from.Load(); p < uint64(len(w.table)); p++ {
		if p >= uint64(len(now)) || !sameRoute(w.table[p], now[p]) {
			w.changed.Store(true)
			return
		}
	}
}

func (w *routeWatch) close() { w.unsubscribe() }

func sameRoute(a, b olric.Route) bool {
	return slices.Equal(a.PrimaryOwners, b.PrimaryOwners) && slices.Equal(a.ReplicaOwners, b.ReplicaOwners)
}
