// Command distplot draws the figures of docs/distributed.md's "Parameter
// server" and "Pipeline parallelism" sections from the CSVs that
// scripts/netns_ps.sh, scripts/ps_staleness.sh and pipe's -pipe.bubble
// measurement write:
//
//	cd internal/tools/distplot && go run .
//
// It is a module of its own (go.mod beside it), so that its plotting
// library stays out of fathom's build; its default paths are relative to
// this folder.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

var palette = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255},
	color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255},
	color.RGBA{R: 148, G: 103, B: 189, A: 255},
}

func main() {
	root := flag.String("root", "../../..", "the repository's root")
	flag.Parse()
	for _, f := range []func(string) error{netnsPS, staleness, bubble} {
		if err := f(*root); err != nil {
			fmt.Fprintln(os.Stderr, "distplot:", err)
			os.Exit(1)
		}
	}
}

// readCSV returns the rows of a CSV as maps by column name.
func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) < 2 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows, nil
}

func num(m map[string]string, col string) float64 {
	v, err := strconv.ParseFloat(m[col], 64)
	if err != nil {
		panic(fmt.Sprintf("column %s: %q is not a number", col, m[col]))
	}
	return v
}

func median(v []float64) float64 {
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func save(p *plot.Plot, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp.png"
	if err := p.Save(7.5*vg.Inch, 5*vg.Inch, tmp); err != nil {
		return err
	}
	fmt.Println("written", path)
	return os.Rename(tmp, path)
}

// netnsPS: ms per step of ring DDP, PS with 1 server and PS over 4 servers.
func netnsPS(root string) error {
	rows, err := readCSV(filepath.Join(root, "ps/testdata/results/netns_ps_1gbit.csv"))
	if err != nil {
		return err
	}
	names := []string{"ring", "ps1", "ps4"}
	labels := []string{"ring all-reduce (DDP)", "PS, 1 server", "PS, 4 servers (sharded)"}
	vals := make(plotter.Values, len(names))
	for i, n := range names {
		var v []float64
		for _, r := range rows {
			if r["config"] == n {
				v = append(v, num(r, "ms_per_step"))
			}
		}
		if len(v) == 0 {
			return fmt.Errorf("netns_ps: no rows of %s", n)
		}
		vals[i] = median(v)
	}
	p := plot.New()
	p.Title.Text = "Fashion-MNIST MLP, 4 hosts at 1 Gbit/s, 4 workers: time per step"
	p.Y.Label.Text = "ms per step (median)"
	bars, err := plotter.NewBarChart(vals, vg.Points(50))
	if err != nil {
		return err
	}
	bars.Color = palette[0]
	p.Add(bars)
	p.NominalX(labels...)
	for i, v := range vals {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: float64(i), Y: v}}, Labels: []string{fmt.Sprintf("%.1f ms (%.2f× ring)", v, v/vals[0])}})
		if err != nil {
			return err
		}
		l.Offset.X = -vg.Points(30)
		l.Offset.Y = vg.Points(3)
		p.Add(l)
	}
	p.Y.Max = vals[1] * 1.2
	return save(p, filepath.Join(root, "docs/img/ps_vs_ring_1gbit.png"))
}

// staleness: test accuracy per epoch, synchronous and K = 0, 1, 4.
func staleness(root string) error {
	rows, err := readCSV(filepath.Join(root, "ps/testdata/results/staleness.csv"))
	if err != nil {
		return err
	}
	series := map[string]plotter.XYs{}
	var order []string
	for _, r := range rows {
		m := r["mode"]
		if _, ok := series[m]; !ok {
			order = append(order, m)
		}
		series[m] = append(series[m], plotter.XY{X: num(r, "epoch"), Y: num(r, "test_accuracy")})
	}
	p := plot.New()
	p.Title.Text = "Fashion-MNIST MLP, 4 workers + 1 server: staleness"
	p.X.Label.Text = "epoch"
	p.Y.Label.Text = "test accuracy"
	p.Legend.Top, p.Legend.Left = true, true
	for i, m := range order {
		line, dots, err := plotter.NewLinePoints(series[m])
		if err != nil {
			return err
		}
		c := palette[i%len(palette)]
		line.Color, dots.Color = c, c
		line.Width = vg.Points(2)
		p.Add(line, dots)
		name := "synchronous"
		if m != "sync" {
			name = "asynchronous, staleness " + m
		}
		p.Legend.Add(name, line, dots)
	}
	return save(p, filepath.Join(root, "docs/img/ps_staleness.png"))
}

// bubble: measured bubble against M and the ideal (K−1)/(M+K−1).
func bubble(root string) error {
	rows, err := readCSV(filepath.Join(root, "pipe/testdata/results/bubble.csv"))
	if err != nil {
		return err
	}
	type key struct {
		passes, sched string
		k             int
	}
	series := map[key]plotter.XYs{}
	ideal := map[int]plotter.XYs{}
	for _, r := range rows {
		k := int(num(r, "stages"))
		m := num(r, "micro")
		kk := key{r["passes"], r["schedule"], k}
		series[kk] = append(series[kk], plotter.XY{X: m, Y: num(r, "measured_bubble")})
		if r["schedule"] == "gpipe" && r["passes"] == "sleep" {
			ideal[k] = append(ideal[k], plotter.XY{X: m, Y: num(r, "ideal_bubble")})
		}
	}
	keys := make([]key, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.passes != b.passes {
			return a.passes > b.passes
		}
		if a.k != b.k {
			return a.k < b.k
		}
		return a.sched > b.sched
	})
	p := plot.New()
	p.Title.Text = "Pipeline bubble against (K-1)/(M+K-1)"
	p.X.Label.Text = "micro-batches M"
	p.Y.Label.Text = "bubble (idle fraction of a step)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 1, Label: "1"}, {Value: 2, Label: "2"}, {Value: 4, Label: "4"}, {Value: 8, Label: "8"}, {Value: 16, Label: "16"}})
	p.Y.Min, p.Y.Max = 0, 1.6 // room for the legend above the curves
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"}, {Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}})
	p.Legend.Top = true
	for i, k := range keys {
		line, dots, err := plotter.NewLinePoints(series[k])
		if err != nil {
			return err
		}
		c := palette[i%4]
		line.Color, dots.Color = c, c
		line.Width = vg.Points(1.5)
		what := "fixed-time passes"
		if k.passes == "compute" {
			what = "real MLP passes, 2 busy cores"
			line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		}
		p.Add(line, dots)
		p.Legend.Add(fmt.Sprintf("%s K=%d, %s", k.sched, k.k, what), line, dots)
	}
	for _, k := range []int{2, 4} {
		xy, ok := ideal[k]
		if !ok {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		l.Color = color.Black
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("(K-1)/(M+K-1), K=%d", k), l)
	}
	return save(p, filepath.Join(root, "docs/img/pipe_bubble.png"))
}
