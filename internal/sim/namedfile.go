package sim

import (
	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// notAnLBConfig returns an error when a file the scenario names as an
// lb-config (router.config, policies[].lb_config) is not one at all, or
// nil when it is one (valid or not: its own errors are then reported as
// usual). The error says what the file is instead without quoting any of
// its content: a scenario can name any file (router: {config:
// /etc/shadow}), and an lb-config error would print its first line. A
// file is taken for an lb-config when it parses as JSON or YAML and its
// top level is a mapping that is empty or has default, request_algorithms
// or models (lb-config.md §3), as validate's looks-like note decides.
// The error is fail's: sc.FieldError, placed at the scenario field that
// names the file (scenario.yaml:L:C: router.config: …).
func notAnLBConfig(fail func(format string, args ...any) error, file string, data []byte, r *validate.Result) error {
	for _, d := range r.Errors() {
		if d.Code == validate.CodeSyntax {
			return fail("%s is not an lb-config: it is not JSON or YAML (line %d; its content is not shown, run 'lcctl validate' on it for details)", file, d.Line)
		}
	}
	doc, err := yamldoc.Parse(data)
	if err != nil || len(doc.Content) != 1 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return fail("%s is not an lb-config: its top level is %s, not a mapping (its content is not shown)", file, nodeKindName(top))
	}
	if len(top.Content) == 0 {
		return nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if lb.IsTopLevelField(top.Content[i].Value) {
			return nil
		}
	}
	return fail("%s is not an lb-config: its top level has none of default, request_algorithms and models (its content is not shown)", file)
}

// nodeKindName names a YAML node's kind for an error message.
func nodeKindName(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return "null"
	case n.Kind == yaml.ScalarNode:
		return "a scalar"
	default:
		return "not a mapping"
	}
}
