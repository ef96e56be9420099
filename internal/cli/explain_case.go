package cli

import (
	"fmt"
	"strings"

	"github.com/lcctl/lcctl/internal/conformance"
	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/ui"
)

// explainReport is the JSON output of explain --case.
type explainReport struct {
	Cases  []explainCase `json:"cases"`
	Passed int           `json:"passed"`
	Total  int           `json:"total"`
}

type explainCase struct {
	Name       string          `json:"name"`
	Line       int             `json:"line"`
	Pass       bool            `json:"pass"`
	Mismatches []string        `json:"mismatches"`
	Decision   decisionSummary `json:"decision"`
}

// decisionSummary is the documented JSON form of one case's decision.
type decisionSummary struct {
	// Valid is set for config-only cases.
	Valid *bool `json:"valid,omitempty"`
	// Outcome is dispatch, wait, reject or error ("" for config cases).
	Outcome   string `json:"outcome,omitempty"`
	Algorithm string `json:"algorithm,omitempty"`
	// Cluster is the chosen cluster (dispatch).
	Cluster   *string `json:"cluster"`
	RankDepth int     `json:"rank_depth,omitempty"`
	// SelectedAfterKVFreeTokensSkip as in formats.md.
	SelectedAfterKVFreeTokensSkip bool `json:"selected_after_kv_free_tokens_skip"`
	// RetryAtMs is the elapsed time at which selection runs again (wait).
	RetryAtMs    *float64 `json:"retry_at_ms,omitempty"`
	GenericRetry bool     `json:"generic_retry,omitempty"`
	// LBDecision is the load balancer's own decision kind and wait.
	LBDecision string   `json:"lb_decision,omitempty"`
	LBWaitMs   *float64 `json:"lb_wait_ms,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// SessionState is null when not classified.
	SessionState  *string  `json:"session_state"`
	Promoted      bool     `json:"promoted"`
	OriginalOrder []string `json:"original_order,omitempty"`
	AffinityOrder []string `json:"affinity_order,omitempty"`
	AffinityGroup []string `json:"affinity_group,omitempty"`
	OpenSet       []string `json:"open_set,omitempty"`
	// Choices are every cluster sampling could have chosen, with exact
	// probabilities.
	Choices      []lb.Choice `json:"choices,omitempty"`
	ChoicesExact bool        `json:"choices_exact,omitempty"`
	Ambiguous    bool        `json:"ambiguous_ranking,omitempty"`
	HTTPStatus   int         `json:"http_status,omitempty"`
	Code         string      `json:"code,omitempty"`
	Error        string      `json:"error,omitempty"`
	Message      string      `json:"message,omitempty"`
	Trace        *lb.Trace   `json:"trace,omitempty"`
	// NotCandidates lists the snapshot's clusters whose status keeps them
	// out of the candidate slice, as "ID (inactive)" or "ID (unknown)".
	NotCandidates []string `json:"not_candidates,omitempty"`
}

// validateCases refuses the explain flags --case cannot be combined with
// (explainOptions.validate).
func (o *explainOptions) validateCases() error {
	for _, f := range []string{"config", "algorithm-config", "snapshot", "header", "elapsed", "exclude",
		"first-classification", "compare", "timeline"} {
		if o.changed(f) {
			return Usagef("--case takes config, request and snapshot from the case file; --%s cannot be combined with it", f)
		}
	}
	for _, hf := range headerFlags {
		if o.changed(hf.flag) {
			return Usagef("--case takes the request from the case file; --%s cannot be combined with it", hf.flag)
		}
	}
	return nil
}

// runExplainCases is `lcctl explain --case FILE [--check]`: every case of a
// conformance file (formats.md) evaluated by internal/conformance, printed
// per case; with --check a case whose expect block does not hold makes the
// exit status 1. The request, snapshot and config come from the file, so
// the other explain inputs cannot be combined with --case.
func runExplainCases(o *explainOptions, env *Env) error {
	name := o.Case
	data, err := readFlagInput(env, "case", name, caseInputLimit)
	if err != nil {
		return UsageErr(err)
	}
	cases, err := formats.DecodeCases(name, data)
	if err != nil {
		return UsageErr(err)
	}
	if len(cases) == 0 {
		// An empty list would "pass" --check with 0 of 0 cases.
		return Usagef("%s: no cases (the file is an empty list)", name)
	}
	rep := explainReport{Cases: []explainCase{}}
	results := make([]*conformance.Result, 0, len(cases))
	for _, c := range cases {
		r := conformance.Evaluate(c)
		results = append(results, r)
		ec := explainCase{Name: c.Name, Line: c.Line, Pass: r.Pass(), Mismatches: r.Mismatches, Decision: summarize(r)}
		if ec.Mismatches == nil {
			ec.Mismatches = []string{}
		}
		rep.Cases = append(rep.Cases, ec)
		rep.Total++
		if r.Pass() {
			rep.Passed++
		}
	}
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "explain-cases", rep); err != nil {
			return err
		}
	} else {
		for i, r := range results {
			writeCaseText(env, name, r, o.Check)
			if i < len(results)-1 {
				fmt.Fprintln(env.Out)
			}
		}
		if o.Check {
			fmt.Fprintf(env.Out, "\n%d of %d cases passed\n", rep.Passed, rep.Total)
		}
	}
	if o.Check && rep.Passed != rep.Total {
		return ErrFindings
	}
	return nil
}

// caseInputLimit bounds a case file (bytes).
const caseInputLimit = 64 << 20

func summarize(r *conformance.Result) decisionSummary {
	var s decisionSummary
	c := r.Case
	if c.ConfigOnly() {
		v := r.Valid
		s.Valid = &v
		s.Error = r.Error
		return s
	}
	s.Outcome = r.Outcome.String()
	s.Error = r.Error
	st := r.Step
	if st == nil {
		return s
	}
	s.HTTPStatus, s.Code, s.Message = st.HTTPStatus, st.Code, st.Message
	s.NotCandidates = notCandidates(c.Snapshot)
	if r.Outcome == lb.OutcomeWait {
		v := lb.DurationMs(st.RetryAt)
		s.RetryAtMs = &v
		s.GenericRetry = st.GenericRetry
	}
	if !st.Balanced {
		return s
	}
	d := &st.Decision
	snap := c.Snapshot
	s.Algorithm = d.Algorithm.String()
	s.LBDecision = d.Kind.String()
	if d.Kind == lb.KindWait {
		v := lb.DurationMs(d.Wait)
		s.LBWaitMs = &v
	}
	s.Reason = d.Reason.String()
	if d.Kind == lb.KindSelected {
		id := d.ClusterID
		s.Cluster = &id
		s.RankDepth = d.RankDepth
		s.SelectedAfterKVFreeTokensSkip = d.SelectedAfterKVFreeTokensSkip
		s.Choices, s.ChoicesExact = d.Choices, d.ChoicesExact
	}
	if d.Session != lb.SessionNone {
		v := d.Session.String()
		s.SessionState = &v
	}
	s.Promoted = d.Promoted
	s.OriginalOrder = lb.IDs(snap, d.OriginalOrder)
	s.AffinityOrder = lb.IDs(snap, d.AffinityOrder)
	s.AffinityGroup = lb.IDs(snap, d.AffinityGroup)
	s.OpenSet = lb.IDs(snap, d.OpenSet)
	s.Ambiguous = d.Ambiguous
	s.Trace = d.Trace
	return s
}

func writeCaseText(env *Env, file string, r *conformance.Result, check bool) {
	w := env.Out
	st := env.Style
	c := r.Case
	title := c.Name
	if title == "" {
		title = "(unnamed)"
	}
	// Names, messages and mismatches quote the case file: escaped like
	// every error (writeProblem).
	head := ui.Printable(fmt.Sprintf("case %s  (%s:%d)", title, file, c.Line))
	if check {
		if r.Pass() {
			head = st.OK.Render("PASS") + " " + head
		} else {
			head = st.Error.Render("FAIL") + " " + head
		}
	}
	fmt.Fprintln(w, st.Bold.Render(head))
	defer func() {
		for _, m := range r.Mismatches {
			fmt.Fprintf(w, "  %s %s\n", st.Error.Render("mismatch:"), ui.PrintableLines(m))
		}
	}()
	if c.ConfigOnly() {
		label := "lb_config"
		if c.EntryOnly {
			label = "config"
		}
		if r.Valid {
			fmt.Fprintf(w, "  %s: valid\n", label)
		} else {
			fmt.Fprintf(w, "  %s: invalid: %s\n", label, ui.PrintableLines(r.Error))
		}
		return
	}
	if r.Step == nil {
		fmt.Fprintf(w, "  outcome: error (config rejected): %s\n", ui.PrintableLines(r.Error))
		return
	}
	s := r.Step
	d := &s.Decision
	snap := c.Snapshot
	switch r.Outcome {
	case lb.OutcomeDispatch:
		fmt.Fprintf(w, "  outcome: dispatch to %s (rank depth %d", d.ClusterID, d.RankDepth)
		if d.SelectedAfterKVFreeTokensSkip {
			fmt.Fprint(w, ", after a KV free-token skip")
		}
		fmt.Fprintln(w, ")")
		if len(d.Choices) > 1 {
			parts := make([]string, len(d.Choices))
			for i, ch := range d.Choices {
				parts[i] = fmt.Sprintf("%s %s", ch.ClusterID, ch.Fraction())
			}
			exact := ""
			if !d.ChoicesExact {
				exact = " (estimated)"
			}
			fmt.Fprintf(w, "  sampling could choose: %s%s\n", strings.Join(parts, ", "), exact)
		}
	case lb.OutcomeWait:
		fmt.Fprintf(w, "  outcome: wait; selection runs again at %g ms", lb.DurationMs(s.RetryAt))
		if s.GenericRetry {
			fmt.Fprint(w, " (generic capacity retry, random 1–9 ms)")
		}
		fmt.Fprintln(w)
	default:
		fmt.Fprintf(w, "  outcome: %s", r.Outcome)
		if s.HTTPStatus != 0 {
			fmt.Fprintf(w, " (HTTP %d %s)", s.HTTPStatus, s.Code)
		}
		fmt.Fprintln(w)
		if s.Message != "" {
			fmt.Fprintf(w, "  %s\n", ui.PrintableLines(s.Message))
		}
	}
	if nc := notCandidates(snap); len(nc) > 0 {
		fmt.Fprintf(w, "  not a candidate: %s\n", strings.Join(nc, ", "))
	}
	if !s.Balanced {
		return
	}
	fmt.Fprintf(w, "  load balancer: %s → %s", d.Algorithm, d.Kind)
	if d.Kind == lb.KindWait {
		fmt.Fprintf(w, " %g ms", lb.DurationMs(d.Wait))
	}
	if d.Reason != lb.ReasonNone {
		fmt.Fprintf(w, " (%s)", d.Reason)
	}
	fmt.Fprintln(w)
	state := "not classified"
	if d.Session != lb.SessionNone {
		state = d.Session.String()
		if d.Promoted {
			state += ", last cluster promoted"
		}
	}
	fmt.Fprintf(w, "  session: %s\n", state)
	if d.AffinityOrder != nil {
		fmt.Fprintf(w, "  affinity order: %s", strings.Join(lb.IDs(snap, d.AffinityOrder), ", "))
		if d.Promoted {
			fmt.Fprintf(w, " (was %s)", strings.Join(lb.IDs(snap, d.OriginalOrder), ", "))
		}
		fmt.Fprintf(w, "; group: %s\n", strings.Join(lb.IDs(snap, d.AffinityGroup), ", "))
	}
	if d.OpenSet != nil {
		fmt.Fprintf(w, "  open set: %s\n", strings.Join(lb.IDs(snap, d.OpenSet), ", "))
	}
	if d.Ambiguous {
		fmt.Fprintln(w, "  note: two adjacent Pulsar scores are equal or agree to 1e-12; the order is Stargate's with glibc's log (ties by cluster id), another libm could swap them")
	}
	if d.Trace == nil {
		return
	}
	if len(d.Trace.Ranking) > 0 {
		fmt.Fprintln(w, "  pulsar ranking:")
		for _, rk := range d.Trace.Ranking {
			fmt.Fprintf(w, "    %2d. %-12s weight %g, score %s, %s\n", rk.Rank, rk.ClusterID, rk.Weight, msText(rk.Score), rk.Feasibility)
		}
	}
	for _, n := range d.Trace.Notes {
		fmt.Fprintf(w, "  · %s\n", n)
	}
	for _, p := range d.Trace.Phases {
		fmt.Fprintf(w, "  phase %s (scale %g, clock %g ms, max_queued %d", p.Phase, p.Scale, float64(p.ClockMs), p.MaxQueued)
		if p.HasQueueLimit {
			fmt.Fprintf(w, ", queue limit %g ms", float64(p.QueueLimitMs))
		}
		fmt.Fprintf(w, ") → %s", p.Result)
		if p.Result == lb.KindWait {
			fmt.Fprintf(w, " %g ms", float64(p.WaitMs))
		}
		fmt.Fprintln(w)
		for _, ct := range p.Candidates {
			if p.Phase == lb.PhaseRankWalk || ct.Excluded || ct.Feasibility != lb.Eligible {
				fmt.Fprintf(w, "    %-12s rank %d: %s\n", ct.ClusterID, ct.Rank, ct.Why)
				continue
			}
			fmt.Fprintf(w, "    %-12s bucket ttft %s (rtt %s, queue %s, prefill %s)", ct.ClusterID, msText(ct.BucketTTFTMs),
				msText(ct.RTTMs), msText(ct.QueueMs), msText(ct.PrefillMs))
			if ct.Bucket >= 0 {
				fmt.Fprintf(w, ", bucket %d", ct.Bucket)
			}
			fmt.Fprintf(w, ": %s\n", ct.Why)
		}
	}
}

func msText(m lb.Millis) string {
	return strings.Trim(string(must(m.MarshalJSON())), `"`)
}

func must(b []byte, _ error) []byte { return b }

// notCandidates names the clusters of snap that are not routing candidates
// because of their status (lb.Status.Routable), as "ID (status)".
func notCandidates(snap *lb.Snapshot) []string {
	if snap == nil {
		return nil
	}
	var out []string
	for i := range snap.Clusters {
		if c := &snap.Clusters[i]; !c.Status.Routable() {
			out = append(out, c.ClusterID+" ("+c.Status.String()+")")
		}
	}
	return out
}
