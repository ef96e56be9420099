package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/olric-data/olric"
	"github.com/olric-data/olric/config"
)

// NodeOptions configure an embedded Olric member started by StartNode.
type NodeOptions struct {
	// BindAddr is the IP to listen on; empty means 127.0.0.1. The member
	// name is BindAddr:Port.
	BindAddr string
	// Port is the RESP port; 0 picks a free one.
	Port int
	// MemberlistPort is the gossip port (TCP and UDP); 0 picks a free one.
	MemberlistPort int
	// Peers are memberlist addresses ("host:port") of members to join;
	// empty starts a new cluster.
	Peers []string
	// PartitionCount defaults to 271 (Olric's and the gateway chart's).
	PartitionCount uint64
	// ReplicaCount is the total number of copies of each entry (1 = no
	// backups, the gateway chart's setting); 0 means 1.
	ReplicaCount int
	// Password, when set, makes the member require AUTH.
	Password string
	// Log receives Olric's own log lines (level WARN and up); nil discards
	// them.
	Log io.Writer
	// StartTimeout bounds the wait for the member to be ready; 0 means 15s
	// (the gateway's OLRIC_STARTUP_TIMEOUT default).
	StartTimeout time.Duration
}

// Node is a running embedded Olric member.
type Node struct {
	db      *olric.Olric
	addr    string
	mlAddr  string
	done    chan struct{}
	mu      sync.Mutex
	stopped bool
	runErr  error
}

// StartNode starts a real Olric v0.7.4 member in this process and waits
// until it is ready (Olric's Started callback) or StartTimeout passes. It
// uses synchronous replication with read and write quorum 1 and member
// count quorum 1, as the gateway does (gateway.md §9). The caller must call
// Shutdown. Errors say which address could not be bound.
func StartNode(ctx context.Context, o NodeOptions) (*Node, error) {
	if o.BindAddr == "" {
		o.BindAddr = "127.0.0.1"
	}
	if net.ParseIP(o.BindAddr) == nil {
		return nil, fmt.Errorf("bind address %q is not an IP address", o.BindAddr)
	}
	if o.PartitionCount == 0 {
		o.PartitionCount = DefaultPartitionCount
	}
	if o.ReplicaCount == 0 {
		o.ReplicaCount = 1
	}
	if o.ReplicaCount < 1 || o.ReplicaCount > 7 {
		return nil, fmt.Errorf("replica count %d out of range 1-7", o.ReplicaCount)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 15 * time.Second
	}
	if o.Port < 0 || o.Port > 65535 || o.MemberlistPort < 0 || o.MemberlistPort > 65535 {
		return nil, fmt.Errorf("ports %d and %d must be in 0-65535", o.Port, o.MemberlistPort)
	}
	port := o.Port
	if port == 0 {
		p, err := freePort(o.BindAddr)
		if err != nil {
			return nil, err
		}
		port = p
	}
	logOut := o.Log
	if logOut == nil {
		logOut = io.Discard
	}

	c := config.New("local")
	c.BindAddr = o.BindAddr
	c.BindPort = port
	c.PartitionCount = o.PartitionCount
	c.ReplicaCount = o.ReplicaCount
	c.ReadQuorum, c.WriteQuorum, c.MemberCountQuorum = 1, 1, 1
	c.ReplicationMode = config.SyncReplicationMode
	c.Peers = append([]string(nil), o.Peers...)
	c.LogLevel = "WARN"
	c.LogVerbosity = 1
	c.LogOutput = logOut
	c.Logger = log.New(logOut, "olric: ", log.LstdFlags)
	c.BootstrapTimeout = o.StartTimeout
	c.JoinRetryInterval = 100 * time.Millisecond
	c.MaxJoinAttempts = 50
	c.LeaveTimeout = 2 * time.Second
	if o.Password != "" {
		c.Authentication = &config.Authentication{Password: o.Password}
	}
	ml, err := config.NewMemberlistConfig("local")
	if err != nil {
		return nil, fmt.Errorf("memberlist config: %w", err)
	}
	ml.BindAddr = o.BindAddr
	ml.BindPort = o.MemberlistPort // 0: memberlist picks one and writes it back
	ml.AdvertisePort = o.MemberlistPort
	c.MemberlistConfig = ml

	ready := make(chan struct{})
	var once sync.Once
	c.Started = func() { once.Do(func() { close(ready) }) }

	// One member starts at a time in a process: olric v0.7.4 counts the
	// services of every member in one process-wide pair of counters
	// (internal/checkpoint), which New increments while a starting
	// member's Start polls them, reading one without synchronisation (a
	// data race the race detector reports when two tests start members at
	// once), and a member counts as started only when the counts of all
	// members agree.
	nodeStartMu.Lock()
	defer nodeStartMu.Unlock()
	db, err := olric.New(c)
	if err != nil {
		return nil, fmt.Errorf("configure olric member %s:%d: %w", o.BindAddr, port, err)
	}
	n := &Node{db: db, addr: net.JoinHostPort(o.BindAddr, strconv.Itoa(port)), done: make(chan struct{})}
	go func() {
		err := db.Start()
		n.mu.Lock()
		n.runErr = err
		n.mu.Unlock()
		close(n.done)
	}()
	timer := time.NewTimer(o.StartTimeout)
	defer timer.Stop()
	select {
	case <-ready:
	case <-n.done:
		n.mu.Lock()
		err := n.runErr
		n.mu.Unlock()
		if err == nil {
			err = errors.New("stopped before it was ready")
		}
		n.shutdown()
		return nil, fmt.Errorf("start olric member %s: %w", n.addr, err)
	case <-timer.C:
		n.shutdown()
		return nil, fmt.Errorf("start olric member %s: not ready within %v", n.addr, o.StartTimeout)
	case <-ctx.Done():
		n.shutdown()
		return nil, fmt.Errorf("start olric member %s: %w", n.addr, ctx.Err())
	}
	// memberlist has written the port it bound back into the config.
	n.mlAddr = net.JoinHostPort(o.BindAddr, strconv.Itoa(ml.BindPort))
	return n, nil
}

// nodeStartMu serialises StartNode from olric.New until the member has
// started (or failed to).
var nodeStartMu sync.Mutex

// freePort asks the kernel for a free TCP port on addr.
func freePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Addr returns the member's RESP address and name ("127.0.0.1:port"), the
// address clients connect to.
func (n *Node) Addr() string { return n.addr }

// MemberlistAddr returns the member's gossip address, the one other members
// list in NodeOptions.Peers to join it.
func (n *Node) MemberlistAddr() string { return n.mlAddr }

// Done is closed when the member has stopped serving.
func (n *Node) Done() <-chan struct{} { return n.done }

// Shutdown leaves the cluster gracefully (Olric hands the member's
// partitions over) and stops the member. It is safe to call more than once.
func (n *Node) Shutdown(ctx context.Context) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	n.mu.Unlock()
	err := n.db.Shutdown(ctx)
	select {
	case <-n.done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		return fmt.Errorf("stop olric member %s: %w", n.addr, err)
	}
	return nil
}

func (n *Node) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.Shutdown(ctx)
}
