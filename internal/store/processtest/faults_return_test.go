package processtest

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// The return tests freeze a member (SIGSTOP) before the run starts and
// wait until the others have dropped it, so the run starts under a
// routing table without it; they thaw it (SIGCONT) part-way through.
// With replica count 1 the member brings its partitions' entries back
// (Olric v0.7.4 keeps them, and the balancer hands the partitions back),
// so partitions that looked empty when the run started hold entries at
// its end. A scan that says complete must have listed them, an evict that
// returns no error must have deleted them.

// startFrozen starts three members with one copy, writes faultEntries
// entries, freezes member 2 and waits until obs (a client of member 1) no
// longer lists it; it returns obs and a fresh client seeded with member 0
// (one connected before the freeze keeps a pool to the frozen member).
func startFrozen(t *testing.T, dmap string) (*faultCluster, *store.Client, *store.Client, map[string]string) {
	t.Helper()
	fc, _, want := startSeeded(t, 1, dmap, faultEntries)
	obs := fc.connect(1, dmap)
	fc.inject(freeze, 2, obs)
	if t.Failed() {
		t.FailNow()
	}
	return fc, obs, fc.connect(0, dmap), want
}

// thawAsync thaws member i and returns at once; the channel is closed
// when obs lists it again (or after 20 s).
func (fc *faultCluster) thawAsync(i int, obs *store.Client) <-chan struct{} {
	back := make(chan struct{})
	m := fc.members[i]
	if err := m.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		fc.t.Errorf("SIGCONT to %s: %v", m.name, err)
		close(back)
		return back
	}
	go func() {
		defer close(back)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			ms, err := obs.Members(context.Background())
			if err == nil && hasMember(ms, m.name) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return back
}

// TestFaultScanMemberReturns: a scan that starts while a member is frozen
// and already dropped, and during which it returns with its entries.
func TestFaultScanMemberReturns(t *testing.T) {
	t.Parallel()
	dmap := "fault-return-scan"
	fc, obs, c, want := startFrozen(t, dmap)

	got := map[string]string{}
	var back <-chan struct{}
	rep, err := c.Scan(context.Background(), store.ScanOptions{Count: 50, ReadBatch: 50, ReadWorkers: 1, SettleTimeout: faultSettle}, func(e store.Entry) error {
		got[e.Key] = e.Cluster
		if len(got) == faultEntries/10 && back == nil {
			back = fc.thawAsync(2, obs)
		}
		// Paced (about 2.5 s over the entries the table lets it see),
		// so the member is back and the table moves during the scan.
		time.Sleep(2 * faultScanPace)
		return nil
	})
	t.Logf("scan: %v; report %+v", err, rep)
	backInRun, truth := fc.afterRun("the scan", "thaw", back, freeze, dmap, want)
	missing := 0
	for k := range truth {
		if _, ok := got[k]; !ok {
			missing++
		}
	}
	t.Logf("RESULT scan member returns: err %v; complete %v, listed %d, store afterwards %d, missed %d, changed %d, rescanned %d, lost %d, unsettled %d partitions; back during the run %v",
		err != nil, rep.Complete, len(got), len(truth), missing, rep.Settle.ChangedPartitions, rep.RescannedPartitions, rep.LostPartitions, rep.UnsettledPartitions, backInRun)
	switch {
	case err != nil && !errors.Is(err, store.ErrIncomplete):
		t.Errorf("scan: %v, want nil or ErrIncomplete", err)
	case err == nil && !rep.Complete:
		t.Errorf("no error, but the report is not complete: %+v", rep)
	case err != nil && (rep.Complete || len(rep.Problems) == 0):
		t.Errorf("an incomplete scan must say why and not claim complete: %+v", rep)
	}
	if rep.Complete && missing > 0 {
		t.Errorf("the scan says complete but missed %d of the %d entries the store holds afterwards", missing, len(truth))
	}
}

// TestFaultEvictMemberReturns: an evict that starts while a member is
// frozen and already dropped, and during whose delete phase it returns
// with its entries of the evicted cluster.
func TestFaultEvictMemberReturns(t *testing.T) {
	t.Parallel()
	dmap := "fault-return-evict"
	fc, obs, c, want := startFrozen(t, dmap)

	results := map[string]store.EvictOutcome{}
	var back <-chan struct{}
	// 300 deletions/s over the roughly 450 candidates the table lets it
	// see: the delete phase lasts about 1.5 s, through the member's return.
	rep, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-c", Apply: true, Workers: 4, MaxRate: 300, SettleTimeout: faultSettle,
		OnResult: func(r store.EvictResult) {
			results[r.Key] = r.Outcome
			if len(results) == 30 && back == nil {
				back = fc.thawAsync(2, obs)
			}
		}})
	t.Logf("evict: %v; report %+v", err, rep)
	backInRun, truth := fc.afterRun("the evict", "thaw", back, freeze, dmap, want)
	left, wrong := clusterCLeft(truth, results)
	t.Logf("RESULT evict member returns: err %v; candidates %d (late %d), deleted %d, gone %d, failed %d, unverified %d, retried %d; cluster-c left afterwards %d; back during the run %v",
		err != nil, rep.Candidates, rep.Late, rep.Deleted, rep.SkippedGone, rep.Failed, rep.Unverified, rep.Retried, left, backInRun)
	if wrong > 0 {
		t.Errorf("%d entries reported deleted or gone are there afterwards", wrong)
	}
	switch {
	case err != nil && !errors.Is(err, store.ErrIncomplete):
		t.Errorf("evict: %v, want nil or ErrIncomplete", err)
	case err == nil && left > 0:
		t.Errorf("evict returned no error and left %d entries of cluster-c (report %+v)", left, rep)
	}
	checkEvictReport(t, rep, err)
}

// TestConnectNamesFrozenMember freezes a member that is not the seed and
// connects at once, before the cluster drops it: a connect that fails
// must name the member that did not answer, not only the seed that did.
func TestConnectNamesFrozenMember(t *testing.T) {
	t.Parallel()
	fc := startFaultCluster(t, 3, 1)
	failures := 0
	for try := 0; try < 4 && failures < 2; try++ {
		frozen := fc.members[1+try%2]
		if err := frozen.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		c, err := store.Connect(context.Background(), store.Options{Addrs: []string{fc.members[0].name}, DMap: "connect-frozen",
			DialTimeout: 300 * time.Millisecond, RequestTimeout: 300 * time.Millisecond})
		_ = frozen.cmd.Process.Signal(syscall.SIGCONT)
		if err == nil {
			_ = c.Close() // this connect did not ask the frozen member
		} else {
			failures++
			t.Logf("frozen %s, seed %s: %v", frozen.name, fc.members[0].name, err)
			if !strings.Contains(err.Error(), "no reply from member "+frozen.name) {
				t.Errorf("the error does not name the frozen member %s: %v", frozen.name, err)
			}
			if strings.Contains(err.Error(), "is the address right") {
				t.Errorf("the error blames the seed's address: %v", err)
			}
		}
		if err := waitMembers(fc.members, 3); err != nil {
			t.Fatal(err)
		}
	}
	if failures == 0 {
		t.Errorf("no connect failed while a member was frozen: nothing was tested")
	}
}
