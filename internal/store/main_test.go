package store_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/store/storetest"
)

// The integration tests share one 3-member loopback cluster with replica
// count 2 (started on first use); each test works in its own DMap. Tests
// that stop members start their own cluster.
var (
	sharedOnce sync.Once
	shared     *storetest.Cluster
	sharedErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

func sharedCluster(t testing.TB) *storetest.Cluster {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = storetest.New(3, 2) })
	if sharedErr != nil {
		t.Fatalf("start the shared 3-member cluster: %v", sharedErr)
	}
	return shared
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// dmapFor returns a DMap name of the test's own.
func dmapFor(t testing.TB) string {
	return "test-" + nonName.ReplaceAllString(t.Name(), "_")
}

// connectShared connects to the shared cluster with the test's DMap.
func connectShared(t testing.TB) (*storetest.Cluster, *store.Client) {
	t.Helper()
	cl := sharedCluster(t)
	return cl, cl.Connect(t, store.Options{DMap: dmapFor(t)})
}

// seed writes n entries with keys derived from (prefix, "m", i) and values
// taken round-robin from clusters, with 8 writers, and returns key ->
// cluster.
func seed(t testing.TB, c *store.Client, prefix string, n int, ttl time.Duration, clusters ...string) map[string]string {
	t.Helper()
	want := make(map[string]string, n)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = store.Key(prefix, "m", fmt.Sprint(i))
		want[keys[i]] = clusters[i%len(clusters)]
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := c.Put(context.Background(), keys[i], want[keys[i]], ttl, store.PutAlways); err != nil {
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

// scanAll scans everything and returns key -> cluster.
func scanAll(t testing.TB, c *store.Client) (map[string]string, store.ScanReport) {
	t.Helper()
	got := map[string]string{}
	rep, err := c.Scan(context.Background(), store.ScanOptions{}, func(e store.Entry) error {
		if _, dup := got[e.Key]; dup {
			t.Errorf("scan returned %s twice", e.Key)
		}
		got[e.Key] = e.Cluster
		return nil
	})
	if err != nil {
		t.Fatalf("scan: %v (report %+v)", err, rep)
	}
	return got, rep
}

// diff describes how got differs from want.
func diff(want, got map[string]string) string {
	var missing, extra, wrong int
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing++
		case g != v:
			wrong++
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra++
		}
	}
	if missing+extra+wrong == 0 {
		return ""
	}
	return fmt.Sprintf("%d missing, %d unexpected, %d with another value (want %d, got %d)", missing, extra, wrong, len(want), len(got))
}
