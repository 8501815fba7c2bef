// Command allreduceplot draws all-reduce time against message size from the
// CSV that comm/testdata/netns_bench.sh writes, one line per algorithm, with
// the time the 2(N−1)K/N argument predicts for a ring at link rate.
//
//	cd internal/tools/allreduceplot && go run .
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
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

type point struct{ size, ms float64 }

func main() {
	in := flag.String("in", "../../../comm/testdata/results/netns_1gbit_n4.csv", "CSV written by netns_bench.sh")
	out := flag.String("out", "../../../docs/img/allreduce_ring_vs_naive.png", "PNG to write")
	link := flag.Float64("link-gbps", 0.125, "link rate in GB/s (1 Gbit/s = 0.125)")
	flag.Parse()
	if err := run(*in, *out, *link); err != nil {
		fmt.Fprintln(os.Stderr, "allreduceplot:", err)
		os.Exit(1)
	}
}

func run(in, out string, link float64) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: reading header: %w", in, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"algo", "world", "size_bytes", "latency_us"} {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("%s: no column %q", in, need)
		}
	}
	// Median over repetitions of each (algo, size).
	samples := map[string]map[float64][]float64{}
	world := 0
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", in, line, err)
		}
		size, err1 := strconv.ParseFloat(rec[col["size_bytes"]], 64)
		lat, err2 := strconv.ParseFloat(rec[col["latency_us"]], 64)
		w, err3 := strconv.Atoi(rec[col["world"]])
		if err1 != nil || err2 != nil || err3 != nil {
			return fmt.Errorf("%s:%d: bad number in %v", in, line, rec)
		}
		world = w
		algo := rec[col["algo"]]
		if samples[algo] == nil {
			samples[algo] = map[float64][]float64{}
		}
		samples[algo][size] = append(samples[algo][size], lat/1000)
	}
	if len(samples) == 0 {
		return fmt.Errorf("%s: no rows", in)
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("All-reduce across %d hosts, %.0f Mbit/s links", world, link*8000)
	p.X.Label.Text = "message size (MiB)"
	p.Y.Label.Text = "time per all-reduce (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true

	colors := map[string]color.Color{
		"ring":  color.RGBA{R: 31, G: 119, B: 180, A: 255},
		"naive": color.RGBA{R: 214, G: 39, B: 40, A: 255},
		"rd":    color.RGBA{R: 44, G: 160, B: 44, A: 255},
	}
	algos := make([]string, 0, len(samples))
	for a := range samples {
		algos = append(algos, a)
	}
	sort.Strings(algos)
	var sizes []float64
	for _, algo := range algos {
		var pts []point
		for size, v := range samples[algo] {
			sort.Float64s(v)
			pts = append(pts, point{size, v[len(v)/2]})
		}
		sort.Slice(pts, func(i, j int) bool { return pts[i].size < pts[j].size })
		xy := make(plotter.XYs, len(pts))
		for i, pt := range pts {
			xy[i].X, xy[i].Y = pt.size/(1<<20), pt.ms
			if algo == "ring" {
				sizes = append(sizes, pt.size)
			}
		}
		line, dots, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		c, ok := colors[algo]
		if !ok {
			c = color.Black
		}
		line.Color, dots.Color = c, c
		line.Width = vg.Points(2)
		p.Add(line, dots)
		p.Legend.Add(algo+" (measured)", line, dots)
	}
	if len(sizes) > 0 && world > 1 {
		// Ring lower bound: each rank sends 2(N−1)K/N bytes at link rate.
		xy := make(plotter.XYs, len(sizes))
		for i, s := range sizes {
			xy[i].X = s / (1 << 20)
			xy[i].Y = 2 * float64(world-1) * s / float64(world) / (link * 1e9) * 1000
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		l.Color = color.Gray{Y: 90}
		p.Add(l)
		p.Legend.Add("ring bound 2(N-1)K/N at link rate", l)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp.png"
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
