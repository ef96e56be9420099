package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/store/storetest"
)

// TestScanWhileMemberLeaves stops one of three members (replica count 2)
// in the middle of a scan: the scan must resume and still return every
// entry exactly once.
func TestScanWhileMemberLeaves(t *testing.T) {
	cl := storetest.Start(t, 3, 2)
	c := cl.Connect(t, store.Options{Addrs: cl.Addrs()[:1]})
	want := seed(t, c, "leave", 3000, time.Hour, "cluster-a", "cluster-b", "cluster-c")

	got := map[string]string{}
	stopped := false
	rep, err := c.Scan(context.Background(), store.ScanOptions{Count: 50, ReadBatch: 50, ReadWorkers: 1}, func(e store.Entry) error {
		if _, dup := got[e.Key]; dup {
			t.Errorf("scan returned %s twice", e.Key)
		}
		got[e.Key] = e.Cluster
		if len(got) == 500 && !stopped {
			stopped = true
			// The member that does not serve as seed leaves while the
			// iterator is part-way through the partitions.
			if err := cl.Stop(2); err != nil {
				t.Errorf("stop member: %v", err)
			}
		}
		return nil
	})
	t.Logf("report: %+v", rep)
	if !stopped {
		t.Fatal("the scan ended before the member was stopped")
	}
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	if d := diff(want, got); d != "" {
		t.Fatalf("after a member left mid-scan: %s", d)
	}
	if !rep.Complete || rep.Entries != 3000 {
		t.Errorf("report %+v", rep)
	}
}

// TestEvictWhileMemberLeaves stops a member in the middle of the apply
// phase: no entry of another cluster may be deleted, every entry reported
// deleted must be gone, and a second run must finish the job.
func TestEvictWhileMemberLeaves(t *testing.T) {
	cl := storetest.Start(t, 3, 2)
	c := cl.Connect(t, store.Options{Addrs: cl.Addrs()[:1]})
	want := seed(t, c, "leave-evict", 3000, time.Hour, "cluster-a", "cluster-b")

	deleted := map[string]bool{}
	n := 0
	rep, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-b", Apply: true, Batch: 25, Workers: 1,
		OnResult: func(r store.EvictResult) {
			if r.Outcome == store.EvictDeleted {
				deleted[r.Key] = true
			}
			if n++; n == 300 {
				if err := cl.Stop(1); err != nil {
					t.Errorf("stop member: %v", err)
				}
			}
		}})
	t.Logf("report: %+v, err %v", rep, err)
	if err != nil && !errors.Is(err, store.ErrIncomplete) {
		t.Fatalf("evict: %v", err)
	}
	if rep.Candidates != 1500 || rep.Deleted+rep.SkippedChanged+rep.SkippedGone+rep.Failed+rep.NotAttempted != 1500 {
		t.Fatalf("report does not add up: %+v", rep)
	}
	if rep.Deleted != len(deleted) {
		t.Fatalf("report says %d deleted, results say %d", rep.Deleted, len(deleted))
	}
	got, _ := scanAll(t, c)
	for k, v := range want {
		g, present := got[k]
		switch {
		case v == "cluster-a" && (!present || g != "cluster-a"):
			t.Fatalf("entry %s of cluster-a was lost or changed (%q, %v)", k, g, present)
		case deleted[k] && present:
			t.Fatalf("entry %s reported deleted is still there", k)
		}
	}
	again, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-b", Apply: true})
	if err != nil || again.Deleted != 1500-rep.Deleted || again.Failed != 0 {
		t.Fatalf("second run: %+v, %v", again, err)
	}
	got, _ = scanAll(t, c)
	if len(got) != 1500 {
		t.Fatalf("%d entries left, want the 1500 of cluster-a", len(got))
	}
}
