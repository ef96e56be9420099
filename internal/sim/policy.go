package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/suggest"
	"github.com/lcctl/lcctl/internal/validate"
)

// Names of the built-in comparison set, in report order.
const (
	// PolicyWaitAndWidenOff is wait-and-widen with last_cluster_affinity off.
	PolicyWaitAndWidenOff = "wait-and-widen/lc-off"
	// PolicyWaitAndWidenOn is wait-and-widen with last_cluster_affinity on.
	PolicyWaitAndWidenOn = "wait-and-widen/lc-on"
	// PolicyPulsarWaitAndWidenOff is pulsar-wait-and-widen, flag off.
	PolicyPulsarWaitAndWidenOff = "pulsar-wait-and-widen/lc-off"
	// PolicyPulsarWaitAndWidenOn is pulsar-wait-and-widen, flag on.
	PolicyPulsarWaitAndWidenOn = "pulsar-wait-and-widen/lc-on"
	// PolicyPulsar is plain pulsar.
	PolicyPulsar = "pulsar"
	// PolicyPowerOfN is power-of-n.
	PolicyPowerOfN = "power-of-n"
	// PolicyRoundRobin is round-robin.
	PolicyRoundRobin = "round-robin"
	// PolicyRandom is random.
	PolicyRandom = "random"
	// PolicyConsistentHash is plain consistent hashing (comparison policy,
	// not a Stargate algorithm; lb.ConsistentHash).
	PolicyConsistentHash = "consistent-hash"
	// PolicyStickyLeastLoaded is vllm-router's sticky_least_loaded
	// (comparison policy; lb.StickyLeastLoaded).
	PolicyStickyLeastLoaded = "sticky-least-loaded"
)

// ComparisonNames lists the built-in comparison set in report order.
var ComparisonNames = []string{
	PolicyWaitAndWidenOff, PolicyWaitAndWidenOn,
	PolicyPulsarWaitAndWidenOff, PolicyPulsarWaitAndWidenOn,
	PolicyPulsar, PolicyPowerOfN, PolicyRoundRobin, PolicyRandom,
	PolicyConsistentHash, PolicyStickyLeastLoaded,
}

func isComparisonName(s string) bool {
	for _, n := range ComparisonNames {
		if n == s {
			return true
		}
	}
	return false
}

func comparisonList() string { return strings.Join(ComparisonNames, ", ") }

// PolicyKind says which router a policy drives.
type PolicyKind uint8

// Policy kinds.
const (
	// KindEngine drives lb.Engine through the proxy Step (the six Stargate
	// algorithms).
	KindEngine PolicyKind = iota
	// KindConsistentHash drives lb.ConsistentHash.
	KindConsistentHash
	// KindStickyLeastLoaded drives lb.StickyLeastLoaded.
	KindStickyLeastLoaded
)

// Policy is one router configuration to simulate.
type Policy struct {
	// Name labels the policy in reports.
	Name string
	// Kind selects the router.
	Kind PolicyKind
	// Default is the algorithm entry for models without their own entry
	// (engine policies).
	Default *lb.AlgorithmConfig
	// Models are per-model entries (engine policies from an lb-config).
	Models map[string]*lb.AlgorithmConfig
	// Source says where the policy came from ("comparison set", a file).
	Source string
	// LBConfig is true for a policy read from an lb-config file (--config,
	// router.config, policies[].lb_config): Models and Default are that
	// file's, and Routes says which entry routes each model.
	LBConfig bool
	// ConsistentHash and Sticky configure the comparison policies; Seed
	// is the consistent-hash ring seed.
	ConsistentHash ConsistentHashSpec
	Seed           string
	Sticky         StickyLeastLoadedSpec
}

// configFor returns the algorithm entry that routes requests for model.
func (p *Policy) configFor(model string) *lb.AlgorithmConfig {
	if c, ok := p.Models[model]; ok && c != nil {
		return c
	}
	return p.Default
}

// Algorithm describes the policy's algorithm for the given models: the
// canonical algorithm name when all agree, "mixed" otherwise, or the
// comparison policy's name.
func (p *Policy) Algorithm(models []string) string {
	switch p.Kind {
	case KindConsistentHash:
		return PolicyConsistentHash
	case KindStickyLeastLoaded:
		return PolicyStickyLeastLoaded
	}
	name := ""
	for _, m := range models {
		a := p.configFor(m).Algorithm.String()
		if name != "" && name != a {
			return "mixed"
		}
		name = a
	}
	return name
}

// LastClusterAffinity reports whether any of the models' entries turns
// last_cluster_affinity on. Only wait-and-widen and pulsar-wait-and-widen
// read the flag (spec: last-cluster affinity), so it is nil when none of
// the models is routed by one of them: the other Stargate algorithms and
// the comparison policies consistent-hash and sticky-least-loaded.
func (p *Policy) LastClusterAffinity(models []string) *bool {
	if p.Kind != KindEngine {
		return nil
	}
	applies, on := false, false
	for _, m := range models {
		c := p.configFor(m)
		if c.Algorithm != lb.WaitAndWiden && c.Algorithm != lb.PulsarWaitAndWiden {
			continue
		}
		applies = true
		if c.LastClusterAffinity {
			on = true
		}
	}
	if !applies {
		return nil
	}
	return &on
}

// Entries of ModelRoute.Entry.
const (
	// EntryModels: the model's own entry under `models`.
	EntryModels = lb.TopLevelModels
	// EntryDefault: the model has no `models` entry, so Stargate routes it
	// with the config's `default` algorithm and default settings
	// (spec E2).
	EntryDefault = lb.TopLevelDefault
)

// ModelRoute says which entry of an lb-config routes one model of the
// workload (the `models[]` objects of a policy in `lcctl simulate
// --output json`).
type ModelRoute struct {
	// Model is the model name as the workload sends it.
	Model string `json:"model"`
	// Algorithm is the canonical name of the algorithm that routes it.
	Algorithm string `json:"algorithm"`
	// Entry is EntryModels or EntryDefault.
	Entry string `json:"entry"`
	// DidYouMean is the `models` key closest to Model (a likely typo;
	// suggest.Closest), only for EntryDefault; "" when none is close.
	DidYouMean string `json:"did_you_mean,omitempty"`
}

// Routes says, for each of models in order, which entry of the policy's
// lb-config routes it; nil when the policy is not from an lb-config.
func (p *Policy) Routes(models []string) []ModelRoute {
	if !p.LBConfig || p.Kind != KindEngine {
		return nil
	}
	keys := slices.Sorted(maps.Keys(p.Models))
	out := make([]ModelRoute, 0, len(models))
	for _, m := range models {
		mr := ModelRoute{Model: m, Algorithm: p.configFor(m).Algorithm.String(), Entry: EntryModels}
		if c, ok := p.Models[m]; !ok || c == nil {
			mr.Entry = EntryDefault
			mr.DidYouMean, _ = suggest.Closest(m, keys)
		}
		out = append(out, mr)
	}
	return out
}

// ModelKeys returns the policy's `models` keys, sorted (lb-config
// policies; empty for the others).
func (p *Policy) ModelKeys() []string {
	return slices.Sorted(maps.Keys(p.Models))
}

// Selection says which policies to simulate.
type Selection struct {
	// Compare adds the built-in comparison set (scenario compare.policies
	// selects and orders it).
	Compare bool
	// Names picks comparison-set or scenario policies by name (in this
	// order); with Compare too, only the named ones run.
	Names []string
	// ConfigFiles adds one policy per lb-config file (named by base name):
	// the CLI's --config, which a file that cannot be opened names.
	ConfigFiles []string
}

// ResolvePolicies builds the policies of a run. Without any selection the
// scenario's policies (and router.config) are used. Errors carry the file
// position of the bad entry.
func ResolvePolicies(sc *Scenario, sel Selection) ([]Policy, error) {
	var out []Policy
	names := map[string]bool{}
	add := func(p Policy) error {
		if names[p.Name] {
			return fmt.Errorf("policy name %q used twice", p.Name)
		}
		names[p.Name] = true
		out = append(out, p)
		return nil
	}
	own := func() error {
		for i := range sc.Policies {
			p, err := sc.scenarioPolicy(i)
			if err != nil {
				return err
			}
			if len(sel.Names) > 0 && !contains(sel.Names, p.Name) {
				continue
			}
			if err := add(p); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case sel.Compare && len(sel.Names) == 0:
		// With names, --compare --policy X runs X only (the next case).
		set := sc.Compare.Policies
		if len(set) == 0 {
			set = ComparisonNames
		}
		for _, n := range set {
			p, err := sc.comparisonPolicy(n)
			if err != nil {
				return nil, err
			}
			if err := add(p); err != nil {
				return nil, err
			}
		}
	case len(sel.Names) > 0:
		for _, n := range sel.Names {
			if isComparisonName(n) {
				p, err := sc.comparisonPolicy(n)
				if err != nil {
					return nil, err
				}
				if err := add(p); err != nil {
					return nil, err
				}
				continue
			}
			found := false
			for i := range sc.Policies {
				if sc.Policies[i].Name == n {
					p, err := sc.scenarioPolicy(i)
					if err != nil {
						return nil, err
					}
					if err := add(p); err != nil {
						return nil, err
					}
					found = true
				}
			}
			if !found {
				known := slices.Clone(ComparisonNames)
				for i := range sc.Policies {
					known = append(known, sc.Policies[i].Name)
				}
				return nil, fmt.Errorf("unknown policy %q%s: not in the comparison set (%s) nor in the scenario's policies", n, suggest.DidYouMean(n, known), comparisonList())
			}
		}
	case len(sel.ConfigFiles) == 0:
		if err := own(); err != nil {
			return nil, err
		}
		if sc.Router.Config != "" {
			p, err := sc.namedConfigPolicy("router.config", sc.Router.Config, "")
			if err != nil {
				return nil, err
			}
			if err := add(p); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range sel.ConfigFiles {
		p, err := configFilePolicy(f, "", nil)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			// The CLI's --config named the file: say so.
			err = fmt.Errorf("--config: %w", err)
		}
		if err != nil {
			return nil, err
		}
		if err := add(p); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nothing to simulate: give --compare, --config or --policy, or list policies in the scenario")
	}
	return out, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (sc *Scenario) resolvePath(p string) string {
	if filepath.IsAbs(p) || sc.Dir == "" {
		return p
	}
	return filepath.Join(sc.Dir, p)
}

// comparisonPolicy builds one policy of the built-in set.
func (sc *Scenario) comparisonPolicy(name string) (Policy, error) {
	p := Policy{Name: name, Kind: KindEngine, Source: "comparison set"}
	var (
		alg  lb.Algorithm
		node *yaml.Node
		path string
	)
	lc := false
	switch name {
	case PolicyWaitAndWidenOff, PolicyWaitAndWidenOn:
		alg, node, path = lb.WaitAndWiden, sc.Compare.WaitAndWiden, "compare.wait_and_widen"
		lc = name == PolicyWaitAndWidenOn
	case PolicyPulsarWaitAndWidenOff, PolicyPulsarWaitAndWidenOn:
		alg, node, path = lb.PulsarWaitAndWiden, sc.Compare.PulsarWaitAndWiden, "compare.pulsar_wait_and_widen"
		lc = name == PolicyPulsarWaitAndWidenOn
	case PolicyPulsar:
		alg, node, path = lb.Pulsar, sc.Compare.Pulsar, "compare.pulsar"
	case PolicyPowerOfN:
		alg, node, path = lb.PowerOfN, sc.Compare.PowerOfN, "compare.power_of_n"
	case PolicyRoundRobin:
		alg = lb.RoundRobin
	case PolicyRandom:
		alg = lb.Random
	case PolicyConsistentHash:
		p.Kind = KindConsistentHash
		p.ConsistentHash = sc.Compare.ConsistentHash
		p.Seed = sc.Name
		if s := p.ConsistentHash.Seed; s != nil {
			p.Seed = *s
		}
		return p, nil
	case PolicyStickyLeastLoaded:
		p.Kind = KindStickyLeastLoaded
		p.Sticky = sc.Compare.StickyLeastLoaded
		return p, nil
	default:
		return p, fmt.Errorf("unknown comparison policy %q (known: %s)", name, comparisonList())
	}
	cfg := lb.DefaultAlgorithmConfig(alg)
	switch alg {
	case lb.WaitAndWiden, lb.PulsarWaitAndWiden:
		// The upstream e2e last-cluster configs (shared examples
		// e2e-last-cluster-*.json) without their 8 virtual nodes.
		cfg.Seed = sc.Name
		cfg.CacheAffinityBackendSelectionCount = 1
		cfg.CacheAffinityWaitMs = 300
		cfg.CacheAffinityInputTokensScale = 0.1
	case lb.Pulsar:
		cfg.Seed = sc.Name
	}
	if node != nil {
		c, err := sc.decodeEntry(node, path, alg)
		if err != nil {
			return p, err
		}
		cfg = *c
	}
	if alg == lb.WaitAndWiden || alg == lb.PulsarWaitAndWiden {
		cfg.LastClusterAffinity = lc
	}
	p.Default = &cfg
	return p, nil
}

// scenarioPolicy builds policies[i].
func (sc *Scenario) scenarioPolicy(i int) (Policy, error) {
	ps := &sc.Policies[i]
	path := fmt.Sprintf("policies[%d]", i)
	p := Policy{Name: ps.Name, Kind: KindEngine, Source: "scenario"}
	switch {
	case ps.Config != nil:
		c, err := sc.decodeEntry(ps.Config, path+".config", 0)
		if err != nil {
			return p, err
		}
		p.Default = c
	case ps.LBConfig != "":
		fp, err := sc.namedConfigPolicy(path+".lb_config", ps.LBConfig, ps.Name)
		if err != nil {
			return p, err
		}
		return fp, nil
	case ps.ConsistentHash != nil:
		p.Kind = KindConsistentHash
		p.ConsistentHash = *ps.ConsistentHash
		p.Seed = sc.Name
		if s := ps.ConsistentHash.Seed; s != nil {
			p.Seed = *s
		}
	case ps.StickyLeastLoaded != nil:
		p.Kind = KindStickyLeastLoaded
		p.Sticky = *ps.StickyLeastLoaded
	}
	return p, nil
}

// decodeEntry decodes an algorithm entry node with internal/validate. When
// alg is non-zero and the entry is a mapping without `algorithm`, alg is
// supplied; a different algorithm is an error.
func (sc *Scenario) decodeEntry(node *yaml.Node, path string, alg lb.Algorithm) (*lb.AlgorithmConfig, error) {
	n := node
	if alg != 0 {
		if n.Kind != yaml.MappingNode {
			return nil, sc.dec.errAt(n, path, "want a mapping of %s fields", alg)
		}
		has := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "algorithm" {
				has = true
				if a, ok := lb.ParseAlgorithmName(n.Content[i+1].Value); !ok || a != alg {
					return nil, sc.dec.errAt(n.Content[i+1], path+".algorithm", "must be %s here", alg)
				}
			}
		}
		if !has {
			cp := *n
			cp.Content = append([]*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "algorithm", Line: n.Line, Column: n.Column},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: alg.String(), Line: n.Line, Column: n.Column},
			}, n.Content...)
			n = &cp
		}
	}
	cfg, diags := validate.AlgorithmConfigFromNode(n, sc.File)
	for _, d := range diags {
		if d.Severity != validate.SeverityError {
			continue
		}
		p := path + strings.TrimPrefix(d.Path, "config")
		return nil, &InputError{File: sc.File, Line: d.Line, Col: d.Col, Path: p, Msg: d.Message}
	}
	if cfg == nil {
		return nil, sc.dec.errAt(node, path, "invalid algorithm entry")
	}
	c := *cfg
	c.RequestAlgorithms = nil
	return &c, nil
}

// namedConfigPolicy loads the lb-config file the scenario names at field
// (resolved against the scenario's folder) as a policy; a file that is not
// an lb-config at all is refused without quoting it (notAnLBConfig).
// A file that cannot be read is reported at the field that names it
// ("scenario.yaml:L:C: router.config: cannot read FILE: is a directory").
func (sc *Scenario) namedConfigPolicy(field, file, name string) (Policy, error) {
	path := sc.resolvePath(file)
	data, err := readLimited(path, validate.MaxInputBytes)
	if err != nil {
		return Policy{}, sc.FieldError(field, "cannot read %s: %v", path, err)
	}
	return configPolicy(path, data, name, func(path string, data []byte, r *validate.Result) error {
		return notAnLBConfig(func(format string, args ...any) error { return sc.FieldError(field, format, args...) }, path, data, r)
	})
}

// configFilePolicy loads an lb-config file as a policy named name (default:
// the file's base name). When the file is invalid and kind is not nil,
// kind's error, if any, replaces the file's own errors.
func configFilePolicy(file, name string, kind func(file string, data []byte, r *validate.Result) error) (Policy, error) {
	data, err := readFileLimited(file, validate.MaxInputBytes)
	if err != nil {
		return Policy{}, err
	}
	return configPolicy(file, data, name, kind)
}

// configPolicy is configFilePolicy on the file's content, data.
func configPolicy(file string, data []byte, name string, kind func(file string, data []byte, r *validate.Result) error) (Policy, error) {
	r := validate.File(file, data)
	if !r.Valid() {
		if kind != nil {
			if err := kind(file, data, r); err != nil {
				return Policy{}, err
			}
		}
		var msgs []string
		for _, d := range r.Errors() {
			msgs = append(msgs, d.String())
			if len(msgs) == 5 {
				break
			}
		}
		if len(msgs) == 0 {
			msgs = append(msgs, file+": not a valid lb-config")
		}
		return Policy{}, fmt.Errorf("%s", strings.Join(msgs, "\n"))
	}
	if name == "" {
		// The file's name with its extension: "pulsar-wait-and-widen.json"
		// is a file, not the algorithm of that name, and "pulsar.json"
		// does not clash with the comparison policy "pulsar".
		name = filepath.Base(file)
	}
	def := lb.DefaultAlgorithmConfig(r.Config.Default)
	return Policy{Name: name, Kind: KindEngine, Default: &def, Models: r.Config.Models, Source: file, LBConfig: true}, nil
}
