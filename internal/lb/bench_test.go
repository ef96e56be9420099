package lb

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
)

// Benchmarks mirror stargate-bench's load-balancer microbench matrix:
// power-of-n with sample 1/2/4/8/full pool; wait-and-widen plain,
// ignore-queue, rtt-only and affinity, each with 0, 1 and 2 excluded
// clusters; pulsar, random, round-robin; plus pulsar-wait-and-widen with
// and without last_cluster_affinity. Run:
//
//	go test ./internal/lb -run '^$' -bench 'BenchmarkDecide|BenchmarkHashFloor' -benchmem

var benchSizes = []int{8, 64}

// benchSnapshot is n clusters with mixed but healthy load: every cluster
// has capacity, TTFTs spread over a few buckets.
func benchSnapshot(n int) *Snapshot {
	cs := make([]Cluster, n)
	for i := range cs {
		cs[i] = Cluster{
			ClusterID: fmt.Sprintf("cluster-%04d", i),
			RTT:       time.Duration(1+i%7) * time.Millisecond,
			Stats: Stats{
				LastMeanInputTPS:      float64(5000 + 500*(i%5)),
				MaxInputTPS:           float64(8000 + 1000*(i%3)),
				QueuedInputSize:       uint64(100 * (i % 4)),
				QueueSize:             uint64(i % 3),
				NumRunningQueries:     uint64(i % 8),
				MaxEngineConcurrency:  16,
				KVCacheCapacityTokens: 1 << 20, KVCacheFreeTokens: 1 << 19, KVCacheUsedTokens: 1 << 19,
			},
		}
	}
	return &Snapshot{Model: "model-a", Clusters: cs}
}

type benchScenario struct {
	name    string
	cfg     func(n int) *AlgorithmConfig
	key     string
	exclude int
	hint    bool
}

func benchScenarios() []benchScenario {
	var s []benchScenario
	for _, k := range []int{1, 2, 4, 8, 0} {
		name := fmt.Sprintf("power-of-n-sample-%d", k)
		if k == 0 {
			name = "power-of-n-sample-full"
		}
		s = append(s, benchScenario{name: name, cfg: func(n int) *AlgorithmConfig {
			c := DefaultAlgorithmConfig(PowerOfN)
			c.SampleCount = k
			if k == 0 {
				c.SampleCount = min(n, 64)
			}
			return &c
		}})
	}
	ww := []struct {
		name string
		mod  func(*AlgorithmConfig)
		key  string
	}{
		{"plain", func(*AlgorithmConfig) {}, ""},
		{"ignore-queue", func(c *AlgorithmConfig) { c.IgnoreQueueTime = true }, ""},
		{"rtt-only", func(c *AlgorithmConfig) { c.IgnoreQueueTime, c.IgnoreInputProcessingTime = true, true }, ""},
		{"affinity", setBenchAffinity, "prefix-key"},
	}
	for _, w := range ww {
		for x := 0; x <= 2; x++ {
			s = append(s, benchScenario{name: fmt.Sprintf("wait-and-widen-%s-excluded-%d", w.name, x), key: w.key, exclude: x,
				cfg: func(int) *AlgorithmConfig { c := DefaultAlgorithmConfig(WaitAndWiden); w.mod(&c); return &c }})
		}
	}
	s = append(s,
		benchScenario{name: "pulsar", key: "prefix-key", cfg: func(int) *AlgorithmConfig {
			c := DefaultAlgorithmConfig(Pulsar)
			c.Seed = "bench"
			return &c
		}},
		benchScenario{name: "random", cfg: func(int) *AlgorithmConfig { c := DefaultAlgorithmConfig(Random); return &c }},
		benchScenario{name: "round-robin", cfg: func(int) *AlgorithmConfig { c := DefaultAlgorithmConfig(RoundRobin); return &c }},
		benchScenario{name: "pulsar-wait-and-widen", key: "prefix-key", cfg: func(int) *AlgorithmConfig {
			c := DefaultAlgorithmConfig(PulsarWaitAndWiden)
			c.Seed, c.CacheAffinityWaitMs = "bench", 300
			return &c
		}},
		benchScenario{name: "pulsar-wait-and-widen-last-cluster-affinity", key: "prefix-key", hint: true, cfg: func(int) *AlgorithmConfig {
			c := DefaultAlgorithmConfig(PulsarWaitAndWiden)
			c.Seed, c.CacheAffinityWaitMs, c.LastClusterAffinity = "bench", 300, true
			return &c
		}},
	)
	return s
}

// benchPulsarSizes adds 256 clusters (the simulator's wide scenario) for
// the Pulsar scenarios, whose ranking cost grows with the cluster count.
var benchPulsarSizes = []int{8, 64, 256}

// benchSizesFor returns the cluster counts a scenario is measured at.
func benchSizesFor(name string) []int {
	if strings.HasPrefix(name, "pulsar") {
		return benchPulsarSizes
	}
	return benchSizes
}

// BenchmarkDecide decides the same request again and again: the ranking
// cache is warm for the Pulsar scenarios.
func BenchmarkDecide(b *testing.B) {
	for _, sc := range benchScenarios() {
		for _, n := range benchSizesFor(sc.name) {
			b.Run(fmt.Sprintf("%s/clusters=%d", sc.name, n), func(b *testing.B) {
				snap := benchSnapshot(n)
				e := NewEngine(sc.cfg(n))
				req := &Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: sc.key, InputTokens: 1000, HasInputTokens: true}
				for i := 0; i < sc.exclude; i++ {
					req.ExcludedClusterIDs = append(req.ExcludedClusterIDs, snap.Clusters[(i*3+1)%n].ClusterID)
				}
				if sc.hint {
					req.LastClusterID = snap.Clusters[n/2].ClusterID
				}
				rng := rand.New(rand.NewPCG(1, 2))
				if d := e.Decide(snap, req, rng, Options{}); d.Kind != KindSelected {
					b.Fatalf("scenario does not dispatch: %v %v", d.Kind, d.Reason)
				}
				b.ReportAllocs()
				cpu := startCPU(b)
				for i := 0; i < b.N; i++ {
					e.Decide(snap, req, rng, Options{})
				}
				cpu.stop(b)
			})
		}
	}
}

// BenchmarkDecideColdKeys cycles through 65,536 keys, twice as many as the
// ranking cache holds; it evicts the oldest key first, so every decision
// misses and computes its ranking: the uncached cost of a session's first
// request. The partial-order variants decide as the simulator does
// (Options.PartialOrder).
func BenchmarkDecideColdKeys(b *testing.B) {
	keys := benchKeys(65536)
	for _, a := range []Algorithm{Pulsar, PulsarWaitAndWiden} {
		for _, n := range benchPulsarSizes {
			b.Run(fmt.Sprintf("%s/clusters=%d", a, n), func(b *testing.B) {
				benchKeyCycle(b, a, n, keys, 0, Options{})
			})
			b.Run(fmt.Sprintf("%s/clusters=%d/partial-order", a, n), func(b *testing.B) {
				benchKeyCycle(b, a, n, keys, 0, Options{PartialOrder: true})
			})
		}
	}
}

// BenchmarkDecideWarmKeys cycles through 16,384 keys that were all decided
// once before the timer starts: the simulator's working set of live
// sessions (about 14,000 in the 256-cluster scenario), every ranking
// cached.
func BenchmarkDecideWarmKeys(b *testing.B) {
	keys := benchKeys(16384)
	for _, a := range []Algorithm{Pulsar, PulsarWaitAndWiden} {
		for _, n := range benchPulsarSizes {
			b.Run(fmt.Sprintf("%s/clusters=%d", a, n), func(b *testing.B) {
				benchKeyCycle(b, a, n, keys, len(keys), Options{})
			})
			b.Run(fmt.Sprintf("%s/clusters=%d/partial-order", a, n), func(b *testing.B) {
				benchKeyCycle(b, a, n, keys, len(keys), Options{PartialOrder: true})
			})
		}
	}
}

// benchKeys returns n distinct affinity keys.
func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("session-%d", i)
	}
	return keys
}

// benchKeyCycle decides for keys[i % len(keys)] on n clusters with a
// default config of a, after warm decisions on the first keys, with opt.
func benchKeyCycle(b *testing.B, a Algorithm, n int, keys []string, warm int, opt Options) {
	snap := benchSnapshot(n)
	c := DefaultAlgorithmConfig(a)
	c.Seed = "bench"
	e := NewEngine(&c)
	req := &Request{Model: "model-a", RoutingKey: "rk-1", InputTokens: 1000, HasInputTokens: true}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < warm; i++ {
		req.CacheAffinityKey = keys[i]
		e.Decide(snap, req, rng, opt)
	}
	b.ReportAllocs()
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		req.CacheAffinityKey = keys[i%len(keys)]
		e.Decide(snap, req, rng, opt)
	}
	cpu.stop(b)
}

// setBenchAffinity makes c the wait-and-widen-affinity scenario: an
// affinity group of 2, a 300 ms affinity wait, prefill scaled by 0.1.
func setBenchAffinity(c *AlgorithmConfig) {
	c.Seed, c.CacheAffinityBackendSelectionCount, c.CacheAffinityWaitMs, c.CacheAffinityInputTokensScale = "bench", 2, 300, 0.1
}

// benchAffinity returns the wait-and-widen-affinity scenario on n
// clusters: the snapshot, the engine and a request with an affinity key.
func benchAffinity(n int) (*Snapshot, *Engine, *Request) {
	c := DefaultAlgorithmConfig(WaitAndWiden)
	setBenchAffinity(&c)
	return benchSnapshot(n), NewEngine(&c), &Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: "prefix-key", InputTokens: 1000, HasInputTokens: true}
}

// BenchmarkStep is the proxy step (request policy, admission, decision,
// wait budget) around wait-and-widen-affinity: what the simulator runs.
func BenchmarkStep(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("wait-and-widen-affinity/clusters=%d", n), func(b *testing.B) {
			snap, e, req := benchAffinity(n)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				e.Step(snap, req, rng, Options{})
			}
			cpu.stop(b)
		})
	}
}

// BenchmarkDecideTrace is wait-and-widen-affinity with trace and
// probabilities on (the explain path), for comparison.
func BenchmarkDecideTrace(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("wait-and-widen-affinity/clusters=%d", n), func(b *testing.B) {
			snap, e, req := benchAffinity(n)
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e.Decide(snap, req, rng, Options{Trace: true, Probabilities: true})
			}
		})
	}
}

// BenchmarkHashFloor computes only the N XXH3-64 hashes of the Pulsar
// inputs (prefix, key, cluster id) for the same snapshot: the floor any
// hash-based decision over N clusters pays.
func BenchmarkHashFloor(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			snap := benchSnapshot(n)
			inputs := make([][]byte, n)
			for i := range inputs {
				p := AppendHashPrefix(nil, "bench", "rk-1", "model-a")
				p = AppendTagged(p, "cache_affinity_key", "prefix-key")
				inputs[i] = AppendTagged(p, "cluster_id", snap.Clusters[i].ClusterID)
			}
			var sink uint64
			b.ReportAllocs()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				for _, in := range inputs {
					sink ^= xxh3.Hash(in)
				}
			}
			cpu.stop(b)
			benchSink = sink
		})
	}
}

var benchSink uint64

// cpuClock reports process CPU time per operation ("cpu-ns/op") next to
// the wall-clock ns/op: on a shared 2-core machine the wall clock includes
// time the benchmark was not scheduled, the CPU time does not.
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuClock {
	b.ResetTimer()
	return cpuClock{processCPU()}
}

func (c cpuClock) stop(b *testing.B) {
	b.StopTimer()
	if d := processCPU() - c.start; d > 0 && b.N > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// The hot path (Options zero) does not allocate once the engine is warm,
// for every algorithm, in Decide and in Step.
func TestHotPathAllocationFree(t *testing.T) {
	for _, sc := range benchScenarios() {
		snap := benchSnapshot(8)
		e := NewEngine(sc.cfg(8))
		req := &Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: sc.key, InputTokens: 1000, HasInputTokens: true}
		for i := 0; i < sc.exclude; i++ {
			req.ExcludedClusterIDs = append(req.ExcludedClusterIDs, snap.Clusters[i*3+1].ClusterID)
		}
		if sc.hint {
			req.LastClusterID = snap.Clusters[4].ClusterID
		}
		rng := rand.New(rand.NewPCG(1, 2))
		if a := testing.AllocsPerRun(100, func() { e.Decide(snap, req, rng, Options{}) }); a != 0 {
			t.Errorf("%s: Decide allocates %v per run", sc.name, a)
		}
		if a := testing.AllocsPerRun(100, func() { e.Step(snap, req, rng, Options{}) }); a != 0 {
			t.Errorf("%s: Step allocates %v per run", sc.name, a)
		}
	}
}

// The trace notes are formatted only when a trace is requested: new and
// stale sessions and the affinity wait do not allocate with the trace off.
func TestTraceOffNotesAllocationFree(t *testing.T) {
	snap := snapOf(cl("A", full), cl("B", full), cl("C", full), cl("D", free))
	for _, tc := range []struct {
		name string
		alg  Algorithm
		req  *Request
	}{
		{"ww new session", WaitAndWiden, rq(key("k"), input(100))},
		{"ww stale session", WaitAndWiden, rq(key("k"), input(100), last("gone"))},
		{"ww affinity wait", WaitAndWiden, rq(key("k"), input(100), last("A"))},
		{"pww new session", PulsarWaitAndWiden, rq(key("k"), input(100))},
		{"pww affinity wait", PulsarWaitAndWiden, rq(key("k"), input(100), last("A"))},
	} {
		e := NewEngine(cfgOf(tc.alg, withK(1), withX(300), withSessions(), withMaxQueued(0)))
		rng := seeded(1)
		e.Step(snap, tc.req, rng, Options{})
		if a := testing.AllocsPerRun(100, func() { e.Step(snap, tc.req, rng, Options{}) }); a != 0 {
			t.Errorf("%s: %v allocs per step", tc.name, a)
		}
		if d := e.Decide(snap, tc.req, rng, Options{Trace: true}); len(d.Trace.Notes) == 0 {
			t.Errorf("%s: the trace has no notes", tc.name)
		}
	}
}

// BenchmarkCandidateHashes is a fresh Pulsar ranking's hash loop alone
// (candidateHasher.sumAll) over 256 candidates with the simulator's ids
// (c0 … c255: three id lengths), with keys of the length that puts
// every input on the simulator's path: XXH3's 129–240-byte path, one
// window of each round reaching the id.
func BenchmarkCandidateHashes(b *testing.B) {
	cs := make([]Cluster, 256)
	for i := range cs {
		cs[i] = cl("c"+strconv.Itoa(i), maxTPS(1000))
	}
	var set rankCandidateSet
	set.update(snapOf(cs...), WeightMaxInputTPS)
	var h candidateHasher
	hashes, sel := make([]uint64, len(cs)), make([]int32, len(cs))
	key := func(i, pad int) string { return fmt.Sprintf("session-%04d-%s", i, strings.Repeat("k", pad)) }
	prefix := func(key string) []byte {
		return AppendTagged(AppendHashPrefix(nil, "bench", "rk-1", "model-a"), "cache_affinity_key", key)
	}
	pad := 0 // the padding that puts every id length on that path
	for ; pad < 64; pad++ {
		h.reset(prefix(key(0, pad)))
		if w2, w3, w4 := h.class(2), h.class(3), h.class(4); w2.kind == hashLong && w2.nv == 1 && w2.nv2 == 1 && w4.kind == hashLong && w4.nv == 1 && w4.nv2 == 1 && w3.nv == 1 {
			break
		}
	}
	if pad == 64 {
		b.Fatal("no key length puts every id on the one-window long path")
	}
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = key(i, pad)
	}
	prefixes := make([][]byte, len(keys))
	for i, k := range keys {
		prefixes[i] = prefix(k)
	}
	cut := hashCut(minTopRanks, len(cs))
	var sink int
	cpu := startCPU(b)
	for i := 0; i < b.N; i++ {
		h.reset(prefixes[i%len(prefixes)])
		sink += h.sumAll(&set, hashes, cut, sel)
	}
	cpu.stop(b)
	benchSink = uint64(sink)
}
