package cli

import "github.com/lcctl/lcctl/internal/explain"

// explainInputs is everything one explained request needs besides the
// configuration: the engine's inputs (explain.RunInput, run through
// explain.DecideRun) and the request headers as given, defaults added.
type explainInputs struct {
	explain.RunInput
	headers HeaderLines
}
