// Package checks is lcctl's checklist model and renderer, in the style of
// `linkerd check`: a report is a list of groups, each holding check results
// with a status (ok, warn, fail, skip), a one-line reason, an optional hint
// telling the operator what to do, and optional detail lines. Text output
// marks results with ✔ ✖ ‼ and ○; JSON output follows the schema documented
// in docs/preflight.md ("lcctl.checks/v1").
package checks

import (
	"github.com/lcctl/lcctl/internal/ui"

	"fmt"
	"strings"
)

// Status is the outcome of one check.
type Status string

// The four outcomes. Only StatusFail makes a report fail; StatusWarn fails
// it under strict mode (Report.Failed).
const (
	// StatusOK means the check passed.
	StatusOK Status = "ok"
	// StatusWarn means the check found something worth a look that does not
	// block the rollout step.
	StatusWarn Status = "warn"
	// StatusFail means the check failed; the rollout step must not go on.
	StatusFail Status = "fail"
	// StatusSkip means the check did not run; Result.Reason says why (an
	// input flag was not given, or a check it depends on failed).
	StatusSkip Status = "skip"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusOK, StatusWarn, StatusFail, StatusSkip:
		return true
	}
	return false
}

// Result is one check's outcome.
type Result struct {
	// ID is the stable check identifier (e.g. "gateway.settings-valid"),
	// documented in docs/preflight.md. Several results may share an ID when
	// a check runs per subject (Subject tells them apart).
	ID string `json:"id"`
	// Subject names what a per-subject check looked at (a model), empty
	// otherwise.
	Subject string `json:"subject,omitempty"`
	// Title is the human sentence stating what must hold
	// ("Olric is reachable").
	Title string `json:"title"`
	// Status is the outcome.
	Status Status `json:"status"`
	// Reason is a one-line explanation: what failed, what was measured, or
	// why the check was skipped. May be empty for a plain pass.
	Reason string `json:"reason,omitempty"`
	// Hint tells the operator what to do about a fail or warn; empty for ok
	// and skip.
	Hint string `json:"hint,omitempty"`
	// Details are extra lines (one finding each, with file:line where the
	// finding has a position).
	Details []string `json:"details,omitempty"`
}

// OK returns a passing result.
func OK(id, title, reason string) Result {
	return Result{ID: id, Title: title, Status: StatusOK, Reason: reason}
}

// Fail returns a failing result with a hint.
func Fail(id, title, reason, hint string) Result {
	return Result{ID: id, Title: title, Status: StatusFail, Reason: reason, Hint: hint}
}

// Warn returns a warning result with a hint.
func Warn(id, title, reason, hint string) Result {
	return Result{ID: id, Title: title, Status: StatusWarn, Reason: reason, Hint: hint}
}

// Skip returns a skipped result; reason must say why (a missing input, a
// failed prerequisite).
func Skip(id, title, reason string) Result {
	return Result{ID: id, Title: title, Status: StatusSkip, Reason: reason}
}

// WithSubject returns r with Subject set and the subject appended to the
// title in brackets, shortened there as ui.EchoLabel does (Subject keeps
// it exact).
func (r Result) WithSubject(subject string) Result {
	r.Subject = subject
	if subject != "" {
		r.Title = r.Title + " [" + ui.EchoLabel(subject) + "]"
	}
	return r
}

// WithDetails returns r with lines appended to Details.
func (r Result) WithDetails(lines ...string) Result {
	r.Details = append(append([]string(nil), r.Details...), lines...)
	return r
}

// Group is a named set of results, rendered under one heading.
type Group struct {
	// Name is the heading ("gateway settings").
	Name string `json:"name"`
	// Checks are the results in run order.
	Checks []Result `json:"checks"`
}

// Add appends results to the group.
func (g *Group) Add(rs ...Result) { g.Checks = append(g.Checks, rs...) }

// Summary counts results by status.
type Summary struct {
	OK   int `json:"ok"`   // passed
	Warn int `json:"warn"` // warned
	Fail int `json:"fail"` // failed
	Skip int `json:"skip"` // skipped
}

// Report is a whole checklist.
type Report struct {
	// Groups in display order. Empty groups are kept in JSON and omitted in
	// text.
	Groups []*Group
}

// Group returns the group called name, appending a new one when absent.
func (r *Report) Group(name string) *Group {
	for _, g := range r.Groups {
		if g.Name == name {
			return g
		}
	}
	g := &Group{Name: name}
	r.Groups = append(r.Groups, g)
	return g
}

// Results returns every result in display order.
func (r *Report) Results() []Result {
	var out []Result
	for _, g := range r.Groups {
		out = append(out, g.Checks...)
	}
	return out
}

// Summary counts the report's results by status.
func (r *Report) Summary() Summary {
	var s Summary
	for _, g := range r.Groups {
		for i := range g.Checks {
			s.add(g.Checks[i].Status)
		}
	}
	return s
}

func (s *Summary) add(status Status) {
	switch status {
	case StatusOK:
		s.OK++
	case StatusWarn:
		s.Warn++
	case StatusFail:
		s.Fail++
	case StatusSkip:
		s.Skip++
	}
}

// Failed reports whether any result failed, or, when strict is true, any
// result failed or warned. Skipped checks never fail a report.
func (r *Report) Failed(strict bool) bool {
	s := r.Summary()
	return s.Fail > 0 || (strict && s.Warn > 0)
}

// Find returns the results with the given ID, in display order.
func (r *Report) Find(id string) []Result {
	var out []Result
	for _, res := range r.Results() {
		if res.ID == id {
			out = append(out, res)
		}
	}
	return out
}

// Validate checks the report's invariants: every result has an ID, a title
// and a valid status; a skip has a reason; a fail has a hint. Renderers do
// not call it; tests do, so every check lcctl defines keeps the contract.
func (r *Report) Validate() error {
	var problems []string
	for _, g := range r.Groups {
		for i, res := range g.Checks {
			where := fmt.Sprintf("%s[%d] %q", g.Name, i, res.ID)
			switch {
			case res.ID == "":
				problems = append(problems, where+": empty id")
			case res.Title == "":
				problems = append(problems, where+": empty title")
			case !res.Status.Valid():
				problems = append(problems, fmt.Sprintf("%s: invalid status %q", where, res.Status))
			case res.Status == StatusSkip && res.Reason == "":
				problems = append(problems, where+": skip without a reason")
			case res.Status == StatusFail && res.Hint == "":
				problems = append(problems, where+": fail without a hint")
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid report: %s", strings.Join(problems, "; "))
	}
	return nil
}
