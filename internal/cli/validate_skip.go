package cli

import (
	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// validateSkip is a file or directory `lcctl validate` did not check, in
// the JSON output's "skipped" array (docs/validate.md).
type validateSkip struct {
	// File is the path, below a directory argument.
	File string `json:"file"`
	// Reason says what the file is instead of an lb-config, or that the
	// directory holds no .json/.yaml/.yml file.
	Reason string `json:"reason"`
}

// otherInputKind tells whether a file found by searching a directory
// argument is another lcctl input rather than an lb-config: it returns a
// description of that input ("a routing snapshot (lcctl explain
// --snapshot)"), or "" when the file must be checked as an lb-config.
//
// A file is another input only when it decodes cleanly as one of lcctl's
// own formats (a snapshot, a snapshot overlay, a case file, a simulation
// scenario) or is the
// gateway's Helm values (a top-level llmApiGateway key), and its top level
// has none of the lb-config fields default, request_algorithms and models
// (lb-config.md §3). So a broken or misspelt lb-config is never skipped: it
// decodes as none of those and is checked, and reported, as usual. Files
// the user names are always checked; only directory searches skip.
func otherInputKind(name string, data []byte) string {
	doc, err := yamldoc.Parse(data)
	if err != nil || len(doc.Content) != 1 {
		return "" // not YAML, or several documents: not one of lcctl's formats
	}
	top := doc.Content[0]
	switch top.Kind {
	case yaml.MappingNode:
		if len(top.Content) == 0 {
			return "" // {} is an lb-config with every default
		}
		for i := 0; i+1 < len(top.Content); i += 2 {
			if lb.IsTopLevelField(top.Content[i].Value) {
				return ""
			}
		}
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value == "llmApiGateway" {
				return "gateway Helm values (lcctl preflight --gateway-values)"
			}
		}
		if _, err := formats.DecodeSnapshot(name, data); err == nil {
			return "a routing snapshot (lcctl explain --snapshot)"
		}
		if _, err := live.DecodeOverlay(name, data); err == nil {
			return "a snapshot overlay (lcctl snapshot --overlay)"
		}
		if _, err := sim.ParseScenario(name, data); err == nil {
			return "a simulation scenario (lcctl simulate --scenario)"
		}
	case yaml.SequenceNode:
	default:
		return ""
	}
	if cases, err := formats.DecodeCases(name, data); err == nil && len(cases) > 0 {
		return "a case file (lcctl explain --case)"
	}
	return ""
}
