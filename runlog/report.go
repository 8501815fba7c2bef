package runlog

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/metrics"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// WriteMetricsCSV writes one row per epoch: epoch, training loss and
// metric, evaluation loss and metric (empty without evaluation data),
// learning rate and seconds of the training pass. The evaluation columns
// are named val_loss and val_<metric>, for a validation split (see
// WriteMetricsCSVSplit). The file is written to a temporary name and
// renamed.
func WriteMetricsCSV(path string, task metrics.Task, hist []Epoch) error {
	return WriteMetricsCSVSplit(path, task, hist, "val")
}

// WriteMetricsCSVSplit is WriteMetricsCSV with the evaluation columns named
// after the split they hold: split_loss and split_<metric>, e.g. test_loss
// when the test split is evaluated every epoch.
func WriteMetricsCSVSplit(path string, task metrics.Task, hist []Epoch, split string) error {
	var b bytes.Buffer
	m := task.Headline()
	fmt.Fprintf(&b, "epoch,train_loss,train_%s,%s_loss,%s_%s,lr,seconds,eval_seconds\n", m, split, split, m)
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 8, 64)
	}
	for _, r := range hist {
		tm, _ := r.Train.Get(m)
		vl, vm := math.NaN(), math.NaN()
		if r.Eval != nil {
			vl = r.Eval.Loss
			vm, _ = r.Eval.Get(m)
		}
		fmt.Fprintf(&b, "%d,%s,%s,%s,%s,%s,%s,%s\n", r.Epoch, num(r.Train.Loss), num(tm), num(vl), num(vm),
			num(r.LR), num(r.Seconds), num(r.EvalSeconds))
	}
	return atomicfile.WriteBytes(path, b.Bytes())
}

// PlotCurves draws the learning curves as a PNG: the loss per epoch on the
// left and the task's metric on the right, training and evaluation data
// as separate lines.
func PlotCurves(path string, task metrics.Task, hist []Epoch, title string) error {
	m := task.Headline()
	panel := func(name string, get func(metrics.Metrics) float64) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = name
		p.X.Label.Text = "epoch"
		p.Add(plotter.NewGrid())
		var tr, ev plotter.XYs
		for _, r := range hist {
			if v := get(r.Train); !math.IsNaN(v) && !math.IsInf(v, 0) {
				tr = append(tr, plotter.XY{X: float64(r.Epoch), Y: v})
			}
			if r.Eval != nil {
				if v := get(*r.Eval); !math.IsNaN(v) && !math.IsInf(v, 0) {
					ev = append(ev, plotter.XY{X: float64(r.Epoch), Y: v})
				}
			}
		}
		for _, s := range []struct {
			name string
			xy   plotter.XYs
			c    color.RGBA
		}{{"train", tr, color.RGBA{R: 31, G: 119, B: 180, A: 255}}, {"eval", ev, color.RGBA{R: 255, G: 127, B: 14, A: 255}}} {
			if len(s.xy) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(s.xy)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = s.c, s.c
			l.Width = vg.Points(1.5)
			if len(s.xy) > 30 { // markers would crowd the line
				p.Add(l)
				p.Legend.Add(s.name, l)
				continue
			}
			p.Add(l, pts)
			p.Legend.Add(s.name, l, pts)
		}
		p.Legend.Top = name == "loss"
		return p, nil
	}
	lp, err := panel("loss", func(x metrics.Metrics) float64 { return x.Loss })
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	mp, err := panel(m, func(x metrics.Metrics) float64 { v, _ := x.Get(m); return v })
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if title != "" {
		lp.Title.Text = title + ": loss"
	}
	img := vgimg.New(vg.Points(720), vg.Points(300))
	dc := draw.New(img)
	t := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(12), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	plots := [][]*plot.Plot{{lp, mp}}
	cs := plot.Align(plots, t, dc)
	lp.Draw(cs[0][0])
	mp.Draw(cs[0][1])
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}
