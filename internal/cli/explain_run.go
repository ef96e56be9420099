package cli

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/explain"
	"github.com/lcctl/lcctl/internal/lb"
)

// explainSeed seeds the sampling source so a printed decision is
// reproducible; the report also lists every possible choice with its
// exact probability, so nothing depends on the draw.
const explainSeed = 0x6c636374

// maxTimelineSteps bounds a timeline. Change points are the affinity
// deadline, bucket unlocks (at most one per candidate and phase) and band
// openings (logarithmic in the number of candidates), so real timelines
// are far shorter.
const maxTimelineSteps = 256

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

// decideRun resolves the effective algorithm in cfg for the request and
// runs the engine at the request's elapsed time and at every later change
// point: the retry time each wait reports (the affinity deadline, the
// next bucket unlock or band), up to a dispatch, a reject or the wait
// budget. The session classification of the first decision is pinned for
// the later ones (session.md §3). mutate, when set, edits the effective
// algorithm entry (--compare flag).
func decideRun(in *explainInputs, cfg *lb.Config, label string, mutate func(*lb.AlgorithmConfig)) explain.Run {
	run := explain.Run{Label: label}
	run.Resolution.ConfigFile = in.configFile
	run.Resolution.AlgorithmConfigFile = in.algObject
	if in.req.RoutingMethod.Set {
		m := in.req.RoutingMethod.Value
		run.Resolution.RoutingMethod = &m
	}
	if in.routingErr != nil {
		run.Decision = errorDecision(in.req.Elapsed, in.routingErr)
		return run
	}
	cfgp, res, err := cfg.Resolve(in.req.Model, in.req.RoutingMethod)
	run.Resolution.ModelEntry = res.Model != ""
	run.Resolution.Expression = expressionOf(res)
	if err != nil {
		var re *lb.RoutingError
		if !errors.As(err, &re) {
			re = &lb.RoutingError{Status: 400, Code: "invalid_request", Message: err.Error()}
		}
		run.Decision = errorDecision(in.req.Elapsed, re)
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
	run.Resolution.Rule = res.Source
	run.Resolution.Path = entryPath(res, in.algObject)
	run.Resolution.Parameters = res.Parameters

	e := lb.NewEngine(&ac)
	rng := rand.New(rand.NewPCG(explainSeed, explainSeed))
	req := in.req
	first := e.Step(in.snap, &req, rng, lb.Options{Trace: true, Probabilities: true})
	first.Decision = first.Decision.Clone()
	run.Decision = explain.NewDecision(&first, in.snap, req.Elapsed, true)

	steps, truncated := followWaits(e, in.snap, req, first, rng)
	run.TimelineTruncated = truncated
	for i := range steps {
		run.Timeline = append(run.Timeline, explain.NewDecision(&steps[i].step, in.snap, steps[i].at, false))
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
	for len(steps) < maxTimelineSteps {
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
func errorDecision(elapsed time.Duration, e *lb.RoutingError) explain.Decision {
	msg := e.Message
	if e.Header != "" && !strings.Contains(msg, e.Header) {
		msg = e.Header + ": " + msg
	}
	d := explain.Decision{
		ElapsedMs:  lb.DurationMs(elapsed),
		Outcome:    lb.OutcomeError,
		HTTPStatus: e.Status,
		Code:       e.Code,
		Message:    msg,
	}
	if e.Header == "x-routing-method" {
		d.Rejection = &explain.Rejection{Status: e.Status, ErrorCode: e.Code, Rule: e.Rule, Requested: e.Requested, Body: json.RawMessage(e.Body())}
	}
	return d
}

// expressionOf describes the routing expression of a resolution: every
// parameter, with the field's value before and after the overlay for those
// the overlay reached.
func expressionOf(res lb.Resolution) *explain.Expression {
	e := res.Expression
	if e == nil {
		return nil
	}
	x := &explain.Expression{Token: e.Token, Algorithm: e.Algorithm.String(), Parameters: []explain.ExpressionParam{}}
	for i, p := range e.Params {
		ep := explain.ExpressionParam{Key: p.Key, Value: p.Value.Raw, Type: p.Value.Kind.String()}
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
	model := "models[" + strconv.Quote(res.Model) + "]"
	alg := "request_algorithms[" + strconv.Quote(res.Algorithm.String()) + "]"
	switch {
	case strings.HasPrefix(res.Source, "E3.2 model"):
		if algObject {
			return alg
		}
		return model + "." + alg
	case strings.HasPrefix(res.Source, "E3.2") || strings.HasPrefix(res.Source, "E3.3"):
		return alg
	case res.Model == "":
		return "default"
	case algObject:
		return ""
	}
	return model
}
