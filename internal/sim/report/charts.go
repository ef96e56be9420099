package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lcctl/lcctl/internal/sim"
)

// Smoothing windows of the time charts (simulated seconds): the series'
// bins are a few seconds wide and too noisy to read one by one.
const (
	loadSmoothS  = 20.0
	reuseSmoothS = 30.0
)

// lighten mixes c with white: f 0 is c, 1 is white.
func lighten(c color.Color, f float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(float64(v>>8) + (255-float64(v>>8))*f) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// pairedOff returns the flag-off runs of the document's --compare pairs
// (FlagEffects); a policy whose algorithm has no flag is not among them.
func pairedOff(d *Document) map[*sim.Result]bool {
	off := map[*sim.Result]bool{}
	for _, e := range FlagEffects(d) {
		off[e.Off] = true
	}
	return off
}

// header draws a chart title across the top of dc and returns the canvas
// below it, leaving room for one legend line (see legendLine).
func header(dc draw.Canvas, title string) (body draw.Canvas, legendY vg.Length) {
	h := 1.6 * vg.Centimeter
	st := plot.New().Title.TextStyle
	st.Font.Size = 14
	st.XAlign, st.YAlign = draw.XCenter, draw.YCenter
	dc.FillText(st, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - h/3}, title)
	return draw.Crop(dc, 0, 0, 0, -h), dc.Max.Y - 2*h/3 - vg.Points(3)
}

// legendItem is one entry of a legend line: a swatch drawn by swatch in
// a 18×9 pt box at (x, y), and its text.
type legendItem struct {
	swatch func(c draw.Canvas, x, y vg.Length)
	text   string
}

// legendLine draws items centred on one line at height y.
func legendLine(dc draw.Canvas, y vg.Length, items []legendItem) {
	st := plot.New().Legend.TextStyle
	st.Font.Size = 11
	st.XAlign, st.YAlign = draw.XLeft, draw.YCenter
	widths := make([]vg.Length, len(items))
	total := vg.Length(0)
	for i, it := range items {
		widths[i] = vg.Points(24) + st.Width(it.text) + vg.Points(18)
		total += widths[i]
	}
	x := (dc.Min.X+dc.Max.X)/2 - total/2
	for i, it := range items {
		it.swatch(dc, x, y)
		dc.FillText(st, vg.Point{X: x + vg.Points(24), Y: y}, it.text)
		x += widths[i]
	}
}

func lineSwatch(c color.Color, width vg.Length, dash []vg.Length) func(draw.Canvas, vg.Length, vg.Length) {
	return func(dc draw.Canvas, x, y vg.Length) {
		dc.StrokeLine2(draw.LineStyle{Color: c, Width: width, Dashes: dash}, x, y, x+vg.Points(18), y)
	}
}

func boxSwatch(fill, border color.Color) func(draw.Canvas, vg.Length, vg.Length) {
	return func(dc draw.Canvas, x, y vg.Length) {
		pts := []vg.Point{{X: x, Y: y - vg.Points(5)}, {X: x + vg.Points(18), Y: y - vg.Points(5)}, {X: x + vg.Points(18), Y: y + vg.Points(5)}, {X: x, Y: y + vg.Points(5)}}
		dc.FillPolygon(fill, pts)
		if border != nil {
			dc.StrokeLines(draw.LineStyle{Color: border, Width: vg.Points(1)}, append(pts, pts[0]))
		}
	}
}

// summaryGrid draws three horizontal bar charts side by side — KV reuse,
// the share of hinted requests that left their last cluster, goodput —
// one bar per policy, top to bottom in policy order, each labelled with
// its value. A --compare pair shares its colour: solid when
// last_cluster_affinity is on, light with a border when it is off.
func summaryGrid(d *Document, dc draw.Canvas) {
	type metric struct {
		title, unit string
		v           func(*sim.Result) (float64, bool)
		label       func(float64) string
	}
	pctLabel := func(v float64) string {
		if v == 0 {
			return "0 %"
		}
		return fmt.Sprintf("%.1f %%", v)
	}
	ms := []metric{
		{"KV cache reuse", "cached / input tokens (%)",
			func(r *sim.Result) (float64, bool) { return 100 * r.KVReuse, true }, pctLabel},
		{"Returning requests that left their last cluster", "share of hinted requests (%)",
			func(r *sim.Result) (float64, bool) {
				return 100 * r.LeftLastClusterShare, r.ReturningRequests > 0
			}, pctLabel},
		{fmt.Sprintf("Goodput (TTFT ≤ %g ms)", d.Scenario.SLOTTFTMs), "requests/s",
			func(r *sim.Result) (float64, bool) { return r.GoodputRPS, true },
			func(v float64) string { return fmt.Sprintf("%.2f", v) }},
	}
	body, ly := header(dc, fmt.Sprintf("Policies compared — %s (measured from the end of the warm-up to the end of each run)", d.Scenario.Name))
	cs, _ := policyStyles(d)
	off := pairedOff(d)
	items := []legendItem{{boxSwatch(palette[0], nil), "last_cluster_affinity on (or a policy without it)"}}
	if len(off) > 0 {
		items = append(items, legendItem{boxSwatch(lighten(palette[0], 0.6), palette[0]), "the same algorithm with last_cluster_affinity off"})
	}
	legendLine(dc, ly, items)

	n := len(d.Policies)
	names := make([]string, n)
	blank := make([]string, n)
	for i, r := range d.Policies {
		names[n-1-i] = r.Policy
	}
	barW := min(vg.Points(18), (body.Max.Y-body.Min.Y-vg.Centimeter*2.5)/vg.Length(max(n, 1))*0.7)
	row := make([]*plot.Plot, len(ms))
	for k, m := range ms {
		p := plot.New()
		p.Title.Text = m.title
		p.Title.TextStyle.Font.Size = 11
		p.X.Label.Text = m.unit
		g := plotter.NewGrid()
		g.Horizontal.Color = nil
		p.Add(g)
		var pts plotter.XYs
		var texts []string
		maxV := 0.0
		for i, r := range d.Policies {
			y := float64(n - 1 - i)
			v, ok := m.v(r)
			if !ok {
				pts = append(pts, plotter.XY{X: 0, Y: y})
				texts = append(texts, "no hinted requests")
				continue
			}
			maxV = math.Max(maxV, v)
			if v > 0 {
				bar, err := plotter.NewBarChart(plotter.Values{v}, barW)
				if err == nil {
					bar.Horizontal = true
					bar.XMin = y
					bar.Color = cs[i]
					bar.LineStyle.Width = 0
					if off[r] {
						bar.Color = lighten(cs[i], 0.6)
						bar.LineStyle = draw.LineStyle{Color: cs[i], Width: vg.Points(1)}
					}
					p.Add(bar)
				}
			}
			pts = append(pts, plotter.XY{X: v, Y: y})
			texts = append(texts, m.label(v))
		}
		if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: texts}); err == nil {
			for i := range lb.TextStyle {
				lb.TextStyle[i].Font.Size = 9
				lb.TextStyle[i].XAlign = draw.XLeft
				lb.TextStyle[i].YAlign = draw.YCenter
			}
			lb.Offset = vg.Point{X: vg.Points(3)}
			p.Add(lb)
		}
		// Headroom for the value labels right of the longest bar.
		p.X.Min, p.X.Max = 0, math.Max(maxV, 1)*1.3
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
		if k == 0 {
			p.NominalY(names...)
		} else {
			p.NominalY(blank...)
		}
		p.Y.Tick.Label.Font.Size = 9
		p.Y.Tick.Length = 0
		p.Y.LineStyle.Width = 0
		row[k] = p
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(ms), PadX: vg.Centimeter * 0.8, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, body)
	for j, p := range row {
		p.Draw(canvases[0][j])
	}
}

// binMid is the middle of bin b of s, in simulated seconds.
func binMid(s *sim.Series, b int) float64 {
	return (float64(b) + 0.5) * float64(s.BinNs) / 1e9
}

// smoothBins returns the bin count of a centred window of about secs
// simulated seconds (odd, at least 1).
func smoothBins(s *sim.Series, secs float64) int {
	w := int(math.Round(secs / (float64(s.BinNs) / 1e9)))
	return max(1, w|1)
}

// smoothedLoad returns cluster c's slot utilisation (0–1) per bin of s,
// averaged over a centred window of w bins and weighted by the load
// samples in each bin; ok is false for bins whose window has no sample.
func smoothedLoad(s *sim.Series, c, w int) (v []float64, ok []bool) {
	v, ok = make([]float64, len(s.Bins)), make([]bool, len(s.Bins))
	for b := range s.Bins {
		sum, n := 0.0, 0.0
		for j := max(0, b-w/2); j <= min(len(s.Bins)-1, b+w/2); j++ {
			sum += s.Load[j*s.Clusters+c]
			n += float64(s.LoadSamples[j])
		}
		if n > 0 {
			v[b], ok[b] = sum/n, true
		}
	}
	return v, ok
}

// loadGrid draws one panel per policy: the busiest cluster's slot
// utilisation over time as a line, and the other clusters as a band from
// the least to the most busy with their mean, all smoothed over about
// loadSmoothS seconds, the measurement window marked.
func loadGrid(d *Document, dc draw.Canvas, rows, cols int) {
	body, ly := header(dc, fmt.Sprintf("Busy slots over time — %s (one panel per policy, smoothed over about %g s)", d.Scenario.Name, loadSmoothS))
	hot, band, mean := palette[2], color.RGBA{0xc9, 0xd3, 0xe0, 0xff}, color.RGBA{0x4e, 0x5d, 0x70, 0xff}
	grey := color.Gray{Y: 110}
	items := []legendItem{
		{lineSwatch(hot, vg.Points(2.2), nil), "the busiest cluster (in the title)"},
		{boxSwatch(band, nil), "the other clusters, least to most busy"},
		{lineSwatch(mean, vg.Points(1.4), nil), "their mean"},
	}
	if d.Scenario.WarmupS > 0 {
		items = append(items, legendItem{lineSwatch(grey, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}), "end of warm-up"})
	}
	if d.Scenario.DurationS > 0 {
		items = append(items, legendItem{lineSwatch(grey, vg.Points(1), []vg.Length{vg.Points(6), vg.Points(2)}), "sessions stop arriving"})
	}
	items = append(items, eventLegend(d)...)
	legendLine(dc, ly, items)

	window := timeWindow(d)
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for k, r := range d.Policies {
		s := r.Series
		busiest := 0
		for c := range r.Clusters {
			if r.Clusters[c].Utilization > r.Clusters[busiest].Utilization {
				busiest = c
			}
		}
		title := r.Policy
		if busiest < len(r.Clusters) {
			title = fmt.Sprintf("%s — busiest: %s (%.0f %% over the window)", r.Policy, r.Clusters[busiest].ClusterID, 100*r.Clusters[busiest].Utilization)
		}
		p := newPlot(title, "simulated time (s)", "busy slots (%)")
		p.Title.TextStyle.Font.Size = 11
		w := smoothBins(s, loadSmoothS)
		loads := make([][]float64, s.Clusters)
		oks := make([][]bool, s.Clusters)
		for c := 0; c < s.Clusters; c++ {
			loads[c], oks[c] = smoothedLoad(s, c, w)
		}
		var lo, hi, avg, top plotter.XYs
		for b := range s.Bins {
			t := binMid(s, b)
			if window > 0 && t > window {
				break
			}
			mn, mx, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
			for c := 0; c < s.Clusters; c++ {
				if !oks[c][b] {
					continue
				}
				v := 100 * loads[c][b]
				if c == busiest {
					top = append(top, plotter.XY{X: t, Y: v})
					continue
				}
				mn, mx, sum, n = math.Min(mn, v), math.Max(mx, v), sum+v, n+1
			}
			if n > 0 {
				lo = append(lo, plotter.XY{X: t, Y: mn})
				hi = append(hi, plotter.XY{X: t, Y: mx})
				avg = append(avg, plotter.XY{X: t, Y: sum / float64(n)})
			}
		}
		if len(lo) > 1 {
			ring := append(slices.Clone(hi), reversed(lo)...)
			if poly, err := plotter.NewPolygon(ring); err == nil {
				poly.Color = band
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
		}
		addLine(p, avg, mean, nil, "")
		addLine(p, top, hot, nil, "")
		markWindow(p, d, 0, 105, false)
		p.Y.Min, p.Y.Max = 0, 105
		p.Y.Tick.Marker = percentTicks(25)
		if window > 0 {
			p.X.Min, p.X.Max = 0, window
		}
		grid[k/cols][k%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter / 2,
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	canvases := plot.Align(grid, tiles, body)
	for i := range grid {
		for j := range grid[i] {
			if grid[i][j] != nil {
				grid[i][j].Draw(canvases[i][j])
			}
		}
	}
}

func reversed(pts plotter.XYs) plotter.XYs {
	out := slices.Clone(pts)
	slices.Reverse(out)
	return out
}

// smoothedReuse returns a run's KV reuse over time (%): cached / input
// tokens summed over a centred window of about reuseSmoothS seconds, so
// bins with few requests weigh little, for bins up to end (s).
func smoothedReuse(r *sim.Result, end float64) plotter.XYs {
	s := r.Series
	w := smoothBins(s, reuseSmoothS)
	var pts plotter.XYs
	for b := range s.Bins {
		t := binMid(s, b)
		if end > 0 && t > end {
			break
		}
		var in, cached int64
		for j := max(0, b-w/2); j <= min(len(s.Bins)-1, b+w/2); j++ {
			in += s.Bins[j].InputTokens
			cached += s.Bins[j].CachedTokens
		}
		if in > 0 {
			pts = append(pts, plotter.XY{X: t, Y: 100 * float64(cached) / float64(in)})
		}
	}
	return pts
}

// valueAt returns the y of pts at the point nearest to x (pts sorted by
// x), and false when pts is empty.
func valueAt(pts plotter.XYs, x float64) (float64, bool) {
	if len(pts) == 0 {
		return 0, false
	}
	i, _ := slices.BinarySearchFunc(pts, x, func(p plotter.XY, x float64) int {
		switch {
		case p.X < x:
			return -1
		case p.X > x:
			return 1
		}
		return 0
	})
	switch {
	case i == len(pts):
		i--
	case i > 0 && x-pts[i-1].X < pts[i].X-x:
		i--
	}
	return pts[i].Y, true
}

// reuseGrid draws KV cache reuse over time so that the effect of
// last_cluster_affinity can be seen: for each --compare pair, the flag off
// (dashed) and on (solid) on a zoomed axis, and beside it the difference
// on − off in points; then every other policy in one panel. All series
// are smoothed over about reuseSmoothS seconds.
func reuseGrid(d *Document, dc draw.Canvas) {
	body, ly := header(dc, fmt.Sprintf("KV cache reuse over time — %s (smoothed over about %g s)", d.Scenario.Name, reuseSmoothS))
	grey := color.Gray{Y: 110}
	items := []legendItem{
		{lineSwatch(palette[0], vg.Points(1.8), nil), "last_cluster_affinity on"},
		{lineSwatch(palette[0], vg.Points(1.8), dashed), "off"},
	}
	if d.Scenario.WarmupS > 0 {
		items = append(items, legendItem{lineSwatch(grey, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}), "end of warm-up"})
	}
	if d.Scenario.DurationS > 0 {
		items = append(items, legendItem{lineSwatch(grey, vg.Points(1), []vg.Length{vg.Points(6), vg.Points(2)}), "sessions stop arriving"})
	}
	items = append(items, eventLegend(d)...)
	legendLine(dc, ly, items)

	pairs := FlagEffects(d)
	inPair := map[*sim.Result]bool{}
	for _, e := range pairs {
		inPair[e.Off], inPair[e.On] = true, true
	}
	var others []int
	for i, r := range d.Policies {
		if !inPair[r] {
			others = append(others, i)
		}
	}
	nRows := len(pairs)
	if len(others) > 0 {
		nRows++
	}
	if nRows == 0 {
		return
	}
	cs, ds := policyStyles(d)
	colour := map[*sim.Result]color.Color{}
	for i, r := range d.Policies {
		colour[r] = cs[i]
	}
	rowH := (body.Max.Y - body.Min.Y) / vg.Length(nRows)
	rowCanvas := func(i int) draw.Canvas {
		return draw.Crop(body, 0, 0, vg.Length(nRows-1-i)*rowH, -vg.Length(i)*rowH)
	}
	pad := func(c draw.Canvas) draw.Canvas {
		return draw.Crop(c, vg.Points(4), -vg.Points(10), vg.Points(6), -vg.Points(6))
	}
	for i, e := range pairs {
		end := math.Max(e.Off.SimulatedS, e.On.SimulatedS)
		off, on := smoothedReuse(e.Off, end), smoothedReuse(e.On, end)
		level := newPlot(fmt.Sprintf("%s: KV reuse with last_cluster_affinity off and on", e.Algorithm), "simulated time (s)", "cached / input tokens (%)")
		level.Title.TextStyle.Font.Size = 11
		lo, hi := 100.0, 0.0
		for _, pts := range []plotter.XYs{off, on} {
			for _, pt := range pts {
				if pt.X >= d.Scenario.WarmupS {
					lo, hi = math.Min(lo, pt.Y), math.Max(hi, pt.Y)
				}
			}
		}
		if lo > hi {
			lo, hi = 0, 100
		}
		lo, hi = math.Max(0, math.Floor(lo/5)*5-5), math.Min(100, math.Ceil(hi/5)*5+5)
		addLine(level, off, colour[e.Off], dashed, fmt.Sprintf("off: %.1f %% overall", 100*e.Off.KVReuse))
		addLine(level, on, colour[e.On], nil, fmt.Sprintf("on: %.1f %% overall", 100*e.On.KVReuse))
		markWindow(level, d, lo, hi, false)
		level.Y.Min, level.Y.Max = lo, hi
		level.X.Min, level.X.Max = 0, end
		level.Legend.Top, level.Legend.Left = false, false
		level.Legend.TextStyle.Font.Size = 10
		level.Legend.Padding = vg.Points(2)

		var diff plotter.XYs
		for _, pt := range on {
			if v, ok := valueAt(off, pt.X); ok {
				diff = append(diff, plotter.XY{X: pt.X, Y: pt.Y - v})
			}
		}
		delta := 100 * (e.On.KVReuse - e.Off.KVReuse)
		dp := newPlot(fmt.Sprintf("on − off: %+.1f points overall", delta), "simulated time (s)", "difference (points)")
		dp.Title.TextStyle.Font.Size = 11
		span := 1.0
		for _, pt := range diff {
			if pt.X >= d.Scenario.WarmupS {
				span = math.Max(span, math.Abs(pt.Y))
			}
		}
		span = math.Ceil(span*1.1) + 0.5
		if zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: end, Y: 0}}); err == nil {
			zero.Color, zero.Width = color.Black, vg.Points(0.8)
			dp.Add(zero)
		}
		addLine(dp, diff, colour[e.On], nil, "")
		markWindow(dp, d, -span, span, false)
		dp.Y.Min, dp.Y.Max = -span, span
		dp.X.Min, dp.X.Max = 0, end

		rc := rowCanvas(i)
		split := rc.Min.X + (rc.Max.X-rc.Min.X)*0.6
		left, right := rc, rc
		left.Max.X, right.Min.X = split, split
		level.Draw(pad(left))
		dp.Draw(pad(right))
	}
	if len(others) > 0 {
		window := timeWindow(d)
		p := newPlot("the other policies", "simulated time (s)", "cached / input tokens (%)")
		p.Title.TextStyle.Font.Size = 11
		for _, i := range others {
			r := d.Policies[i]
			addLine(p, smoothedReuse(r, window), cs[i], ds[i], fmt.Sprintf("%s (%.1f %% overall)", r.Policy, 100*r.KVReuse))
		}
		markWindow(p, d, 0, 100, false)
		p.Y.Min, p.Y.Max = 0, 100
		p.Y.Tick.Marker = percentTicks(10)
		if window > 0 {
			p.X.Min, p.X.Max = 0, window
		}
		p.Legend.TextStyle.Font.Size = 10
		sideLegend(p, pad(rowCanvas(nRows-1)))
	}
}
