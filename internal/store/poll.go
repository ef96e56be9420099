package store

import (
	"context"
	"sync"

	"github.com/olric-data/olric"
)

// One poller per run (downWatch.monitor) feeds the three things that watch
// the cluster while a Scan or Evict runs: every routePollInterval it pings
// the known members (is any member answering? down.go) and reads the
// routing table and the members once, handing the result to every
// subscriber: the route trackers (has any partition changed owners since
// the run started? routes.go) and the iterator's route watch (has a
// partition still to scan changed owners? scan_iter.go). They used to poll
// on three tickers of their own, two of them reading the same table.

// routeSub receives one read of the routing table and the member names;
// nil, nil when the read failed.
type routeSub func(olric.RoutingTable, map[string]bool)

// routeFeed is the poller's routing-table side: its subscribers and the
// read in flight.
type routeFeed struct {
	mu      sync.Mutex
	subs    map[int]routeSub
	next    int
	reading bool           // a read is in flight: no new one starts
	reads   sync.WaitGroup // the read in flight, waited for when the run ends
}

// subscribe makes fn receive every read of the run's poller, one at a
// time, from the time it is called until the returned function is called;
// once that returns, fn is not called again. fn must be quick and must not
// subscribe or unsubscribe. On a nil watch (outside a run) fn is never
// called.
func (w *downWatch) subscribe(fn routeSub) (unsubscribe func()) {
	if w == nil {
		return func() {}
	}
	f := &w.routes
	f.mu.Lock()
	id := f.next
	f.next++
	f.subs[id] = fn
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.subs, id)
		f.mu.Unlock()
	}
}

// pollRoutes starts one read of the routing table and the members
// (readRoutes) for the subscribers, unless there are none or the previous
// read is still in flight (a read asked of a frozen member takes up to
// three RequestTimeouts; the liveness pings must not wait behind it). The
// read hands its result to every subscriber when it returns, unless the
// run was interrupted meanwhile.
func (w *downWatch) pollRoutes(ctx context.Context) {
	f := &w.routes
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reading || len(f.subs) == 0 {
		return
	}
	f.reading = true
	f.reads.Add(1)
	go func() {
		defer f.reads.Done()
		rt, ms := w.c.readRoutes(ctx)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.reading = false
		if ctx.Err() != nil {
			return
		}
		for _, fn := range f.subs {
			fn(rt, ms)
		}
	}()
}
