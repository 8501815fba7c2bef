// Package runlog owns a run's directory: the names of its files
// (MetricsFile, DashboardFile, CurvesFile, ModelFile, CheckpointFile, ...),
// the per-epoch record (Epoch: training and evaluation metrics, learning
// rate, wall time, steps) with the early-stopping helpers over it, the
// writers of its logs — metrics.csv (MetricsCSV appends a row as each
// epoch finishes; WriteMetricsCSV writes a whole history) and JSON lines
// (WriteJSONLine, AppendJSONLine, ReadJSONLines) — and ReadRun, the one
// reader of a finished run's directory (the dashboard replays and
// compares runs through it). Package runlog/plot draws the figures
// (curves.png and the others).
//
// It depends on package metrics only, so a tool that reads or draws run
// logs needs neither the trainer nor the model code.
//
//	w := &runlog.MetricsCSV{Path: filepath.Join(dir, runlog.MetricsFile), Task: metrics.Classification}
//	hist := []runlog.Epoch{{Epoch: 1, Train: metrics.Metrics{Loss: 0.9, ...}}, ...}
//	if err := w.Write(hist); err != nil { ... } // after each epoch
//	v, err := hist[len(hist)-1].Monitored("val_loss")
//	run, err := runlog.ReadRun(dir) // run.Metrics.Epochs, run.Dashboard
package runlog
