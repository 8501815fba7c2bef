package job

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/runlog"
)

func TestEpochLineAndSummary(t *testing.T) {
	nan := math.NaN()
	ep := runlog.Epoch{Epoch: 2, Train: metrics.Metrics{Loss: 0.5, Accuracy: 0.75, RMSE: nan},
		Eval: &metrics.Metrics{Loss: 0.25, Accuracy: 0.875, RMSE: nan}, LR: 0.001, Seconds: 1.5}
	for _, test := range []struct {
		validation float64
		split      string
	}{{0, "test"}, {0.2, "val"}} {
		c := &Config{Epochs: 5}
		c.Data.Validation = test.validation
		if got := c.EpochLine(ep); got.EvalSplit != test.split || got.Epoch.Epoch != 2 {
			t.Errorf("validation %v: EpochLine %+v, want split %q", test.validation, got, test.split)
		}
		want := "epoch 2/5: train loss 0.5000 acc 0.7500 | " + test.split + " loss 0.2500 acc 0.8750 | lr 0.001 | 1.50 s"
		if got := c.EpochSummary(ep); got != want {
			t.Errorf("EpochSummary = %q, want %q", got, want)
		}
	}
	noEval := runlog.Epoch{Epoch: 1, Train: metrics.Metrics{Loss: 2, Accuracy: nan, RMSE: 1.25}, LR: 0.1, Seconds: 0.25}
	c := &Config{Epochs: 1}
	line := c.EpochLine(noEval)
	b, err := json.Marshal(line)
	if err != nil {
		t.Fatal(err)
	}
	if line.EvalSplit != "" || strings.Contains(string(b), "eval_split") || !strings.Contains(string(b), `"epoch":1`) {
		t.Errorf("epoch without evaluation: %s", b)
	}
	if got, want := c.EpochSummary(noEval), "epoch 1/1: train loss 2.0000 rmse 1.25 | lr 0.1 | 0.25 s"; got != want {
		t.Errorf("EpochSummary = %q, want %q", got, want)
	}
}

func TestFinalLine(t *testing.T) {
	r := &Result{Task: metrics.Classification, Test: metrics.Metrics{Loss: math.Inf(1), Accuracy: 0.9},
		SecondsPerEpoch: 2, SamplesPerSecond: 100, ModelPath: "m.safetensors", WeightsSHA256: "ab"}
	got := r.FinalLine()
	if got["train_loss"] != nil || got["test_loss"] != nil || got["test_accuracy"] != 0.9 || got["epochs"] != 0 ||
		got["model_path"] != "m.safetensors" || got["task"] != metrics.Classification.String() {
		t.Errorf("classification: %v", got)
	}
	for _, k := range []string{"test_rmse", "metrics_path", "allreduce_seconds", "optimizer_state_bytes", "timeline_path", "plot_path"} {
		if _, ok := got[k]; ok {
			t.Errorf("classification without %s: key present in %v", k, got)
		}
	}
	if _, ok := got["train_loss"]; !ok {
		t.Error("train_loss missing (want null)")
	}
	if s := r.FinalSummary(); s != "test accuracy 0.9000, test loss +Inf, 2 s/epoch (100 samples/s); model: m.safetensors" {
		t.Errorf("FinalSummary = %q", s)
	}

	r = &Result{Task: metrics.Regression, Test: metrics.Metrics{Loss: 0.5, RMSE: math.NaN()},
		Epochs:      []runlog.Epoch{{Train: metrics.Metrics{Loss: 3}}, {Train: metrics.Metrics{Loss: 1}}},
		MetricsPath: "metrics.csv", PlotPath: "curves.png", TimelinePath: "t.png", AllreduceSeconds: 0.5, AllreduceHidden: 0.25,
		OptimizerStateBytes: func() int64 { return 64 }}
	got = r.FinalLine()
	if got["train_loss"] != 1.0 || got["test_loss"] != 0.5 || got["epochs"] != 2 || got["metrics_path"] != "metrics.csv" ||
		got["plot_path"] != "curves.png" || got["timeline_path"] != "t.png" || got["allreduce_seconds"] != 0.5 ||
		got["allreduce_hidden_fraction"] != 0.25 || got["optimizer_state_bytes"] != int64(64) {
		t.Errorf("regression: %v", got)
	}
	if v, ok := got["test_rmse"]; !ok || v != nil {
		t.Errorf("NaN test_rmse: %v, %v (want null)", v, ok)
	}
	if _, ok := got["test_accuracy"]; ok {
		t.Errorf("regression with test_accuracy: %v", got)
	}
	r.Test.RMSE = 0.125
	if s := r.FinalSummary(); !strings.HasPrefix(s, "test RMSE 0.125, test loss 0.5000") {
		t.Errorf("FinalSummary = %q", s)
	}
}
