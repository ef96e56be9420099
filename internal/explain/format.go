package explain

import (
	"math"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/lb"
)

// fmtNum renders a millisecond (or other) quantity compactly: integers
// without a fraction, otherwise at most two decimals with trailing zeros
// dropped; "inf" for +Inf.
func fmtNum(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "0" || s == "-0" {
		// Keep tiny non-zero values visible.
		return strconv.FormatFloat(f, 'g', 3, 64)
	}
	return s
}

// fmtMs renders milliseconds with the unit.
func fmtMs(m lb.Millis) string { return fmtNum(float64(m)) + " ms" }

// fmtScale renders a prefill scale (0.1, 1).
func fmtScale(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// list renders cluster ids separated by spaces, "none" for an empty list.
func list(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, " ")
}

// short abbreviates ids to at most max shown entries ("A B C +4").
func short(ids []string, max int) string {
	if len(ids) == 0 {
		return "none"
	}
	if max < 1 || len(ids) <= max {
		return strings.Join(ids, " ")
	}
	return strings.Join(ids[:max], " ") + " +" + strconv.Itoa(len(ids)-max)
}

// indexOf returns the position of id in ids, or -1.
func indexOf(ids []string, id string) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}

// equalIDs compares two id lists, treating nil and empty alike.
func equalIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// reasonText is a short human phrase for a decision reason.
func reasonText(r lb.Reason) string {
	switch r {
	case lb.ReasonNoCandidates:
		return "no candidates"
	case lb.ReasonAllExcluded:
		return "every candidate was tried by an earlier attempt"
	case lb.ReasonNothingRanked:
		return "no candidate has a valid Pulsar weight"
	case lb.ReasonNoFeasible:
		return "no ranked candidate passes the KV/retry check"
	case lb.ReasonQueueSLO:
		return "every candidate's queue estimate is over the queue-SLO limit"
	case lb.ReasonNoFiniteTTFT:
		return "no candidate has a finite TTFT (no valid input TPS)"
	case lb.ReasonNoCapacity:
		return "no unlocked candidate has capacity and no timer is pending"
	case lb.ReasonAffinityWait:
		return "affinity wait"
	case lb.ReasonBucketUnlock:
		return "a slower TTFT bucket unlocks"
	case lb.ReasonNextBand:
		return "the next ranking band opens"
	}
	return r.String()
}

// reasonClause is what a wait waits for, as a clause that completes
// "… before": "the affinity wait ends", "the next ranking band opens".
func reasonClause(r lb.Reason) string {
	switch r {
	case lb.ReasonAffinityWait:
		return "the affinity wait ends"
	case lb.ReasonBucketUnlock, lb.ReasonNextBand:
		return reasonText(r)
	}
	return "the wait ends (" + reasonText(r) + ")"
}

// choiceText renders the dispatch target: "C" or "one of B 2/3, C 1/3".
func choiceText(d *Decision) string {
	if len(d.Choices) <= 1 {
		return d.Cluster
	}
	parts := make([]string, len(d.Choices))
	for i, c := range d.Choices {
		parts[i] = c.ClusterID + " " + c.Fraction
	}
	s := "one of " + strings.Join(parts, ", ")
	if !d.ChoicesExact {
		s += " (estimated)"
	}
	return s
}

// outcomeShort is the one-cell summary of a decision for tables.
func outcomeShort(d *Decision) string {
	switch d.Outcome {
	case lb.OutcomeDispatch:
		return "dispatch " + choiceText(d)
	case lb.OutcomeWait:
		if d.GenericRetry {
			return "retry until " + fmtNum(float64(*d.RetryDeadlineMs))
		}
		return "wait until " + fmtNum(float64(*d.RetryAtMs))
	case lb.OutcomeReject:
		return "reject " + strconv.Itoa(d.HTTPStatus)
	case lb.OutcomeError:
		return "error " + strconv.Itoa(d.HTTPStatus)
	}
	return d.Outcome.String()
}

// whyShort is the one-cell reason of a decision for tables.
func whyShort(d *Decision) string {
	switch d.Outcome {
	case lb.OutcomeDispatch:
		s := "rank depth " + strconv.Itoa(d.RankDepth)
		if len(d.Choices) > 1 {
			s = "sampled"
		}
		if d.Phase != lb.PhaseNone {
			s += ", " + d.Phase.String() + " phase"
		}
		return s
	case lb.OutcomeWait:
		if d.GenericRetry {
			return "nothing selectable; x-max-wait-ms capacity retry"
		}
		if d.RetryAtMs != nil && d.Kind != nil && *d.Kind == lb.KindWait && d.WaitMs != nil &&
			float64(*d.RetryAtMs) < d.ElapsedMs+float64(*d.WaitMs) {
			return "wait budget ends before " + reasonClause(d.Reason)
		}
		return reasonText(d.Reason)
	case lb.OutcomeReject:
		if d.Kind != nil && *d.Kind == lb.KindWait {
			return "wait budget spent before " + reasonClause(d.Reason)
		}
		if d.Balanced && d.Reason != lb.ReasonNone {
			return reasonText(d.Reason)
		}
		return d.Code
	}
	return d.Code
}
