package store_test

import (
	"math"

	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/olric-data/olric"

	"github.com/lcctl/lcctl/internal/store"
)

func TestGetPutDelete(t *testing.T) {
	_, c := connectShared(t)
	ctx := context.Background()
	key := store.Key("fn-alpha", "company/model", "mt:v1:session:x")

	if _, err := c.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get before put: err = %v, want ErrNotFound", err)
	}
	before := time.Now()
	if err := c.Put(ctx, key, "cluster-b", 10*time.Minute, store.PutAlways); err != nil {
		t.Fatal(err)
	}
	e, err := c.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if e.Key != key || e.Cluster != "cluster-b" || !e.Valid {
		t.Fatalf("got %+v", e)
	}
	if ttl := e.TTL(); ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Errorf("remaining TTL %v, want just under 10m", ttl)
	}
	if e.WrittenAt.Before(before.Add(-time.Second)) || e.WrittenAt.After(time.Now().Add(time.Second)) {
		t.Errorf("written at %v, want about %v", e.WrittenAt, before)
	}
	loc := c.Locate(key)
	if loc.Partitions != 271 || loc.Owner == "" || len(loc.Replicas) != 1 || loc.Replicas[0] == loc.Owner {
		t.Errorf("location %+v: want 271 partitions, an owner and one other replica", loc)
	}
	if loc.Partition != store.Partition(c.DMap(), key, 271) {
		t.Errorf("partition %d", loc.Partition)
	}

	// NX and XX.
	if err := c.Put(ctx, key, "cluster-c", time.Minute, store.PutIfAbsent); !errors.Is(err, store.ErrConditionNotMet) {
		t.Errorf("put if absent on a present key: %v", err)
	}
	other := store.Key("fn-alpha", "company/model", "other")
	if err := c.Put(ctx, other, "cluster-c", time.Minute, store.PutIfPresent); !errors.Is(err, store.ErrConditionNotMet) {
		t.Errorf("put if present on an absent key: %v", err)
	}
	if _, err := c.Get(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a failed XX put wrote the key: %v", err)
	}
	if err := c.Put(ctx, key, "cluster-c", time.Minute, store.PutIfPresent); err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Get(ctx, key); e.Cluster != "cluster-c" || e.TTL() > time.Minute {
		t.Errorf("after XX put: %+v ttl %v", e, e.TTL())
	}

	// Delete: a mismatched --if-cluster leaves it; then it goes.
	res, err := c.Delete(ctx, key, "cluster-b")
	if err != nil || res.Outcome != store.Changed || res.Before.Cluster != "cluster-c" {
		t.Fatalf("delete if cluster-b: %+v, %v", res, err)
	}
	res, err = c.Delete(ctx, key, "cluster-c")
	if err != nil || res.Outcome != store.Deleted {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	if _, err := c.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	res, err = c.Delete(ctx, key, "")
	if err != nil || res.Outcome != store.Absent {
		t.Fatalf("delete of an absent key: %+v, %v", res, err)
	}
}

func TestShortTTLExpires(t *testing.T) {
	_, c := connectShared(t)
	ctx := context.Background()
	key := store.Key("r", "m", "expiring")
	if err := c.Put(ctx, key, "cluster-a", 50*time.Millisecond, store.PutAlways); err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)
	if _, err := c.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a 50ms entry is still readable after 120ms: %v", err)
	}
}

func TestRefusesBadInputBeforeSending(t *testing.T) {
	_, c := connectShared(t)
	ctx := context.Background()
	good := store.Key("r", "m", "k")
	tests := []struct {
		name           string
		key, value     string
		ttl            time.Duration
		want           string
		keyMustBeEmpty string
	}{
		{"ttl under 1ms would never expire", good, "cluster-a", 500 * time.Microsecond, "under 1ms", good},
		{"zero ttl", good, "cluster-a", 0, "under 1ms", good},
		{"fractional ms", good, "cluster-a", 1500 * time.Microsecond, "whole number of milliseconds", good},
		{"empty value", good, "", time.Minute, "must not be empty", good},
		{"huge value", good, strings.Repeat("x", 1<<16), time.Minute, "65536 bytes", good},
		{"257 bytes", good, strings.Repeat("x", 257), time.Minute, "at most 256", good},
		{"non-printable value", good, "cluster\x00a", time.Minute, "non-printable byte 0x00", good},
		{"foreign key", "rate:limit:1", "cluster-a", time.Minute, "must start with", ""},
		{"short key", "lc:v1:abcd", "cluster-a", time.Minute, "got 10 bytes", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Put(ctx, tc.key, tc.value, tc.ttl, store.PutAlways)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			if tc.keyMustBeEmpty != "" {
				if _, err := c.Get(ctx, tc.keyMustBeEmpty); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("refused put still wrote: %v", err)
				}
			}
		})
	}
	for _, k := range []string{"", "lc:v1:", "LC:V1:" + strings.Repeat("a", 64), good + "\n"} {
		if _, err := c.Get(ctx, k); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("get %q: err = %v, want a validation error", k, err)
		}
		if _, err := c.Delete(ctx, k, ""); err == nil {
			t.Errorf("delete %q accepted", k)
		}
	}
}

func TestScan(t *testing.T) {
	t.Parallel()
	cl, c := connectShared(t)
	want := seed(t, c, "scan", 1500, time.Hour, "cluster-a", "cluster-b", "cluster-c")
	// Entries lcctl must not report: keys outside the store key space, and
	// an expired entry.
	cc, err := olric.NewClusterClient(cl.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(context.Background())
	dm, err := cc.NewDMap(c.DMap())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []string{"lc:v1:not-a-store-key", "rate-limit:fn-alpha", "x-lc:v1:" + strings.Repeat("a", 64)} {
		if err := dm.Put(ctx, k, "cluster-a"); err != nil {
			t.Fatal(err)
		}
	}
	expired := store.Key("scan", "m", "expired")
	if err := c.Put(ctx, expired, "cluster-a", 1*time.Millisecond, store.PutAlways); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)

	got, rep := scanAll(t, c)
	if d := diff(want, got); d != "" {
		t.Fatalf("scan: %s", d)
	}
	if !rep.Complete || rep.Entries != 1500 || rep.Matched != 1500 || rep.Restarts != 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Ignored != 1 {
		t.Errorf("ignored %d keys, want 1 (lc:v1:not-a-store-key; the others do not match ^lc:v1:)", rep.Ignored)
	}
	if rep.Keys != 1500+rep.Vanished || rep.Vanished > 1 {
		t.Errorf("keys %d, vanished %d: want 1500 live keys and at most the expired one", rep.Keys, rep.Vanished)
	}
	for _, cluster := range []string{"cluster-a", "cluster-b", "cluster-c"} {
		if rep.PerCluster[cluster] != 500 {
			t.Errorf("per cluster %v", rep.PerCluster)
		}
	}

	// --cluster and --limit.
	var b []string
	rep, err = c.Scan(ctx, store.ScanOptions{Cluster: "cluster-b"}, func(e store.Entry) error {
		if e.Cluster != "cluster-b" {
			t.Errorf("filtered scan returned %s", e.Cluster)
		}
		b = append(b, e.Key)
		return nil
	})
	if err != nil || len(b) != 500 || rep.Matched != 500 || rep.Entries != 1500 {
		t.Errorf("cluster-b: %d entries, report %+v, %v", len(b), rep, err)
	}
	n := 0
	rep, err = c.Scan(ctx, store.ScanOptions{Limit: 7, Count: 3, ReadBatch: 2}, func(store.Entry) error { n++; return nil })
	if err != nil || n != 7 || !rep.Truncated || rep.Complete {
		t.Errorf("limit 7: %d entries, report %+v, %v", n, rep, err)
	}
	// A callback error stops the scan and is returned.
	stop := errors.New("stop here")
	_, err = c.Scan(ctx, store.ScanOptions{}, func(store.Entry) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("callback error: %v", err)
	}
	// Cancelling stops the scan and says so.
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	rep, err = c.Scan(cctx, store.ScanOptions{}, func(store.Entry) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || !rep.Interrupted || rep.Complete {
		t.Errorf("cancelled scan: %v, %+v", err, rep)
	}
}

func TestEvict(t *testing.T) {
	t.Parallel()
	_, c := connectShared(t)
	ctx := context.Background()
	want := seed(t, c, "evict", 900, time.Hour, "cluster-a", "cluster-b", "cluster-c")

	dry, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-b", Sample: 5})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Applied || dry.Candidates != 300 || len(dry.Sample) != 5 || dry.Deleted != 0 || dry.NotAttempted != 300 {
		t.Fatalf("dry run: %+v", dry)
	}
	for _, k := range dry.Sample {
		if want[k] != "cluster-b" {
			t.Errorf("sample key %s is %q", k, want[k])
		}
	}
	if got, _ := scanAll(t, c); diff(want, got) != "" {
		t.Fatalf("the dry run changed the store: %s", diff(want, got))
	}

	// Between the scan and the apply phase, 20 candidates move to
	// cluster-a and 10 disappear: they must be skipped, not deleted.
	var moved, gone []string
	rep, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-b", Apply: true, Batch: 16,
		Confirm: func(n int, _ []string) bool {
			for k, v := range want {
				if v != "cluster-b" {
					continue
				}
				switch {
				case len(moved) < 20:
					moved = append(moved, k)
					want[k] = "cluster-a"
					if err := c.Put(ctx, k, "cluster-a", time.Hour, store.PutAlways); err != nil {
						t.Error(err)
					}
				case len(gone) < 10:
					gone = append(gone, k)
					delete(want, k)
					if _, err := c.Delete(ctx, k, ""); err != nil {
						t.Error(err)
					}
				}
			}
			return n == 300
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Applied || rep.Deleted != 270 || rep.SkippedChanged != 20 || rep.SkippedGone != 10 || rep.Failed != 0 || rep.NotAttempted != 0 {
		t.Fatalf("apply: %+v", rep)
	}
	for k, v := range want {
		if v == "cluster-b" {
			delete(want, k)
		}
	}
	if got, _ := scanAll(t, c); diff(want, got) != "" {
		t.Fatalf("after evict: %s", diff(want, got))
	}
	// Running again finds nothing.
	again, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-b", Apply: true})
	if err != nil || again.Candidates != 0 || again.Deleted != 0 {
		t.Fatalf("second run: %+v, %v", again, err)
	}
	// A refused confirmation deletes nothing.
	none, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-a", Apply: true, Confirm: func(int, []string) bool { return false }})
	if err != nil || none.Applied || none.Deleted != 0 || none.NotAttempted != none.Candidates || none.Candidates != 320 {
		t.Fatalf("refused confirmation: %+v, %v", none, err)
	}
}

func TestEvictRateLimit(t *testing.T) {
	_, c := connectShared(t)
	ctx := context.Background()
	seed(t, c, "rate", 60, time.Hour, "cluster-r")
	start := time.Now()
	rep, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-r", Apply: true, MaxRate: 200})
	if err != nil || rep.Deleted != 60 {
		t.Fatalf("%+v, %v", rep, err)
	}
	// At 200/s the rounds hold 20 deletions and start 100ms apart: the
	// third starts 200ms after the first.
	if el := time.Since(start); el < 200*time.Millisecond {
		t.Errorf("60 deletions at --max-rate 200 took %v, want at least 200ms", el)
	}
	// Four workers draw from one token bucket: 200 deletions at 400/s
	// (rounds of 40, the first one free) take at least 400ms, not a
	// quarter of that.
	seed(t, c, "rate4", 200, time.Hour, "cluster-s")
	start = time.Now()
	rep, err = c.Evict(ctx, store.EvictOptions{Cluster: "cluster-s", Apply: true, MaxRate: 400, Workers: 4})
	if err != nil || rep.Deleted != 200 {
		t.Fatalf("%+v, %v", rep, err)
	}
	if el := time.Since(start); el < 400*time.Millisecond {
		t.Errorf("200 deletions at --max-rate 400 with 4 workers took %v, want at least 400ms", el)
	}
}

func TestEvictInterrupted(t *testing.T) {
	t.Parallel()
	_, c := connectShared(t)
	want := seed(t, c, "intr", 200, time.Hour, "cluster-x")
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	rep, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-x", Apply: true, Batch: 10, Workers: 1,
		OnResult: func(store.EvictResult) {
			if seen++; seen == 30 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || !rep.Interrupted {
		t.Fatalf("err %v, report %+v", err, rep)
	}
	if rep.Deleted+rep.NotAttempted != 200 || rep.Deleted < 30 || rep.Failed != 0 {
		t.Fatalf("report %+v", rep)
	}
	got, _ := scanAll(t, c)
	if len(got) != rep.NotAttempted {
		t.Fatalf("%d entries remain, report says %d not attempted", len(got), rep.NotAttempted)
	}
	for k := range got {
		if want[k] != "cluster-x" {
			t.Fatalf("unexpected entry %s", k)
		}
	}
	again, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-x", Apply: true})
	if err != nil || again.Deleted != rep.NotAttempted {
		t.Fatalf("re-run: %+v, %v", again, err)
	}
}

func TestStatsAndMembers(t *testing.T) {
	cl, c := connectShared(t)
	seed(t, c, "stats", 600, time.Hour, "cluster-a", "cluster-b")
	st, err := c.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Members) != 3 || st.Partitions != 271 || st.ReplicaCount != 2 || !st.EntriesComplete || !st.DMapSeen {
		t.Fatalf("stats %+v", st)
	}
	if st.Entries != 600 {
		t.Errorf("entries %d, want 600", st.Entries)
	}
	primaries, replicas, backups, coord := 0, 0, 0, 0
	addrs := strings.Join(cl.Addrs(), ",")
	for _, m := range st.Members {
		if !strings.Contains(addrs, m.Name) || m.Version == "" || m.Error != "" {
			t.Errorf("member %+v", m)
		}
		primaries += m.PrimaryPartitions
		replicas += m.ReplicaPartitions
		backups += m.BackupEntries
		if m.Coordinator {
			coord++
		}
	}
	if primaries != 271 || replicas != 271 || coord != 1 || backups != 600 {
		t.Errorf("primaries %d, replicas %d, backup entries %d, coordinators %d", primaries, replicas, backups, coord)
	}
}

func TestProbe(t *testing.T) {
	cl, _ := connectShared(t)
	res, err := store.Probe(context.Background(), store.Options{Addrs: cl.Addrs()[:1], DMap: dmapFor(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Readable || !res.Writable || len(res.Members) != 3 || res.Partitions != 271 || len(res.Steps) != 6 {
		t.Fatalf("%+v", res)
	}
	c := cl.Connect(t, store.Options{DMap: dmapFor(t)})
	_, rep := scanAll(t, c)
	if rep.Keys != 0 || rep.Ignored != 0 {
		t.Fatalf("the probe left something behind: %+v", rep)
	}
}

// checkScanInvariants fails unless rep's counts agree with each other and
// with what the callback saw (docs/store.md, "store scan": the counts
// cover exactly the keys examined).
func checkScanInvariants(t *testing.T, what string, o store.ScanOptions, rep store.ScanReport, passed map[string]int) {
	t.Helper()
	sum := 0
	for _, n := range rep.PerCluster {
		sum += n
	}
	got := 0
	for _, n := range passed {
		got += n
	}
	wantMatched := rep.Entries
	if o.Cluster != "" {
		wantMatched = rep.PerCluster[o.Cluster]
	}
	switch {
	case rep.Keys != rep.Entries+rep.Vanished+rep.Unreadable:
		t.Errorf("%s: keys %d != entries %d + vanished %d + unreadable %d", what, rep.Keys, rep.Entries, rep.Vanished, rep.Unreadable)
	case sum != rep.Entries:
		t.Errorf("%s: per_cluster sums to %d, entries %d", what, sum, rep.Entries)
	case rep.Matched != wantMatched || rep.Matched != got:
		t.Errorf("%s: matched %d, want %d (per_cluster %v) and %d passed to the callback", what, rep.Matched, wantMatched, rep.PerCluster, got)
	case o.Limit > 0 && rep.Matched > o.Limit:
		t.Errorf("%s: matched %d over the limit %d", what, rep.Matched, o.Limit)
	case rep.Truncated && (rep.Complete || rep.Matched != o.Limit):
		t.Errorf("%s: truncated with complete %v, matched %d, limit %d", what, rep.Complete, rep.Matched, o.Limit)
	case rep.Problems == nil:
		t.Errorf("%s: problems is nil; the JSON key must be [] when empty", what)
	}
}

// TestScanLimitCounts: a scan stopped at --limit reports counts that add
// up (lcctl store scan --cluster cluster-c --limit 5 said keys 55, entries
// 48 and cluster-c 6 with 5 matched), for every batch size and filter,
// and a limit equal to the number of matching entries is not truncated.
func TestScanLimitCounts(t *testing.T) {
	t.Parallel()
	_, c := connectShared(t)
	seed(t, c, "limit", 300, time.Hour, "cluster-a", "cluster-b", "cluster-c", "cluster-a")
	ctx := context.Background()
	for _, o := range []store.ScanOptions{
		{},
		{Cluster: "cluster-c"},
		{Limit: 5},
		{Limit: 5, Cluster: "cluster-c"},
		{Limit: 5, Cluster: "cluster-c", ReadBatch: 1},
		{Limit: 7, Count: 3, ReadBatch: 2},
		{Limit: 1, ReadWorkers: 1},
		{Limit: 74, Cluster: "cluster-b", ReadBatch: 10},
		{Limit: 75, Cluster: "cluster-b", ReadBatch: 10},
		{Limit: 299},
		{Limit: 300, Cluster: "cluster-a"},
	} {
		what := fmt.Sprintf("%+v", o)
		passed := map[string]int{}
		rep, err := c.Scan(ctx, o, func(e store.Entry) error { passed[e.Cluster]++; return nil })
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		checkScanInvariants(t, what, o, rep, passed)
		total := map[string]int{"": 300, "cluster-a": 150, "cluster-b": 75, "cluster-c": 75}[o.Cluster]
		if o.Limit > 0 && o.Limit < total {
			if !rep.Truncated || rep.Matched != o.Limit || rep.Entries >= 300 {
				t.Errorf("%s: want truncated at %d of %d, report %+v", what, o.Limit, total, rep)
			}
		} else if !rep.Complete || rep.Truncated || rep.Keys != 300 || rep.Matched != total {
			t.Errorf("%s: want complete with %d matched of 300 keys, report %+v", what, total, rep)
		}
	}
}

func TestEvictRateOutOfRange(t *testing.T) {
	_, c := connectShared(t)
	ctx := context.Background()
	keys := seed(t, c, "rate-range", 3, time.Hour, "cluster-q")
	for _, r := range []float64{1e-300, 1e-10, 0.009, -1, math.NaN(), math.Inf(1), 1e300} {
		_, err := c.Evict(ctx, store.EvictOptions{Cluster: "cluster-q", Apply: true, MaxRate: r})
		if err == nil || !strings.Contains(err.Error(), "want 0 (no limit) or 0.01-1e+09 deletions per second") {
			t.Errorf("max rate %v: %v", r, err)
		}
	}
	for k := range keys {
		if _, err := c.Get(ctx, k); err != nil {
			t.Fatalf("%s after refused evictions: %v", k, err)
		}
	}
}

func TestPutLongestTTL(t *testing.T) {
	_, c := connectShared(t)
	ctx := context.Background()
	key := store.Key("fn-alpha", "company/model", "mt:v1:session:longest-ttl")
	if err := c.Put(ctx, key, "cluster-b", store.MaxTTL, store.PutAlways); err != nil {
		t.Fatal(err)
	}
	e, err := c.Get(ctx, key)
	if err != nil {
		t.Fatalf("get after a put with MaxTTL: %v", err)
	}
	if e.Cluster != "cluster-b" || e.TTL() < store.MaxTTL-time.Hour {
		t.Fatalf("got %+v with ttl %v, want cluster-b with about %v", e, e.TTL(), store.MaxTTL)
	}
	other := store.Key("fn-alpha", "company/model", "mt:v1:session:too-long-ttl")
	if err := c.Put(ctx, other, "cluster-b", 2562047*time.Hour, store.PutAlways); err == nil || !strings.Contains(err.Error(), "over 100 years") {
		t.Fatalf("put with a 292-year TTL: %v, want the over-100-years error", err)
	}
	if _, err := c.Get(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused put wrote the key: %v", err)
	}
}
