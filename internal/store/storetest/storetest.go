// Package storetest starts real embedded Olric clusters on loopback for
// tests and benchmarks of lcctl's store code and commands. It never mocks
// Olric: every member is a store.Node (olric v0.7.4 in-process).
package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// Cluster is a set of embedded Olric members on 127.0.0.1 with ports
// chosen at run time.
type Cluster struct {
	tb       testing.TB
	mu       sync.Mutex
	nodes    []*store.Node
	replicas int
}

// Start starts members embedded members with the given replica count and
// waits until every member sees all of them. The members are shut down
// when the test ends (also on failure). It fails the test if a member does
// not start.
func Start(tb testing.TB, members, replicas int) *Cluster {
	tb.Helper()
	c := &Cluster{tb: tb, replicas: replicas}
	tb.Cleanup(c.stopAll)
	for i := 0; i < members; i++ {
		c.AddMember()
	}
	c.WaitMembers(members)
	return c
}

// AddMember starts one more member that joins the cluster and returns it.
func (c *Cluster) AddMember() *store.Node {
	c.tb.Helper()
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
		// A freshly chosen port can be taken by someone else before the
		// member binds it; try again with a new one.
		n, err = store.StartNode(ctx, store.NodeOptions{Peers: peers, ReplicaCount: c.replicas})
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		c.tb.Fatalf("start olric member: %v", err)
	}
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	return n
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

// Stop shuts member i down gracefully (it leaves the cluster and hands its
// partitions over) and removes it from the cluster's list.
func (c *Cluster) Stop(i int) {
	c.tb.Helper()
	c.mu.Lock()
	n := c.nodes[i]
	c.nodes = append(c.nodes[:i:i], c.nodes[i+1:]...)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.Shutdown(ctx); err != nil {
		c.tb.Logf("stop member %s: %v", n.Addr(), err)
	}
}

// WaitMembers waits until a client sees exactly n members and a routing
// table in which every partition has an owner, or fails the test after 30s.
func (c *Cluster) WaitMembers(n int) {
	c.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		cl, err := store.Connect(context.Background(), store.Options{Addrs: c.Addrs()})
		if err == nil {
			st, serr := cl.Members(context.Background())
			_ = cl.Close()
			if serr == nil && len(st) == n {
				return
			}
			last = serr
		} else {
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.tb.Fatalf("cluster did not reach %d members within 30s: %v", n, last)
}

// Connect returns a client for the cluster, closed when the test ends.
func (c *Cluster) Connect(opts store.Options) *store.Client {
	c.tb.Helper()
	if len(opts.Addrs) == 0 {
		opts.Addrs = c.Addrs()
	}
	cl, err := store.Connect(context.Background(), opts)
	if err != nil {
		c.tb.Fatalf("connect: %v", err)
	}
	c.tb.Cleanup(func() { _ = cl.Close() })
	return cl
}

func (c *Cluster) stopAll() {
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
