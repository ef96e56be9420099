package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/lcctl/lcctl/internal/sim"
)

// Chart files written by WritePlots, each as .png and .svg.
const (
	// ChartTTFT is the TTFT distribution per policy.
	ChartTTFT = "ttft-cdf"
	// ChartKVReuse is the KV cache reuse over time per policy.
	ChartKVReuse = "kv-reuse"
	// ChartClusterLoad is the per-cluster slot utilisation over time, one
	// panel per policy.
	ChartClusterLoad = "cluster-load"
	// ChartSummary compares KV reuse, the share of hinted requests that
	// left their last cluster and goodput per policy.
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
	charts := []chart{
		{ChartTTFT, func(dc draw.Canvas) { sideLegend(ttftChart(d), dc) }, 28 * vg.Centimeter, 15 * vg.Centimeter},
		{ChartKVReuse, func(dc draw.Canvas) { sideLegend(reuseChart(d), dc) }, 28 * vg.Centimeter, 15 * vg.Centimeter},
		{ChartClusterLoad, func(dc draw.Canvas) { loadGrid(d, dc, rows, cols) }, vg.Length(cols) * 14 * vg.Centimeter, vg.Length(rows)*7*vg.Centimeter + 1.5*vg.Centimeter},
		{ChartSummary, func(dc draw.Canvas) { summaryGrid(d, dc) }, 30 * vg.Centimeter, 13 * vg.Centimeter},
	}
	for _, c := range charts {
		for _, ext := range []string{"png", "svg"} {
			var buf bytes.Buffer
			switch ext {
			case "png":
				img := vgimg.NewWith(vgimg.UseWH(c.w, c.h), vgimg.UseDPI(110))
				fillWhite(img, c.w, c.h)
				c.draw(draw.New(img))
				if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
					return files, err
				}
			case "svg":
				svg := vgsvg.New(c.w, c.h)
				c.draw(draw.New(svg))
				if _, err := svg.WriteTo(&buf); err != nil {
					return files, err
				}
			}
			path := filepath.Join(dir, c.name+"."+ext)
			if err := renameio.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
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

// reuseChart: cached / input tokens per time bin, one line per policy.
func reuseChart(d *Document) *plot.Plot {
	p := newPlot(fmt.Sprintf("KV cache reuse over time — %s", d.Scenario.Name),
		"simulated time (s)", "cached input tokens / input tokens (%)")
	cs, ds := policyStyles(d)
	window := timeWindow(d)
	for i, r := range d.Policies {
		s := r.Series
		var pts plotter.XYs
		for b, bin := range s.Bins {
			t := (float64(b) + 0.5) * float64(s.BinNs) / 1e9
			if bin.InputTokens == 0 || (window > 0 && t > window) {
				continue
			}
			pts = append(pts, plotter.XY{X: t, Y: 100 * float64(bin.CachedTokens) / float64(bin.InputTokens)})
		}
		addLine(p, pts, cs[i], ds[i], fmt.Sprintf("%s (%.1f%% overall)", r.Policy, 100*r.KVReuse))
	}
	markWindow(p, d, 100, true)
	p.Y.Min, p.Y.Max = 0, 100
	p.Y.Tick.Marker = percentTicks(10)
	if window > 0 {
		p.X.Min, p.X.Max = 0, window
	}
	p.Legend.TextStyle.Font.Size = 10
	return p
}

// markWindow marks the measurement window on a time chart whose y axis
// ends at ymax: the end of the warm-up (measurement starts there) and the
// end of session arrivals (the drain that follows is measured too), as
// grey vertical lines, named in the legend when legend is true.
func markWindow(p *plot.Plot, d *Document, ymax float64, legend bool) {
	mark := func(x float64, dash []vg.Length, name string) {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
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
}

// loadGrid draws one panel per policy with each cluster's slot
// utilisation over time.
func loadGrid(d *Document, dc draw.Canvas, rows, cols int) {
	titleH := 1.5 * vg.Centimeter
	top := draw.Crop(dc, 0, 0, 0, -titleH)
	title := plot.New().Title.TextStyle
	title.Font.Size = 14
	title.XAlign, title.YAlign = draw.XCenter, draw.YCenter
	dc.FillText(title, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - titleH/3},
		fmt.Sprintf("Per-cluster slot utilisation over time — %s (one panel per policy, one line per cluster)", d.Scenario.Name))
	// A one-line legend of the cluster colours under the title.
	lab := title
	lab.Font.Size = 11
	lab.XAlign = draw.XLeft
	y := dc.Max.Y - 2*titleH/3 - vg.Points(2)
	n := len(d.Scenario.Clusters)
	item := vg.Length(2.8) * vg.Centimeter
	x := (dc.Min.X+dc.Max.X)/2 - vg.Length(n)*item/2
	for c, id := range d.Scenario.Clusters {
		col, dash := seriesStyle(c)
		ls := draw.LineStyle{Color: col, Width: vg.Points(2.5), Dashes: dash}
		dc.StrokeLine2(ls, x, y, x+vg.Points(18), y)
		dc.FillText(lab, vg.Point{X: x + vg.Points(22), Y: y}, "cluster "+id)
		x += item
	}
	window := timeWindow(d)
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for k, r := range d.Policies {
		p := newPlot(r.Policy, "simulated time (s)", "busy slots (%)")
		p.Title.TextStyle.Font.Size = 11
		s := r.Series
		for c := 0; c < s.Clusters; c++ {
			var pts plotter.XYs
			for b := range s.Bins {
				t := (float64(b) + 0.5) * float64(s.BinNs) / 1e9
				if v, ok := s.MeanLoad(b, c); ok && (window <= 0 || t <= window) {
					pts = append(pts, plotter.XY{X: t, Y: 100 * v})
				}
			}
			col, dash := seriesStyle(c)
			addLine(p, pts, col, dash, "")
		}
		markWindow(p, d, 105, false)
		p.Y.Min, p.Y.Max = 0, 105
		p.Y.Tick.Marker = percentTicks(25)
		if window > 0 {
			p.X.Min, p.X.Max = 0, window
		}
		p.Legend.Top, p.Legend.Left = false, true
		p.Legend.TextStyle.Font.Size = 8
		p.Legend.Padding = vg.Points(1)
		grid[k/cols][k%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter / 2,
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, top)
	for i := range grid {
		for j := range grid[i] {
			if grid[i][j] != nil {
				grid[i][j].Draw(canvases[i][j])
			}
		}
	}
}

// summaryGrid draws three bar charts side by side: KV reuse, the share of
// hinted requests that left their last cluster, and goodput.
func summaryGrid(d *Document, dc draw.Canvas) {
	type metric struct {
		title, y string
		v        func(*sim.Result) float64
	}
	ms := []metric{
		{"KV cache reuse", "cached / input tokens (%)", func(r *sim.Result) float64 { return 100 * r.KVReuse }},
		{"Returning requests that left their last cluster", "share of hinted requests (%)", func(r *sim.Result) float64 { return 100 * r.LeftLastClusterShare }},
		{fmt.Sprintf("Goodput (TTFT ≤ %g ms)", d.Scenario.SLOTTFTMs), "requests/s", func(r *sim.Result) float64 { return r.GoodputRPS }},
	}
	cs, _ := policyStyles(d)
	names := make([]string, len(d.Policies))
	for i, r := range d.Policies {
		names[i] = r.Policy
	}
	row := make([]*plot.Plot, len(ms))
	for k, m := range ms {
		p := newPlot(m.title, "", m.y)
		p.Title.TextStyle.Font.Size = 11
		for i, r := range d.Policies {
			bar, err := plotter.NewBarChart(plotter.Values{m.v(r)}, vg.Points(12))
			if err != nil {
				continue
			}
			bar.Color = cs[i]
			bar.LineStyle.Width = 0
			bar.XMin = float64(i)
			bar.Offset = 0
			p.Add(bar)
		}
		p.NominalX(names...)
		p.X.Tick.Label.Rotation = math.Pi / 3
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
		p.X.Tick.Label.Font.Size = 8
		p.Y.Min = 0
		row[k] = p
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(ms), PadX: vg.Centimeter, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for j, p := range row {
		p.Draw(canvases[0][j])
	}
}
