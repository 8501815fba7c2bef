// Package runlog records a training run: one Epoch per epoch (training
// and evaluation metrics, learning rate, wall time, steps), the
// early-stopping helpers over those records, and the files a run leaves
// behind: metrics.csv (WriteMetricsCSV), JSON lines (WriteJSONLine,
// AppendJSONLine, ReadJSONLines). Package runlog/plot draws the figures
// (curves.png and the others).
//
// It depends on package metrics only, so a tool that reads or draws run
// logs needs neither the trainer nor the model code.
//
//	hist := []runlog.Epoch{{Epoch: 1, Train: metrics.Metrics{Loss: 0.9, ...}}, ...}
//	if err := runlog.WriteMetricsCSV("runs/x/metrics.csv", metrics.Classification, hist); err != nil { ... }
//	v, err := hist[len(hist)-1].Monitored("val_loss")
package runlog
