package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

func TestKVCacheLRU(t *testing.T) {
	c := newKVCache()
	c.insert(1, 100, 300)
	c.insert(2, 100, 300)
	c.insert(3, 100, 300)
	if c.peek(1) != 100 { // 1 becomes most recent
		t.Fatal("peek")
	}
	c.insert(4, 100, 300) // evicts 2, the least recently used
	if c.take(2) != 0 || c.total != 300 {
		t.Fatalf("2 not evicted, total %d", c.total)
	}
	if c.take(3) != 100 || c.total != 200 {
		t.Fatal("take")
	}
	c.insert(5, 400, 300) // larger than the budget: not cached
	if c.take(5) != 0 {
		t.Fatal("oversized prefix cached")
	}
	c.shrink(50)
	if c.total != 0 {
		t.Fatalf("shrink left %d", c.total)
	}
	c.insert(6, 10, 0)
	if c.total != 0 {
		t.Fatal("budget 0 cached something")
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
	if s.l.len() != 1000 {
		t.Fatal("the shared store has no cap")
	}
	s.sweep(600)
	if s.l.len() != 500 {
		t.Fatalf("sweep kept %d", s.l.len())
	}
	if _, ok := s.get(499, 600); ok {
		t.Fatal("expired")
	}
	if _, ok := s.get(501, 600); !ok {
		t.Fatal("live entry missing")
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

// copyStats copies every field of lb.Stats except the per-priority
// estimates the simulator never publishes: fill each field with a distinct
// value and check it arrives.
func TestCopyStats(t *testing.T) {
	var src lb.Stats
	v := reflect.ValueOf(&src).Elem()
	for i := 0; i < v.NumField(); i++ {
		switch f := v.Field(i); f.Kind() {
		case reflect.Float64:
			f.SetFloat(float64(i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Slice:
			if v.Type().Field(i).Name != "QueueTimeEstimateMsByPriority" {
				t.Fatalf("lb.Stats has a new slice field %s: copyStats must copy it", v.Type().Field(i).Name)
			}
		default:
			t.Fatalf("lb.Stats field %s has kind %s: extend copyStats and this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	var dst lb.Stats
	copyStats(&dst, &src)
	if !reflect.DeepEqual(dst, src) {
		t.Fatalf("copyStats lost fields:\n got %+v\nwant %+v", dst, src)
	}
}
