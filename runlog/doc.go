// Package runlog records a training run: one Epoch per epoch (training
// and evaluation metrics, learning rate, wall time, steps), the
// early-stopping helpers over those records, and the files a run leaves
// behind: metrics.csv (WriteMetricsCSV), JSON lines (WriteJSONLine,
// AppendJSONLine, ReadJSONLines) and the learning curves curves.png
// (PlotCurves, drawn with the standard library's image packages: a small
// rasterizer, nice tick values and a built-in 5×7 bitmap font, so the
// fathom binary carries no plotting library or font files).
//
// It depends on package metrics only, so a tool that reads or draws run
// logs needs neither the trainer nor the model code, and code that serves
// models never pulls in plotting.
//
//	hist := []runlog.Epoch{{Epoch: 1, Train: metrics.Metrics{Loss: 0.9, ...}}, ...}
//	if err := runlog.WriteMetricsCSV("runs/x/metrics.csv", metrics.Classification, hist); err != nil { ... }
//	if err := runlog.PlotCurves("runs/x/curves.png", metrics.Classification, hist, ""); err != nil { ... }
//	v, err := hist[len(hist)-1].Monitored("val_loss")
package runlog
