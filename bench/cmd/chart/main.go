// Command chart draws the side-by-side lock benchmark (bench/) as a PNG:
// uncontended Lock+Unlock per second, and acquisitions per second and wait
// p99 with 32 waiters, per library, each bar the median over every run in
// the input.
//
//	cd bench && go test -run '^$' -bench . -count 8 > bench.txt
//	go run ./cmd/chart -o chart.png bench.txt
//
// It reads raw `go test -bench` output (files, or standard input when none
// are named), the same text benchstat reads.
package main

import (
	"flag"
	"fmt"
	"image/color"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func main() {
	out := flag.String("o", "chart.png", "PNG file to write")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: chart [-o chart.png] [bench.txt ...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		slog.Error("chart", "err", err)
		os.Exit(1)
	}
}

func run(out string, files []string) error {
	var readers []io.Reader
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		readers = append(readers, f)
	}
	if len(readers) == 0 {
		readers = append(readers, os.Stdin)
	}
	res, err := parse(io.MultiReader(readers...))
	if err != nil {
		return err
	}
	return render(res, out)
}

const width, panelHeight = 9 * vg.Inch, 3 * vg.Inch

// panel is one bar chart of the figure.
type panel struct {
	prefix, groupBy, unit, label string // what collect gathers
	title, axis                  string
}

var panels = []panel{
	{"BenchmarkUncontended/", "goroutines", "ops/s", "{} goroutines",
		"Uncontended Lock+Unlock per second (one client, each goroutine its own lock)", "Lock+Unlock/s"},
	{"BenchmarkContended/", "waiters", "acq/s", "{} waiters",
		"Contended, 1 ms hold, each waiter its own client: acquisitions per second", "acquisitions/s"},
	{"BenchmarkContended/", "waiters", "wait-p99-ms", "{} waiters",
		"Contended: wait p99 from calling Lock to holding (lower is better)", "ms"},
}

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// render draws one panel per entry of panels that has data, stacked, and
// writes the PNG.
func render(res *results, out string) error {
	var plots [][]*plot.Plot
	for _, pn := range panels {
		p, err := barPanel(res, pn)
		if err != nil {
			return err
		}
		if p != nil {
			if len(plots) == 0 && res.cpus != "" {
				p.Title.Text += "\n" + placement(res.cpus)
			}
			plots = append(plots, []*plot.Plot{p})
		}
	}
	if len(plots) == 0 {
		return fmt.Errorf("no BenchmarkUncontended or BenchmarkContended results with a lib= key")
	}
	img := vgimg.NewWith(vgimg.UseWH(width, panelHeight*vg.Length(len(plots))), vgimg.UseDPI(110))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// barPanel is a horizontal grouped bar chart, libraries top to bottom in
// their order of first appearance in the whole input, each bar labelled with its value. It returns nil
// when the input has nothing for the panel.
func barPanel(res *results, pn panel) (*plot.Plot, error) {
	ss, _, runs, most := res.collect(pn.prefix, pn.groupBy, pn.unit, pn.label)
	if len(ss) == 0 {
		return nil, nil
	}
	libs := res.libs()
	p := plot.New()
	title := pn.title
	if len(ss) == 1 {
		title += ", " + ss[0].label
	}
	p.Title.Text = title + "; " + medianOf(runs, most)
	p.X.Label.Text = pn.axis
	p.X.Min = 0
	// Top to bottom in input order: NominalY counts from the bottom.
	rows := slices.Clone(libs)
	slices.Reverse(rows)
	p.NominalY(rows...)
	// Each library's group of bars fills 70 % of its row.
	row := (panelHeight - vg.Inch) / vg.Length(len(rows))
	barWidth := row * 0.7 / vg.Length(len(ss))
	top := 0.0
	for gi, s := range ss {
		vals := make(plotter.Values, len(rows))
		xys := make(plotter.XYs, len(rows))
		labels := make([]string, len(rows))
		for i, lib := range rows {
			v, ok := s.values[lib]
			vals[i] = v
			xys[i] = plotter.XY{X: v, Y: float64(i)}
			if ok {
				labels[i] = format(v)
			}
			top = math.Max(top, v)
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, err
		}
		bars.Horizontal = true
		bars.Color = palette[gi%len(palette)]
		bars.LineStyle.Width = 0
		// Groups stack downwards from the library's row: first group on top.
		bars.Offset = barWidth * vg.Length(float64(len(ss)-1)/2-float64(gi))
		p.Add(bars)
		if len(ss) > 1 {
			p.Legend.Add(s.label, bars)
		}
		lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return nil, err
		}
		for i := range lbl.TextStyle {
			lbl.TextStyle[i].YAlign = draw.YCenter
			lbl.TextStyle[i].Font.Size = vg.Points(8)
		}
		lbl.Offset = vg.Point{X: vg.Points(3), Y: bars.Offset}
		p.Add(lbl)
	}
	p.X.Max = top * 1.4 // room for the value labels and the legend
	p.X.Tick.Marker = axisTicks{}
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(4)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	return p, nil
}

// placement says in words where client and server ran, from the
// benchmarks' "cpus:" line ("shared 0-1" or "client 0, server 1").
func placement(cpus string) string {
	if list, ok := strings.CutPrefix(cpus, "shared "); ok {
		return "client and redis-server share " + cpuList(list)
	}
	client, server, ok := strings.Cut(cpus, ", server ")
	client, ok2 := strings.CutPrefix(client, "client ")
	if !ok || !ok2 {
		return "CPUs: " + cpus
	}
	return "client on " + cpuList(client) + ", redis-server on " + cpuList(server)
}

// cpuList names a taskset-style list: "CPU 1", "CPUs 0-1".
func cpuList(list string) string {
	if strings.ContainsAny(list, ",-") {
		return "CPUs " + list
	}
	return "CPU " + list
}

// medianOf says how many runs each bar's median is over.
func medianOf(fewest, most int) string {
	switch {
	case fewest == most && most == 1:
		return "one run"
	case fewest == most:
		return fmt.Sprintf("median of %d runs", most)
	}
	return fmt.Sprintf("median of %d runs (of %d where a run failed)", most, fewest)
}

// axisTicks are the default ticks labelled without trailing zeros, thousands
// as k.
type axisTicks struct{}

func (axisTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label == "" {
			continue
		}
		v := ticks[i].Value
		if v >= 1000 {
			ticks[i].Label = strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
		} else {
			ticks[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ticks
}

// format prints a value with three significant figures, thousands as k.
func format(v float64) string {
	switch {
	case v >= 10000:
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}
