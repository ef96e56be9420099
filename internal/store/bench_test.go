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

// The benchmarks run against a 3-member loopback cluster holding
// benchEntries entries, spread evenly over cluster-a, cluster-b and
// cluster-c, once with replica count 1 (the gateway chart's setting) and
// once with 2 (the integration tests' setting). Each compares lcctl's code
// with a raw olric-client loop doing the same Olric work. See
// docs/performance.md for figures and the command.
const benchEntries = 100_000

var benchClusters = []string{"cluster-a", "cluster-b", "cluster-c"}

// benchCluster starts the cluster and loads it; the timer is reset after.
func benchCluster(b *testing.B, replicas int) (*storetest.Cluster, olric.DMap) {
	b.Helper()
	cl := storetest.Start(b, 3, replicas)
	_, dm := rawClient(b, cl.Addrs())
	load(b, dm, benchKeys(0, benchEntries))
	b.ResetTimer()
	return cl, dm
}

// benchKeys returns the keys and values of entries lo..hi-1.
func benchKeys(lo, hi int) map[string]string {
	m := make(map[string]string, hi-lo)
	for i := lo; i < hi; i++ {
		m[store.Key("bench", "bench-model", fmt.Sprint(i))] = benchClusters[i%len(benchClusters)]
	}
	return m
}

// rawClient opens a plain olric ClusterClient and DMap.
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

// load writes entries with pipelined puts (TTL 1 h).
func load(b *testing.B, dm olric.DMap, entries map[string]string) {
	b.Helper()
	ctx := context.Background()
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	for lo := 0; lo < len(keys); lo += 5000 {
		pipe, err := dm.Pipeline()
		if err != nil {
			b.Fatal(err)
		}
		var futs []*olric.FuturePut
		for _, k := range keys[lo:min(lo+5000, len(keys))] {
			f, err := pipe.Put(ctx, k, entries[k], olric.PX(time.Hour))
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
}

func forReplicas(b *testing.B, fn func(b *testing.B, replicas int)) {
	for _, r := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", r), func(b *testing.B) { fn(b, r) })
	}
}

// BenchmarkScan measures `lcctl store scan`: every entry's key, value and
// TTL.
func BenchmarkScan(b *testing.B) {
	forReplicas(b, func(b *testing.B, replicas int) {
		cl, _ := benchCluster(b, replicas)
		c := cl.Connect(b, store.Options{})
		b.ResetTimer()
		for b.Loop() {
			rep, err := c.Scan(context.Background(), store.ScanOptions{}, func(store.Entry) error { return nil })
			if err != nil || rep.Entries != benchEntries {
				b.Fatalf("scan: %d entries, %v", rep.Entries, err)
			}
		}
		b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// rawScan is the floor for Scan: Olric's cluster iterator with the same
// MATCH and COUNT, and the value and TTL of every key through pipelined
// gets grouped by partition, with the olric client alone: no retries,
// validation, ordering, overlap of scanning and reading, or accounting.
// fn gets each key and value.
func rawScan(b *testing.B, dm olric.DMap, fn func(key, value string)) int {
	ctx := context.Background()
	it, err := dm.Scan(ctx, olric.Match("^lc:v1:"), olric.Count(store.DefaultScanCount))
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	n := 0
	var batch []string
	flush := func() {
		if len(batch) == 0 {
			return
		}
		for i, r := range rawGets(b, dm, batch) {
			if r == nil {
				continue
			}
			v, err := r.String()
			if err != nil {
				b.Fatal(err)
			}
			_ = r.TTL()
			n++
			fn(batch[i], v)
		}
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
	return n
}

// rawGets reads keys with one pipeline; nil for absent keys.
func rawGets(b *testing.B, dm olric.DMap, keys []string) []*olric.GetResponse {
	ctx := context.Background()
	pipe, err := dm.Pipeline()
	if err != nil {
		b.Fatal(err)
	}
	defer pipe.Close()
	futs := make([]*olric.FutureGet, len(keys))
	for i, k := range keys {
		futs[i] = pipe.Get(ctx, k)
	}
	if err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	out := make([]*olric.GetResponse, len(keys))
	for i, f := range futs {
		r, err := f.Result()
		switch {
		case err == nil:
			out[i] = r
		case err.Error() == "key not found":
		default:
			b.Fatal(err)
		}
	}
	return out
}

// BenchmarkScanRawOlric is the floor for BenchmarkScan.
func BenchmarkScanRawOlric(b *testing.B) {
	forReplicas(b, func(b *testing.B, replicas int) {
		_, dm := benchCluster(b, replicas)
		for b.Loop() {
			if n := rawScan(b, dm, func(string, string) {}); n != benchEntries {
				b.Fatalf("raw scan read %d entries", n)
			}
		}
		b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
	})
}

// evicted is how many entries each evict removes: those of cluster-b.
const evicted = (benchEntries + 1) / 3

// BenchmarkEvict measures `lcctl store evict --cluster cluster-b --yes
// --max-rate 0` on the loaded cluster: scan everything, then re-read,
// delete and confirm each cluster-b entry. The deleted entries are written
// back between iterations with the timer stopped.
func BenchmarkEvict(b *testing.B) {
	forReplicas(b, func(b *testing.B, replicas int) {
		cl, dm := benchCluster(b, replicas)
		c := cl.Connect(b, store.Options{})
		restore := onlyCluster(benchKeys(0, benchEntries), "cluster-b")
		settles := 0
		b.ResetTimer()
		for b.Loop() {
			rep, err := c.Evict(context.Background(), store.EvictOptions{Cluster: "cluster-b", Apply: true})
			if err != nil || rep.Deleted != evicted {
				b.Fatalf("evict: %+v, %v", rep, err)
			}
			if rep.Settle.Needed || rep.Scan.Settle.Needed {
				// A routing-table poll failed or owners changed: the run
				// waited for the table to settle and checked again.
				settles++
			}
			b.StopTimer()
			load(b, dm, restore)
			b.StartTimer()
		}
		b.ReportMetric(float64(evicted*b.N)/b.Elapsed().Seconds(), "deleted/s")
		b.ReportMetric(float64(settles)/float64(b.N), "settles/op")
	})
}

// BenchmarkEvictRawOlric is the floor for BenchmarkEvict: the same Olric
// work (the raw scan with values, then per candidate a re-read, a delete
// and a confirming read, each as a pipeline of DefaultEvictBatch keys),
// with the olric client alone.
func BenchmarkEvictRawOlric(b *testing.B) {
	forReplicas(b, func(b *testing.B, replicas int) {
		_, dm := benchCluster(b, replicas)
		restore := onlyCluster(benchKeys(0, benchEntries), "cluster-b")
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			var cands []string
			rawScan(b, dm, func(k, v string) {
				if v == "cluster-b" {
					cands = append(cands, k)
				}
			})
			deleted := 0
			for lo := 0; lo < len(cands); lo += store.DefaultEvictBatch {
				keys := cands[lo:min(lo+store.DefaultEvictBatch, len(cands))]
				var del []string
				for i, r := range rawGets(b, dm, keys) {
					if r == nil {
						continue
					}
					if v, _ := r.String(); v == "cluster-b" {
						del = append(del, keys[i])
					}
				}
				pipe, err := dm.Pipeline()
				if err != nil {
					b.Fatal(err)
				}
				futs := make([]*olric.FutureDelete, len(del))
				for i, k := range del {
					futs[i] = pipe.Delete(ctx, k)
				}
				if err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
				for _, f := range futs {
					if _, err := f.Result(); err != nil {
						b.Fatal(err)
					}
				}
				pipe.Close()
				for _, r := range rawGets(b, dm, del) {
					if r == nil {
						deleted++
					}
				}
			}
			if deleted != evicted {
				b.Fatalf("raw evict deleted %d", deleted)
			}
			b.StopTimer()
			load(b, dm, restore)
			b.StartTimer()
		}
		b.ReportMetric(float64(evicted*b.N)/b.Elapsed().Seconds(), "deleted/s")
	})
}

func onlyCluster(m map[string]string, cluster string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v == cluster {
			out[k] = v
		}
	}
	return out
}
