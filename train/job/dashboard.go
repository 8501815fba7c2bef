package job

import (
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/train"
)

// dashboardInfo describes the job for a dashboard.
func (c *Config) dashboardInfo(task metrics.Task, net nn.Module, splits *Splits) dashboard.RunInfo {
	ws := 1
	if e, err := distenv.FromOS(); err == nil {
		ws = e.WorldSize
	}
	info := dashboard.RunInfo{Title: c.file, Kind: "train", Config: string(c.text), Model: nn.Describe(net),
		Parameters: net.NumParameters(), Task: task.String(), Headline: task.Headline(), EvalSplit: c.EvalSplit(),
		Epochs: c.Epochs, WorldSize: ws, Machine: dashboard.LocalMachine()}
	if splits != nil && splits.Train != nil {
		info.TrainRows = splits.Train.Rows
	}
	return info
}

// dashboardHooks returns hooks that report each step and epoch to b, then
// call h's.
func dashboardHooks(b *dashboard.Board, h train.Hooks) train.Hooks {
	batch, epochEnd := h.Batch, h.EpochEnd
	h.Batch = func(e train.BatchEvent) {
		p := dashboard.Step{Step: e.Step, Epoch: e.Epoch, Batch: e.Batch, Batches: e.Batches, Loss: e.Loss, LR: e.LR,
			Data: e.DataTime.Seconds(), Comm: e.SyncTime.Seconds(), Compute: (e.StepTime - e.DataTime - e.SyncTime).Seconds()}
		if s := e.Elapsed.Seconds(); s > 0 {
			p.SamplesPerSec = float64(e.Samples) / s
		}
		b.AddStep(p)
		if batch != nil {
			batch(e)
		}
	}
	h.EpochEnd = func(r runlog.Epoch) error {
		b.AddEpoch(dashboard.EpochFrom(r))
		if epochEnd != nil {
			return epochEnd(r)
		}
		return nil
	}
	return h
}
