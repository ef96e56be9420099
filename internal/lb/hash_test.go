package lb

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/zeebo/xxh3"
)

// pulsar.md §4.2 / P1: the upstream-pinned golden value.
func TestPulsarHashGolden(t *testing.T) {
	if got := PulsarHash("seed-1", "rk-1", "model-a", "prefix-123", "inst-a"); got != 0x19443c44ec9f8abf {
		t.Fatalf("PulsarHash = %#x, want 0x19443c44ec9f8abf", got)
	}
	u := PulsarUnit(0x19443c44ec9f8abf)
	if math.Abs(u-0.0986974) > 1e-7 || math.Abs(-math.Log(u)-2.3156963) > 1e-7 {
		t.Fatalf("u = %v, -ln u = %v", u, -math.Log(u))
	}
}

// pulsar.md §4.2 byte layout example (128 bytes).
func TestPulsarHashLayout(t *testing.T) {
	want := "0173656564ff0a000000000000006d6f64656c2d612d7631726f7574696e675f6b6579ff0400000000000000726b2d316d6f64656c5f6964ff07000000000000006d6f64656c2d6163616368655f616666696e6974795f6b6579ff090000000000000073657373696f6e2d36636c75737465725f6964ff010000000000000041"
	b := AppendHashPrefix(nil, "model-a-v1", "rk-1", "model-a")
	b = AppendTagged(b, "cache_affinity_key", "session-6")
	b = AppendTagged(b, "cluster_id", "A")
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("layout\n got %s\nwant %s", got, want)
	}
	if h := xxh3.Hash(b); h != 0xfc242760d65b5aff {
		t.Fatalf("hash %#x", h)
	}
}

// wait-and-widen.md §4.5 test vectors.
func TestRingHashVectors(t *testing.T) {
	vnode := "0173656564ff0600000000000000736565642d31726f7574696e675f6b6579ff0400000000000000726b2d316d6f64656c5f6964ff07000000000000006d6f64656c2d61636c75737465725f6964ff0600000000000000696e73742d617669727475616c5f6e6f6465ff08000000000000000700000000000000"
	b := AppendHashPrefix(nil, "seed-1", "rk-1", "model-a")
	b = AppendTagged(b, "cluster_id", "inst-a")
	b = appendVirtualNode(b, 7)
	if got := hex.EncodeToString(b); got != vnode {
		t.Fatalf("vnode layout\n got %s\nwant %s", got, vnode)
	}
	if h := RingVirtualNodeHash("seed-1", "rk-1", "model-a", "inst-a", 7); h != 0x81b29b2500d24e30 {
		t.Fatalf("vnode hash %#x", h)
	}
	if h := RingKeyHash("seed-1", "rk-1", "model-a", "prefix-a"); h != 0xb24f129f950557d2 {
		t.Fatalf("key hash %#x", h)
	}
	prefix := "0173656564ff02000000000000007331726f7574696e675f6b6579ff0400000000000000726b2d316d6f64656c5f6964ff07000000000000006d6f64656c2d61"
	if got := hex.EncodeToString(AppendHashPrefix(nil, "s1", "rk-1", "model-a")); got != prefix {
		t.Fatalf("prefix %s", got)
	}
}

// wait-and-widen.md §4.5: the full ring for seed s1, [A, B, C], V = 2.
func TestRingOrderVectors(t *testing.T) {
	clusters := []Cluster{{ClusterID: "A"}, {ClusterID: "B"}, {ClusterID: "C"}}
	var r ring
	r.build(nil, "s1", "rk-1", "model-a", clusters, 2)
	want := []struct {
		h  uint64
		id string
	}{{0x0c17d18d7570c4d9, "A"}, {0x122a6e9f4fd8dc24, "A"}, {0x8aafa1c3a2abc6d3, "C"}, {0x8f9bb0350bd509ff, "B"}, {0xb9e70f6e42b16c55, "C"}, {0xf7fbf07b3f520b7a, "B"}}
	for i, w := range want {
		if r.entries[i].hash != w.h || clusters[r.entries[i].idx].ClusterID != w.id {
			t.Fatalf("entry %d = %#x %s, want %#x %s", i, r.entries[i].hash, clusters[r.entries[i].idx].ClusterID, w.h, w.id)
		}
	}
	snap := &Snapshot{Clusters: clusters}
	for _, tc := range []struct {
		key   string
		hash  uint64
		start int
		walk  []string
	}{
		{"key-1", 0xa0559ad309a499b3, 4, []string{"C", "B", "A"}},
		{"key-12", 0xfc0e47c176a15084, 6, []string{"A", "C", "B"}},
	} {
		kh := RingKeyHash("s1", "rk-1", "model-a", tc.key)
		if kh != tc.hash {
			t.Fatalf("%s: key hash %#x want %#x", tc.key, kh, tc.hash)
		}
		st := r.start(kh)
		if st != tc.start {
			t.Fatalf("%s: start %d want %d", tc.key, st, tc.start)
		}
		got := IDs(snap, r.walk(st, 3, nil, make([]bool, 3)))
		if !equalStrings(got, tc.walk) {
			t.Fatalf("%s: walk %v want %v", tc.key, got, tc.walk)
		}
		for k := 1; k <= 3; k++ {
			g := IDs(snap, r.walk(st, k, nil, make([]bool, 3)))
			if !equalStrings(g, tc.walk[:k]) {
				t.Fatalf("%s k=%d: %v", tc.key, k, g)
			}
		}
	}
	// No seed, no routing key.
	var r2 ring
	r2.build(nil, "", "", "model-a", clusters, 2)
	wantIDs := []string{"C", "B", "B", "C", "A", "A"}
	wantH := []uint64{0x4fb6da80b970b5df, 0x6b54f78c88448b70, 0x71b3f764058a6ab2, 0x8191b9a4c58af5ca, 0xa2c002fd44540163, 0xc70afa187be348c7}
	for i := range wantIDs {
		if r2.entries[i].hash != wantH[i] || clusters[r2.entries[i].idx].ClusterID != wantIDs[i] {
			t.Fatalf("unseeded entry %d = %#x", i, r2.entries[i].hash)
		}
	}
	kh := RingKeyHash("", "", "model-a", "key-1")
	if kh != 0x02a93bf6e74620a0 || r2.start(kh) != 0 {
		t.Fatalf("unseeded key-1 hash %#x start %d", kh, r2.start(kh))
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDurationFromSecsF64(t *testing.T) {
	for _, tc := range []struct {
		x     float64
		secs  uint64
		nanos uint32
		ok    bool
	}{
		{0, 0, 0, true},
		{0.15, 0, 150_000_000, true},
		{0.12375, 0, 123_750_000, true},
		{1.5, 1, 500_000_000, true},
		{1e-10, 0, 0, true},
		{6e-10, 0, 1, true},
		{5e-10, 0, 1, true},  // the double 5e-10 is slightly above 0.5 ns
		{1.5e-9, 0, 1, true}, // the double 1.5e-9 is slightly below 1.5 ns
		{-1, 0, 0, false},
		{math.NaN(), 0, 0, false},
		{math.Inf(1), 0, 0, false},
		{18446744073709551616.0, 0, 0, false},
		{1e19, 10_000_000_000_000_000_000, 0, true},
		{12345.000000000500, 12345, 1, true},
		{1.0 / 1024, 0, 976_562, true},   // exact tie 976562.5 ns: to even
		{3.0 / 1024, 0, 2_929_688, true}, // exact tie 2929687.5 ns: to even
	} {
		w, ok := durationFromSecsF64(tc.x)
		if ok != tc.ok || (ok && (w.secs != tc.secs || w.nanos != tc.nanos)) {
			t.Errorf("durationFromSecsF64(%v) = %+v %v, want %d.%09d %v", tc.x, w, ok, tc.secs, tc.nanos, tc.ok)
		}
	}
}

func TestDurationMs(t *testing.T) {
	if got := DurationMs(1_500_000_001); got != (1+0.500000001)*1000 {
		t.Fatalf("DurationMs = %v", got)
	}
	if got := millisMs(math.MaxUint64); math.IsInf(got, 0) || got <= 0 {
		t.Fatalf("millisMs(max) = %v", got)
	}
	d, ok := DurationFromMs(123.75)
	if !ok || d != 123_750_000 {
		t.Fatalf("DurationFromMs = %v %v", d, ok)
	}
	if _, ok := DurationFromMs(-1); ok {
		t.Fatal("negative accepted")
	}
}
