package explain

import (
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/lb"
)

// Comparison is the same request decided twice: with last_cluster_affinity
// off and on (--compare flag), or with two configurations (--compare
// config=FILE).
type Comparison struct {
	// What is "flag" or "config".
	What string `json:"what"`
	// Left and Right are the two runs (flag: off, on; config: the
	// --config file, the other file).
	Left  Run `json:"left"`
	Right Run `json:"right"`
	// Differences lists the keys (CompareRow.Key: "affinity_order",
	// "open_set", "final", …) of the compared aspects whose values differ,
	// in table order. Keys are stable: they never embed a value.
	Differences []string `json:"differences"`
	// ElapsedMs is the elapsed time (ms) of the request, at which the
	// "open_set" and "decision" aspects are taken.
	ElapsedMs float64 `json:"elapsed_ms"`
}

// CompareRow is one aspect of a comparison: its stable key, its label and
// its rendering for each run.
type CompareRow struct {
	// Key names the aspect for machines, in snake case ("session",
	// "open_set", "final"); Aspect is the label of the text table's row
	// ("open set at 0 ms"). Left and Right are its rendering for the two
	// runs.
	Key         string
	Aspect      string
	Left, Right string
}

// Differs reports whether the two renderings differ.
func (r CompareRow) Differs() bool { return r.Left != r.Right }

// CompareRows renders the compared aspects of a comparison for the
// request of rep: algorithm and entry, last_cluster_affinity, effective
// X/s/S, session state, affinity order and group, open set, the decision
// at the request's elapsed time, the decisions over time and the final
// outcome.
func CompareRows(rep *Report, c *Comparison) []CompareRow {
	var rows []CompareRow
	add := func(key, aspect string, f func(*Run) string) {
		rows = append(rows, CompareRow{Key: key, Aspect: aspect, Left: f(&c.Left), Right: f(&c.Right)})
	}
	add("algorithm", "algorithm", func(r *Run) string {
		if r.Config == nil {
			return "none (rejected before routing)"
		}
		return r.Config.Algorithm.String()
	})
	add("entry", "entry", func(r *Run) string {
		if r.Resolution.Path == "" {
			return "–"
		}
		return r.Resolution.Path
	})
	add(lb.FieldLastClusterAffinity.Name, lb.FieldLastClusterAffinity.Name, func(r *Run) string {
		if r.Config == nil {
			return "–"
		}
		switch r.Config.Algorithm {
		case lb.WaitAndWiden, lb.PulsarWaitAndWiden:
			if r.Config.LastClusterAffinity {
				return "on"
			}
			return "off"
		}
		return "n/a"
	})
	add("wait_settings", "X / s / S", func(r *Run) string { return effectiveXSS(&r.Decision) })
	add("session", "session", func(r *Run) string {
		d := &r.Decision
		if d.SessionState == nil {
			return "not classified"
		}
		s := *d.SessionState
		if d.Promoted {
			s += ", promoted"
		}
		return s
	})
	add("affinity_order", "affinity order", func(r *Run) string { return orderCell(r.Decision.AffinityOrder) })
	add("affinity_group", "affinity group", func(r *Run) string { return orderCell(r.Decision.AffinityGroup) })
	add("open_set", "open set at "+fmtNum(rep.Request.ElapsedMs)+" ms", func(r *Run) string { return orderCell(r.Decision.OpenSet) })
	add("decision", "decision at "+fmtNum(rep.Request.ElapsedMs)+" ms", func(r *Run) string {
		return outcomeShort(&r.Decision) + " (" + whyShort(&r.Decision) + ")"
	})
	add("over_time", "over time", func(r *Run) string {
		var parts []string
		for i := range r.Timeline {
			d := &r.Timeline[i]
			parts = append(parts, fmtNum(d.ElapsedMs)+": "+outcomeShort(d))
		}
		if r.TimelineTruncated {
			parts = append(parts, "…")
		}
		return strings.Join(parts, " · ")
	})
	add("final", "final", func(r *Run) string { return finalText(r) })
	return rows
}

// Differences returns the keys of the aspects of CompareRows whose
// renderings differ (never nil).
func Differences(rep *Report, c *Comparison) []string {
	out := []string{}
	for _, r := range CompareRows(rep, c) {
		if r.Differs() {
			out = append(out, r.Key)
		}
	}
	return out
}

func orderCell(ids []string) string {
	if ids == nil {
		return "–"
	}
	return list(ids)
}

// effectiveXSS renders the effective affinity wait, prefill scale and
// band interval of a decision ("300 ms / 0.1 / 100 ms").
func effectiveXSS(d *Decision) string {
	x, s, b := "–", "–", "–"
	if d.AffinityWaitMs != nil {
		x = fmtMs(*d.AffinityWaitMs)
	}
	if d.PrefillScale != nil {
		s = fmtScale(*d.PrefillScale)
	}
	if d.BandIntervalMs != nil {
		b = fmtMs(*d.BandIntervalMs)
	}
	return x + " / " + s + " / " + b
}

// finalText says where the request ends up with an unchanged snapshot.
func finalText(r *Run) string {
	f := r.Final()
	switch f.Outcome {
	case lb.OutcomeDispatch:
		s := choiceText(f) + " at " + fmtMs(lb.Millis(f.ElapsedMs))
		if len(f.Choices) <= 1 {
			s += ", rank depth " + strconv.Itoa(f.RankDepth)
		}
		return s
	case lb.OutcomeWait:
		return "still waiting at " + fmtMs(lb.Millis(f.ElapsedMs)) + " (timeline truncated)"
	case lb.OutcomeReject, lb.OutcomeError:
		s := f.Outcome.String() + " " + strconv.Itoa(f.HTTPStatus) + " at " + fmtMs(lb.Millis(f.ElapsedMs))
		if f.Code != "" {
			s += " (" + f.Code + ")"
		}
		return s
	}
	return f.Outcome.String()
}
