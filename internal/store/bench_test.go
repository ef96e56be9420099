package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/olric-data/olric"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/store/storetest"
)

const benchEntries = 100_000

// rawClient opens a plain olric ClusterClient and DMap: the floor the
// benchmarks compare lcctl's code with.
func rawClient(b *testing.B, addrs []string) (*olric.ClusterClient, olric.DMap) {
	b.Helper()
	cc, err := olric.NewClusterClient(addrs)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cc.Close(context.Background()) })
	dm, err := cc.NewDMap(store.DMapName)
	if err != nil {
		b.Fatal(err)
	}
	return cc, dm
}

// load writes n entries spread over clusters with pipelined puts.
func load(b *testing.B, dm olric.DMap, prefix string, n int, clusters ...string) []string {
	b.Helper()
	ctx := context.Background()
	keys := make([]string, n)
	for lo := 0; lo < n; lo += 5000 {
		pipe, err := dm.Pipeline()
		if err != nil {
			b.Fatal(err)
		}
		hi := min(lo+5000, n)
		futs := make([]*olric.FuturePut, 0, hi-lo)
		for i := lo; i < hi; i++ {
			keys[i] = store.Key(prefix, "bench-model", fmt.Sprint(i))
			f, err := pipe.Put(ctx, keys[i], clusters[i%len(clusters)], olric.PX(time.Hour))
			if err != nil {
				b.Fatal(err)
			}
			futs = append(futs, f)
		}
		if err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		for _, f := range futs {
			if err := f.Result(); err != nil {
				b.Fatal(err)
			}
		}
		pipe.Close()
	}
	return keys
}

func BenchmarkScan(b *testing.B) {
	cl := storetest.Start(b, 3, 2)
	_, dm := rawClient(b, cl.Addrs())
	load(b, dm, "scan", benchEntries, "cluster-a", "cluster-b", "cluster-c")
	c := cl.Connect(b, store.Options{})
	b.ResetTimer()
	for b.Loop() {
		rep, err := c.Scan(context.Background(), store.ScanOptions{}, func(store.Entry) error { return nil })
		if err != nil || rep.Entries != benchEntries {
			b.Fatalf("scan: %d entries, %v", rep.Entries, err)
		}
	}
	b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkScanRawOlric is the floor for BenchmarkScan: the same work
// (Olric's cluster iterator with the same MATCH and COUNT, then the value
// and TTL of every key through pipelined gets grouped by partition) with the
// olric client alone, with no retries, validation, ordering or accounting.
func BenchmarkScanRawOlric(b *testing.B) {
	cl := storetest.Start(b, 3, 2)
	_, dm := rawClient(b, cl.Addrs())
	load(b, dm, "scan", benchEntries, "cluster-a", "cluster-b", "cluster-c")
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		it, err := dm.Scan(ctx, olric.Match("^lc:v1:"), olric.Count(store.DefaultScanCount))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		var batch []string
		flush := func() {
			if len(batch) == 0 {
				return
			}
			pipe, _ := dm.Pipeline()
			futs := make([]*olric.FutureGet, len(batch))
			for i, k := range batch {
				futs[i] = pipe.Get(ctx, k)
			}
			if err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
			for _, f := range futs {
				r, err := f.Result()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.String(); err != nil {
					b.Fatal(err)
				}
				_ = r.TTL()
				n++
			}
			pipe.Close()
			batch = batch[:0]
		}
		last := uint64(1 << 63)
		for it.Next() {
			k := it.Key()
			if p := store.Partition(store.DMapName, k, store.DefaultPartitionCount); p != last || len(batch) == store.DefaultReadBatch {
				flush()
				last = p
			}
			batch = append(batch, k)
		}
		flush()
		it.Close()
		if n != benchEntries {
			b.Fatalf("raw scan read %d entries", n)
		}
	}
	b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
}
