package explain

import (
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

// entryPath names the effective entry from the typed resolution rule.
func TestEntryPath(t *testing.T) {
	for _, c := range []struct {
		res       lb.Resolution
		algObject bool
		want      string
	}{
		{lb.Resolution{Source: lb.SourceDefault}, false, "default"},
		{lb.Resolution{Source: lb.SourceModelEntry, Model: "m"}, false, `models["m"]`},
		{lb.Resolution{Source: lb.SourceModelEntry, Model: "m"}, true, ""},
		{lb.Resolution{Source: lb.SourceOwnAlgorithm, Model: "m", Algorithm: lb.Pulsar}, false, `models["m"]`},
		{lb.Resolution{Source: lb.SourceModelRequestAlgorithms, Model: "m", Algorithm: lb.Pulsar}, false, `models["m"].request_algorithms["pulsar"]`},
		{lb.Resolution{Source: lb.SourceModelRequestAlgorithms, Model: "m", Algorithm: lb.Pulsar}, true, `request_algorithms["pulsar"]`},
		{lb.Resolution{Source: lb.SourceRequestAlgorithms, Algorithm: lb.Pulsar}, false, `request_algorithms["pulsar"]`},
		{lb.Resolution{Source: lb.SourceFallbackRequestAlgorithms, Model: "m", Algorithm: lb.Pulsar}, false, `request_algorithms["pulsar"]`},
	} {
		if got := entryPath(c.res, c.algObject); got != c.want {
			t.Errorf("%s (model %q, object %v): %q, want %q", c.res.Source, c.res.Model, c.algObject, got, c.want)
		}
	}
}

// A wait is followed to the dispatch that ends it, with the first
// decision's session classification pinned.
func TestDecideRunTimeline(t *testing.T) {
	cfg := &lb.Config{Default: lb.WaitAndWiden, Models: map[string]*lb.AlgorithmConfig{}}
	snap := snapshot(cluster{id: "A", rttMs: 1, tps: 100}, cluster{id: "B", rttMs: 1, tps: 100})
	run := DecideRun(&RunInput{Snapshot: snap, Request: lb.Request{Model: "model-a"}}, cfg, "", nil)
	if run.Config == nil || run.Resolution.Rule != string(lb.SourceDefault) || len(run.Timeline) == 0 {
		t.Fatalf("run %+v", run)
	}
	last := run.Timeline[len(run.Timeline)-1]
	if last.Outcome == lb.OutcomeWait && !run.TimelineTruncated {
		t.Fatalf("timeline ends in a wait without being truncated: %+v", last)
	}
	re := &lb.RoutingError{Status: 400, Code: "invalid_header", Header: "x-k", Message: "bad"}
	if r := DecideRun(&RunInput{Snapshot: snap, RoutingError: re}, cfg, "", nil); r.Decision.Outcome != lb.OutcomeError || r.Decision.Message != "x-k: bad" || r.Config != nil {
		t.Fatalf("routing error: %+v", r.Decision)
	}
}
