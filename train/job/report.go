package job

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/runlog"
)

// EpochLine is one `fathom train --json` line per epoch. Eval holds the
// metrics of the split evaluated after the epoch, which EvalSplit names:
// "val" (data.validation) or "test" (no validation split: the test split,
// scored for the curves; early stopping refuses it).
type EpochLine struct {
	runlog.Epoch
	EvalSplit string `json:"eval_split,omitempty"`
}

// EpochLine returns the --json line of epoch r of a job of this config.
func (c *Config) EpochLine(r runlog.Epoch) EpochLine {
	line := EpochLine{Epoch: r}
	if r.Eval != nil {
		line.EvalSplit = c.EvalSplit()
	}
	return line
}

// EpochSummary is the human line printed after epoch r of a job of this
// config: the training metrics, the evaluated split's, the learning rate
// and the wall time.
func (c *Config) EpochSummary(r runlog.Epoch) string {
	part := func(name string, m metrics.Metrics) string {
		s := fmt.Sprintf("%s loss %.4f", name, m.Loss)
		if !math.IsNaN(m.Accuracy) {
			s += fmt.Sprintf(" acc %.4f", m.Accuracy)
		}
		if !math.IsNaN(m.RMSE) {
			s += fmt.Sprintf(" rmse %.4g", m.RMSE)
		}
		return s
	}
	s := fmt.Sprintf("epoch %d/%d: %s", r.Epoch, c.Epochs, part("train", r.Train))
	if r.Eval != nil {
		s += " | " + part(c.EvalSplit(), *r.Eval)
	}
	return s + fmt.Sprintf(" | lr %.3g | %.2f s", r.LR, r.Seconds)
}

// FinalLine is the last line of `fathom train --json`: the final losses
// and test metric (null when not finite), the throughput, the epochs run
// and the files written. Keys of what the job did not do are left out.
func (r *Result) FinalLine() map[string]any {
	final := map[string]any{
		"train_loss":         nil,
		"test_loss":          finiteOrNil(r.Test.Loss),
		"seconds_per_epoch":  r.SecondsPerEpoch,
		"samples_per_second": r.SamplesPerSecond,
		"epochs":             len(r.Epochs),
		"early_stopped":      r.Stopped,
		"model_path":         r.ModelPath,
		"task":               r.Task.String(),
		"weights_sha256":     r.WeightsSHA256,
	}
	if n := len(r.Epochs); n > 0 {
		final["train_loss"] = finiteOrNil(r.Epochs[n-1].Train.Loss)
	}
	if r.Task == metrics.Regression {
		final["test_rmse"] = finiteOrNil(r.Test.RMSE)
	} else {
		final["test_accuracy"] = finiteOrNil(r.Test.Accuracy)
	}
	if r.MetricsPath != "" {
		final["metrics_path"] = r.MetricsPath
	}
	if r.AllreduceSeconds > 0 {
		final["allreduce_seconds"] = r.AllreduceSeconds
		final["allreduce_hidden_fraction"] = r.AllreduceHidden
	}
	if r.OptimizerStateBytes != nil {
		final["optimizer_state_bytes"] = r.OptimizerStateBytes()
	}
	if r.TimelinePath != "" {
		final["timeline_path"] = r.TimelinePath
	}
	if r.PlotPath != "" {
		final["plot_path"] = r.PlotPath
	}
	return final
}

// FinalSummary is the human line `fathom train` prints at the end: the
// test metric and loss, the throughput and the model file.
func (r *Result) FinalSummary() string {
	metric := fmt.Sprintf("test accuracy %.4f", r.Test.Accuracy)
	if r.Task == metrics.Regression {
		metric = fmt.Sprintf("test RMSE %.4g", r.Test.RMSE)
	}
	return fmt.Sprintf("%s, test loss %.4f, %.3g s/epoch (%.0f samples/s); model: %s",
		metric, r.Test.Loss, r.SecondsPerEpoch, r.SamplesPerSecond, r.ModelPath)
}

func finiteOrNil(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}
