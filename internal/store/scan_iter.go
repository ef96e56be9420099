package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/olric-data/olric"
)

// nextOrCut calls safeNext, and returns the run's down error as soon as
// the run finds the cluster down (see cutCall); the abandoned Next closes
// the iterator when it returns.
func nextOrCut(ctx context.Context, it olric.Iterator) (bool, error) {
	w := downWatchFrom(ctx)
	if w == nil {
		return safeNext(it)
	}
	type result struct {
		ok  bool
		err error
	}
	ch := make(chan result)
	cut := make(chan struct{})
	go func() {
		ok, err := safeNext(it)
		select {
		case ch <- result{ok, err}:
		case <-cut:
			it.Close()
		}
	}()
	select {
	case r := <-ch:
		return r.ok, r.err
	case <-w.gone.Done():
		if derr := w.downErr(); derr != nil {
			close(cut)
			return false, derr
		}
		r := <-ch
		return r.ok, r.err
	}
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

// routeWatch polls the routing table while an iterator runs. The iterator
// keeps the table it fetched when it started (see iterRefreshGuard), so
// when a partition it has still to scan gets other owners, changed is set
// and the scan restarts with a fresh iterator.
type routeWatch struct {
	table   olric.RoutingTable // read when the watch started; nil if it could not be
	changed atomic.Bool
	from    atomic.Uint64 // partitions below this one are done
	stop    chan struct{}
	done    chan struct{}
}

// routeWatchInterval is how often routeWatch reads the routing table.
const routeWatchInterval = time.Second

// watchRoutes starts a routeWatch from the current routing table. If the
// table cannot be read the watch never reports a change (the iterator then
// fails on its own if members are gone).
func (c *Client) watchRoutes(ctx context.Context, from uint64) *routeWatch {
	w := &routeWatch{stop: make(chan struct{}), done: make(chan struct{})}
	w.from.Store(from)
	read := func() olric.RoutingTable {
		rctx, cancel := c.callCtx(ctx)
		defer cancel()
		rt, err := cutCall(rctx, func() (olric.RoutingTable, error) { return c.cc.RoutingTable(rctx) })
		if err != nil {
			return nil
		}
		return rt
	}
	start := read()
	w.table = start
	go func() {
		defer close(w.done)
		if start == nil {
			return
		}
		everyTick(ctx, w.stop, routeWatchInterval, func() bool {
			now := read()
			if now == nil {
				return true
			}
			for p := w.from.Load(); p < uint64(len(start)); p++ {
				if !sameRoute(start[p], now[p]) {
					w.changed.Store(true)
					return false
				}
			}
			return true
		})
	}()
	return w
}

func (w *routeWatch) close() {
	close(w.stop)
	<-w.done
}

func sameRoute(a, b olric.Route) bool {
	return slices.Equal(a.PrimaryOwners, b.PrimaryOwners) && slices.Equal(a.ReplicaOwners, b.ReplicaOwners)
}
