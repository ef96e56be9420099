package formats

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// Case is one conformance case (formats.md "Conformance case"): either a
// decision case (config, request, snapshot) or a config-only case
// (lb_config).
type Case struct {
	// Name and Source are informational; Line is the case's line.
	Name   string
	Source string
	Line   int
	// Config is the decoded `config:` algorithm entry, nil when it is
	// invalid (ConfigErrors then holds validate's errors) or absent.
	Config       *lb.AlgorithmConfig
	ConfigErrors []validate.Diagnostic
	// LBConfig is the `lb_config:` node of a config-only case; LBResult
	// its validation result.
	LBConfig *yaml.Node
	LBResult *validate.Result
	// EntryOnly marks a config-only case written as a lone `config:`
	// algorithm entry (no request, no snapshot): the entry is validated
	// like a models entry (Config, ConfigErrors).
	EntryOnly bool
	// Request and Snapshot are the decision inputs.
	Request  *lb.Request
	Snapshot *lb.Snapshot
	// Expect is the expectation block.
	Expect Expect
}

// ConfigOnly reports whether the case only validates configuration: a
// whole lb-config (`lb_config:`) or a lone algorithm entry (`config:`
// without request and snapshot; formats.md "config-only case").
func (c *Case) ConfigOnly() bool { return c.LBConfig != nil || c.EntryOnly }

// ConfigValid reports, for a config-only case, whether the configuration
// is valid.
func (c *Case) ConfigValid() bool {
	if c.LBConfig != nil {
		return c.LBResult != nil && c.LBResult.Valid()
	}
	return c.EntryOnly && c.Config != nil && len(c.ConfigErrors) == 0
}

// ConfigError joins the config's error messages ("" when valid).
func (c *Case) ConfigError() string {
	var msgs []string
	for _, d := range c.ConfigErrors {
		if d.Severity == validate.SeverityError {
			msgs = append(msgs, d.String())
		}
	}
	if c.LBResult != nil {
		for _, d := range c.LBResult.Diagnostics {
			if d.Severity == validate.SeverityError {
				msgs = append(msgs, d.String())
			}
		}
	}
	return strings.Join(msgs, "; ")
}

// Expect is a case's `expect` block; every field is optional and Has*
// flags distinguish "absent" from a null or empty value.
type Expect struct {
	Outcome    string
	HasOutcome bool
	Cluster    string
	HasCluster bool
	OneOf      []string
	HasOneOf   bool
	Never      []string
	HasNever   bool
	RetryAtMs  float64
	HasRetryAt bool
	// SessionState is "new", "returning", "stale" or "" for null.
	SessionState          string
	HasSessionState       bool
	Promoted, HasPromoted bool
	AffinityOrder         []string
	HasAffinityOrder      bool
	AffinityGroup         []string
	HasAffinityGroup      bool
	RankDepth             uint64
	HasRankDepth          bool
	KVSkip, HasKVSkip     bool
	ErrorContains         string
	HasErrorContains      bool
	Valid, HasValid       bool
}

// DecodeCases decodes a conformance file: a list of cases or one case.
// Structural problems are returned as Errors; an invalid `config:` is not
// an error here (it is the case's subject: outcome error).
func DecodeCases(file string, data []byte) ([]*Case, error) {
	root, err := parseRoot(file, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: file}
	var cases []*Case
	if root.Kind == yaml.SequenceNode {
		for i, n := range root.Content {
			cases = append(cases, d.caseNode(n, fmt.Sprintf("[%d]", i)))
		}
	} else {
		cases = append(cases, d.caseNode(root, ""))
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return cases, nil
}

// caseKeys are the keys caseNode accepts (unknown-key suggestions; TestFieldKeysMatchDecoders
// checks them against its switch).
var caseKeys = []string{"name", "source", "config", "lb_config", "request", "snapshot", "expect"}

func (d *decoder) caseNode(n *yaml.Node, path string) *Case {
	c := &Case{Line: resolve(n).Line}
	var cfgNode, reqNode, snapNode, expNode *yaml.Node
	d.fields(n, path, caseKeys, func(key string, k, v *yaml.Node) bool {
		p := join(path, key)
		switch key {
		case "name":
			c.Name, _ = d.str(v, p)
			d.noControl(v, p, c.Name)
		case "source":
			c.Source, _ = d.optStr(v, p)
		case "config":
			cfgNode = v
		case "lb_config":
			c.LBConfig = resolve(v)
		case "request":
			reqNode = v
		case "snapshot":
			snapNode = v
		case "expect":
			expNode = v
		default:
			return false
		}
		return true
	})
	at := resolve(n)
	if c.LBConfig != nil {
		if cfgNode != nil || reqNode != nil || snapNode != nil {
			d.errf(at, path, "a config-only case (lb_config) has no config, request or snapshot")
		}
		c.LBResult = validate.Node(c.LBConfig, nil, d.file)
	} else {
		c.EntryOnly = cfgNode != nil && reqNode == nil && snapNode == nil
		for _, m := range []struct {
			n    *yaml.Node
			name string
		}{{cfgNode, "config"}, {reqNode, "request"}, {snapNode, "snapshot"}} {
			if m.n == nil && !(c.EntryOnly && m.name != "config") {
				d.errf(at, join(path, m.name), "missing required field %q", m.name)
			}
		}
		if cfgNode != nil {
			cfg, diags := validate.AlgorithmConfigFromNode(resolve(cfgNode), d.file)
			c.Config = cfg
			for _, dg := range diags {
				if dg.Severity == validate.SeverityError {
					c.ConfigErrors = append(c.ConfigErrors, dg)
				}
			}
		}
		if reqNode != nil {
			c.Request = d.request(reqNode, join(path, "request"))
		}
		if snapNode != nil {
			c.Snapshot = d.snapshot(snapNode, join(path, "snapshot"))
		}
	}
	if expNode == nil {
		d.errf(at, join(path, "expect"), "missing required field \"expect\"")
	} else {
		c.Expect = d.expect(expNode, join(path, "expect"))
	}
	return c
}

// expectKeys are the keys expect accepts (unknown-key suggestions; TestFieldKeysMatchDecoders
// checks them against its switch).
var expectKeys = []string{"outcome", "cluster", "one_of", "never", "retry_at_ms", "session_state", "promoted", "affinity_order", "affinity_group", "rank_depth", "selected_after_kv_free_tokens_skip", "error_contains", "valid"}

func (d *decoder) expect(n *yaml.Node, path string) Expect {
	var e Expect
	d.fields(n, path, expectKeys, func(key string, k, v *yaml.Node) bool {
		p := join(path, key)
		switch key {
		case "outcome":
			if s, ok := d.str(v, p); ok {
				if _, ok := lb.ParseOutcome(s); !ok {
					d.errf(resolve(v), p, "must be dispatch, wait, reject or error, got %q", s)
				}
				e.Outcome, e.HasOutcome = s, true
			}
		case "cluster":
			e.Cluster, e.HasCluster = d.str(v, p)
		case "one_of":
			e.OneOf, e.HasOneOf = d.strList(v, p)
		case "never":
			e.Never, e.HasNever = d.strList(v, p)
		case "retry_at_ms":
			e.RetryAtMs, e.HasRetryAt = d.float(v, p)
		case "session_state":
			e.HasSessionState = true
			if !isNull(v) {
				s, ok := d.str(v, p)
				if _, valid := lb.ParseSessionState(s); ok && !valid {
					d.errf(resolve(v), p, "must be new, returning, stale or null, got %q", s)
				}
				e.SessionState = s
			}
		case "promoted":
			e.Promoted, e.HasPromoted = d.boolean(v, p)
		case "affinity_order":
			e.AffinityOrder, e.HasAffinityOrder = d.strList(v, p)
		case "affinity_group":
			e.AffinityGroup, e.HasAffinityGroup = d.strList(v, p)
		case "rank_depth":
			e.RankDepth, e.HasRankDepth = d.uint(v, p, 1<<31)
		case "selected_after_kv_free_tokens_skip":
			e.KVSkip, e.HasKVSkip = d.boolean(v, p)
		case "error_contains":
			e.ErrorContains, e.HasErrorContains = d.str(v, p)
		case "valid":
			e.Valid, e.HasValid = d.boolean(v, p)
		default:
			return false
		}
		return true
	})
	return e
}
