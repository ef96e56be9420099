package sim

import (
	"strconv"
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's CPU time: on a shared machine the wall clock
// includes time the benchmark was not scheduled, CPU time does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds per-second rates by wall time and by process CPU time.
func report(b *testing.B, start time.Time, cpu0 time.Duration, decisions, requests int64) {
	el := time.Since(start).Seconds()
	cpu := (processCPU() - cpu0).Seconds()
	if decisions > 0 {
		b.ReportMetric(float64(decisions)/el, "decisions/s")
	}
	b.ReportMetric(float64(requests)/el, "requests/s")
	if cpu > 0 {
		if decisions > 0 {
			b.ReportMetric(float64(decisions)/cpu, "decisions/cpu-s")
		}
		b.ReportMetric(float64(requests)/cpu, "requests/cpu-s")
	}
}

// runPolicies resolves sel on sc and, per benchmark iteration, runs every
// resolved policy once, then reports the rates (decisions only when
// withDecisions).
func runPolicies(b *testing.B, sc *Scenario, sel Selection, withDecisions bool) {
	b.Helper()
	pols, err := ResolvePolicies(sc, sel)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var decisions, requests int64
	start, cpu0 := time.Now(), processCPU()
	for b.Loop() {
		for i := range pols {
			r, err := Run(sc, &pols[i], RunOptions{})
			if err != nil {
				b.Fatal(err)
			}
			decisions += r.Decisions
			requests += r.Requests
		}
	}
	if !withDecisions {
		decisions = 0
	}
	report(b, start, cpu0, decisions, requests)
}

// BenchmarkSimulate runs the saturated rank-1 scenario (8 clusters) for
// 100,000 requests per iteration with each policy and reports routing
// decisions and requests per second of wall time on one goroutine.
// docs/performance.md records the figures.
func BenchmarkSimulate(b *testing.B) {
	sc, err := LoadScenario(saturatedScenario)
	if err != nil {
		b.Fatal(err)
	}
	sc.Workload.DurationS = 0
	sc.Workload.MaxRequests = 100_000
	for _, name := range []string{PolicyPulsarWaitAndWidenOn, PolicyWaitAndWidenOn, PolicyPulsar, PolicyRoundRobin, PolicyConsistentHash, PolicyStickyLeastLoaded} {
		b.Run(name, func(b *testing.B) {
			runPolicies(b, sc, Selection{Names: []string{name}}, true)
		})
	}
}

// BenchmarkSimulateMMc is the queueing test's workload: one cluster, no
// prefill, round-robin (the simulator's own cost without the engine).
func BenchmarkSimulateMMc(b *testing.B) {
	sc := mmcScenario(b, 8, 0.9, 0.1, 200_000, 1)
	runPolicies(b, sc, Selection{Names: []string{PolicyRoundRobin}}, false)
}

// batchedSaturated is the saturated rank-1 scenario with every cluster on
// the batched engine (default step coefficients) and the block cache.
func batchedSaturated(b *testing.B, requests int64) *Scenario {
	sc, err := LoadScenario(saturatedScenario)
	if err != nil {
		b.Fatal(err)
	}
	for i := range sc.Clusters {
		sc.Clusters[i].Engine = EngineBatched
	}
	sc.Workload.DurationS = 0
	sc.Workload.MaxRequests = requests
	return sc
}

// BenchmarkSimulateBatched: 100,000 requests of the saturated rank-1
// workload with the batched engine and the block cache on 8 clusters,
// pulsar-wait-and-widen/lc-on (docs/performance.md).
func BenchmarkSimulateBatched(b *testing.B) {
	sc := batchedSaturated(b, 100_000)
	runPolicies(b, sc, Selection{Names: []string{PolicyPulsarWaitAndWidenOn}}, true)
}

// BenchmarkSimulateMooncake: the shared Mooncake conversation trace
// (12,031 requests, 512-token blocks, 10M tokens of KV cache) through the
// whole comparison set on one cluster (the reuse test's scenario), one
// goroutine; every run reads and links the trace again.
func BenchmarkSimulateMooncake(b *testing.B) {
	sc := mooncakeScenario(b, 10_000_000)
	runPolicies(b, sc, Selection{Compare: true}, false)
}

// BenchmarkSimulateWide: pulsar-wait-and-widen/lc-on on 256 clusters (the
// saturated rank-1 shapes, 256 sessions/s), 50,000 requests: the ranking
// of 256 candidates per new session dominates.
func BenchmarkSimulateWide(b *testing.B) {
	sc, err := LoadScenario(saturatedScenario)
	if err != nil {
		b.Fatal(err)
	}
	base := sc.Clusters[1]
	sc.Clusters = nil
	for i := 0; i < 256; i++ {
		c := base
		c.ID = "c" + strconv.Itoa(i)
		sc.Clusters = append(sc.Clusters, c)
	}
	sc.Workload.SessionRate = 256
	sc.Workload.DurationS = 0
	sc.Workload.MaxRequests = 50_000
	runPolicies(b, sc, Selection{Names: []string{PolicyPulsarWaitAndWidenOn}}, true)
}
