package explain

import (
	"encoding/json"
	"math"
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
	// ConfigFields are the lb-config fields whose effective values differ
	// between the two runs' algorithm entries (ConfigFieldDifferences), in
	// registry order; [] when they agree, when either run was rejected
	// before an algorithm was resolved, or for --compare flag (whose one
	// difference, last_cluster_affinity, is an aspect of its own).
	ConfigFields []FieldDifference `json:"config_fields"`
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

// FieldDifference is one lb-config field whose effective value differs
// between the two runs of a comparison.
type FieldDifference struct {
	// Field is the field's name (lb.Field.Name, its lb-config key).
	Field string `json:"field"`
	// Left and Right are the field's effective value in each run's
	// algorithm entry, as lb-config writes it (a JSON number, bool or
	// string; null for an optional field without a value; "inf", "-inf"
	// or "nan" for a non-finite number), defaults applied.
	Left  json.RawMessage `json:"left"`
	Right json.RawMessage `json:"right"`
	// LeftEntry and RightEntry are the places of the two entries in their
	// files (Resolution.Path: `models["m"]`, `default`, …; "" for an
	// --algorithm-config object).
	LeftEntry  string `json:"left_entry"`
	RightEntry string `json:"right_entry"`
}

// configFieldsKey stands in Comparison.Differences for every differing
// lb-config field (the fields are listed in Comparison.ConfigFields).
const configFieldsKey = "config_fields"

// comparedField is one registry field that differs, with its rendering
// for the text table and for JSON.
type comparedField struct {
	f                   *lb.Field
	leftText, rightText string
	leftJSON, rightJSON json.RawMessage
}

// differingFields compares the effective algorithm entries of the two
// runs field by field, over the registry rows both runs' algorithms parse
// (lb.Field.Parsed; a field only one of them reads cannot be compared,
// and the algorithm aspect already differs). last_cluster_affinity is
// left out (an aspect of its own) and so is request_algorithms (dropped
// from an effective entry, lb-config.md E4). nil when either run has no
// entry.
func differingFields(c *Comparison) []comparedField {
	l, r := c.Left.Config, c.Right.Config
	if l == nil || r == nil {
		return nil
	}
	var out []comparedField
	for _, f := range lb.Fields() {
		if f.Type == lb.TypeMap || f == lb.FieldLastClusterAffinity || !f.Parsed.Has(l.Algorithm) || !f.Parsed.Has(r.Algorithm) {
			continue
		}
		lt, lj := fieldValue(f, l)
		rt, rj := fieldValue(f, r)
		if string(lj) != string(rj) {
			out = append(out, comparedField{f: f, leftText: lt, rightText: rt, leftJSON: lj, rightJSON: rj})
		}
	}
	return out
}

// fieldValue renders field f of c for the comparison table ("4 requests",
// "300 ms", "0.1", "true", a quoted seed, "unset") and as a JSON value.
func fieldValue(f *lb.Field, c *lb.AlgorithmConfig) (string, json.RawMessage) {
	s, ok := f.Text(c)
	// A field whose "unset" is its zero value reads as "" (seed) or "0"
	// (k, a usize: the optional u64 fields are pointers, and their 0 is a
	// value).
	zeroUnset := f.Default == "unset" && (f.Type == lb.TypeString && s == "" || f.Type == lb.TypeUsize && s == "0")
	if !ok || zeroUnset {
		return "unset", json.RawMessage("null")
	}
	switch f.Type {
	case lb.TypeBool:
		return s, json.RawMessage(s)
	case lb.TypeU64, lb.TypeUsize, lb.TypeF64:
		if f.Type == lb.TypeF64 {
			if x, _ := f.Float(c); math.IsNaN(x) || math.IsInf(x, 0) {
				s = fmtNum(x)
				return s, json.RawMessage(strconv.Quote(s))
			}
		}
		t := s
		switch {
		case f.Unit == "":
		case s == "1" && f.Unit != "ms" && f.Unit != "s":
			// The count nouns ("requests", "clusters") in the singular.
			t += " " + strings.TrimSuffix(f.Unit, "s")
		default:
			t += " " + f.Unit
		}
		return t, json.RawMessage(s)
	}
	q, _ := json.Marshal(s)
	if f.Type == lb.TypeString {
		return strconv.Quote(s), q
	}
	return s, q
}

// ConfigFieldDifferences lists the lb-config fields whose effective
// values differ between the two runs of c (see Comparison.ConfigFields);
// never nil.
func ConfigFieldDifferences(c *Comparison) []FieldDifference {
	out := []FieldDifference{}
	for _, d := range differingFields(c) {
		out = append(out, FieldDifference{Field: d.f.Name, Left: d.leftJSON, Right: d.rightJSON,
			LeftEntry: c.Left.Resolution.Path, RightEntry: c.Right.Resolution.Path})
	}
	return out
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
// renderings differ, in table order, with "config_fields" after "entry"
// when some lb-config field of the effective entries differs
// (ConfigFieldDifferences); never nil.
func Differences(rep *Report, c *Comparison) []string {
	out := []string{}
	fields := len(differingFields(c)) > 0
	for _, r := range CompareRows(rep, c) {
		if r.Differs() {
			out = append(out, r.Key)
		}
		if r.Key == "entry" && fields {
			out = append(out, configFieldsKey)
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
