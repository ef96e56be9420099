package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/ui"
)

// Seeds is the `seeds` object of `lcctl simulate --seeds N --output json`
// (docs/simulate.md "Several seeds"): every policy run with N master
// seeds (the workload draws differ between seeds and are the same for
// every policy within a seed), each metric as its per-seed values with
// the mean and a 95 % confidence interval of the mean (Student's t), and
// each last_cluster_affinity off → on pair as the per-seed paired
// differences (on − off) with their mean and interval.
type Seeds struct {
	// Seeds are the master seeds, in run order.
	Seeds []uint64 `json:"seeds"`
	// Policies holds one entry per policy, in document order.
	Policies []SeedPolicy `json:"policies"`
	// Differences holds one entry per off → on pair (FlagEffects).
	Differences []SeedDifference `json:"differences"`
	// Verdict is the summary in words, one sentence per pair.
	Verdict []string `json:"verdict"`
}

// SeedPolicy is one policy's metrics over the seeds.
type SeedPolicy struct {
	Policy  string                   `json:"policy"`
	Metrics map[string]IntervalValue `json:"metrics"`
}

// SeedDifference is one off → on pair's paired differences.
type SeedDifference struct {
	// Algorithm is the algorithm; Off and On the two policies.
	Algorithm string `json:"algorithm"`
	Off       string `json:"off"`
	On        string `json:"on"`
	// Metrics maps a metric to its differences on − off.
	Metrics map[string]IntervalValue `json:"metrics"`
}

// IntervalValue is one metric over the seeds: the per-seed Values, their
// Mean and the 95 % confidence interval [Low, High] of the mean (Student's
// t with N−1 degrees of freedom; Low = High = Mean for one seed).
// Significant (differences only) says the interval excludes 0.
type IntervalValue struct {
	Values      []float64 `json:"values"`
	Mean        float64   `json:"mean"`
	Low         float64   `json:"low"`
	High        float64   `json:"high"`
	Significant *bool     `json:"significant,omitempty"`
}

// seedMetric is a metric of the seeds report: its JSON key, its label and
// unit in text, how it is read from a result, and whether more is better
// (+1), worse (−1) or neither (0: not judged in the verdict).
type seedMetric struct {
	key, label, unit string
	scale            float64 // text: value × scale (100 for shares in %)
	get              func(*sim.Result) float64
	better           int
}

// seedMetrics are the metrics the seeds report covers, in display order.
// Shares are 0–1 in JSON and points (%) in text.
var seedMetrics = []seedMetric{
	{"goodput_rps", "goodput", "r/s", 1, func(r *sim.Result) float64 { return r.GoodputRPS }, +1},
	{"ttft_p50_ms", "TTFT p50", "ms", 1, func(r *sim.Result) float64 { return r.TTFTMs.P50 }, -1},
	{"ttft_p99_ms", "TTFT p99", "ms", 1, func(r *sim.Result) float64 { return r.TTFTMs.P99 }, -1},
	{"kv_reuse", "KV reuse", "%", 100, func(r *sim.Result) float64 { return r.KVReuse }, +1},
	{"left_last_cluster_share", "left last", "%", 100, func(r *sim.Result) float64 { return r.LeftLastClusterShare }, 0},
	{"failed_share", "failed", "%", 100, func(r *sim.Result) float64 {
		if r.Requests == 0 {
			return 0
		}
		return float64(r.Failed) / float64(r.Requests)
	}, -1},
}

// tQuantile975 is Student's t 0.975 quantile for 1–30 degrees of freedom
// (standard tables); beyond 30 the normal value with a 1/df correction
// (within 0.2 %).
var tQuantile975 = [...]float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

func tq(df int) float64 {
	if df < len(tQuantile975) {
		return tQuantile975[df]
	}
	return 1.959964 + 2.4/float64(df)
}

// interval computes the mean and its 95 % confidence interval.
func interval(v []float64) IntervalValue {
	out := IntervalValue{Values: v}
	n := float64(len(v))
	if len(v) == 0 {
		return out
	}
	for _, x := range v {
		out.Mean += x
	}
	out.Mean /= n
	out.Low, out.High = out.Mean, out.Mean
	if len(v) > 1 {
		var ss float64
		for _, x := range v {
			ss += (x - out.Mean) * (x - out.Mean)
		}
		half := tq(len(v)-1) * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
		out.Low, out.High = out.Mean-half, out.Mean+half
	}
	out.Mean, out.Low, out.High = round6(out.Mean), round6(out.Low), round6(out.High)
	return out
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// NewSeeds summarises runs: runs[k] are the results of seeds[k], every
// seed with the same policies in the same order.
func NewSeeds(seeds []uint64, runs [][]*sim.Result) *Seeds {
	s := &Seeds{Seeds: seeds, Policies: []SeedPolicy{}, Differences: []SeedDifference{}, Verdict: []string{}}
	if len(runs) == 0 {
		return s
	}
	for pi, r := range runs[0] {
		sp := SeedPolicy{Policy: r.Policy, Metrics: map[string]IntervalValue{}}
		for _, m := range seedMetrics {
			v := make([]float64, len(runs))
			for k := range runs {
				v[k] = m.get(runs[k][pi])
			}
			sp.Metrics[m.key] = interval(v)
		}
		s.Policies = append(s.Policies, sp)
	}
	index := map[string]int{}
	for i, r := range runs[0] {
		index[r.Policy] = i
	}
	for _, e := range FlagEffects(&Document{Policies: runs[0]}) {
		off, on := index[e.Off.Policy], index[e.On.Policy]
		sd := SeedDifference{Algorithm: e.Algorithm, Off: e.Off.Policy, On: e.On.Policy, Metrics: map[string]IntervalValue{}}
		for _, m := range seedMetrics {
			v := make([]float64, len(runs))
			for k := range runs {
				v[k] = m.get(runs[k][on]) - m.get(runs[k][off])
			}
			iv := interval(v)
			sig := len(v) > 1 && (iv.Low > 0 || iv.High < 0)
			iv.Significant = &sig
			sd.Metrics[m.key] = iv
		}
		s.Differences = append(s.Differences, sd)
		s.Verdict = append(s.Verdict, verdict(sd, len(runs)))
	}
	return s
}

// verdict says in words which differences are significant and names the
// trade-offs: a significant gain in one metric with a significant loss
// in another.
func verdict(d SeedDifference, n int) string {
	var sig, gains, losses []string
	for _, m := range seedMetrics {
		iv := d.Metrics[m.key]
		if iv.Significant == nil || !*iv.Significant {
			continue
		}
		dir := "up"
		if iv.Mean < 0 {
			dir = "down"
		}
		sig = append(sig, fmt.Sprintf("%s %s %s", m.label, dir, fmtDelta(m, iv.Mean)))
		switch s := m.better * sign(iv.Mean); {
		case s > 0:
			gains = append(gains, m.label+" "+dir)
		case s < 0:
			losses = append(losses, m.label+" "+dir)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, last_cluster_affinity off → on over %d seeds: ", d.Algorithm, n)
	switch {
	case n < 2:
		b.WriteString("one seed, no interval: run with --seeds 2 or more to tell an effect from seed noise")
		return b.String()
	case len(sig) == 0:
		b.WriteString("no difference is significant at 95 %")
		return b.String()
	}
	b.WriteString("significant: " + strings.Join(sig, ", "))
	switch {
	case len(gains) > 0 && len(losses) > 0:
		fmt.Fprintf(&b, "; trade-off: %s, but %s", strings.Join(gains, ", "), strings.Join(losses, ", "))
	case len(losses) > 0:
		fmt.Fprintf(&b, "; worse: %s", strings.Join(losses, ", "))
	case len(gains) > 0:
		b.WriteString("; no trade-off: every judged change is an improvement")
	}
	var rest []string
	for _, m := range seedMetrics {
		if iv := d.Metrics[m.key]; iv.Significant != nil && !*iv.Significant {
			rest = append(rest, m.label)
		}
	}
	if len(rest) > 0 {
		b.WriteString("; not significant: " + strings.Join(rest, ", "))
	}
	return b.String()
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// fmtDelta renders a difference in the metric's text unit (points for
// shares).
func fmtDelta(m seedMetric, v float64) string {
	unit := " " + m.unit
	if m.unit == "%" {
		unit = " points"
	}
	return fmt.Sprintf("%+.*f%s", decimals(m), v*m.scale, unit)
}

func decimals(m seedMetric) int {
	if m.unit == "r/s" {
		return 3
	}
	return 1
}

// fmtInterval renders mean [low, high] in the metric's text unit.
func fmtInterval(m seedMetric, iv IntervalValue) string {
	p := decimals(m)
	return fmt.Sprintf("%.*f [%.*f, %.*f]", p, iv.Mean*m.scale, p, iv.Low*m.scale, p, iv.High*m.scale)
}

// WriteSeedsText writes the seeds report: the scenario header of
// WriteText, a table of each metric's mean and 95 % interval per policy,
// the paired off → on differences and the verdict. st may be nil.
func WriteSeedsText(w io.Writer, d *Document, st *ui.Styles) error {
	if st == nil {
		st = ui.NewStyles(w, false)
	}
	s := d.Seeds
	var b strings.Builder
	writeHeader(&b, d, st)
	fmt.Fprintf(&b, "  %d seeds: %d–%d (the workload differs between seeds and is the same for every policy within one)\n\n",
		len(s.Seeds), s.Seeds[0], s.Seeds[len(s.Seeds)-1])
	head := []string{"policy"}
	for _, m := range seedMetrics {
		head = append(head, m.label+" "+m.unit)
	}
	var rows [][]string
	for _, p := range s.Policies {
		row := []string{ui.Printable(p.Policy)}
		for _, m := range seedMetrics {
			row = append(row, fmtInterval(m, p.Metrics[m.key]))
		}
		rows = append(rows, row)
	}
	table(&b, st, head, rows, 1)
	b.WriteString(st.Faint.Render("mean [95 % confidence interval of the mean] over the seeds; failed: share of requests that did not complete.") + "\n")
	if len(s.Differences) > 0 {
		fmt.Fprintf(&b, "\n%s\n", st.Bold.Render("last_cluster_affinity off → on, paired by seed (on − off):"))
		head = []string{"algorithm"}
		for _, m := range seedMetrics {
			u := m.unit
			if u == "%" {
				u = "points"
			}
			head = append(head, m.label+" "+u)
		}
		rows = rows[:0]
		for _, d := range s.Differences {
			row := []string{d.Algorithm}
			for _, m := range seedMetrics {
				iv := d.Metrics[m.key]
				cell := fmtDeltaInterval(m, iv)
				if *iv.Significant {
					cell += " *"
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		table(&b, st, head, rows, 1)
		b.WriteString(st.Faint.Render("* significant: the 95 % interval of the paired difference excludes 0.") + "\n")
		fmt.Fprintf(&b, "\n%s\n", st.Bold.Render("verdict:"))
		for _, v := range s.Verdict {
			fmt.Fprintf(&b, "  %s\n", v)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtDeltaInterval(m seedMetric, iv IntervalValue) string {
	p := decimals(m)
	return fmt.Sprintf("%+.*f [%+.*f, %+.*f]", p, iv.Mean*m.scale, p, iv.Low*m.scale, p, iv.High*m.scale)
}
