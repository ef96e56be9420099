package migrate

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// migratedConfig migrates src with the strategy and returns the typed
// config the engine consumes.
func migratedConfig(t *testing.T, src string, s Strategy, mut func(*Options)) *lb.Config {
	t.Helper()
	opts := DefaultOptions()
	opts.Strategy = s
	if mut != nil {
		mut(&opts)
	}
	res, err := Migrate("lb.json", []byte(src), opts)
	if err != nil || res.Status != StatusPending {
		t.Fatalf("migrate %s: %v %s %v", s, err, res.Status, res.Notes)
	}
	return configOf(t, res.Output)
}

func configOf(t *testing.T, src []byte) *lb.Config {
	t.Helper()
	r := validate.File("lb.json", src)
	if !r.Valid() {
		t.Fatalf("invalid config %v", r.Errors())
	}
	return r.Config
}

// snapshot returns five equal clusters, each with a free engine slot.
func snapshot() *lb.Snapshot {
	s := &lb.Snapshot{Model: "m"}
	for _, id := range []string{"A", "B", "C", "D", "E"} {
		s.Clusters = append(s.Clusters, lb.Cluster{ClusterID: id, RTT: 5 * time.Millisecond, Stats: lb.Stats{
			LastMeanInputTPS: 100, MaxInputTPS: 100, MaxEngineConcurrency: 1,
		}})
	}
	return s
}

// TestEngineAgreesWithTheMigration runs the migrated entries through the
// decision engine (internal/lb, the newest upstream behaviour, without
// the eligible-primary shortcut) on a snapshot where rank 1 is full with
// a growing queue: the bounded entry keeps rank 1 while its queue is
// within max_queued and waits up to cache_affinity_wait_ms before
// widening; the pulsar entry keeps rank 1 always; the unmigrated entry
// overflows at once (the behaviour change the migration exists for); and
// the M8 header entry behaves like the bounded entry.
func TestEngineAgreesWithTheMigration(t *testing.T) {
	const src = `{"models":{"m":{"algorithm":"pulsar-wait-and-widen","seed":"model-a-v1","consider_kv_free_tokens":false}}}`
	const n, x = 3, 250
	bounds := func(o *Options) { o.MaxQueued, o.AffinityWaitMs = n, x }
	bounded := migratedConfig(t, src, Bounded, bounds).Models["m"]
	pulsarCfg := migratedConfig(t, src, Pulsar, bounds)
	pulsar := pulsarCfg.Models["m"]
	header, _, err := pulsarCfg.Resolve("m", lb.OptionalString{Value: "pulsar-wait-and-widen", Set: true})
	if err != nil {
		t.Fatalf("x-routing-method: pulsar-wait-and-widen after the pulsar migration: %v", err)
	}
	original := configOf(t, []byte(src)).Models["m"]
	if bounded.Algorithm != lb.PulsarWaitAndWiden || pulsar.Algorithm != lb.Pulsar || header.Algorithm != lb.PulsarWaitAndWiden {
		t.Fatalf("algorithms %v %v %v", bounded.Algorithm, pulsar.Algorithm, header.Algorithm)
	}
	req := &lb.Request{Model: "m", RoutingKey: "rk-1", CacheAffinityKey: "session-6", InputTokens: 100, HasInputTokens: true}

	// Rank 1 for this key: what pulsar picks when every cluster is free.
	free := lb.NewEngine(pulsar).Decide(snapshot(), req, nil, lb.Options{})
	if free.Kind != lb.KindSelected || free.RankDepth != 1 {
		t.Fatalf("pulsar on a free snapshot: %+v", free)
	}
	rank1 := free.ClusterID

	decide := func(cfg *lb.AlgorithmConfig, queued uint64, elapsed time.Duration) lb.Decision {
		snap := snapshot()
		i := snap.Index(rank1)
		snap.Clusters[i].Stats.NumRunningQueries = snap.Clusters[i].Stats.MaxEngineConcurrency + queued
		r := *req
		r.Elapsed = elapsed
		return lb.NewEngine(cfg).Decide(snap, &r, nil, lb.Options{})
	}
	for queued := uint64(0); queued <= n+2; queued++ {
		t.Run(fmt.Sprintf("queued=%d", queued), func(t *testing.T) {
			// pulsar: rank 1 always, at any queue and time.
			for _, el := range []time.Duration{0, x * time.Millisecond} {
				if d := decide(pulsar, queued, el); d.Kind != lb.KindSelected || d.ClusterID != rank1 || d.RankDepth != 1 {
					t.Errorf("pulsar at %v: %s %s depth %d, want rank 1 %s", el, d.Kind, d.ClusterID, d.RankDepth, rank1)
				}
			}
			// Unmigrated: no shortcut, so a full rank 1 loses the request
			// at once to a cluster with a free slot.
			if d := decide(original, queued, 0); d.Kind != lb.KindSelected || d.ClusterID == rank1 {
				t.Errorf("unmigrated entry: %s %s, want an overflow away from %s", d.Kind, d.ClusterID, rank1)
			}
			for name, cfg := range map[string]*lb.AlgorithmConfig{"bounded": bounded, "M8 header entry": header} {
				d := decide(cfg, queued, 0)
				if queued < n {
					// Within max_queued: rank 1 admits the request.
					if d.Kind != lb.KindSelected || d.ClusterID != rank1 || d.RankDepth != 1 {
						t.Errorf("%s with %d queued (< max_queued %d): %s %s, want rank 1 %s", name, queued, n, d.Kind, d.ClusterID, rank1)
					}
					continue
				}
				// Beyond max_queued: wait for rank 1 until X, then widen.
				if d.Kind != lb.KindWait || d.Wait != x*time.Millisecond {
					t.Errorf("%s with %d queued at 0 ms: %s wait %v, want a %d ms affinity wait", name, queued, d.Kind, d.Wait, x)
				}
				if d := decide(cfg, queued, x*time.Millisecond); d.Kind != lb.KindSelected || d.ClusterID == rank1 {
					t.Errorf("%s with %d queued after the wait: %s %s, want a cluster other than %s", name, queued, d.Kind, d.ClusterID, rank1)
				}
			}
		})
	}
}

// TestAvailabilityAgreesWithResolve checks the availability report (M8)
// against the engine's own header resolution (lb.Config.Resolve, E1–E3):
// for generated configs and options, every algorithm the report says was
// added or removed for a config set resolves (or fails) accordingly before
// and after, and no other algorithm changes.
func TestAvailabilityAgreesWithResolve(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawConfig(t)
		data, _ := renderGenJSON(c, "  ")
		opts := drawOptions(t)
		res, err := Migrate("gen.json", data, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusPending {
			return
		}
		before, after := validate.File("gen.json", res.Input).Config, validate.File("gen.json", res.Output).Config
		sets := []string{"default"}
		for m := range after.Models {
			sets = append(sets, m)
		}
		reported := map[string]Availability{}
		for _, a := range res.Availability {
			reported[a.ConfigSet] = a
		}
		for _, set := range sets {
			model, key := "an-unlisted-model", "default"
			if set != "default" {
				model, key = set, "models["+quote(set)+"]"
			}
			var added, removed []string
			for _, a := range lb.Algorithms {
				m := lb.OptionalString{Value: a.String(), Set: true}
				_, _, e1 := before.Resolve(model, m)
				_, _, e2 := after.Resolve(model, m)
				switch {
				case e1 != nil && e2 == nil:
					added = append(added, a.String())
				case e1 == nil && e2 != nil:
					removed = append(removed, a.String())
				}
			}
			got := reported[key]
			if !slices.Equal(nonNilStrings(got.Added), nonNilStrings(added)) || !slices.Equal(nonNilStrings(got.Removed), nonNilStrings(removed)) {
				t.Fatalf("%s: report +%v -%v, Resolve says +%v -%v\n%s\n%s", key, got.Added, got.Removed, added, removed, data, res.Output)
			}
		}
	})
}

func quote(s string) string { return strconv.Quote(s) }

func nonNilStrings(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}
