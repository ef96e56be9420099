package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/ui"
)

// Sweep is the `sweep` object of `lcctl simulate --sweep FIELD=V1,V2,…
// --output json` (docs/simulate.md "Sweeps"): every policy run once per
// value of one numeric scenario field, and per policy each metric's value
// at each swept value (the seedMetrics keys; shares 0–1).
type Sweep struct {
	// Field is the swept field's path; Values its values, in run order.
	Field  string    `json:"field"`
	Values []float64 `json:"values"`
	// Policies holds one entry per policy, in document order.
	Policies []SweepPolicy `json:"policies"`
}

// SweepPolicy is one policy's metrics along the sweep: Metrics maps a
// metric to one value per swept value.
type SweepPolicy struct {
	Policy  string               `json:"policy"`
	Metrics map[string][]float64 `json:"metrics"`
}

// NewSweep summarises runs: runs[k] are the results at values[k], with the
// same policies in the same order.
func NewSweep(field string, values []float64, runs [][]*sim.Result) *Sweep {
	s := &Sweep{Field: field, Values: values, Policies: []SweepPolicy{}}
	if len(runs) == 0 {
		return s
	}
	for pi, r := range runs[0] {
		sp := SweepPolicy{Policy: r.Policy, Metrics: map[string][]float64{}}
		for _, m := range seedMetrics {
			v := make([]float64, len(runs))
			for k := range runs {
				v[k] = round6(m.get(runs[k][pi]))
			}
			sp.Metrics[m.key] = v
		}
		s.Policies = append(s.Policies, sp)
	}
	return s
}

// WriteSweepText writes the scenario header and one table per metric:
// a row per policy, a column per swept value. st may be nil.
func WriteSweepText(w io.Writer, d *Document, st *ui.Styles) error {
	if st == nil {
		st = ui.NewStyles(w, false)
	}
	s := d.Sweep
	var b strings.Builder
	writeHeader(&b, d, st)
	fmt.Fprintf(&b, "  sweep of %s over %d values (the header above describes the first)\n", s.Field, len(s.Values))
	for _, m := range seedMetrics {
		head := []string{fmt.Sprintf("%s %s \\ %s", m.label, m.unit, s.Field)}
		for _, v := range s.Values {
			head = append(head, SweepValueText(v))
		}
		var rows [][]string
		for _, p := range s.Policies {
			row := []string{ui.Printable(p.Policy)}
			for _, x := range p.Metrics[m.key] {
				row = append(row, fmt.Sprintf("%.*f", decimals(m), x*m.scale))
			}
			rows = append(rows, row)
		}
		b.WriteString("\n")
		table(&b, st, head, rows, 1)
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SweepValueText renders a swept value for text and chart labels: an
// integer as an integer (2000000, where %g would print 2e+06), any other
// value in the shortest form that reads back as it (0.25). JSON keeps the
// numbers (Sweep.Values).
func SweepValueText(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// integerTicks labels the ticks of Ticker whose value is an integer with
// SweepValueText (gonum's tickers format with %g).
type integerTicks struct{ plot.Ticker }

func (t integerTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := t.Ticker.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" && ts[i].Value == math.Trunc(ts[i].Value) {
			ts[i].Label = SweepValueText(ts[i].Value)
		}
	}
	return ts
}

// Sweep chart names: one chart per metric, `sweep-<metric>`, and, for a
// sweep of a kv_cache_tokens field, ChartKVReuseVsCapacity.
const ChartKVReuseVsCapacity = "kv-reuse-vs-capacity"

// WriteSweepPlots writes the sweep charts (PNG and SVG) into dir: each
// metric against the swept value, one line per policy (a log x axis when
// the values span more than a factor of 20), and for kv_cache_tokens
// sweeps the KV reuse chart again as kv-reuse-vs-capacity. It returns the
// files written.
func WriteSweepPlots(dir string, d *Document) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := d.Sweep
	cs, ds := policyStyles(d)
	logX := false
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range s.Values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if lo > 0 && hi/lo > 20 {
		logX = true
	}
	var files []string
	for _, m := range seedMetrics {
		names := []string{"sweep-" + m.key}
		if m.key == "kv_reuse" && strings.HasSuffix(s.Field, "kv_cache_tokens") {
			names = append(names, ChartKVReuseVsCapacity)
		}
		// A new plot per file: sideLegend takes the legend out of p.
		build := func() *plot.Plot {
			p := newPlot(fmt.Sprintf("%s against %s", m.label, s.Field), s.Field, m.label+" ("+m.unit+")")
			if logX {
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = plot.LogTicks{Prec: -1}
			}
			p.X.Tick.Marker = integerTicks{p.X.Tick.Marker}
			for i, sp := range s.Policies {
				var pts plotter.XYs
				for k, x := range sp.Metrics[m.key] {
					pts = append(pts, plotter.XY{X: s.Values[k], Y: x * m.scale})
				}
				if i < len(cs) {
					addLine(p, pts, cs[i], ds[i], sp.Policy)
				}
			}
			return p
		}
		w, h := 28*vg.Centimeter, 14*vg.Centimeter
		for _, name := range names {
			var err error
			if files, err = writeChart(dir, name, w, h, func(dc draw.Canvas) { sideLegend(build(), dc) }, files); err != nil {
				return files, err
			}
		}
	}
	return files, nil
}
