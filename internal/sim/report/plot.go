package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/renameio/v2/maybe"
	"github.com/lcctl/lcctl/internal/ui"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart files written by WritePlots, each as .png and .svg.
const (
	// ChartTTFT is the TTFT distribution per policy.
	ChartTTFT = "ttft-cdf"
	// ChartKVReuse is the KV cache reuse over time: each --compare pair
	// off against on, with their difference, then the other policies.
	ChartKVReuse = "kv-reuse"
	// ChartClusterLoad is the slot utilisation over time, one panel per
	// policy: the busiest cluster, and the band of the others.
	ChartClusterLoad = "cluster-load"
	// ChartSummary compares KV reuse, the share of hinted requests that
	// left their last cluster and goodput per policy, with value labels.
	ChartSummary = "summary"
)

// WritePlots writes the charts of d into dir (created if needed) as PNG
// and SVG files, each written atomically. It returns the files written.
func WritePlots(dir string, d *Document) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	type chart struct {
		name string
		draw func(dc draw.Canvas)
		w, h vg.Length
	}
	n := len(d.Policies)
	cols := 2
	if n == 1 {
		cols = 1
	}
	rows := (n + cols - 1) / cols
	reuseRows := len(FlagEffects(d))
	if 2*reuseRows < n {
		reuseRows++ // the panel of the other policies
	}
	charts := []chart{
		{ChartTTFT, func(dc draw.Canvas) { sideLegend(ttftChart(d), dc) }, 28 * vg.Centimeter, 15 * vg.Centimeter},
		{ChartKVReuse, func(dc draw.Canvas) { reuseGrid(d, dc) }, 28 * vg.Centimeter, vg.Length(max(reuseRows, 1))*7*vg.Centimeter + 1.6*vg.Centimeter},
		{ChartClusterLoad, func(dc draw.Canvas) { loadGrid(d, dc, rows, cols) }, vg.Length(cols) * 14 * vg.Centimeter, vg.Length(rows)*6*vg.Centimeter + 1.6*vg.Centimeter},
		{ChartSummary, func(dc draw.Canvas) { summaryGrid(d, dc) }, 30 * vg.Centimeter, 4.5*vg.Centimeter + vg.Length(n)*0.8*vg.Centimeter},
	}
	for _, c := range charts {
		var err error
		if files, err = writeChart(dir, c.name, c.w, c.h, c.draw, files); err != nil {
			return files, err
		}
	}
	return files, nil
}

// writeChart renders one chart of w×h as dir/name.png (110 dpi, white
// background) and dir/name.svg, calling render once per file, each file
// written atomically (renameio), and appends the paths to files. Errors:
// rendering or writing a file; files then holds those already written.
func writeChart(dir, name string, w, h vg.Length, render func(draw.Canvas), files []string) ([]string, error) {
	for _, ext := range []string{"png", "svg"} {
		var buf bytes.Buffer
		switch ext {
		case "png":
			img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))
			fillWhite(img, w, h)
			render(draw.New(textSafe{img}))
			if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
				return files, err
			}
		case "svg":
			svg := vgsvg.New(w, h)
			render(draw.New(textSafe{svg}))
			if _, err := svg.WriteTo(&buf); err != nil {
				return files, err
			}
		}
		path := filepath.Join(dir, name+"."+ext)
		if err := maybe.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// textSafe is a chart canvas that writes every label through chartText,
// the one place where chart text is made safe: vgsvg escapes only the
// five XML metacharacters, so a control character in a policy name (raw
// ESC) would make the SVG ill-formed XML, and a bidirectional formatting
// character (U+202E) would reorder the label.
type textSafe struct{ vg.CanvasSizer }

// FillString draws chartText(s).
func (c textSafe) FillString(f font.Face, pt vg.Point, s string) {
	c.CanvasSizer.FillString(f, pt, chartText(s))
}

// chartText returns s with what XML 1.0 cannot hold or a reader should not
// see replaced by visible escapes: control and bidirectional formatting
// characters as ui.Printable writes them (\x1b, \u202e), invalid UTF-8
// bytes as \xff, and the non-characters U+FFFE and U+FFFF as \ufffe,
// \uffff. Other text is returned unchanged.
func chartText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsAny(s, "\ufffe\uffff") {
		return ui.Printable(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == 0xfffe || r == 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return ui.Printable(b.String())
}

func fillWhite(img *vgimg.Canvas, w, h vg.Length) {
	img.SetColor(color.White)
	var p vg.Path
	p.Move(vg.Point{})
	p.Line(vg.Point{X: w})
	p.Line(vg.Point{X: w, Y: h})
	p.Line(vg.Point{Y: h})
	p.Close()
	img.Fill(p)
}

// palette has ten distinguishable colours (Tableau 10).
var palette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff},
	color.RGBA{0xe1, 0x57, 0x59, 0xff}, color.RGBA{0x76, 0xb7, 0xb2, 0xff},
	color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xff, 0x9d, 0xa7, 0xff},
	color.RGBA{0x9c, 0x75, 0x5f, 0xff}, color.RGBA{0x79, 0x70, 0x6e, 0xff},
}

var dashed = []vg.Length{vg.Points(5), vg.Points(3)}

// seriesStyle gives series i a colour and dash pattern.
func seriesStyle(i int) (color.Color, []vg.Length) {
	if i < len(palette) {
		return palette[i], nil
	}
	return palette[i%len(palette)], plotutil.Dashes(1 + i/len(palette))
}

// policyStyles gives every policy a colour that stays the same in every
// chart; a policy pair that differs only in last_cluster_affinity
// (".../lc-off", ".../lc-on") shares a colour, dashed when off.
func policyStyles(d *Document) ([]color.Color, [][]vg.Length) {
	family := map[string]int{}
	cs := make([]color.Color, len(d.Policies))
	ds := make([][]vg.Length, len(d.Policies))
	for i, r := range d.Policies {
		name := strings.TrimSuffix(strings.TrimSuffix(r.Policy, "/lc-off"), "/lc-on")
		f, ok := family[name]
		if !ok {
			f = len(family)
			family[name] = f
		}
		cs[i], ds[i] = seriesStyle(f)
		if strings.HasSuffix(r.Policy, "/lc-off") {
			ds[i] = dashed
		}
	}
	return cs, ds
}

// sideLegend draws p with its legend in a column on the right, outside
// the data area.
func sideLegend(p *plot.Plot, dc draw.Canvas) {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	lw := 7.5 * vg.Centimeter
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = vg.Points(6), -vg.Points(30)
	leg.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, 0))
}

func percentTicks(step float64) plot.ConstantTicks {
	var t []plot.Tick
	for v := 0.0; v <= 100; v += step {
		t = append(t, plot.Tick{Value: v, Label: fmt.Sprintf("%g", v)})
	}
	return t
}

// timeWindow returns the x range of time charts (s): the whole run, to
// the last completion of the longest policy run, so the charts cover the
// measurement window of the table and the JSON (the warm-up, before it,
// is marked; see markWindow).
func timeWindow(d *Document) float64 {
	end := 0.0
	for _, r := range d.Policies {
		end = math.Max(end, r.SimulatedS)
	}
	return end
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 13
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

func addLine(p *plot.Plot, pts plotter.XYs, c color.Color, dash []vg.Length, name string) {
	if len(pts) == 0 {
		return
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return
	}
	l.Color, l.Dashes = c, dash
	l.Width = vg.Points(1.6)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
}

// ttftChart: share of requests whose TTFT is at most x, x on a log axis,
// one line per policy, the SLO marked.
func ttftChart(d *Document) *plot.Plot {
	p := newPlot(fmt.Sprintf("Time to first token per policy — %s", d.Scenario.Name),
		"TTFT (ms, log scale)", "share of requests with TTFT ≤ x (%)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	lo, hi := math.Inf(1), 0.0
	cs, ds := policyStyles(d)
	for i, r := range d.Policies {
		var pts plotter.XYs
		for _, c := range r.TTFT.CDF(400) {
			x := math.Max(c.X/1e6, 0.1) // ms; the log axis needs x > 0
			pts = append(pts, plotter.XY{X: x, Y: 100 * c.P})
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		addLine(p, pts, cs[i], ds[i], r.Policy)
	}
	if hi > 0 {
		slo := d.Scenario.SLOTTFTMs
		l, err := plotter.NewLine(plotter.XYs{{X: slo, Y: 0}, {X: slo, Y: 100}})
		if err == nil {
			l.Color = color.Gray{Y: 90}
			l.Width = vg.Points(1)
			l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
			p.Legend.Add(fmt.Sprintf("TTFT SLO %g ms", slo), l)
		}
		p.X.Min, p.X.Max = math.Min(lo, slo)/1.2, math.Max(hi, slo)*1.2
	}
	p.Y.Min, p.Y.Max = 0, 100
	p.Y.Tick.Marker = percentTicks(10)
	p.Legend.TextStyle.Font.Size = 10
	return p
}

// markWindow marks the measurement window on a time chart whose y axis
// runs from ymin to ymax: the end of the warm-up (measurement starts there) and the
// end of session arrivals (the drain that follows is measured too), as
// grey vertical lines, named in the legend when legend is true.
func markWindow(p *plot.Plot, d *Document, ymin, ymax float64, legend bool) {
	mark := func(x float64, dash []vg.Length, name string) {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: ymin}, {X: x, Y: ymax}})
		if err != nil {
			return
		}
		l.Color = color.Gray{Y: 110}
		l.Width = vg.Points(1)
		l.Dashes = dash
		p.Add(l)
		if legend {
			p.Legend.Add(name, l)
		}
	}
	if w := d.Scenario.WarmupS; w > 0 {
		mark(w, []vg.Length{vg.Points(2), vg.Points(2)}, fmt.Sprintf("end of warm-up (%g s): measured from here", w))
	}
	if a := d.Scenario.DurationS; a > 0 && a < timeWindow(d) {
		mark(a, []vg.Length{vg.Points(6), vg.Points(2)}, fmt.Sprintf("sessions stop arriving (%g s); the drain is measured", a))
	}
	// Cluster events: a solid line in the action's colour.
	for _, e := range d.Scenario.Events {
		l, err := plotter.NewLine(plotter.XYs{{X: e.AtS, Y: ymin}, {X: e.AtS, Y: ymax}})
		if err != nil {
			continue
		}
		l.Color, l.Width = eventColor(e.Action), vg.Points(1.2)
		p.Add(l)
	}
}

// eventColor is the marker colour of a cluster event action.
func eventColor(action string) color.Color {
	switch action {
	case "fail":
		return color.RGBA{0xc0, 0x1c, 0x28, 0xff}
	case "drain":
		return color.RGBA{0xe0, 0x8a, 0x00, 0xff}
	}
	return color.RGBA{0x26, 0xa2, 0x69, 0xff} // restore
}

// eventLegend lists the cluster event actions the charts mark.
func eventLegend(d *Document) []legendItem {
	var items []legendItem
	seen := map[string]bool{}
	for _, e := range d.Scenario.Events {
		if seen[e.Action] {
			continue
		}
		seen[e.Action] = true
		items = append(items, legendItem{lineSwatch(eventColor(e.Action), vg.Points(1.2), nil), e.Action})
	}
	return items
}
