// Package demo holds what `lcctl demo` needs besides the commands it runs:
// an embedded single-member Olric seeded with demo sessions (through
// internal/store, the only package that talks to Olric), the example files
// (from the repository or built into lcctl), the plan of the rollout story
// with the command line of every step, and the readers that take one
// step's output apart for the next one.
package demo

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// Session is the session that joins the store to the decision engine in
// the demo: the session of the shipped explain examples (routing key rk-1,
// model model-a, cache affinity key session-6; the session.md §10 setup of
// examples/explain). Start writes its last cluster into the store as the
// gateway does after serving a request (gateway.md §3), so `lcctl store
// get` finds it and `lcctl explain` can route its next request.
var Session = store.Session{RoutingKey: "rk-1", Model: "model-a", AffinityKey: "session-6"}

// SessionCluster is the last cluster Start stores for Session: B, the
// full cluster of examples/explain/returning-k1.snapshot.yaml.
const SessionCluster = "B"

// DefaultEntries is how many generated demo sessions Start writes besides
// Session, as many as `lcctl store serve-dev --seed-demo` writes.
const DefaultEntries = 300

// DefaultTTL is the TTL of the seeded entries: long enough to explore a
// demo kept running with --keep.
const DefaultTTL = time.Hour

// BackendOptions configure Start.
type BackendOptions struct {
	// Entries is the number of generated demo sessions (store.DemoSessions,
	// at least 2); 0 means DefaultEntries.
	Entries int
	// TTL is the TTL of every seeded entry (at least 1 ms, whole
	// milliseconds); 0 means DefaultTTL.
	TTL time.Duration
	// Log receives Olric's own log lines (warnings and up); nil discards
	// them.
	Log io.Writer
}

// Backend is the demo's running Olric member and what Start seeded into
// it. Close stops the member.
type Backend struct {
	node *store.Node
	// Addr is the member's RESP address ("127.0.0.1:PORT"), the value of
	// `--olric` and LCCTL_OLRIC_ADDRS.
	Addr string
	// DMap is the DMap the entries are in: store.DMapName, the gateway's.
	DMap string
	// Seeded is the number of entries written (the demo sessions and
	// Session).
	Seeded int
	// PerCluster counts the seeded entries by cluster.
	PerCluster map[string]int
	// TTL is the TTL the entries were written with.
	TTL time.Duration
}

// Start starts a real Olric v0.7.4 member on a free loopback port
// (store.StartNode: the gateway's partition count, one copy, no password),
// writes o.Entries demo sessions (store.DemoSessions and store.SeedDemo,
// the data of `lcctl store serve-dev --seed-demo`) and Session pointing to
// SessionCluster, each with o.TTL, as the gateway writes them (PX).
// On error nothing is left running; errors name the step that failed.
func Start(ctx context.Context, o BackendOptions) (*Backend, error) {
	if o.Entries == 0 {
		o.Entries = DefaultEntries
	}
	if o.Entries < 2 {
		return nil, fmt.Errorf("demo entries %d: want at least 2", o.Entries)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if err := store.ValidateTTL(o.TTL); err != nil {
		return nil, fmt.Errorf("demo TTL: %w", err)
	}
	node, err := store.StartNode(ctx, store.NodeOptions{BindAddr: "127.0.0.1", Port: 0, Log: o.Log})
	if err != nil {
		return nil, err
	}
	b := &Backend{node: node, Addr: node.Addr(), DMap: store.DMapName, PerCluster: map[string]int{}, TTL: o.TTL}
	if err := b.seed(ctx, o); err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = node.Shutdown(sctx)
		return nil, err
	}
	return b, nil
}

func (b *Backend) seed(ctx context.Context, o BackendOptions) error {
	c, err := store.Connect(ctx, store.Options{Addrs: []string{b.Addr}, DMap: b.DMap})
	if err != nil {
		return fmt.Errorf("connect to the demo's Olric member: %w", err)
	}
	defer c.Close()
	sessions := store.DemoSessions(o.Entries)
	n, err := store.SeedDemo(ctx, c, sessions, o.TTL)
	if err != nil {
		return err
	}
	for _, s := range sessions[:n] {
		b.PerCluster[s.Cluster]++
	}
	if err := c.Put(ctx, Session.Key(), SessionCluster, o.TTL, store.PutAlways); err != nil {
		return fmt.Errorf("write the explain session's last cluster: %w", err)
	}
	b.PerCluster[SessionCluster]++
	b.Seeded = n + 1
	return nil
}

// Done is closed when the member has stopped serving.
func (b *Backend) Done() <-chan struct{} { return b.node.Done() }

// Close stops the member (store.Node.Shutdown); safe to call more than
// once.
func (b *Backend) Close(ctx context.Context) error { return b.node.Shutdown(ctx) }
