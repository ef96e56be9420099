package cli

import (
	_ "embed"
	"io"
)

// simulateTemplate is the commented scenario `lcctl simulate --template`
// prints: every field of the scenario format (docs/simulate.md, "Scenario
// file") with its unit and default. TestSimulateTemplateParses checks that
// it is a valid scenario that runs.
//
//go:embed simulate_template.yaml
var simulateTemplate string

// printSimulateTemplate writes the template to w.
func printSimulateTemplate(w io.Writer) error {
	_, err := io.WriteString(w, simulateTemplate)
	return err
}
