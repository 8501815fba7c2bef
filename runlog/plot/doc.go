// Package plot draws the figures of a run as PNG files: the learning
// curves of a training run (Curves, CurvesSplit: loss and the task's
// metric per epoch, curves.png), the timeline of a data-parallel step
// (Timeline: bars over a time axis) and the scatter of a hyperparameter
// search's trials (Scatter: panels of points).
//
// It is the fathom binary's only plotting code and uses the standard
// library's image packages alone: a small anti-aliased rasterizer, nice
// tick values and a built-in 5×7 bitmap font, so the binary carries no
// plotting library or font files (internal/archtest keeps gonum/plot out
// of cmd/fathom).
//
//	hist := []runlog.Epoch{{Epoch: 1, Train: metrics.Metrics{Loss: 0.9, ...}}, ...}
//	if err := plot.Curves(filepath.Join(dir, runlog.CurvesFile), metrics.Classification, hist, ""); err != nil { ... }
//	rows := []plot.TimelineRow{{Label: "backward", Spans: [][2]float64{{0, 12.5}}}}
//	if err := plot.Timeline("step.png", "one step", rows); err != nil { ... }
package plot
