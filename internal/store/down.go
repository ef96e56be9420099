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
// batch. The rule: after a call of a run fails because its member could
// not be reached or timed out, the run pings every member it knows (the
// seeds and the owners in the last routing table), each ping bounded by
// RequestTimeout, every routePollInterval; if none answers for the run's
// settle timeout, the cluster is down for the rest of the run: calls fail
// at once with an error wrapping ErrUnreachable, no new round or restart
// starts, and what is not done is reported as not done (docs/store.md,
// "When no member answers").

// downWatch is one run's view of whether any member answers.
type downWatch struct {
	c      *Client
	window time.Duration // how long no member may answer before the run gives up

	down atomic.Pointer[clusterDownError] // set once no member answered for window

	mu   sync.Mutex // held while probing, so concurrent callers wait for one answer
	okAt time.Time  // when a member last answered a probe; guarded by mu
}

type downWatchKey struct{}

// withDownWatch returns ctx carrying a new downWatch with the given window,
// unless ctx already carries one (evict's scan phase shares evict's).
func (c *Client) withDownWatch(ctx context.Context, window time.Duration) (context.Context, *downWatch) {
	if w := downWatchFrom(ctx); w != nil {
		return ctx, w
	}
	w := &downWatch{c: c, window: window}
	return context.WithValue(ctx, downWatchKey{}, w), w
}

// downWatchFrom returns the downWatch of ctx, nil outside a Scan or Evict.
func downWatchFrom(ctx context.Context) *downWatch {
	w, _ := ctx.Value(downWatchKey{}).(*downWatch)
	return w
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
// that may mean the member is gone (unreachable, timed out) it makes sure
// some member still answers: it pings the known members until one
// answers or the window has passed, and then returns nil or the run's
// down error. A member answer less than routePollInterval old is taken as
// is, so concurrent failures cost one probe.
func (w *downWatch) check(ctx context.Context, err error) error {
	if w == nil || !(errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout)) {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.downErr(); err != nil {
		return err
	}
	if time.Since(w.okAt) < routePollInterval {
		return nil
	}
	deadline := time.Now().Add(w.window)
	for {
		asked, last := w.c.pingAny(ctx)
		if last == nil {
			w.okAt = time.Now()
			return nil
		}
		if ctx.Err() != nil {
			return nil // the caller sees its context's error
		}
		if !time.Now().Before(deadline) {
			d := &clusterDownError{window: w.window, asked: asked, last: last}
			w.down.Store(d)
			return d
		}
		sleepCtx(ctx, min(routePollInterval, time.Until(deadline)))
	}
}

// pingAny pings every known member at once (seeds and the owners in the
// last routing table read), each within RequestTimeout. It returns the
// addresses asked and nil when one answered, else the last error.
func (c *Client) pingAny(ctx context.Context) ([]string, error) {
	addrs := c.knownMembers()
	errs := make(chan error, len(addrs))
	pctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	for _, a := range addrs {
		go func() {
			_, err := safeCall(func() (string, error) { return c.cc.Ping(pctx, a, "") })
			errs <- err
		}()
	}
	var last error
	for range addrs {
		if err := <-errs; err == nil {
			return addrs, nil
		} else {
			last = classify(err)
		}
	}
	if last == nil {
		last = errors.New("no member known")
	}
	return addrs, last
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
