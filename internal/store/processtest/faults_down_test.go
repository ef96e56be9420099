package processtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/ui"
)

// downSettle is the --settle-timeout of the cluster-down tests: how long
// no member may answer before evict gives up (docs/store.md, "When no
// member answers").
const downSettle = 3 * time.Second

// downBound is how long evict may take after every member was killed or
// frozen: the settle timeout, plus the round in flight and the calls that
// found the members gone (a few request timeouts each), with room for a
// loaded machine. Before the give-up rule it took over 120 s.
const downBound = downSettle + 12*time.Second

// clusterCKeys returns the keys of want that point to cluster-c.
func clusterCKeys(want map[string]string) []string {
	var keys []string
	for k, v := range want {
		if v == "cluster-c" {
			keys = append(keys, k)
		}
	}
	return keys
}

// countPresent reads keys with c (eight at a time) and returns how many
// are there.
func countPresent(c *store.Client, keys []string) int {
	var n sync.WaitGroup
	var mu sync.Mutex
	present := 0
	ch := make(chan string)
	for range 8 {
		n.Add(1)
		go func() {
			defer n.Done()
			for k := range ch {
				if _, err := c.Get(context.Background(), k); err == nil {
					mu.Lock()
					present++
					mu.Unlock()
				}
			}
		}()
	}
	for _, k := range keys {
		ch <- k
	}
	close(ch)
	n.Wait()
	return present
}

// TestFaultEvictClusterDown kills every member part-way through the delete
// phase of `lcctl store evict --yes -o json`. evict must give up within
// the settle timeout (plus the calls in flight), exit 1 with "run again",
// and count in its JSON every candidate it could not finish as failed,
// unverified or not attempted: it may claim deleted or gone only what was
// deleted before the members died.
func TestFaultEvictClusterDown(t *testing.T) {
	t.Parallel()
	dmap := "fault-down"
	fc, _, want := startSeeded(t, 1, dmap, faultEntries)
	ckeys := clusterCKeys(want)
	obs := fc.connect(1, dmap)
	var addrs []string
	for _, m := range fc.members {
		addrs = append(addrs, m.name)
	}

	var out, errOut syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- cli.Main(context.Background(), []string{"store", "evict", "--olric", strings.Join(addrs, ","), "--dmap", dmap,
			"--cluster", "cluster-c", "--yes", "--max-rate", "150", "--settle-timeout", downSettle.String(),
			"--dial-timeout", "300ms", "--request-timeout", "500ms", "-o", "json"},
			&ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
	}()
	// Kill once the delete phase has deleted some candidates, with most
	// still to do.
	goneAtKill := 0
	deadline := time.Now().Add(30 * time.Second)
	for goneAtKill < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("evict deleted only %d of %d candidates in 30 s", goneAtKill, len(ckeys))
		}
		select {
		case rc := <-code:
			t.Fatalf("evict ended (exit %d) before the members were killed:\n%s\n%s", rc, out.String(), errOut.String())
		default:
		}
		goneAtKill = len(ckeys) - countPresent(obs, ckeys)
	}
	for _, m := range fc.members {
		if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", m.name, err)
		}
	}
	killed := time.Now()
	var rc int
	select {
	case rc = <-code:
	case <-time.After(3 * time.Minute):
		t.Fatalf("evict still runs 3 minutes after every member was killed")
	}
	took := time.Since(killed)
	t.Logf("evict exited %d %v after the kill; %d of %d candidates were gone when the members were killed; stderr:\n%s", rc, took.Round(time.Millisecond), goneAtKill, len(ckeys), errOut.String())
	if rc != 1 {
		t.Errorf("exit %d, want 1", rc)
	}
	if took > downBound {
		t.Errorf("evict took %v after every member was killed, want at most %v", took.Round(time.Millisecond), downBound)
	}
	if !strings.Contains(errOut.String(), "run again") {
		t.Errorf("stderr does not say run again:\n%s", errOut.String())
	}
	var rep struct {
		Schema string `json:"schema"`
		store.EvictReport
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("evict -o json: %v\n%s", err, out.String())
	}
	if rep.Schema != "lcctl.store-evict/v1" {
		t.Errorf("schema %q", rep.Schema)
	}
	t.Logf("RESULT evict, every member killed: exit %d after %v; deleted %d, gone %d, failed %d, unverified %d, not attempted %d of %d; gone before the kill %d; cluster_down %v",
		rc, took.Round(time.Millisecond), rep.Deleted, rep.SkippedGone, rep.Failed, rep.Unverified, rep.NotAttempted, rep.Candidates, goneAtKill, rep.ClusterDown)
	if rep.Candidates != len(ckeys) {
		t.Errorf("candidates %d, want %d (the scan ran before the kill)", rep.Candidates, len(ckeys))
	}
	checkEvictReport(t, rep.EvictReport, errors.New("exit 1"))
	if !rep.ClusterDown || !rep.RunAgain {
		t.Errorf("cluster_down %v, run_again %v: want both true", rep.ClusterDown, rep.RunAgain)
	}
	// The observer saw goneAtKill candidates gone just before the kill;
	// at 150 deletions/s the evict deletes a few more before the signal
	// lands (one read of the candidates takes well under a second).
	if claimed, most := rep.Deleted+rep.SkippedGone, goneAtKill+150; claimed > most {
		t.Errorf("evict claims %d candidates deleted or gone; at most %d can have been when the members died", claimed, most)
	}
	for _, o := range rep.Outcomes {
		if o.Outcome == store.EvictNotAttempted && o.Reason != store.ReasonUnreachable {
			t.Errorf("%d candidates not attempted for %q, want %q", o.Count, o.Reason, store.ReasonUnreachable)
		}
	}
}

// TestFaultEvictClusterFrozen freezes every member (SIGSTOP) part-way
// through the delete phase, thaws them after evict gave up, and checks
// the store's true contents: no candidate evict counts deleted or gone is
// still there, and evict gave up within the bound.
func TestFaultEvictClusterFrozen(t *testing.T) {
	t.Parallel()
	dmap := "fault-frozen"
	fc, c, want := startSeeded(t, 1, dmap, faultEntries)

	results := map[string]store.EvictResult{}
	var frozenAt time.Time
	rep, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-c", Apply: true, Batch: 20, Workers: 1, MaxRate: 200, SettleTimeout: downSettle,
		OnResult: func(r store.EvictResult) {
			results[r.Key] = r
			if len(results) == faultEntries/15 && frozenAt.IsZero() {
				for _, m := range fc.members {
					_ = m.cmd.Process.Signal(syscall.SIGSTOP)
				}
				frozenAt = time.Now()
			}
		}})
	if frozenAt.IsZero() {
		t.Fatal("the evict ended before the freeze")
	}
	took := time.Since(frozenAt)
	for _, m := range fc.members {
		_ = m.cmd.Process.Signal(syscall.SIGCONT)
	}
	if err := waitMembers(fc.members, len(fc.members)); err != nil {
		t.Fatalf("after the thaw: %v", err)
	}
	truth := fc.truth(0, dmap, want)
	back := 0
	for k, r := range results {
		if _, there := truth[k]; there && (r.Outcome == store.EvictDeleted || r.Outcome == store.EvictSkippedGone) {
			back++
		}
	}
	left, _ := clusterCLeft(truth, nil)
	t.Logf("RESULT evict, every member frozen: err %v after %v; deleted %d, gone %d, failed %d, unverified %d, not attempted %d of %d; cluster-c left afterwards %d; cluster_down %v",
		err != nil, took.Round(time.Millisecond), rep.Deleted, rep.SkippedGone, rep.Failed, rep.Unverified, rep.NotAttempted, rep.Candidates, left, rep.ClusterDown)
	if !errors.Is(err, store.ErrIncomplete) || !errors.Is(err, store.ErrUnreachable) {
		t.Errorf("evict: %v, want an error wrapping ErrIncomplete and ErrUnreachable", err)
	}
	if took > downBound {
		t.Errorf("evict took %v after every member froze, want at most %v", took.Round(time.Millisecond), downBound)
	}
	if back > 0 {
		t.Errorf("%d candidates counted deleted or gone are there after the thaw", back)
	}
	if left == 0 {
		t.Errorf("no entry of cluster-c is left: the freeze came too late to test anything")
	}
	checkEvictReport(t, rep, err)
	if !rep.ClusterDown {
		t.Errorf("cluster_down false after every member froze")
	}
}

// TestFaultScanClusterDown kills every member part-way through a scan:
// the scan must give up within the bound, not claim complete, and say
// that no member answered.
func TestFaultScanClusterDown(t *testing.T) {
	t.Parallel()
	fc, c, _ := startSeeded(t, 1, "fault-scan-down", faultEntries)

	listed := 0
	var killed time.Time
	rep, err := c.Scan(context.Background(), store.ScanOptions{Count: 50, ReadBatch: 50, ReadWorkers: 1, SettleTimeout: downSettle}, func(store.Entry) error {
		listed++
		if listed == faultEntries/5 && killed.IsZero() {
			for _, m := range fc.members {
				_ = m.cmd.Process.Signal(syscall.SIGKILL)
			}
			killed = time.Now()
		}
		time.Sleep(faultScanPace)
		return nil
	})
	if killed.IsZero() {
		t.Fatal("the scan ended before the kill")
	}
	took := time.Since(killed)
	t.Logf("RESULT scan, every member killed: err %v after %v; complete %v, listed %d, unreadable %d, restarts %d, cluster_down %v; problems %q",
		err != nil, took.Round(time.Millisecond), rep.Complete, listed, rep.Unreadable, rep.Restarts, rep.ClusterDown, rep.Problems)
	if !errors.Is(err, store.ErrIncomplete) || !errors.Is(err, store.ErrUnreachable) {
		t.Errorf("scan: %v, want an error wrapping ErrIncomplete and ErrUnreachable", err)
	}
	if rep.Complete || !rep.ClusterDown {
		t.Errorf("complete %v, cluster_down %v after every member was killed", rep.Complete, rep.ClusterDown)
	}
	if took > downBound {
		t.Errorf("the scan took %v after every member was killed, want at most %v", took.Round(time.Millisecond), downBound)
	}
}

// frozenRequestTimeout is the request timeout of the frozen-cluster
// bound tests: longer than the settle timeout, so a give-up that waits
// for calls to time out (and retry) shows; frozenBound is how long a run
// may take after every member froze: the settle timeout, one liveness
// ping (at most 1 s), one poll interval, and room for a loaded machine.
// Before the pings had their own timeout and the calls in flight were
// cut off, it took 4-7 request timeouts.
const (
	frozenRequestTimeout = 4 * time.Second
	frozenBound          = downSettle + 2*time.Second
)

// TestFaultClusterFrozenBound freezes every member part-way through a
// scan and through an evict run with a request timeout longer than the
// settle timeout: each must give up (cluster down, ErrIncomplete) within
// frozenBound, however long a call may take.
func TestFaultClusterFrozenBound(t *testing.T) {
	t.Parallel()
	for _, run := range []string{"scan", "evict"} {
		t.Run(run, func(t *testing.T) {
			t.Parallel()
			dmap := "fault-frozen-" + run
			fc, _, _ := startSeeded(t, 1, dmap, faultEntries)
			c, err := store.Connect(context.Background(), store.Options{Addrs: []string{fc.members[0].name}, DMap: dmap,
				DialTimeout: 300 * time.Millisecond, RequestTimeout: frozenRequestTimeout})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			var frozenAt time.Time
			freezeAll := func() {
				for _, m := range fc.members {
					_ = m.cmd.Process.Signal(syscall.SIGSTOP)
				}
				frozenAt = time.Now()
			}
			var complete, down bool
			if run == "scan" {
				n := 0
				var rep store.ScanReport
				rep, err = c.Scan(context.Background(), store.ScanOptions{Count: 50, ReadBatch: 50, ReadWorkers: 1, SettleTimeout: downSettle}, func(store.Entry) error {
					if n++; n == faultEntries/5 && frozenAt.IsZero() {
						freezeAll()
					}
					time.Sleep(faultScanPace)
					return nil
				})
				complete, down = rep.Complete, rep.ClusterDown
			} else {
				n := 0
				var rep store.EvictReport
				rep, err = c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-c", Apply: true, Batch: 20, Workers: 4, MaxRate: 200, SettleTimeout: downSettle,
					OnResult: func(store.EvictResult) {
						if n++; n == faultEntries/15 && frozenAt.IsZero() {
							freezeAll()
						}
					}})
				complete, down = rep.Done, rep.ClusterDown
				checkEvictReport(t, rep, err)
			}
			if frozenAt.IsZero() {
				t.Fatalf("the %s ended before the freeze", run)
			}
			took := time.Since(frozenAt)
			for _, m := range fc.members {
				_ = m.cmd.Process.Signal(syscall.SIGCONT)
			}
			t.Logf("RESULT %s, every member frozen, request timeout %v, settle timeout %v: gave up after %v; err %v",
				run, frozenRequestTimeout, downSettle, took.Round(time.Millisecond), err)
			if !errors.Is(err, store.ErrIncomplete) || !errors.Is(err, store.ErrUnreachable) {
				t.Errorf("%s: %v, want an error wrapping ErrIncomplete and ErrUnreachable", run, err)
			}
			if complete || !down {
				t.Errorf("complete/done %v, cluster_down %v after every member froze", complete, down)
			}
			if took > frozenBound {
				t.Errorf("%s took %v after every member froze, want at most %v (settle timeout %v, request timeout %v)", run, took.Round(time.Millisecond), frozenBound, downSettle, frozenRequestTimeout)
			}
		})
	}
}
