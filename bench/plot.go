package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A figure is one plot file: a title, panels side by side, and a legend
// in a strip at the right so it never covers data.
type figure struct {
	name, title string
	panels      []*plot.Plot
	legend      plot.Legend
}

// writePlots draws every figure of the results as NAME.png and NAME.svg:
// throughput and p99 latency against clients (one panel per workload, one
// line per arm, min–max bars), then the spec's mechanism plots.
func writePlots(dir string, res *Results) error {
	if len(res.Runs) == 0 {
		return nil
	}
	figs := []figure{
		res.clientsFigure("throughput", "Throughput", "tps", "tps (transactions per second)", "", nil),
		res.clientsFigure("latency_p99", "99th-percentile latency", "latency_p99_ms", "p99 latency (ms)", "", nil),
	}
	for _, p := range res.Spec.Plots {
		switch {
		case p.Kind == "wait_shares":
			figs = append(figs, res.waitSharesFigure(p))
		case p.X == "variant":
			figs = append(figs, res.variantFigure(p))
		default:
			figs = append(figs, res.clientsFigure(p.Name, p.Title, "", "", p.Workload, p.Y))
		}
	}
	for _, f := range figs {
		if err := f.write(dir); err != nil {
			return fmt.Errorf("plot %s: %w", f.name, err)
		}
	}
	return nil
}

func (res *Results) workloads(only string) []Workload {
	var out []Workload
	for _, w := range res.Spec.Workloads {
		if only == "" || w.Name == only {
			out = append(out, w)
		}
	}
	return out
}

// armStyle gives every arm the same colour, marker and dashes in every
// figure; PostgreSQL is drawn black.
func (res *Results) armStyle(a string) (color.Color, draw.GlyphDrawer, []vg.Length) {
	i := slices.Index(res.Arms, a)
	if a == PostgresArm {
		return color.Black, draw.CrossGlyph{}, nil
	}
	return plotutil.DarkColors[i%len(plotutil.DarkColors)], plotutil.Shape(i), plotutil.Dashes(i / len(plotutil.DarkColors))
}

// clientsFigure draws metric (or each of ys) against clients, one line
// per arm with its min–max range, one panel per workload and metric.
func (res *Results) clientsFigure(name, title, metric, ylabel, workload string, ys []string) figure {
	if metric != "" {
		ys = []string{metric}
	}
	f := figure{name: name, title: title, legend: plot.NewLegend()}
	inLegend := map[string]bool{}
	for _, w := range res.workloads(workload) {
		for _, y := range ys {
			p := newPanel(panelTitle(w, y, metric != ""), "clients (pgbench -c)", orLabel(ylabel, y))
			res.clientsAxis(p)
			drawn := false
			for _, a := range res.Arms {
				pts, errs := plotter.XYs{}, errRange{}
				for _, c := range res.Spec.Clients {
					x := res.cellOf(w.Name, a, c, y)
					if x.n == 0 {
						continue
					}
					pts = append(pts, plotter.XY{X: float64(c), Y: x.median})
					errs = append(errs, [2]float64{x.median - x.min, x.max - x.median})
				}
				if len(pts) == 0 {
					continue
				}
				drawn = true
				clr, glyph, dashes := res.armStyle(a)
				line, sc, _ := plotter.NewLinePoints(pts)
				line.Color, line.Width, line.Dashes = clr, vg.Points(1.5), dashes
				sc.Color, sc.Shape, sc.Radius = clr, glyph, vg.Points(3)
				eb, _ := plotter.NewYErrorBars(errBars{pts, errs})
				eb.Color = clr
				p.Add(line, sc, eb)
				if !inLegend[a] {
					f.legend.Add(a, line, sc)
					inLegend[a] = true
				}
			}
			if !drawn {
				p.Add(noData(p))
			}
			fromZero(p)
			f.panels = append(f.panels, p)
		}
	}
	return f
}

func panelTitle(w Workload, y string, single bool) string {
	t := w.Name + " (-M " + w.Mode + ")"
	if !single {
		t += ": " + y
	}
	return t
}

func orLabel(label, metric string) string {
	if label != "" {
		return label
	}
	return metricLabel(metric)
}

// metricLabel is an axis label for a derived metric.
func metricLabel(m string) string {
	base, perTxn := strings.CutSuffix(m, "/txn")
	fam, param, _ := strings.Cut(base, ":")
	label := map[string]string{
		"fastpath_hit_ratio": "fast-path hit ratio", "fastpath_hits": "fast-path hits", "fastpath_fallbacks": "fast-path fallbacks",
		"ext_pages_per_extension": "pages per extension", "ext_extensions": "relation extensions", "ext_pages": "pages added",
		"ext_lock_waits": "extension-lock waits", "ext_lock_wait_s": "extension-lock wait (s)",
		"group_clear_batch_mean": "xids cleared per group (mean)", "group_clear_leaders": "group-clear leaders",
		"group_clear_followers": "group-clear followers", "procarray_clears_direct": "direct ProcArray clears",
		"procarray_clears_locked": "ProcArray clears that waited", "commits": "commits",
		"lwlock_waits": param + " LWLock waits", "lwlock_wait_s": param + " LWLock wait (s)",
		"lwlock_wakeups": param + " wake-ups", "lwlock_futile_wakeups": param + " futile wake-ups",
		"lwlock_acquisitions": param + " acquisitions", "wakeups_per_wait": param + " wake-ups per wait",
		"lock_waits": param + " lock waits", "lock_wait_s": param + " lock wait (s)",
		"wait_share": "share of backend time in " + param, "wait_time_share": "share of backend time in " + param,
		"server_cpu_s": "server CPU (s)", "pgbench_cpu_s": "pgbench CPU (s)", "latency_p99_ms": "p99 latency (ms)",
		"latency_p50_ms": "median latency (ms)", "latency_mean_ms": "mean latency (ms)", "tps": "tps",
	}[fam]
	if label == "" {
		label = base
	}
	if perTxn {
		label += " per transaction"
	}
	return label
}

// variantFigure draws each metric of p.Y as bars, one per arm, at one
// client count, one panel per workload and metric.
func (res *Results) variantFigure(p PlotSpec) figure {
	clients := p.Clients
	if clients == 0 {
		clients = slices.Max(res.Spec.Clients)
	}
	f := figure{name: p.Name, title: fmt.Sprintf("%s (%d clients)", p.Title, clients), legend: plot.NewLegend()}
	inLegend := map[string]bool{}
	for _, w := range res.workloads(p.Workload) {
		for _, y := range p.Y {
			pl := newPanel(panelTitle(w, y, len(p.Y) == 1), "", metricLabel(y))
			var names []string
			var pts plotter.XYs
			var errs errRange
			for _, a := range res.Arms {
				x := res.cellOf(w.Name, a, clients, y)
				if x.n == 0 {
					continue
				}
				clr, _, _ := res.armStyle(a)
				bar, _ := plotter.NewBarChart(plotter.Values{x.median}, vg.Points(28))
				bar.XMin = float64(len(names))
				bar.Color = clr
				bar.LineStyle.Width = 0
				pl.Add(bar)
				if !inLegend[a] {
					f.legend.Add(a, bar)
					inLegend[a] = true
				}
				pts = append(pts, plotter.XY{X: float64(len(names)), Y: x.median})
				errs = append(errs, [2]float64{x.median - x.min, x.max - x.median})
				names = append(names, a)
			}
			if len(names) == 0 {
				pl.Add(noData(pl))
			} else {
				eb, _ := plotter.NewYErrorBars(errBars{pts, errs})
				pl.Add(eb)
				pl.NominalX(names...)
				pl.X.Label.Text = "variant"
			}
			fromZero(pl)
			f.panels = append(f.panels, pl)
		}
	}
	return f
}

// waitSharesFigure stacks the sampled wait-event shares of each arm at one
// client count: what the backends were doing, four samples a second.
func (res *Results) waitSharesFigure(p PlotSpec) figure {
	clients := p.Clients
	if clients == 0 {
		clients = slices.Max(res.Spec.Clients)
	}
	f := figure{name: p.Name, title: fmt.Sprintf("%s (%d clients)", orTitle(p.Title, "Share of backend time per wait event"), clients), legend: plot.NewLegend()}
	// The events to show: the largest, the rest summed as "other".
	peak := map[string]float64{}
	for _, r := range res.Runs {
		if r.Clients == clients && r.Status == StatusOK {
			for k, v := range r.WaitShares {
				peak[k] = max(peak[k], v)
			}
		}
	}
	events := make([]string, 0, len(peak))
	for k := range peak {
		events = append(events, k)
	}
	sort.Slice(events, func(i, j int) bool {
		return peak[events[i]] > peak[events[j]] || peak[events[i]] == peak[events[j]] && events[i] < events[j]
	})
	const maxEvents = 8
	other := len(events) > maxEvents
	if other {
		events = events[:maxEvents-1]
	}
	layers := append(slices.Clone(events), "")
	if !other {
		layers = events
	}
	inLegend := map[string]bool{}
	for _, w := range res.workloads(p.Workload) {
		pl := newPanel(w.Name+" (-M "+w.Mode+")", "", "share of backend samples")
		var names []string
		var vals [][]float64 // [layer][arm]
		vals = make([][]float64, len(layers))
		for _, a := range res.Arms {
			shares, ok := res.meanShares(w.Name, a, clients)
			if !ok {
				continue
			}
			names = append(names, a)
			rest := 1.0
			for i, ev := range layers {
				v := shares[ev]
				if ev == "" {
					v = max(0, rest)
				}
				rest -= v
				vals[i] = append(vals[i], v)
			}
		}
		if len(names) == 0 {
			pl.Add(noData(pl))
			f.panels = append(f.panels, pl)
			continue
		}
		var below *plotter.BarChart
		for i, ev := range layers {
			bars, _ := plotter.NewBarChart(plotter.Values(vals[i]), vg.Points(28))
			bars.Color = eventColor(i)
			bars.LineStyle.Width = vg.Points(0.3)
			if below != nil {
				bars.StackOn(below)
			}
			below = bars
			pl.Add(bars)
			label := ev
			if ev == "" {
				label = "other"
			}
			if !inLegend[label] {
				f.legend.Add(label, bars)
				inLegend[label] = true
			}
		}
		pl.NominalX(names...)
		pl.X.Label.Text = "variant"
		pl.Y.Min, pl.Y.Max = 0, 1
		f.panels = append(f.panels, pl)
	}
	return f
}

func orTitle(t, def string) string {
	if t != "" {
		return t
	}
	return def
}

// meanShares averages the sampled shares of a cell's successful runs.
func (res *Results) meanShares(workload, arm string, clients int) (map[string]float64, bool) {
	out := map[string]float64{}
	n := 0
	for _, r := range res.Runs {
		if r.Workload == workload && r.Variant == arm && r.Clients == clients && r.Status == StatusOK && r.Samples > 0 {
			n++
			for k, v := range r.WaitShares {
				out[k] += v
			}
		}
	}
	for k := range out {
		out[k] /= float64(n)
	}
	return out, n > 0
}

var eventPalette = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, color.RGBA{0xf2, 0x8e, 0x2b, 0xff}, color.RGBA{0xe1, 0x57, 0x59, 0xff},
	color.RGBA{0x76, 0xb7, 0xb2, 0xff}, color.RGBA{0x59, 0xa1, 0x4f, 0xff}, color.RGBA{0xed, 0xc9, 0x48, 0xff},
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, color.RGBA{0xba, 0xb0, 0xac, 0xff},
}

func eventColor(i int) color.Color { return eventPalette[i%len(eventPalette)] }

// tidyTicks are gonum's default ticks labelled as the tables print
// numbers (25,000 rather than 25000.00).
type tidyTicks struct{}

func (tidyTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			v := ticks[i].Value
			switch {
			case math.Abs(v) >= 1000:
				ticks[i].Label = groupThousands(strconv.FormatFloat(v, 'f', 0, 64))
			default:
				ticks[i].Label = strconv.FormatFloat(v, 'g', 6, 64)
			}
		}
	}
	return ticks
}

func newPanel(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Y.Tick.Marker = tidyTicks{}
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

// clientsAxis puts a tick at every client count, on a log scale when
// they span a factor of 8 or more.
func (res *Results) clientsAxis(p *plot.Plot) {
	cs := res.Spec.Clients
	lo, hi := slices.Min(cs), slices.Max(cs)
	var ticks []plot.Tick
	for _, c := range cs {
		ticks = append(ticks, plot.Tick{Value: float64(c), Label: strconv.Itoa(c)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if hi >= 8*lo {
		p.X.Scale = plot.LogScale{}
	}
	pad := 0.05 * float64(hi-lo)
	if hi >= 8*lo {
		p.X.Min, p.X.Max = float64(lo)/1.15, float64(hi)*1.15
	} else {
		p.X.Min, p.X.Max = float64(lo)-pad-0.5, float64(hi)+pad+0.5
	}
}

// fromZero starts the y axis at zero (all the plotted quantities are
// non-negative) and leaves room above the highest point.
func fromZero(p *plot.Plot) {
	if p.Y.Min > 0 || math.IsInf(p.Y.Min, 0) {
		p.Y.Min = 0
	}
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	p.Y.Max *= 1.05
}

// noData is a label for a panel without data.
func noData(p *plot.Plot) plot.Plotter {
	l, _ := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{"no data"}})
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	return l
}

// errBars is plotter.XYs with asymmetric (low, high) errors.
type errBars struct {
	plotter.XYs
	e errRange
}

type errRange [][2]float64

func (e errBars) YError(i int) (float64, float64) { return e.e[i][0], e.e[i][1] }

// write renders the figure as NAME.png and NAME.svg.
func (f figure) write(dir string) error {
	cols := min(len(f.panels), 3)
	rows := (len(f.panels) + cols - 1) / cols
	w := vg.Length(cols)*vg.Millimeter*105 + vg.Millimeter*55
	h := vg.Length(rows)*vg.Millimeter*85 + vg.Millimeter*12
	png := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(110))
	f.draw(draw.New(png), cols, rows)
	if err := writeTo(filepath.Join(dir, f.name+".png"), vgimg.PngCanvas{Canvas: png}); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	f.draw(draw.New(svg), cols, rows)
	return writeTo(filepath.Join(dir, f.name+".svg"), svg)
}

func (f figure) draw(dc draw.Canvas, cols, rows int) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	titleH := vg.Millimeter * 12
	legendW := vg.Millimeter * 55
	sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, vg.Points(14)), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
	dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X - legendW) / 2, Y: dc.Max.Y - vg.Millimeter*3}, f.title)

	area := draw.Crop(dc, 0, -legendW, 0, -titleH)
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range grid[i] {
			if k := i*cols + j; k < len(f.panels) {
				grid[i][j] = f.panels[k]
			}
		}
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadTop: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, area)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	lg := f.legend
	lg.Top, lg.Left = true, true
	lg.TextStyle.Font.Size = vg.Points(10)
	lg.ThumbnailWidth = vg.Millimeter * 8
	lg.Padding = vg.Points(5)
	lg.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-legendW+vg.Millimeter*3, 0, 0, -titleH-vg.Millimeter*4))
}

func writeTo(path string, w io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
