package store

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/olric-data/olric"
)

// TestIteratorRefreshIsRefused checks that the guard really catches
// olric's ClusterIterator refresher (the function name and stack depth it
// relies on) and nothing else.
func TestIteratorRefreshIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n, err := StartNode(ctx, NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.shutdown()
	var log strings.Builder
	c, err := Connect(ctx, Options{Addrs: []string{n.Addr()}, Log: &lockedWriter{w: &log}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	it, err := c.dm.Scan(ctx, olric.Match(keyPattern))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1300 * time.Millisecond) // the refresher runs after 1s
	it.Close()
	if c.logs.refusedRefreshes() == 0 {
		t.Fatal("the iterator's routing-table refresh was not refused")
	}
	if strings.Contains(log.String(), refusedRefreshText) {
		t.Errorf("refused refreshes were forwarded to the log: %s", log.String())
	}
	// Everything else still works through the guarded client.
	if _, err := c.Members(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.refreshRoutes(ctx, true); err != nil {
		t.Fatal(err)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
