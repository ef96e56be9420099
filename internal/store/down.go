package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Scan and Evict give up early when the whole cluster stops answering.
// Every call retries transient failures (Options.Attempts), and evict's
// reads retry each partition of a batch separately, so with every member
// killed a run used to spend minutes paying the retry policy batch after
// batch. The rule: for the whole run, a monitor pings every member it
// knows (the seeds and the owners in the last routing table) every
// routePollInterval, each ping bounded by pingTimeout; if none has
// answered for the run's settle timeout, the cluster is down for the rest
// of the run: the calls in flight are cancelled, calls fail at once with
// an error wrapping ErrUnreachable, no new round or restart starts, and
// what is not done is reported as not done (docs/store.md, "When no
// member answers"). A run therefore gives up at most settle timeout +
// pingTimeout + routePollInterval after the last answer, whatever
// RequestTimeout is (frozen members answer nothing and refuse nothing, so
// every call to them used to run to its full RequestTimeout, retries
// included, before the wait even began).

// pingTimeout bounds one liveness ping: at most 1 s (a PING is one tiny
// round trip), less when RequestTimeout is shorter.
func (c *Client) pingTimeout() time.Duration {
	return min(c.opts.RequestTimeout, time.Second)
}

// downWatch is one run's poller (see poll.go) and its view of whether
// any member answers.
type downWatch struct {
	c      *Client
	window time.Duration // how long no member may answer before the run gives up

	down atomic.Pointer[clusterDownError] // set once no member answered for window
	okAt atomic.Int64                     // when a member last answered a ping (UnixNano); the run's start at first

	// gone is cancelled when the cluster is found down (and when the run
	// ends): the calls bound to it (callCtx) stop at once.
	gone     context.Context
	goneStop context.CancelFunc
	done     chan struct{} // closed when the monitor has stopped

	routes routeFeed // the routing-table reads the poller shares out
}

type downWatchKey struct{}

// withDownWatch returns ctx carrying a new downWatch with the given window
// and starts its monitor, unless ctx already carries one (evict's scan
// phase shares evict's). The returned function stops the monitor; call it
// when the run ends (a no-op for a shared watch).
func (c *Client) withDownWatch(ctx context.Context, window time.Duration) (context.Context, *downWatch, func()) {
	if w := downWatchFrom(ctx); w != nil {
		return ctx, w, func() {}
	}
	w := &downWatch{c: c, window: window, done: make(chan struct{})}
	w.okAt.Store(time.Now().UnixNano())
	w.gone, w.goneStop = context.WithCancel(context.Background())
	ctx = context.WithValue(ctx, downWatchKey{}, w)
	w.routes.subs = map[int]routeSub{}
	go w.monitor(ctx)
	return ctx, w, func() { w.goneStop(); <-w.done; w.routes.reads.Wait() }
}

// monitor is the run's one poller: every routePollInterval, until the run
// ends or the cluster is found down, it starts a read of the routing
// table for the subscribers (pollRoutes) and pings the known members.
func (w *downWatch) monitor(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(routePollInterval)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first { // the subscribers read the table when they start
			w.pollRoutes(ctx)
		}
		asked, last := w.c.pingAny(ctx)
		now := time.Now()
		switch {
		case last == nil:
			w.okAt.Store(now.UnixNano())
		case ctx.Err() != nil || w.gone.Err() != nil:
			return
		case now.Sub(time.Unix(0, w.okAt.Load())) >= w.window:
			w.down.Store(&clusterDownError{window: w.window, asked: asked, last: last})
			w.c.abandoned.Store(true)
			w.goneStop()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-w.gone.Done():
			return
		case <-tick.C:
		}
	}
}

// downWatchFrom returns the downWatch of ctx, nil outside a Scan or Evict.
func downWatchFrom(ctx context.Context) *downWatch {
	w, _ := ctx.Value(downWatchKey{}).(*downWatch)
	return w
}

// callCtx bounds one Olric call: RequestTimeout, and within a run also
// until the run finds the cluster down.
func (c *Client) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	w := downWatchFrom(ctx)
	if w == nil {
		return cctx, cancel
	}
	stop := context.AfterFunc(w.gone, cancel)
	return cctx, func() { stop(); cancel() }
}

// downErr returns the error of a run whose cluster is down, else nil; nil
// for a nil watch.
func (w *downWatch) downErr() error {
	if w == nil {
		return nil
	}
	if d := w.down.Load(); d != nil {
		return d
	}
	return nil
}

// isDown reports whether err is the error of a cluster found down.
func isDown(err error) bool {
	var d *clusterDownError
	return errors.As(err, &d)
}

// clusterDownError says that no member answered for the window.
type clusterDownError struct {
	window time.Duration
	asked  []string
	last   error
}

func (e *clusterDownError) Error() string {
	return fmt.Sprintf("no Olric member answered for %v (pinged %s; last error: %v): the cluster is down or out of reach",
		e.window, strings.Join(e.asked, ", "), e.last)
}

func (e *clusterDownError) Unwrap() error { return ErrUnreachable }

// check is called after a call of the run failed with err. For a failure
// that may mean the member is gone (unreachable, timed out) it waits until
// the monitor has heard a member answer since routePollInterval before
// the failure, or has found the cluster down, and returns nil or the
// run's down error.
func (w *downWatch) check(ctx context.Context, err error) error {
	if w == nil || !(errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout)) {
		return nil
	}
	since := time.Now().Add(-routePollInterval).UnixNano()
	for {
		if derr := w.downErr(); derr != nil {
			return derr
		}
		if w.okAt.Load() >= since || ctx.Err() != nil || w.gone.Err() != nil {
			return nil // a member answers (or the caller sees its context's error)
		}
		select {
		case <-ctx.Done():
		case <-w.gone.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pingAny pings every known member at once (seeds and the owners in the
// last routing table read), waiting at most pingTimeout. It returns the
// addresses asked and nil when one answered, else the last error. A
// member whose previous ping has not returned yet is not pinged again
// (it counts as not answering): the olric client's calls ignore their
// context, so a ping to a frozen member runs until the connection's
// RequestTimeout, and a new one every round would pile up goroutines for
// as long as it is frozen. The price: a member whose connection hangs
// while it is up counts as silent until that ping fails, at most
// RequestTimeout with the client's retries, which is shorter than the
// settle timeout with the defaults (2 s against 15 s).
func (c *Client) pingAny(ctx context.Context) ([]string, error) {
	addrs := c.knownMembers()
	errs := make(chan error, len(addrs))
	timeout := c.pingTimeout()
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	var busy []string
	for _, a := range addrs {
		if !c.pings.start(a) {
			busy = append(busy, a)
			continue
		}
		// Each ping has a context of its own, not cancelled when another
		// member answers first: a ping cut off before its request was
		// written would end at once and the next round would dial the
		// silent member again (one connection per round).
		go func() {
			defer c.pings.end(a)
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := safeCall(func() (string, error) { return c.cc.Ping(pctx, a, "") })
			errs <- err
		}()
	}
	var last error
	if len(busy) > 0 {
		last = fmt.Errorf("%w: earlier pings of %s still unanswered", ErrTimeout, strings.Join(busy, ", "))
	}
	// Stop waiting at pingTimeout and leave the pings still out to end on
	// their own (errs has room for every answer).
	for range len(addrs) - len(busy) {
		select {
		case err := <-errs:
			if err == nil {
				return addrs, nil
			}
			last = classify(err)
		case <-wait.C:
			return addrs, classify(context.DeadlineExceeded)
		case <-ctx.Done():
			return addrs, classify(ctx.Err())
		}
	}
	if last == nil {
		last = errors.New("no member known")
	}
	return addrs, last
}

// pingsOut records the members whose liveness ping is still out.
type pingsOut struct {
	mu  sync.Mutex
	out map[string]bool
}

// start records a ping to member; false when one is already out.
func (p *pingsOut) start(member string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out[member] {
		return false
	}
	if p.out == nil {
		p.out = map[string]bool{}
	}
	p.out[member] = true
	return true
}

// end records that the ping to member returned.
func (p *pingsOut) end(member string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.out, member)
}

// knownMembers returns the seeds and every owner named in the last routing
// table read, sorted, each once.
func (c *Client) knownMembers() []string {
	set := map[string]bool{}
	for _, a := range c.opts.Addrs {
		set[a] = true
	}
	c.mu.Lock()
	for _, r := range c.route {
		for _, o := range r.PrimaryOwners {
			set[o] = true
		}
		for _, o := range r.ReplicaOwners {
			set[o] = true
		}
	}
	c.mu.Unlock()
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// cutCall runs fn (through safeCall) and returns its result, or the run's
// down error as soon as the run finds the cluster down, whichever comes
// first. The olric client's calls do not stop when their context is
// cancelled (its connections time out after RequestTimeout, and retry
// once), so a call to a frozen member is abandoned instead: it goes on in
// its goroutine, bounded by those timeouts, and its result is dropped.
// Outside a run it is safeCall. fn must not touch what the caller uses
// after an error.
func cutCall[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	return cutCallOr(ctx, fn, nil)
}

// cutCallOr is cutCall, and when fn's result is dropped (the run found
// the cluster down before or while it ran) it calls abandoned, once fn
// has returned, or at once when fn never started.
func cutCallOr[T any](ctx context.Context, fn func() (T, error), abandoned func()) (T, error) {
	w := downWatchFrom(ctx)
	if w == nil {
		return safeCall(fn)
	}
	var zero T
	if derr := w.downErr(); derr != nil {
		if abandoned != nil {
			abandoned()
		}
		return zero, derr
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result)
	cut := make(chan struct{})
	go func() {
		v, err := safeCall(fn)
		select {
		case ch <- result{v, err}:
		case <-cut:
			if abandoned != nil {
				abandoned()
			}
		}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-w.gone.Done():
		if derr := w.downErr(); derr != nil {
			close(cut)
			return zero, derr
		}
		r := <-ch // the run ended: wait as a plain call would
		return r.v, r.err
	}
}
