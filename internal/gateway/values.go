package gateway

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/yamldoc"
)

// ChartDefaults is the origin recorded for values a Helm values file does
// not set: the chart's own values.yaml (gateway.md §8.3; the lastCluster
// defaults come from the chart README, the Olric ones from the chart's
// values.yaml of 2026-08-22).
const ChartDefaults = "chart default"

// NamedInput is one input file's name and content.
type NamedInput struct {
	Name string // file name used in positions
	Data []byte // file content
}

// chartDefault holds the defaults of the values lcctl reads.
var chartDefault = map[string]any{
	"llmApiGateway.replicaCount":                       3,
	"llmApiGateway.nameOverride":                       "llm-api-gateway",
	"llmApiGateway.config.rateLimitEnabled":            true,
	"llmApiGateway.config.lastCluster.enabled":         false,
	"llmApiGateway.config.lastCluster.ttl":             "10m",
	"llmApiGateway.config.lastCluster.lookupTimeout":   "20ms",
	"llmApiGateway.config.lastCluster.localMaxEntries": 100000,
	"llmApiGateway.olric.enabled":                      true,
	"llmApiGateway.olric.env":                          "lan",
	"llmApiGateway.olric.bindPort":                     3320,
	"llmApiGateway.olric.memberlistPort":               3322,
	"llmApiGateway.olric.k8sLabelSelector":             "",
	"llmApiGateway.olric.replicaCount":                 1,
	"llmApiGateway.olric.partitionCount":               271,
	"llmApiGateway.olric.dmapName":                     "rate-limit",
	"llmApiGateway.olric.startupTimeout":               "15s",
	"llmApiGateway.olric.logLevel":                     "WARN",
	"llmApiGateway.metrics.enabled":                    false,
	"llmApiGateway.metrics.port":                       9464,
}

// helmValue is one value looked up in the merged values files.
type helmValue struct {
	path string
	// set is false when no file sets the path (chart default) or a file
	// sets it to null (Helm then drops the default; null is true and node
	// is the null scalar).
	set  bool
	null bool
	node *yaml.Node
	file string
	def  any
}

// asWritten is the value as a values file (or the chart default) spells
// it: a quoted string quoted, null as null, anything else as written.
func (h helmValue) asWritten() string {
	switch {
	case h.node == nil && h.null:
		return "null"
	case h.node == nil:
		return fmt.Sprint(h.def)
	case h.node.Kind == yaml.MappingNode:
		return "{…}"
	case h.node.Kind == yaml.SequenceNode:
		return "[…]"
	case h.node.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		return strconv.Quote(h.node.Value)
	}
	return h.node.Value
}

func (h helmValue) pos() Pos {
	if h.node == nil {
		return Pos{File: ChartDefaults}
	}
	return Pos{File: h.file, Line: h.node.Line, Col: h.node.Column}
}

// truthy is Helm's `if`: false, 0, "", null and empty collections are false.
func (h helmValue) truthy() bool {
	if h.node == nil {
		if h.null {
			return false
		}
		switch d := h.def.(type) {
		case bool:
			return d
		case int:
			return d != 0
		case string:
			return d != ""
		}
		return false
	}
	switch h.node.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		return len(h.node.Content) > 0
	}
	switch v := scalarValue(h.node).(type) {
	case bool:
		return v
	case float64:
		return v != 0
	case string:
		return v != ""
	}
	return false
}

// render is `{{ value | toString }}` in the chart: sigs.k8s.io/yaml turns
// numbers into float64, and sprig's toString prints them with %v (so 1e6
// renders as "1e+06"). asInt64 mirrors the chart's `int64` conversion
// (localMaxEntries). ok is false for a mapping or a sequence.
func (h helmValue) render(asInt64 bool) (string, bool) {
	var v any
	switch {
	case h.node == nil && h.null:
		return "", true
	case h.node == nil:
		v = h.def
		if i, isInt := v.(int); isInt {
			v = float64(i)
		}
	case h.node.Kind != yaml.ScalarNode:
		return "", false
	default:
		v = scalarValue(h.node)
	}
	switch x := v.(type) {
	case nil:
		return "", true
	case float64:
		if asInt64 {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return "0", true
			}
			return strconv.FormatInt(int64(x), 10), true
		}
		return fmt.Sprintf("%v", x), true
	case bool:
		return strconv.FormatBool(x), true
	case string:
		if asInt64 {
			// sprig's int64 of a non-numeric string is 0.
			if n, err := strconv.ParseInt(x, 10, 64); err == nil {
				return strconv.FormatInt(n, 10), true
			}
			return "0", true
		}
		return x, true
	}
	return fmt.Sprint(v), true
}

var yaml11Bool = regexp.MustCompile(`^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE)$`)

// scalarValue resolves a scalar the way Helm reads values (sigs.k8s.io/yaml
// over YAML 1.1): plain yes/no/on/off are booleans, numbers are float64,
// null is nil, anything quoted or else is a string.
func scalarValue(n *yaml.Node) any {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err == nil {
			return b
		}
	case "!!int", "!!float":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
			return f
		}
		if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return float64(i)
		}
	}
	if yaml11Bool.MatchString(n.Value) && n.Tag == "!!str" {
		switch strings.ToLower(n.Value) {
		case "y", "yes", "on", "true":
			return true
		default:
			return false
		}
	}
	return n.Value
}

// valuesSet is the parsed values files, in order.
type valuesSet struct {
	docs  []*yaml.Node
	files []string
}

func (vs *valuesSet) lookup(path string) helmValue {
	h := helmValue{path: path, def: chartDefault[path]}
	keys := strings.Split(path, ".")
	for i := len(vs.docs) - 1; i >= 0; i-- {
		n := vs.docs[i]
		found := true
		for j, k := range keys {
			n = mappingGet(n, k)
			if n == nil {
				found = false
				break
			}
			if j < len(keys)-1 && n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				// A null section (lastCluster: null) removes everything
				// under it, the chart's defaults included, as Helm's
				// coalescing does: the value is null, from this file.
				break
			}
		}
		if !found {
			continue
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			// The null node is kept for its position: the value
			// is the file's, not the chart's default.
			h.null, h.node, h.file = true, n, vs.files[i]
			return h
		}
		h.set, h.node, h.file = true, n, vs.files[i]
		return h
	}
	return h
}

// valuesSections are the mappings of the gateway chart's values that lcctl
// reads through, outermost first.
var valuesSections = []string{"llmApiGateway", "llmApiGateway.config", "llmApiGateway.config.lastCluster",
	"llmApiGateway.olric", "llmApiGateway.metrics"}

// find returns the node at path in the last values file that sets it, and
// that file's name (nil when no file does).
func (vs *valuesSet) find(path string) (*yaml.Node, string) {
	keys := strings.Split(path, ".")
	for i := len(vs.docs) - 1; i >= 0; i-- {
		n := vs.docs[i]
		for _, k := range keys {
			if n = mappingGet(n, k); n == nil {
				break
			}
		}
		if n != nil {
			return n, vs.files[i]
		}
	}
	return nil, ""
}

// valueKind names a YAML value the way Helm sees it ("a string", …).
func valueKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	switch scalarValue(n).(type) {
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	}
	return "a string"
}

// mappingGet returns the value of key in mapping n (the last occurrence,
// aliases resolved), or nil when n is not a mapping or has no such key.
func mappingGet(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			out = deref(n.Content[i+1])
		}
	}
	return out
}

func deref(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode && depth < 32; depth++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// ParseValues reads Helm values files of the gateway chart, later files
// overriding earlier ones as with `helm -f a.yaml -f b.yaml`, with the
// chart defaults below them, and renders the environment variables the
// chart's ConfigMap would set (gateway.md §8.3; templates/configmap.yaml):
//
//   - STARGATE_LAST_CLUSTER_{ENABLED,TTL,LOOKUP_TIMEOUT,LOCAL_MAX_ENTRIES}
//     from llmApiGateway.config.lastCluster.*, always rendered;
//   - RATE_LIMIT_ENABLED from llmApiGateway.config.rateLimitEnabled;
//   - when llmApiGateway.olric.enabled is truthy: OLRIC_ENABLED=true,
//     OLRIC_ENV, OLRIC_BIND_PORT, OLRIC_MEMBERLIST_BIND_PORT,
//     OLRIC_K8S_LABEL_SELECTOR (olric.k8sLabelSelector, or
//     app.kubernetes.io/name=<nameOverride>), OLRIC_REPLICA_COUNT,
//     OLRIC_PARTITION_COUNT, OLRIC_DMAP_NAME, OLRIC_STARTUP_TIMEOUT,
//     OLRIC_LOG_LEVEL, and POD_NAMESPACE (Downward API);
//   - METRICS_PORT from llmApiGateway.metrics.port when metrics.enabled.
//
// Values are rendered as Helm does (numbers through float64, YAML 1.1
// booleans; a null removes the default). A file that is not YAML, holds
// several documents or is not a mapping is a *SyntaxError with its
// position. A value of the wrong shape (a mapping where a scalar belongs,
// or a scalar or list where the chart reads a section such as
// llmApiGateway.config) is recorded in Env.Notes. It never panics.
func ParseValues(inputs ...NamedInput) (*Env, error) {
	vs := &valuesSet{}
	env := &Env{Kind: KindValues, Vars: map[string]Var{}}
	for _, in := range inputs {
		env.Files = append(env.Files, in.Name)
		if len(in.Data) > MaxInputBytes {
			return nil, &SyntaxError{Pos: Pos{File: in.Name}, Msg: fmt.Sprintf("larger than lcctl's %d-byte limit", MaxInputBytes)}
		}
		doc, err := decodeValues(in.Name, in.Data)
		if err != nil {
			return nil, err
		}
		if doc != nil {
			vs.docs = append(vs.docs, doc)
			vs.files = append(vs.files, in.Name)
		}
	}
	// A section the chart reads through (llmApiGateway.config, …) given as
	// a scalar or a list: Helm keeps the user's value over the chart's
	// table (coalesce only merges tables), and the templates then fail on
	// it (nil pointer evaluating …). The lookups below fall back to the
	// chart defaults, so without this note the file looked fine.
	var broken []string
	for _, sec := range valuesSections {
		if slices.ContainsFunc(broken, func(b string) bool { return strings.HasPrefix(sec, b+".") }) {
			continue // shadowed by the broken section around it
		}
		if n, file := vs.find(sec); n != nil && n.Kind != yaml.MappingNode && !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			broken = append(broken, sec)
			env.Notes = append(env.Notes, Problem{Severity: SeverityError, Category: CategoryValues, Name: sec,
				Pos:     Pos{File: file, Line: n.Line, Col: n.Column},
				Message: fmt.Sprintf("%s must be a mapping, not %s: Helm keeps it over the chart's defaults and the chart fails to render", sec, valueKind(n)),
				Hint:    fmt.Sprintf("write %s as a mapping of its settings, or remove it to keep the chart's defaults", sec)})
		}
	}
	put := func(name, path string, asInt64 bool) {
		h := vs.lookup(path)
		s, ok := h.render(asInt64)
		if !ok {
			env.Notes = append(env.Notes, Problem{Severity: SeverityError, Category: CategoryValues, Name: name, Pos: h.pos(),
				Message: fmt.Sprintf("%s must be a single value, not a %s (it renders %s)", path, kindName(h.node), name),
				Hint:    "set a scalar value"})
			s = ""
		}
		env.Vars[name] = Var{Name: name, Value: s, Pos: h.pos(), ValuesPath: path}
	}
	put("STARGATE_LAST_CLUSTER_ENABLED", "llmApiGateway.config.lastCluster.enabled", false)
	put("STARGATE_LAST_CLUSTER_TTL", "llmApiGateway.config.lastCluster.ttl", false)
	put("STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT", "llmApiGateway.config.lastCluster.lookupTimeout", false)
	put("STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES", "llmApiGateway.config.lastCluster.localMaxEntries", true)
	put("RATE_LIMIT_ENABLED", "llmApiGateway.config.rateLimitEnabled", false)
	olric := vs.lookup("llmApiGateway.olric.enabled")
	env.OlricSwitch = Var{Name: "OLRIC_ENABLED", Value: olric.asWritten(), Pos: olric.pos(), ValuesPath: olric.path}
	if olric.truthy() {
		if olric.node != nil && olric.node.Kind == yaml.ScalarNode {
			if s, isStr := scalarValue(olric.node).(string); isStr && strings.EqualFold(strings.TrimSpace(s), "false") {
				env.Notes = append(env.Notes, Problem{Severity: SeverityWarning, Category: CategoryOlric, Name: "OLRIC_ENABLED", Pos: olric.pos(),
					Message: fmt.Sprintf("llmApiGateway.olric.enabled is the string %q, which Helm treats as true: Olric is enabled", s),
					Hint:    "write enabled: false without quotes"})
			}
		}
		env.Vars["OLRIC_ENABLED"] = Var{Name: "OLRIC_ENABLED", Value: "true", Pos: olric.pos(), ValuesPath: olric.path}
		put("OLRIC_ENV", "llmApiGateway.olric.env", false)
		put("OLRIC_BIND_PORT", "llmApiGateway.olric.bindPort", false)
		put("OLRIC_MEMBERLIST_BIND_PORT", "llmApiGateway.olric.memberlistPort", false)
		put("OLRIC_REPLICA_COUNT", "llmApiGateway.olric.replicaCount", false)
		put("OLRIC_PARTITION_COUNT", "llmApiGateway.olric.partitionCount", false)
		put("OLRIC_DMAP_NAME", "llmApiGateway.olric.dmapName", false)
		put("OLRIC_STARTUP_TIMEOUT", "llmApiGateway.olric.startupTimeout", false)
		put("OLRIC_LOG_LEVEL", "llmApiGateway.olric.logLevel", false)
		sel := vs.lookup("llmApiGateway.olric.k8sLabelSelector")
		if s, ok := sel.render(false); ok && s != "" {
			env.Vars["OLRIC_K8S_LABEL_SELECTOR"] = Var{Name: "OLRIC_K8S_LABEL_SELECTOR", Value: s, Pos: sel.pos(), ValuesPath: sel.path}
		} else {
			nm := vs.lookup("llmApiGateway.nameOverride")
			name, _ := nm.render(false)
			if name == "" {
				name = "helm-nvcf-llm-api-gateway"
			}
			env.Vars["OLRIC_K8S_LABEL_SELECTOR"] = Var{Name: "OLRIC_K8S_LABEL_SELECTOR", Value: "app.kubernetes.io/name=" + name, Pos: nm.pos(), ValuesPath: nm.path}
		}
		env.Vars["POD_NAMESPACE"] = Var{Name: "POD_NAMESPACE", Value: "(downward API)", Pos: olric.pos(), ValuesPath: olric.path}
	}
	if m := vs.lookup("llmApiGateway.metrics.enabled"); m.truthy() {
		put("METRICS_PORT", "llmApiGateway.metrics.port", false)
	}
	rep := vs.lookup("llmApiGateway.replicaCount")
	env.ReplicasPos = rep.pos()
	if s, ok := rep.render(true); ok {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			env.Replicas = n
		}
	}
	return env, nil
}

func kindName(n *yaml.Node) string {
	if n == nil {
		return "value"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	}
	return "value"
}

func decodeValues(file string, data []byte) (*yaml.Node, error) {
	doc, err := yamldoc.Parse(data)
	if err != nil {
		e := yamldoc.SyntaxError(err, data)
		switch e.Kind {
		case yamldoc.Empty:
			return nil, nil
		case yamldoc.Syntax:
			return nil, &SyntaxError{Pos: Pos{File: file, Line: e.Line, Col: e.Col}, Msg: "not valid YAML: " + e.Msg}
		case yamldoc.MultiDoc:
			return nil, &SyntaxError{Pos: Pos{File: file, Line: e.Line}, Msg: "several YAML documents; a Helm values file holds one"}
		}
		return nil, &SyntaxError{Pos: Pos{File: file, Line: e.Line, Col: e.Col}, Msg: e.Msg}
	}
	nodes := []*yaml.Node{doc}
	root := nodes[0]
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	root = deref(root)
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &SyntaxError{Pos: Pos{File: file, Line: root.Line, Col: root.Column}, Msg: "a Helm values file must be a mapping"}
	}
	return root, nil
}
