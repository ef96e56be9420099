package lb

import (
	"fmt"
	"testing"
)

func chSnap(ids ...string) *Snapshot {
	s := &Snapshot{}
	for _, id := range ids {
		s.Clusters = append(s.Clusters, Cluster{ClusterID: id})
	}
	return s
}

// TestConsistentHashRingVectors uses the ring of wait-and-widen.md §4.5
// (seed s1, routing key rk-1, model model-a, [A, B, C], V = 2).
func TestConsistentHashRingVectors(t *testing.T) {
	ch := NewConsistentHash("s1", 2)
	snap := chSnap("A", "B", "C")
	for _, c := range []struct {
		key      string
		excluded []string
		want     string
		depth    int
		ok       bool
	}{
		{"key-1", nil, "C", 1, true},
		{"key-1", []string{"C"}, "B", 2, true},
		{"key-1", []string{"C", "B"}, "A", 3, true},
		{"key-1", []string{"A", "B", "C"}, "", 0, false},
		{"key-12", nil, "A", 1, true},
		{"key-12", []string{"A"}, "C", 2, true},
	} {
		req := &Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: c.key, ExcludedClusterIDs: c.excluded}
		idx, depth, ok := ch.Pick(snap, req)
		got := ""
		if ok {
			got = snap.Clusters[idx].ClusterID
		}
		if got != c.want || depth != c.depth || ok != c.ok {
			t.Errorf("%s excl %v: got %q depth %d ok %v, want %q %d %v", c.key, c.excluded, got, depth, ok, c.want, c.depth, c.ok)
		}
	}
}

// TestConsistentHashMatchesWaitAndWidenGroup: with every cluster free, the
// policy picks the first member of wait-and-widen's ring group (k = 1),
// since both walk the same ring.
func TestConsistentHashMatchesWaitAndWidenGroup(t *testing.T) {
	cfg := DefaultAlgorithmConfig(WaitAndWiden)
	cfg.Seed = "seed-x"
	cfg.CacheAffinityBackendSelectionCount = 1
	eng := NewEngine(&cfg)
	ch := NewConsistentHash("seed-x", DefaultConsistentHashVirtualNodes)
	snap := chSnap("a", "b", "c", "d", "e")
	for i := range snap.Clusters {
		snap.Clusters[i].Stats = Stats{LastMeanInputTPS: 1000, MaxEngineConcurrency: 4}
	}
	for i := 0; i < 200; i++ {
		req := &Request{Model: "m", RoutingKey: "rk", CacheAffinityKey: fmt.Sprintf("k-%d", i), InputTokens: 10, HasInputTokens: true}
		d := eng.Decide(snap, req, nil, Options{})
		idx, _, ok := ch.Pick(snap, req)
		if !ok || d.Kind != KindSelected || d.Cluster != idx {
			t.Fatalf("key %d: engine %v %d, consistent hash %d", i, d.Kind, d.Cluster, idx)
		}
	}
}

func TestConsistentHashEmpty(t *testing.T) {
	ch := NewConsistentHash("", 0)
	if _, _, ok := ch.Pick(nil, nil); ok {
		t.Fatal("nil inputs must not pick")
	}
	if _, _, ok := ch.Pick(&Snapshot{}, &Request{}); ok {
		t.Fatal("empty snapshot must not pick")
	}
}

func BenchmarkConsistentHashPick(b *testing.B) {
	ch := NewConsistentHash("s", DefaultConsistentHashVirtualNodes)
	snap := chSnap("a", "b", "c", "d", "e", "f", "g", "h")
	req := &Request{Model: "m", CacheAffinityKey: "session-123456"}
	b.ReportAllocs()
	for b.Loop() {
		ch.Pick(snap, req)
	}
}

func BenchmarkStickyLeastLoadedRoute(b *testing.B) {
	p := NewStickyLeastLoaded(DefaultSLLOptions(), 0)
	workers := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	p.Route(workers, nil, "session-123456", 0)
	b.ReportAllocs()
	for b.Loop() {
		p.Route(workers, nil, "session-123456", 0)
	}
}
