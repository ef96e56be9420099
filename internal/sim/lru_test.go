package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

// TestBlockCache: referenced blocks are never evicted; unreferenced ones
// go least recently freed first; a full cache of referenced blocks has
// no room; capacity 0 caches nothing.
func TestBlockCache(t *testing.T) {
	c := newBlockCache(3)
	for id := uint64(0); id < 3; id++ { // id 0 is a valid block id
		if !c.acquire(id) {
			t.Fatalf("no room for block %d", id)
		}
	}
	if c.acquire(9) {
		t.Fatal("a fourth block fitted in a cache of 3 referenced blocks")
	}
	c.release(2)
	c.release(1)
	c.release(0) // freed last: most recent
	if !c.hit(1) || c.hit(7) {
		t.Fatal("hit")
	}
	c.release(1) // now 1 is the most recently freed, 2 the least
	if !c.acquire(9) || c.hit(2) {
		t.Fatal("block 2, the least recently freed, was not the one evicted")
	}
	if !c.hit(0) || !c.hit(1) || c.blocks() != 3 || c.evictions != 1 {
		t.Fatalf("blocks %d, evictions %d", c.blocks(), c.evictions)
	}
	c.release(42) // not held: no-op
	c.clear()
	if c.blocks() != 0 || c.hit(0) {
		t.Fatal("clear")
	}
	z := newBlockCache(0)
	if z.acquire(1) || z.hit(1) {
		t.Fatal("capacity 0 cached a block")
	}
}

func TestLCStoreLocal(t *testing.T) {
	s := newLCStore(100, true, 2)
	s.set(1, 7, 0)
	s.set(2, 8, 10)
	if c, ok := s.get(1, 50); !ok || c != 7 { // hit moves 1 to the front
		t.Fatal("hit")
	}
	s.set(3, 9, 60) // cap 2: evicts 2
	if _, ok := s.get(2, 60); ok {
		t.Fatal("LRU cap not applied")
	}
	if _, ok := s.get(1, 100); ok { // written at 0, TTL 100: expired at 100
		t.Fatal("expired entry returned")
	}
	s.set(3, 4, 150) // overwrite resets the TTL
	if c, ok := s.get(3, 200); !ok || c != 4 {
		t.Fatal("overwrite")
	}
}

func TestLCStoreShared(t *testing.T) {
	s := newLCStore(100, false, 1)
	for i := uint64(1); i <= 1000; i++ {
		s.set(i, 1, int64(i))
	}
	if s.len() != 1000 {
		t.Fatal("the shared store has no cap")
	}
	s.sweep(600)
	if s.len() != 500 {
		t.Fatalf("sweep kept %d", s.len())
	}
	if _, ok := s.get(499, 600); ok {
		t.Fatal("expired")
	}
	if _, ok := s.get(501, 600); !ok {
		t.Fatal("live entry missing")
	}
}

// TestLCStoreSharedMatchesModel: the shared store answers every Get as
// "the latest Set of the key, while younger than the TTL" under random
// writes, reads and sweeps (keys rewritten, read after expiry, written
// again), and its write log stays within twice the entries it holds.
func TestLCStoreSharedMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const ttl = 1000
	s := newLCStore(ttl, false, 0)
	type write struct {
		cluster int32
		at      int64
	}
	latest := map[uint64]write{}
	now := int64(0)
	for i := 0; i < 200000; i++ {
		now += int64(rng.IntN(3))
		k := uint64(rng.IntN(2000))
		switch rng.IntN(5) {
		case 0, 1:
			c := int32(rng.IntN(8))
			s.set(k, c, now)
			latest[k] = write{c, now}
		case 2:
			if rng.IntN(50) == 0 {
				s.sweep(now)
			}
		default:
			c, ok := s.get(k, now)
			w, has := latest[k]
			want := has && now < w.at+ttl
			if ok != want || (ok && c != w.cluster) {
				t.Fatalf("step %d: get(%d) at %d = %d %v, want %d %v", i, k, now, c, ok, w.cluster, want)
			}
		}
		if s.log.len() > 2*s.len()+65 {
			t.Fatalf("step %d: the log holds %d writes for %d entries", i, s.log.len(), s.len())
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHistogram()
	var vals []int64
	for i := 0; i < 200000; i++ {
		v := int64(rng.ExpFloat64() * 5e7)
		if i%10 == 0 {
			v = int64(rng.IntN(2000))
		}
		vals = append(vals, v)
		h.Add(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
		exact := float64(vals[int(math.Ceil(q*float64(len(vals))))-1])
		got := h.Quantile(q)
		if math.Abs(got-exact) > exact/512+1 {
			t.Errorf("q %g: got %g, exact %g", q, got, exact)
		}
	}
	var sum float64
	for _, v := range vals {
		sum += float64(v)
	}
	if math.Abs(h.Mean()-sum/float64(len(vals))) > 1e-6*h.Mean() {
		t.Fatal("mean")
	}
	cdf := h.CDF(100)
	if len(cdf) > 100 || cdf[len(cdf)-1].P != 1 {
		t.Fatalf("cdf %d points, last %+v", len(cdf), cdf[len(cdf)-1])
	}
	for i := range histBuckets {
		lo, w := histLower(i)
		if histIndex(lo) != i || histIndex(lo+w-1) != i {
			t.Fatalf("bucket %d: [%d, %d) maps to %d/%d", i, lo, lo+w, histIndex(lo), histIndex(lo+w-1))
		}
	}
}

func TestSeriesCoarsens(t *testing.T) {
	s := newSeries(2, 10)
	for ti := int64(0); ti < 100000; ti += 7 {
		b := s.bin(ti)
		s.Bins[b].InputTokens++
		s.Load[b*2+1] += 1
		s.LoadSamples[b]++
	}
	if len(s.Bins) > MaxBins {
		t.Fatalf("%d bins", len(s.Bins))
	}
	var n int64
	for _, b := range s.Bins {
		n += b.InputTokens
	}
	if n != (100000+6)/7 {
		t.Fatalf("lost samples: %d", n)
	}
	if v, ok := s.MeanLoad(0, 1); !ok || v != 1 {
		t.Fatal("mean load")
	}
}

func TestEventQueueOrder(t *testing.T) {
	var q eventQueue
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5000; i++ {
		q.push(int64(rng.IntN(100)), evTurn, int32(i), 0)
	}
	last := event{at: -1}
	for q.len() > 0 {
		e := q.pop()
		if e.at < last.at || (e.at == last.at && e.seqKind < last.seqKind) {
			t.Fatal("out of order")
		}
		last = e
	}
	var f fifo[int]
	for i := 0; i < 100; i++ {
		f.push(i)
		if i%3 == 0 {
			f.pop()
		}
	}
	if f.len() != 66 || f.front() != 34 || f.at(1) != 35 {
		t.Fatalf("fifo len %d front %d", f.len(), f.front())
	}
}

// u64Index behaves like a Go map under random puts, deletes and lookups,
// with clustered keys (session numbers), hashed keys, the high-bit hot keys
// and key 0.
func TestU64IndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var m u64Index
	ref := map[uint64]int32{}
	keyOf := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return uint64(rng.IntN(3000)) // session numbers, 0 included
		case 1:
			return 1<<63 | uint64(rng.IntN(50))
		case 2:
			return storeKey(int32(rng.IntN(3))-1, 0, uint64(rng.IntN(500)))
		}
		return uint64(rng.IntN(64)) * 1024 // same home slot, long probe runs
	}
	for i := 0; i < 300000; i++ {
		k := keyOf()
		switch rng.IntN(4) {
		case 0:
			v := int32(rng.IntN(1 << 30))
			m.put(k, v)
			ref[k] = v
		case 3:
			p, found := m.upsert(k)
			if _, ok := ref[k]; found != ok {
				t.Fatalf("step %d upsert(%d) found %v, want %v", i, k, found, ok)
			}
			if !found {
				*p = int32(i)
			}
			ref[k] = *p
		case 1:
			m.del(k)
			delete(ref, k)
		default:
			got, ok := m.get(k)
			want, wok := ref[k]
			if ok != wok || got != want {
				t.Fatalf("step %d get(%d) = %d %v, want %d %v", i, k, got, ok, want, wok)
			}
		}
		if m.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", i, m.len(), len(ref))
		}
		if i == 200000 {
			m.clear()
			clear(ref)
		}
	}
	for k, want := range ref {
		if got, ok := m.get(k); !ok || got != want {
			t.Fatalf("final get(%d) = %d %v, want %d", k, got, ok, want)
		}
	}
}

// TestFillStats: fillStats writes every field of lb.Stats (the router's
// view is reused, so a field left out would keep an older snapshot's
// value), with the values ModelStats take from a cluster's spec and
// state.
func TestFillStats(t *testing.T) {
	var st lb.Stats
	v := reflect.ValueOf(&st).Elem()
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(-1)
		case reflect.Uint64:
			f.SetUint(1 << 60)
		case reflect.Slice:
			if v.Type().Field(i).Name != "QueueTimeEstimateMsByPriority" {
				t.Fatalf("lb.Stats has a new slice field %s: fillStats must write it", v.Type().Field(i).Name)
			}
		default:
			t.Fatalf("lb.Stats field %s has kind %s: extend fillStats and this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	spec := ClusterSpec{Concurrency: 8, PrefillTPS: 30000, DecodeTPS: 50, KVCacheTokens: 1000}
	k := newPubConst(&spec)
	fillStats(&st, &k, &pubRec{busy: 6, queued: 3, prefill: 2, waitIn: 700, kvInUse: 1200})
	want := lb.Stats{
		LastMeanInputTPS: 30000, MaxInputTPS: 30000, OutputTPS: 4 * 50, MaxOutputTPS: 8 * 50,
		QueueSize: 3, QueuedInputSize: 700,
		KVCacheCapacityTokens: 1000, KVCacheUsedTokens: 1000, KVCacheFreeTokens: 0,
		NumRunningQueries: 9, MaxEngineConcurrency: 8, TotalQueryInputSize: 0,
		InputProcessingQueries: 2, OutputGenerationQueries: 4,
	}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("fillStats:\n got %+v\nwant %+v", st, want)
	}
	spec.MaxInputTPS = 45000
	k = newPubConst(&spec)
	fillStats(&st, &k, &pubRec{busy: 1, waitIn: -5, kvInUse: 300})
	if st.MaxInputTPS != 45000 || st.QueuedInputSize != 0 || st.KVCacheUsedTokens != 300 || st.KVCacheFreeTokens != 700 || st.OutputTPS != 50 {
		t.Fatalf("fillStats with max_input_tps and a negative backlog: %+v", st)
	}
}
