package explain

// The run of one explained request: resolution, the first decision and
// the timeline of later decisions (moved here from internal/cli so that
// the command only gathers inputs and renders).

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/lb"
)

// seed seeds the sampling source so a printed decision is
// reproducible; the report also lists every possible choice with its
// exact probability, so nothing depends on the draw.
const seed = 0x6c636374

// MaxTimelineSteps bounds a timeline (decisions). Change points are the affinity
// deadline, bucket unlocks (at most one per candidate and phase) and band
// openings (logarithmic in the number of candidates), so real timelines
// are far shorter.
const MaxTimelineSteps = 256

// RunInput is one request to explain besides the configuration.
type RunInput struct {
	// Snapshot is the routing snapshot the engine decides on.
	Snapshot *lb.Snapshot
	// Request is the parsed request: headers plus elapsed time,
	// exclusions and pinned session state.
	Request lb.Request
	// RoutingError is the 400 the proxy answers for the headers before
	// routing (nil when they are acceptable).
	RoutingError *lb.RoutingError
	// ConfigFile names the lb-config ("" for the built-in default).
	ConfigFile string
	// AlgorithmObject is set when the config is one algorithm object
	// (--algorithm-config): entry paths are relative to it.
	AlgorithmObject bool
}

// DecideRun resolves the effective algorithm in cfg for the request and
// runs the engine at the request's elapsed time and at every later change
// point: the retry time each wait reports (the affinity deadline, the
// next bucket unlock or band), up to a dispatch, a reject or the wait
// budget. The session classification of the first decision is pinned for
// the later ones (session.md §3). mutate, when set, edits the effective
// algorithm entry (--compare flag).
//
// The engine's sampling source is seeded with a constant, so a printed
// decision is reproducible; the report also lists every possible choice
// with its exact probability. The run is pure: no I/O.
func DecideRun(in *RunInput, cfg *lb.Config, label string, mutate func(*lb.AlgorithmConfig)) Run {
	run := Run{Label: label}
	run.Resolution.ConfigFile = in.ConfigFile
	run.Resolution.AlgorithmConfigFile = in.AlgorithmObject
	if in.Request.RoutingMethod.Set {
		m := in.Request.RoutingMethod.Value
		run.Resolution.RoutingMethod = &m
	}
	if in.RoutingError != nil {
		run.Decision = errorDecision(in.Request.Elapsed, in.RoutingError)
		return run
	}
	cfgp, res, err := cfg.Resolve(in.Request.Model, in.Request.RoutingMethod)
	run.Resolution.ModelEntry = res.Model != ""
	run.Resolution.Expression = expressionOf(res)
	if err != nil {
		var re *lb.RoutingError
		if !errors.As(err, &re) {
			re = &lb.RoutingError{Status: 400, Code: "invalid_request", Message: err.Error()}
		}
		run.Decision = errorDecision(in.Request.Elapsed, re)
		return run
	}
	ac := *cfgp
	ac.RequestAlgorithms = nil
	if mutate != nil {
		mutate(&ac)
	}
	run.Config = &ac
	run.Resolution.Algorithm = ac.Algorithm
	run.Resolution.Spelling = ac.Spelling
	run.Resolution.Rule = string(res.Source)
	run.Resolution.Path = entryPath(res, in.AlgorithmObject)
	run.Resolution.Parameters = res.Parameters

	e := lb.NewEngine(&ac)
	rng := rand.New(rand.NewPCG(seed, seed))
	req := in.Request
	first := e.Step(in.Snapshot, &req, rng, lb.Options{Trace: true, Probabilities: true})
	first.Decision = first.Decision.Clone()
	run.Decision = NewDecision(&first, in.Snapshot, req.Elapsed, true)

	steps, truncated := followWaits(e, in.Snapshot, req, first, rng)
	run.TimelineTruncated = truncated
	for i := range steps {
		run.Timeline = append(run.Timeline, NewDecision(&steps[i].step, in.Snapshot, steps[i].at, false))
	}
	if first.Outcome == lb.OutcomeWait && len(run.Timeline) > 1 {
		then := run.Timeline[1]
		run.Then = &then
	}
	return run
}

type timedStep struct {
	at   time.Duration
	step lb.Step
}

// followWaits returns first and the decisions at each later change point.
// A timed wait continues at its retry time; the generic capacity retry of
// an explicit x-max-wait-ms continues at its deadline (with an unchanged
// snapshot nothing becomes selectable in between).
func followWaits(e *lb.Engine, snap *lb.Snapshot, req lb.Request, first lb.Step, rng lb.Rand) ([]timedStep, bool) {
	steps := []timedStep{{at: req.Elapsed, step: first}}
	pinned := req.FirstClassification
	if pinned == lb.SessionNone && first.Balanced {
		pinned = first.Decision.Session
	}
	cur := first
	t := req.Elapsed
	for len(steps) < MaxTimelineSteps {
		if cur.Outcome != lb.OutcomeWait {
			return steps, false
		}
		next := cur.RetryAt
		if cur.GenericRetry {
			if !cur.HasRetryDeadline {
				return steps, false
			}
			next = cur.RetryDeadline
		}
		if next <= t {
			return steps, false
		}
		t = next
		r := req
		r.Elapsed = t
		r.FirstClassification = pinned
		cur = e.Step(snap, &r, rng, lb.Options{Probabilities: true})
		cur.Decision = cur.Decision.Clone()
		steps = append(steps, timedStep{at: t, step: cur})
	}
	return steps, cur.Outcome == lb.OutcomeWait
}

// errorDecision is the 400 the proxy answers before routing.
func errorDecision(elapsed time.Duration, e *lb.RoutingError) Decision {
	msg := e.Message
	if e.Header != "" && !strings.Contains(msg, e.Header) {
		msg = e.Header + ": " + msg
	}
	d := Decision{
		ElapsedMs:  lb.DurationMs(elapsed),
		Outcome:    lb.OutcomeError,
		HTTPStatus: e.Status,
		Code:       e.Code,
		Message:    msg,
	}
	if e.Header == "x-routing-method" {
		d.Rejection = &Rejection{Status: e.Status, ErrorCode: e.Code, Rule: e.Rule, Requested: e.Requested, Body: json.RawMessage(e.Body())}
	}
	return d
}

// expressionOf describes the routing expression of a resolution: every
// parameter, with the field's value before and after the overlay for those
// the overlay reached.
func expressionOf(res lb.Resolution) *Expression {
	e := res.Expression
	if e == nil {
		return nil
	}
	x := &Expression{Token: e.Token, Algorithm: e.Algorithm.String(), Parameters: []ExpressionParam{}}
	for i, p := range e.Params {
		ep := ExpressionParam{Key: p.Key, Value: p.Value.Raw, Type: p.Value.Kind.String()}
		if i < len(res.Changes) {
			ch := res.Changes[i]
			ep.Before, ep.After = &ch.Before, &ch.After
		}
		x.Parameters = append(x.Parameters, ep)
	}
	return x
}

// entryPath locates the effective entry in the lb-config from the rule
// that chose it (lb-config.md §10); paths inside an --algorithm-config
// object are relative to the object.
func entryPath(res lb.Resolution, algObject bool) string {
	model := lb.TopLevelModels + "[" + strconv.Quote(res.Model) + "]"
	alg := lb.FieldRequestAlgorithms.Name + "[" + strconv.Quote(res.Algorithm.String()) + "]"
	switch {
	case res.Source == lb.SourceModelRequestAlgorithms:
		if algObject {
			return alg
		}
		return model + "." + alg
	case res.Source.RequestAlgorithms():
		return alg
	case res.Model == "":
		return lb.TopLevelDefault
	case algObject:
		return ""
	}
	return model
}
