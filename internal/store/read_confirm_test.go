package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestReadsOfAGoneMemberAreFailures stops the only member and reads keys
// it held with the pipelined reads of scan and evict. olric's pipeline
// reports such reads as not found (see retryReads); they must come
// back as failures, never as absent keys: every entry has a 1 h TTL and
// nothing deleted any. While the member runs, a key never written, in a
// batch with live keys of its partition, still reads as absent.
func TestReadsOfAGoneMemberAreFailures(t *testing.T) {
	ctx := context.Background()
	n, err := StartNode(ctx, NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			n.shutdown()
		}
	}()
	c, err := Connect(ctx, Options{Addrs: []string{n.Addr()}, DMap: "test-confirm-absent", Attempts: 2, RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	parts := c.PartitionCount()
	var keys, part0 []string
	for i := 0; len(part0) < 3 || len(keys) < 12; i++ {
		k := Key("confirm", "m", fmt.Sprint(i))
		if Partition(c.opts.DMap, k, parts) == 0 {
			part0 = append(part0, k)
		}
		if len(keys) < 12 || Partition(c.opts.DMap, k, parts) == 0 {
			keys = append(keys, k)
		}
	}
	// part0[2] is never written.
	for _, k := range keys {
		if k == part0[2] {
			continue
		}
		if err := c.Put(ctx, k, "c1", time.Hour, PutAlways); err != nil {
			t.Fatal(err)
		}
	}
	live := c.readBatch(ctx, keyBatch{part: 0, keys: part0})
	for i, it := range live.items {
		want := readLive
		if i == 2 {
			want = readMissing
		}
		if it.state != want {
			t.Errorf("member running: %s read as state %d (%s), want %d", it.key, it.state, it.fail, want)
		}
	}

	if err := n.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	stopped = true
	gone := c.readBatch(ctx, keyBatch{part: 0, keys: part0[:2]})
	for _, it := range gone.items {
		if it.state != readFailed {
			t.Errorf("member gone: scan read %s as state %d, want readFailed", it.key, it.state)
		}
	}
	for i, r := range c.readAll(ctx, keys) {
		if r.err == nil || errors.Is(r.err, ErrNotFound) {
			t.Fatalf("member gone: evict re-read of %s gave %v, want a failure other than not found", keys[i], r.err)
		}
	}
}
