package processtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
)

// The fault tests run scan and evict against their own three olric-server
// processes and, part-way through, freeze one member (SIGSTOP, later
// SIGCONT) or kill it (SIGKILL), with replica count 1 (the gateway chart's)
// and 2. Each waits inside the scan or evict callback until the other
// members have dropped the faulty one, so the fault lands mid-run every
// time. Afterwards a fresh client reads every key that was written (the
// store's true contents once the cluster has settled) and the test checks
// that lcctl claimed nothing it cannot prove: a scan that says complete
// listed every key that is still there, and an evict that returned no
// error left no entry of the evicted cluster.

// faultCluster is a set of olric-server processes of one test.
type faultCluster struct {
	t        *testing.T
	members  []*member
	replicas int
}

// faultEntries is how many entries a fault scan writes, evictEntries a
// fault evict (a third of them are candidates); faultValues are their
// values, round-robin.
const (
	faultEntries = 2000
	evictEntries = 4500
)

// faultSettle bounds the wait for the routing table to settle in the
// fault tests.
const faultSettle = 8 * time.Second

// faultScanPace is how long a fault scan's callback takes per entry, and
// faultEvictRate the fault evicts' --max-rate (deletions per second, the
// default; rounds of 100 candidates): the runs last about 2-3 s after the
// fault, longer than the failure detection (about 1 s with the fast
// memberlist settings) and the routing table's change that follows.
const (
	faultScanPace  = 2 * time.Millisecond
	faultEvictRate = 1000
)

var faultValues = []string{"cluster-a", "cluster-b", "cluster-c"}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

var startMu sync.Mutex

// startFaultCluster starts n olric-server members with fast failure
// detection and stops them (thawing frozen ones first) when the test ends.
func startFaultCluster(t *testing.T, n, replicas int) *faultCluster {
	t.Helper()
	if olricBin == "" {
		t.Fatal("olric-server was not built")
	}
	fc := &faultCluster{t: t, replicas: replicas}
	dir := t.TempDir()
	t.Cleanup(func() {
		for _, m := range fc.members {
			_ = m.cmd.Process.Signal(syscall.SIGCONT)
			_ = m.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, m := range fc.members {
			select {
			case <-m.done:
			case <-time.After(5 * time.Second):
				_ = m.cmd.Process.Kill()
				<-m.done
			}
			if t.Failed() {
				log := m.log.String()
				if len(log) > 4000 {
					log = "…" + log[len(log)-4000:]
				}
				fmt.Fprintf(os.Stderr, "--- %s: olric-server %s log (end):\n%s\n", t.Name(), m.name, log)
			}
		}
	})
	var peers []string
	for i := 0; i < n; i++ {
		// Ports are picked free and bound a moment later: launches are
		// serialised until the member listens, so two clusters starting
		// at once cannot pick the same port.
		startMu.Lock()
		m, err := launchMember(dir, fmt.Sprintf("olric-%d.yaml", i+1), peers, replicas, true)
		if err == nil {
			err = waitListening(m)
		}
		startMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		fc.members = append(fc.members, m)
		peers = append(peers, m.memberlist)
		// One at a time: members joining at once can disagree on the
		// coordinator ("unrecognized cluster coordinator") and exit.
		if err := waitMembers(fc.members, i+1); err != nil {
			t.Fatal(err)
		}
	}
	return fc
}

// waitListening waits up to 15 s until m accepts connections on its RESP
// port (it binds its memberlist port first).
func waitListening(m *member) error {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-m.done:
			return fmt.Errorf("olric-server %s exited: %v\n%s", m.name, m.err, m.log)
		default:
		}
		if c, err := net.DialTimeout("tcp", m.name, 100*time.Millisecond); err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("olric-server %s does not listen after 15 s", m.name)
}

// connect returns a client with short timeouts, seeded with members[seed].
func (fc *faultCluster) connect(seed int, dmap string) *store.Client {
	fc.t.Helper()
	c, err := store.Connect(context.Background(), store.Options{Addrs: []string{fc.members[seed].name}, DMap: dmap,
		DialTimeout: 300 * time.Millisecond, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		fc.t.Fatalf("connect: %v", err)
	}
	fc.t.Cleanup(func() { _ = c.Close() })
	return c
}

// fault is what happens to the member.
type fault int

const (
	freeze fault = iota // SIGSTOP, SIGCONT after the run
	kill                // SIGKILL
)

func (f fault) String() string { return [...]string{"freeze", "kill"}[f] }

// injectAsync applies f to member i and returns at once; the returned
// channel is closed when obs no longer lists the member (or after 20 s).
// The run under test keeps going meanwhile, as it does in production: its
// calls land while the member is frozen or dead but still in the routing
// table, and after the table changed.
func (fc *faultCluster) injectAsync(f fault, i int, obs *store.Client) <-chan struct{} {
	dropped := make(chan struct{})
	go func() {
		defer close(dropped)
		fc.inject(f, i, obs)
	}()
	return dropped
}

// inject applies f to member i and waits until obs no longer lists it
// (at most 20 s). It may run on another goroutine than the test's.
func (fc *faultCluster) inject(f fault, i int, obs *store.Client) {
	m := fc.members[i]
	sig := syscall.SIGSTOP
	if f == kill {
		sig = syscall.SIGKILL
	}
	if err := m.cmd.Process.Signal(sig); err != nil {
		fc.t.Errorf("signal %v to %s: %v", sig, m.name, err)
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ms, err := obs.Members(context.Background())
		if err == nil && !hasMember(ms, m.name) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fc.t.Errorf("the cluster still lists %s 20 s after %s", m.name, f)
}

// recover thaws a frozen member and waits until the cluster lists every
// member that is not killed.
func (fc *faultCluster) recover(f fault, i int) {
	fc.t.Helper()
	want := len(fc.members)
	if f == freeze {
		_ = fc.members[i].cmd.Process.Signal(syscall.SIGCONT)
	} else {
		want--
	}
	var live []*member
	for j, m := range fc.members {
		if j != i || f == freeze {
			live = append(live, m)
		}
	}
	if err := waitMembers(live, want); err != nil {
		fc.t.Fatalf("after the %s: %v", f, err)
	}
}

func hasMember(ms []store.Member, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}

// startSeeded starts three members with replicas copies, connects to the
// first with dmap and writes n entries (see seedFault).
func startSeeded(t *testing.T, replicas int, dmap string, n int) (*faultCluster, *store.Client, map[string]string) {
	t.Helper()
	fc := startFaultCluster(t, 3, replicas)
	c := fc.connect(0, dmap)
	return fc, c, seedFault(t, c, n)
}

// seedFault writes n entries and returns key -> cluster.
func seedFault(t *testing.T, c *store.Client, n int) map[string]string {
	t.Helper()
	want := make(map[string]string, n)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = store.Key("fault", "m", fmt.Sprint(i))
		want[keys[i]] = faultValues[i%len(faultValues)]
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += 8 {
				if err := c.Put(context.Background(), keys[i], want[keys[i]], time.Hour, store.PutAlways); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("seed: %v", err)
	}
	return want
}

// truth reads every key of want with a fresh client once the cluster has
// settled: it reads until two reads half a second apart agree (at most 8
// reads)
// and returns key -> cluster of the entries present.
func (fc *faultCluster) truth(seed int, dmap string, want map[string]string) map[string]string {
	fc.t.Helper()
	c := fc.connect(seed, dmap)
	read := func() map[string]string {
		got := map[string]string{}
		var mu sync.Mutex
		keys := make(chan string)
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range keys {
					e, err := c.Get(context.Background(), k)
					switch {
					case err == nil:
						mu.Lock()
						got[k] = e.Cluster
						mu.Unlock()
					case !errors.Is(err, store.ErrNotFound):
						fc.t.Errorf("true contents: read %s: %v", k, err)
					}
				}
			}()
		}
		for k := range want {
			keys <- k
		}
		close(keys)
		wg.Wait()
		return got
	}
	prev := read()
	for range 7 {
		time.Sleep(500 * time.Millisecond)
		now := read()
		if sameEntries(prev, now) {
			return now
		}
		prev = now
	}
	fc.t.Fatalf("the store's contents did not settle: %d then %d entries", len(prev), len(read()))
	return nil
}

func sameEntries(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// afterRun waits for the fault's channel (nil when the run ended before
// the fault: the test fails), recovers member 2 and returns whether the
// channel was closed before the run ended, and the store's true contents.
func (fc *faultCluster) afterRun(run, event string, ch <-chan struct{}, f fault, dmap string, want map[string]string) (bool, map[string]string) {
	fc.t.Helper()
	if ch == nil {
		fc.t.Fatalf("%s ended before the %s", run, event)
	}
	inRun := isClosed(ch)
	<-ch
	fc.recover(f, 2)
	return inRun, fc.truth(0, dmap, want)
}

// faultCase is one fault test: what runs, which fault, how many copies.
type faultCase struct {
	fault    fault
	replicas int
}

func faultCases() []faultCase {
	return []faultCase{{freeze, 1}, {kill, 1}, {freeze, 2}, {kill, 2}}
}

func (fcase faultCase) name() string {
	return fmt.Sprintf("%s/replicas=%d", fcase.fault, fcase.replicas)
}
