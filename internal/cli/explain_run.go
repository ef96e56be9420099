package cli

import (
	"github.com/lcctl/lcctl/internal/explain"
	"github.com/lcctl/lcctl/internal/lb"
)

// explainInputs is everything one explained request needs besides the
// configuration.
type explainInputs struct {
	snap       *lb.Snapshot
	req        lb.Request       // parsed headers plus elapsed, exclusions, pinned state
	routingErr *lb.RoutingError // a 400 from the headers
	configFile string
	algObject  bool
	headers    HeaderLines // as given, defaults added
}

// decideRun is explain.DecideRun for the gathered inputs.
func decideRun(in *explainInputs, cfg *lb.Config, label string, mutate func(*lb.AlgorithmConfig)) explain.Run {
	return explain.DecideRun(&explain.RunInput{Snapshot: in.snap, Request: in.req, RoutingError: in.routingErr,
		ConfigFile: in.configFile, AlgorithmObject: in.algObject}, cfg, label, mutate)
}
