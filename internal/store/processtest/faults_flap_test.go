package processtest

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// flapBound is how long TestFaultEvictMemberFlaps's evict may take.
const flapBound = 90 * time.Second

// TestFaultEvictMemberFlaps keeps one of three members flapping for the
// whole of an evict (replica count 2): frozen (SIGSTOP) until the others
// drop it, thawed (SIGCONT) until they list it again, over and over, so
// the routing table hardly ever stays the same for the 1 s a settle
// needs. Evict must end (its settle waits are bounded by the settle
// timeout, its iterator restarts by DefaultMaxRestarts, its calls by the
// request timeout and the retries), claim no candidate deleted or gone
// that is there afterwards, and, when not done, say that the membership changed and
// what is left undone. Once the member stops flapping a run finishes the
// job.
func TestFaultEvictMemberFlaps(t *testing.T) {
	t.Parallel()
	dmap := "fault-flap"
	fc, c, want := startSeeded(t, 2, dmap, evictEntries)
	m := fc.members[2]

	// Frozen for 1.5 s (the others drop it after about 1 s with the fast
	// memberlist settings), then running for 1.5 s (it rejoins), over and
	// over: a member that keeps pausing, as under a recurring long GC
	// pause or a flapping link.
	var stop atomic.Bool
	var flaps atomic.Int32
	flapped := make(chan struct{})
	go func() {
		defer close(flapped)
		for !stop.Load() {
			for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGCONT} {
				if err := m.cmd.Process.Signal(sig); err != nil {
					t.Errorf("%v to %s: %v", sig, m.name, err)
					return
				}
				time.Sleep(1500 * time.Millisecond)
			}
			flaps.Add(1)
		}
	}()

	const (
		settle = 3 * time.Second
		rate   = 200 // deletions per second: the 1,500 candidates take 7.5 s
	)
	results := map[string]store.EvictOutcome{}
	var first, last time.Time
	start := time.Now()
	rep, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-c", Apply: true, Workers: 4, MaxRate: rate, SettleTimeout: settle,
		OnResult: func(r store.EvictResult) {
			results[r.Key] = r.Outcome
			if first.IsZero() {
				first = time.Now()
			}
			last = time.Now()
		}})
	took := time.Since(start)
	t.Logf("scan %v, deletes and checks %v, after %v", first.Sub(start).Round(time.Millisecond), last.Sub(first).Round(time.Millisecond), time.Since(last).Round(time.Millisecond))
	stop.Store(true)
	<-flapped
	n := flaps.Load()
	fc.recover(freeze, 2)
	truth := fc.truth(0, dmap, want)
	left, back := clusterCLeft(truth, results)
	t.Logf("RESULT evict with a flapping member: %v over %d flaps; err %v; deleted %d, gone %d, failed %d, unverified %d, not attempted %d of %d, late %d; settle %+v; scan complete %v, restarts %d, unsettled %d; cluster-c left afterwards %d; outcomes %+v",
		took.Round(time.Millisecond), n, err, rep.Deleted, rep.SkippedGone, rep.Failed, rep.Unverified, rep.NotAttempted, rep.Candidates, rep.Late, rep.Settle,
		rep.Scan.Complete, rep.Scan.Restarts, rep.Scan.UnsettledPartitions, left, rep.Outcomes)
	if n == 0 {
		t.Fatal("the member did not flap once during the evict")
	}
	if err != nil && !errors.Is(err, store.ErrIncomplete) {
		t.Fatalf("evict: %v, want nil or ErrIncomplete", err)
	}
	checkEvictReport(t, rep, err)
	if back > 0 {
		t.Errorf("%d entries reported deleted or gone are there afterwards", back)
	}
	if err == nil && left > 0 {
		t.Errorf("evict returned no error and left %d entries of cluster-c", left)
	}
	// Each settle wait is bounded, and so is every call (a call to the
	// frozen member waits its request timeout, with retries): the run
	// must end. Measured 20-26 s; flapBound catches a run that waits on.
	if took > flapBound {
		t.Errorf("evict took %v with a flapping member, want at most %v", took, flapBound)
	}
	ownerLeft := 0
	for _, o := range rep.Outcomes {
		if o.Reason == store.ReasonOwnerLeft {
			ownerLeft += o.Count
		}
	}
	if ownerLeft > 0 && len(rep.Settle.MembersLeft) == 0 && !slices.Contains(rep.Settle.MembersAway, m.name) {
		t.Errorf("%d candidates unverified because a copy holder left, and settle.members_away %v does not name %s", ownerLeft, rep.Settle.MembersAway, m.name)
	}
	if err != nil {
		switch {
		case !rep.Settle.Needed:
			t.Errorf("not done while the membership kept changing, and the report does not say it changed: %+v", rep.Settle)
		case rep.Scan.Complete && rep.Unverified+rep.Failed+rep.NotAttempted == 0:
			t.Errorf("not done, but the report names nothing left undone: %+v", rep)
		}
	}

	// The flapping has stopped: a run finishes the job within the settle
	// window, leaving the entries of the other clusters.
	deadline := time.Now().Add(20 * time.Second)
	for runs := 1; ; runs++ {
		again, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-c", Apply: true, SettleTimeout: faultSettle})
		if err == nil {
			t.Logf("done after the flapping in %d runs (%d deleted in the last)", runs, again.Deleted)
			break
		}
		if !errors.Is(err, store.ErrIncomplete) || time.Now().After(deadline) {
			t.Fatalf("run %d after the flapping stopped: %v", runs, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	truth = fc.truth(0, dmap, want)
	if left, _ := clusterCLeft(truth, nil); left > 0 {
		t.Errorf("%d entries of cluster-c left after the runs once the flapping stopped", left)
	}
}
