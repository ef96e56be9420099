package lb

import "testing"

// headerExampleConfig is the config of lb-config.md §14's header examples:
// {"default":"power-of-n","request_algorithms":{"round-robin":"round-robin"},"models":{"m":"pulsar"}}.
func headerExampleConfig() *Config {
	rr := DefaultAlgorithmConfig(RoundRobin)
	p := DefaultAlgorithmConfig(Pulsar)
	return &Config{Default: PowerOfN,
		RequestAlgorithms: map[Algorithm]*AlgorithmConfig{RoundRobin: &rr},
		Models:            map[string]*AlgorithmConfig{"m": &p}}
}

func method(v string) OptionalString { return OptionalString{Value: v, Set: true} }

func TestResolveHeaderExamples(t *testing.T) {
	c := headerExampleConfig()
	cases := []struct {
		model  string
		method OptionalString
		want   Algorithm
		source ResolutionSource
		path   string
		code   string
	}{
		{"other", OptionalString{}, PowerOfN, SourceDefault, "default", ""},
		{"other", method("ROUND_ROBIN"), RoundRobin, SourceOverrideTopLevel, `request_algorithms["round-robin"]`, ""},
		{"m", method("  Pulsar "), Pulsar, SourceOverrideOwn, `models["m"]`, ""},
		{"m", method("round_robin"), RoundRobin, SourceOverrideTopLevel, `request_algorithms["round-robin"]`, ""},
		{"m", method("power-of-n"), 0, 0, "", "unavailable"},
		{"other", method("power of n"), 0, 0, "", "unknown_method"},
		{"other", method(""), 0, 0, "", "unknown_method"},
		{" m ", OptionalString{}, Pulsar, SourceModelEntry, `models["m"]`, ""},
		{"M", OptionalString{}, PowerOfN, SourceDefault, "default", ""},
		{"other", method("power-of-two"), PowerOfN, SourceOverrideOwn, "default", ""},
		{"m", method("pulsar;seed=a"), 0, 0, "", "unsupported_expression"},
		{"  ", OptionalString{}, 0, 0, "", "missing_model"},
	}
	for _, tc := range cases {
		r, err := c.Resolve(tc.model, tc.method)
		if tc.code != "" {
			if err == nil || err.Code != tc.code {
				t.Errorf("Resolve(%q, %+v): got %v, want 400 %s", tc.model, tc.method, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q, %+v): unexpected %v", tc.model, tc.method, err)
			continue
		}
		if r.Config.Algorithm != tc.want || r.Source != tc.source || r.Path != tc.path {
			t.Errorf("Resolve(%q, %+v) = %v via %v at %s; want %v via %v at %s", tc.model, tc.method,
				r.Config.Algorithm, r.Source, r.Path, tc.want, tc.source, tc.path)
		}
	}
}

func TestResolveModelLevelBeforeTopLevel(t *testing.T) {
	top := DefaultAlgorithmConfig(PulsarWaitAndWiden)
	modelPWW := DefaultAlgorithmConfig(PulsarWaitAndWiden)
	modelPWW.LastClusterAffinity = false
	modelPWW.CacheAffinityWaitMs = 77
	ww := DefaultAlgorithmConfig(WaitAndWiden)
	ww.LastClusterAffinity = true
	ww.RequestAlgorithms = map[Algorithm]*AlgorithmConfig{PulsarWaitAndWiden: &modelPWW}
	plain := DefaultAlgorithmConfig(Pulsar)
	c := &Config{Default: Random, RequestAlgorithms: map[Algorithm]*AlgorithmConfig{PulsarWaitAndWiden: &top},
		Models: map[string]*AlgorithmConfig{"a": &ww, "b": &plain}}

	r, err := c.Resolve("a", method("pulsar-multiregion"))
	if err != nil || r.Config != &modelPWW || r.Source != SourceOverrideModel ||
		r.Path != `models["a"].request_algorithms["pulsar-wait-and-widen"]` || r.Override != PulsarWaitAndWiden || r.Requested != "pulsar-multiregion" {
		t.Fatalf("E3.2 model-level entry: got %+v, %v", r, err)
	}
	// The override entry lacks the flag even though the model's own entry
	// has it (session.md §1.1, S19).
	if r.Config.LastClusterAffinity {
		t.Fatal("override must use its own settings only (E4)")
	}
	if r, err := c.Resolve("b", method("pulsar-wait-and-widen")); err != nil || r.Config != &top || r.Source != SourceOverrideTopLevel {
		t.Fatalf("E3.3 top-level for a model set: got %+v, %v", r, err)
	}
	// default itself is not offered to a model with its own entry.
	if _, err := c.Resolve("b", method("random")); err == nil || err.Code != "unavailable" || err.Rule != "E3" {
		t.Fatalf("default algorithm for a model set: want 400 unavailable, got %v", err)
	}
	// The default set runs `default` with default settings.
	if r, err := c.Resolve("zzz", OptionalString{}); err != nil || r.Config.Algorithm != Random || r.HasModelEntry {
		t.Fatalf("default set: got %+v, %v", r, err)
	}
}

func TestResolvePermissiveDefault(t *testing.T) {
	var c *Config
	for _, a := range Algorithms {
		r, err := c.Resolve("any", method(a.String()))
		if err != nil || r.Config.Algorithm != a {
			t.Fatalf("E6: %v must be selectable without a config: %+v %v", a, r, err)
		}
	}
	// {} is restrictive: only power-of-n.
	empty := &Config{Default: PowerOfN}
	if _, err := empty.Resolve("any", method("pulsar")); err == nil || err.Code != "unavailable" {
		t.Fatalf("E6 {}: pulsar must be unavailable, got %v", err)
	}
}

func TestResolutionSourceText(t *testing.T) {
	for s := SourceModelEntry; s <= SourceOverrideTopLevel; s++ {
		b, _ := s.MarshalText()
		var back ResolutionSource
		if err := back.UnmarshalText(b); err != nil || back != s || s.Rule() == "" {
			t.Fatalf("%v: round trip %v %v, rule %q", s, back, err, s.Rule())
		}
	}
	var x ResolutionSource
	if err := x.UnmarshalText([]byte("bogus")); err == nil {
		t.Fatal("bogus source must not parse")
	}
}
