package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lcctl/lcctl/internal/conformance"
	"github.com/lcctl/lcctl/internal/explain"
	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/lb"
)

// caseJSON is one case of `lcctl explain --case --output json`.
type caseJSON struct {
	Name       string            `json:"name"`
	Pass       bool              `json:"pass"`
	Mismatches []string          `json:"mismatches"`
	Valid      *bool             `json:"valid,omitempty"`
	Error      string            `json:"error,omitempty"`
	Decision   *explain.Decision `json:"decision"`
}

// casesJSON is the whole --case JSON output.
type casesJSON struct {
	Cases  []caseJSON `json:"cases"`
	Passed int        `json:"passed"`
	Total  int        `json:"total"`
}

// runExplainCases is `lcctl explain --case FILE [--check]`: every case of
// a conformance file (formats.md) evaluated by internal/conformance. One
// case is explained in full; several are summarised one line each. With
// --check a case whose expect block does not hold makes the exit status 1.
func runExplainCases(o *explainOptions, env *Env) error {
	for _, f := range []string{"config", "algorithm-config", "snapshot", "header", "elapsed", "exclude", "first-classification", "compare"} {
		if o.changed != nil && o.changed(f) {
			return Usagef("--case takes config, request and snapshot from the case file; --%s cannot be combined with it", f)
		}
	}
	for _, hf := range headerFlags {
		if o.changed != nil && o.changed(hf.flag) {
			return Usagef("--case takes the request from the case file; --%s cannot be combined with it", hf.flag)
		}
	}
	data, err := explainReadFile(env, o.Case, "case file")
	if err != nil {
		return UsageErr(err)
	}
	cases, err := formats.DecodeCases(o.Case, data)
	if err != nil {
		return UsageErr(err)
	}
	out := casesJSON{Cases: []caseJSON{}}
	results := make([]*conformance.Result, len(cases))
	for i, c := range cases {
		r := conformance.Evaluate(c)
		results[i] = r
		cj := caseJSON{Name: c.Name, Pass: r.Pass(), Mismatches: r.Mismatches, Error: r.Error}
		if cj.Mismatches == nil {
			cj.Mismatches = []string{}
		}
		if c.ConfigOnly() {
			v := r.Valid
			cj.Valid = &v
		} else if r.Step != nil {
			d := explain.NewDecision(r.Step, c.Snapshot, c.Request.Elapsed, true)
			cj.Decision = &d
		} else {
			d := explain.Decision{ElapsedMs: lb.DurationMs(c.Request.Elapsed), Outcome: lb.OutcomeError, HTTPStatus: 400,
				Code: "invalid_config", Message: r.Error}
			cj.Decision = &d
		}
		if cj.Pass {
			out.Passed++
		}
		out.Cases = append(out.Cases, cj)
	}
	out.Total = len(out.Cases)
	if env.Global.JSON() {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "%s\n", b)
	} else if len(cases) == 1 && !cases[0].ConfigOnly() && results[0].Step != nil {
		rep := caseReport(o.Case, cases[0], results[0])
		if err := explain.Text(env.Out, rep, env.Style, explain.Options{Width: explainWidth(o, env)}); err != nil {
			return err
		}
		if o.Check {
			printCaseVerdict(env, &out.Cases[0])
		}
	} else {
		for i := range out.Cases {
			cj := &out.Cases[i]
			line := cj.Name + ": "
			switch {
			case cj.Valid != nil && *cj.Valid:
				line += "config valid"
			case cj.Valid != nil:
				line += "config invalid: " + cj.Error
			default:
				line += caseSummary(cj.Decision)
			}
			fmt.Fprintln(env.Out, line)
			if o.Check {
				printCaseVerdict(env, cj)
			}
		}
	}
	if o.Check {
		if !env.Global.JSON() {
			fmt.Fprintf(env.Out, "%d of %d cases pass\n", out.Passed, out.Total)
		}
		if out.Passed != out.Total {
			return ErrFindings
		}
	}
	return nil
}

func printCaseVerdict(env *Env, cj *caseJSON) {
	if cj.Pass {
		fmt.Fprintln(env.Out, "  "+env.Style.OK.Render("PASS"))
		return
	}
	fmt.Fprintln(env.Out, "  "+env.Style.Error.Render("FAIL"))
	for _, m := range cj.Mismatches {
		fmt.Fprintln(env.Out, "    - "+m)
	}
}

func caseSummary(d *explain.Decision) string {
	if d == nil {
		return "no decision"
	}
	s := d.Outcome.String()
	switch d.Outcome {
	case lb.OutcomeDispatch:
		if len(d.Choices) > 1 {
			var ids []string
			for _, c := range d.Choices {
				ids = append(ids, c.ClusterID+" "+c.Fraction)
			}
			s += " to one of " + strings.Join(ids, ", ")
		} else {
			s += " to " + d.Cluster + fmt.Sprintf(" (rank depth %d)", d.RankDepth)
		}
	case lb.OutcomeWait:
		if d.RetryAtMs != nil {
			s += fmt.Sprintf(" until %v ms", float64(*d.RetryAtMs))
		}
	default:
		if d.Code != "" {
			s += " " + d.Code
		}
	}
	if d.SessionState != nil {
		s += ", session " + *d.SessionState
	}
	return s
}

// caseReport builds the report of one decision case for full rendering.
func caseReport(file string, c *formats.Case, r *conformance.Result) *explain.Report {
	req := c.Request
	model, _ := lb.HeaderString(req.Model)
	in := &explainInputs{snap: c.Snapshot, req: *req, configFile: file, algObject: true}
	rep := &explain.Report{Model: model, Snapshot: explain.NewSnapshot(c.Snapshot), Request: requestView(in)}
	cfg := *c.Config
	rep.Run = explain.Run{Label: c.Name, Config: &cfg,
		Resolution: explain.Resolution{ConfigFile: file, AlgorithmConfigFile: true, Algorithm: cfg.Algorithm,
			Spelling: cfg.Spelling, Source: lb.SourceModelEntry, Rule: lb.SourceModelEntry.Rule()},
		Decision: explain.NewDecision(r.Step, c.Snapshot, req.Elapsed, true)}
	rep.Notes = append(rep.Notes, "case "+c.Name)
	return rep
}
