// Package storetest starts real embedded Olric clusters on loopback for
// tests and benchmarks of lcctl's store code and commands. It never mocks
// Olric: every member is a store.Node (olric v0.7.4, in-process), on
// 127.0.0.1 with ports chosen at run time.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// Cluster is a set of embedded Olric members.
type Cluster struct {
	mu       sync.Mutex
	nodes    []*store.Node
	replicas int
}

// New starts members members with the given replica count (total copies of
// each entry) and waits until a client sees all of them. On error it stops
// what it started.
func New(members, replicas int) (*Cluster, error) {
	c := &Cluster{replicas: replicas}
	for i := 0; i < members; i++ {
		if _, err := c.AddMember(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.WaitMembers(members); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Start is New for one test: it fails the test on error and stops the
// cluster when the test ends (also on failure).
func Start(tb testing.TB, members, replicas int) *Cluster {
	tb.Helper()
	c, err := New(members, replicas)
	if err != nil {
		tb.Fatalf("start a %d-member olric cluster: %v", members, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// AddMember starts one more member that joins the cluster.
func (c *Cluster) AddMember() (*store.Node, error) {
	c.mu.Lock()
	var peers []string
	for _, n := range c.nodes {
		peers = append(peers, n.MemberlistAddr())
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n *store.Node
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		// A port chosen free can be taken by another process before the
		// member binds it; then try again with a new one.
		n, err = store.StartNode(ctx, store.NodeOptions{Peers: peers, ReplicaCount: c.replicas})
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	return n, nil
}

// Nodes returns the running members in start order.
func (c *Cluster) Nodes() []*store.Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*store.Node(nil), c.nodes...)
}

// Addrs returns the RESP addresses of the running members.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.Nodes() {
		out = append(out, n.Addr())
	}
	return out
}

// AddrList returns Addrs joined with commas, as --olric takes them.
func (c *Cluster) AddrList() string { return strings.Join(c.Addrs(), ",") }

// Stop shuts member i (in Nodes order) down gracefully: it leaves the
// cluster and hands its partitions over.
func (c *Cluster) Stop(i int) error {
	c.mu.Lock()
	if i < 0 || i >= len(c.nodes) {
		c.mu.Unlock()
		return fmt.Errorf("no member %d", i)
	}
	n := c.nodes[i]
	c.nodes = append(c.nodes[:i:i], c.nodes[i+1:]...)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return n.Shutdown(ctx)
}

// WaitMembers waits up to 30 s until a client sees exactly n members.
func (c *Cluster) WaitMembers(n int) error {
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		cl, err := store.Connect(context.Background(), store.Options{Addrs: c.Addrs(), Attempts: 1})
		if err == nil {
			ms, merr := cl.Members(context.Background())
			_ = cl.Close()
			if merr == nil && len(ms) == n {
				return nil
			}
			last = merr
			if merr == nil {
				last = fmt.Errorf("%d members", len(ms))
			}
		} else {
			last = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("cluster did not reach %d members within 30s: %v", n, last)
}

// Connect returns a client for the cluster, closed when the test ends. An
// empty opts.Addrs means every member.
func (c *Cluster) Connect(tb testing.TB, opts store.Options) *store.Client {
	tb.Helper()
	if len(opts.Addrs) == 0 {
		opts.Addrs = c.Addrs()
	}
	cl, err := store.Connect(context.Background(), opts)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { _ = cl.Close() })
	return cl
}

// Close stops every member, in parallel.
func (c *Cluster) Close() {
	c.mu.Lock()
	nodes := c.nodes
	c.nodes = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = n.Shutdown(ctx)
		}()
	}
	wg.Wait()
}
