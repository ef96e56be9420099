package store

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// TestPingsDoNotPileUp pings the known members of a client whose second
// seed accepts connections and never answers (a frozen member) once every
// 20 ms for half a second, well within the request timeout: the live
// member answers every round, and the silent one gets one ping, not one
// per round (each ping still out holds a connection of its own, so the
// silent member would accept one connection per round).
func TestPingsDoNotPileUp(t *testing.T) {
	ctx := context.Background()
	n, err := StartNode(ctx, NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.shutdown()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	defer func() {
		_ = silent.Close()
		mu.Lock()
		for _, conn := range conns {
			_ = conn.Close()
		}
		mu.Unlock()
	}()
	c, err := Connect(ctx, Options{Addrs: []string{n.Addr(), silent.Addr().String()}, DMap: "test-pings", RequestTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	rounds := 0
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); rounds++ {
		if _, err := c.pingAny(ctx); err != nil {
			t.Fatalf("round %d: %v, want the live member's answer", rounds, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the last ping's dial
	mu.Lock()
	got := len(conns)
	mu.Unlock()
	t.Logf("%d rounds; the silent member accepted %d connections", rounds, got)
	if got != 1 {
		t.Errorf("the silent member accepted %d connections in %d rounds, want 1: a ping was sent while the previous one was out", got, rounds)
	}
}
