package formats

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
)

func addSeeds(f *testing.F) {
	f.Add([]byte(fullSnapshot))
	f.Add([]byte(`{"clusters":[{"cluster_id":"A"}]}`))
	f.Add([]byte("model: m\ninput_tokens: 1\nelapsed_ms: 1e400\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("- name: x\n  lb_config: {}\n  expect: {valid: true}\n"))
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(f), "conformance", "*.yaml"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 16<<10 {
			f.Add(b)
		}
	}
}

// The decoders never panic, and a decoded snapshot/request always drives
// the engine without panicking.
func FuzzDecodeSnapshot(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot("f.yaml", data)
		if err != nil {
			return
		}
		for _, a := range lb.Algorithms {
			c := lb.DefaultAlgorithmConfig(a)
			c.CacheAffinityBackendSelectionCount = 2
			lb.NewEngine(&c).Step(s, &lb.Request{Model: "m", CacheAffinityKey: "k", HasInputTokens: true, InputTokens: 10}, nil, lb.Options{Trace: true, Probabilities: true})
		}
	})
}

func FuzzDecodeRequest(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRequest("f.yaml", data)
		if err != nil {
			return
		}
		s := &lb.Snapshot{Clusters: []lb.Cluster{{ClusterID: "A"}, {ClusterID: "B", Stats: lb.Stats{MaxInputTPS: 1, LastMeanInputTPS: 1}}}}
		for _, a := range lb.Algorithms {
			c := lb.DefaultAlgorithmConfig(a)
			c.CacheAffinityBackendSelectionCount = 1
			c.LastClusterAffinity = a == lb.WaitAndWiden || a == lb.PulsarWaitAndWiden
			lb.NewEngine(&c).Step(s, r, nil, lb.Options{Trace: true, Probabilities: true})
		}
	})
}

func FuzzDecodeCases(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := DecodeCases("f.yaml", data)
		if err != nil {
			return
		}
		for _, c := range cases {
			if c.Config != nil && c.Snapshot != nil && c.Request != nil {
				lb.NewEngine(c.Config).Step(c.Snapshot, c.Request, nil, lb.Options{Trace: true, Probabilities: true})
			}
		}
	})
}
