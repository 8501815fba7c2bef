package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/train"
	"github.com/fathom-ml/fathom/train/job"
)

// TrainRecipes are the training recipes of `fathom bench train`: the same
// jobs as examples/fashion-mlp.yaml and examples/fashion-cnn.yaml (a test
// checks they agree), after the PyTorch reference scripts job2_mlp.py and
// job3_cnn.py.
var TrainRecipes = map[string]string{
	"mlp": `
data: {source: fashion-mnist}
model:
  - {type: linear, out: 256}
  - {type: relu}
  - {type: linear, out: 128}
  - {type: relu}
  - {type: linear, out: 10}
loss: cross_entropy
optimizer: {type: adam, lr: 0.001}
epochs: 5
batch_size: 64
seed: 0
`,
	"cnn": `
data: {source: fashion-mnist, shape: [1, 28, 28]}
model:
  - {type: conv2d, out: 32, kernel: 3, padding: 1}
  - {type: relu}
  - {type: maxpool2d, kernel: 2}
  - {type: conv2d, out: 64, kernel: 3, padding: 1}
  - {type: relu}
  - {type: maxpool2d, kernel: 2}
  - {type: flatten}
  - {type: linear, out: 128}
  - {type: relu}
  - {type: linear, out: 10}
loss: cross_entropy
optimizer: {type: adam, lr: 0.001}
epochs: 1
batch_size: 64
seed: 0
`,
}

// TrainOptions are the settings of `fathom bench train`.
type TrainOptions struct {
	Model   string // a key of TrainRecipes: mlp or cnn
	Epochs  int    // at least 1
	Threads int    // GOMAXPROCS for the run (0: all cores)
}

// TrainEpoch is one epoch line of `fathom bench train --json`.
type TrainEpoch struct {
	Model         string  `json:"model"`
	Epoch         int     `json:"epoch"`
	Seconds       float64 `json:"seconds"`
	SamplesPerSec float64 `json:"samples_per_second"`
	TrainLoss     float64 `json:"train_loss"`
	TestAccuracy  float64 `json:"test_accuracy"`
}

// TrainResult is the final line of `fathom bench train --json`.
type TrainResult struct {
	Model           string  `json:"model"`
	Epochs          int     `json:"epochs"`
	BatchSize       int     `json:"batch_size"`
	Threads         int     `json:"threads"`
	SecondsPerEpoch float64 `json:"seconds_per_epoch"`
	SamplesPerSec   float64 `json:"samples_per_second"`
	TestAccuracy    float64 `json:"test_accuracy"`
	Skipped         bool    `json:"skipped,omitempty"`
	Reason          string  `json:"reason,omitempty"`
}

// FashionMNISTMissing returns why Fashion-MNIST cannot be read, or "".
func FashionMNISTMissing() string {
	dir := data.FashionMNISTDir()
	if _, err := data.LoadMNIST(dir, "t10k", data.MNISTOptions{}); err != nil {
		return fmt.Sprintf("Fashion-MNIST is not readable in %s (install Debian's dataset-fashion-mnist or set FATHOM_DATA): %v", dir, err)
	}
	return ""
}

// Train trains the recipe o.Model for o.Epochs epochs through job.Run,
// calling epoch (when not nil) after each one, and returns the median
// seconds per epoch, samples per second and the final test accuracy.
// Without Fashion-MNIST the result is Skipped, with the Reason, and no
// error.
func Train(ctx context.Context, o TrainOptions, epoch func(TrainEpoch) error) (TrainResult, error) {
	recipe, ok := TrainRecipes[o.Model]
	if !ok {
		return TrainResult{}, fmt.Errorf("bench train: unknown --model %q (want mlp or cnn)", o.Model)
	}
	if o.Epochs < 1 {
		return TrainResult{}, fmt.Errorf("bench train: --epochs must be at least 1, got %d", o.Epochs)
	}
	if o.Threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(o.Threads))
	}
	res := TrainResult{Model: o.Model, Epochs: o.Epochs, Threads: runtime.GOMAXPROCS(0)}
	if reason := FashionMNISTMissing(); reason != "" {
		res.Skipped, res.Reason = true, reason
		return res, nil
	}
	out, err := os.MkdirTemp("", "fathom-bench-train-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(out)
	cfg, err := job.ParseConfig([]byte(recipe), "bench-"+o.Model, []string{
		fmt.Sprintf("epochs=%d", o.Epochs), "output.dir=" + out, "output.plot=false", "output.metrics=false"})
	if err != nil {
		return res, err
	}
	res.BatchSize = cfg.BatchSize
	if ctx == nil {
		ctx = context.Background()
	}
	ro := job.RunOptions{Hooks: train.Hooks{EpochEnd: func(r runlog.Epoch) error {
		if epoch == nil {
			return nil
		}
		line := TrainEpoch{Model: o.Model, Epoch: r.Epoch, Seconds: r.Seconds,
			SamplesPerSec: float64(r.Train.Samples) / r.Seconds, TrainLoss: r.Train.Loss}
		if r.Eval != nil {
			line.TestAccuracy = r.Eval.Accuracy
		}
		return epoch(line)
	}}}
	r, err := job.Run(ctx, cfg, ro)
	if err != nil {
		return res, err
	}
	res.SecondsPerEpoch, res.SamplesPerSec, res.TestAccuracy = r.SecondsPerEpoch, r.SamplesPerSecond, r.Test.Accuracy
	return res, nil
}
