package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/train"
	"github.com/fathom-ml/fathom/train/job"
)

// benchRecipes are the training recipes of `fathom bench train`: the same
// jobs as examples/fashion-mlp.yaml and examples/fashion-cnn.yaml (a test
// checks they agree), after the PyTorch reference scripts job2_mlp.py and
// job3_cnn.py.
var benchRecipes = map[string]string{
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

// benchTrainEpoch is one epoch line of `fathom bench train --json`.
type benchTrainEpoch struct {
	Model         string  `json:"model"`
	Epoch         int     `json:"epoch"`
	Seconds       float64 `json:"seconds"`
	SamplesPerSec float64 `json:"samples_per_second"`
	TrainLoss     float64 `json:"train_loss"`
	TestAccuracy  float64 `json:"test_accuracy"`
}

// benchTrainResult is the final line of `fathom bench train --json`.
type benchTrainResult struct {
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

func init() {
	var model string
	var epochs, threads int
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Time training epochs of the Fashion-MNIST MLP or CNN recipe",
		Long: `Trains the Fashion-MNIST recipe of examples/fashion-mlp.yaml (--model mlp:
784-256-128-10, Adam 1e-3, batch 64) or examples/fashion-cnn.yaml (--model cnn)
and reports the wall time of each training pass (evaluation excluded), the
median seconds per epoch, samples per second and the final test accuracy.
Reads Fashion-MNIST from $FATHOM_DATA or /usr/share/datasets/fashion-mnist and
skips with a message when it is not there.`,
		Example: `  fathom bench train --model mlp --epochs 5
  fathom bench train --model cnn --json
  fathom bench train --model mlp --threads 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchTrain(cmd.Context(), model, epochs, threads)
		},
	}
	cmd.Flags().StringVar(&model, "model", "mlp", "recipe: mlp or cnn")
	cmd.Flags().IntVar(&epochs, "epochs", 1, "epochs to train")
	cmd.Flags().IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0: all cores)")
	benchCmd.AddCommand(cmd)
}

// fashionMNISTMissing returns why Fashion-MNIST cannot be read, or "".
func fashionMNISTMissing() string {
	dir := data.FashionMNISTDir()
	if _, err := data.LoadMNIST(dir, "t10k", data.MNISTOptions{}); err != nil {
		return fmt.Sprintf("Fashion-MNIST is not readable in %s (install Debian's dataset-fashion-mnist or set FATHOM_DATA): %v", dir, err)
	}
	return ""
}

func runBenchTrain(ctx context.Context, model string, epochs, threads int) error {
	recipe, ok := benchRecipes[model]
	if !ok {
		return fmt.Errorf("bench train: unknown --model %q (want mlp or cnn)", model)
	}
	if epochs < 1 {
		return fmt.Errorf("bench train: --epochs must be at least 1, got %d", epochs)
	}
	if threads > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
	}
	res := benchTrainResult{Model: model, Epochs: epochs, Threads: runtime.GOMAXPROCS(0)}
	if reason := fashionMNISTMissing(); reason != "" {
		res.Skipped, res.Reason = true, reason
		if jsonOut {
			return printJSON(res)
		}
		fmt.Fprintln(os.Stderr, "bench train: skipped:", reason)
		return nil
	}
	out, err := os.MkdirTemp("", "fathom-bench-train-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	cfg, err := job.ParseConfig([]byte(recipe), "bench-"+model, []string{
		fmt.Sprintf("epochs=%d", epochs), "output.dir=" + out, "output.plot=false", "output.metrics=false"})
	if err != nil {
		return err
	}
	res.BatchSize = cfg.BatchSize
	if ctx == nil {
		ctx = context.Background()
	}
	ro := job.RunOptions{Hooks: train.Hooks{EpochEnd: func(r runlog.Epoch) error {
		line := benchTrainEpoch{Model: model, Epoch: r.Epoch, Seconds: r.Seconds,
			SamplesPerSec: float64(r.Train.Samples) / r.Seconds, TrainLoss: r.Train.Loss}
		if r.Eval != nil {
			line.TestAccuracy = r.Eval.Accuracy
		}
		if jsonOut {
			return printJSON(line)
		}
		fmt.Fprintf(os.Stderr, "%s epoch %d: %.3f s (%.0f samples/s), train loss %.4f, test accuracy %.4f\n",
			model, r.Epoch, r.Seconds, line.SamplesPerSec, r.Train.Loss, line.TestAccuracy)
		return nil
	}}}
	r, err := job.Run(ctx, cfg, ro)
	if err != nil {
		return err
	}
	res.SecondsPerEpoch, res.SamplesPerSec, res.TestAccuracy = r.SecondsPerEpoch, r.SamplesPerSecond, r.Test.Accuracy
	if jsonOut {
		return printJSON(res)
	}
	fmt.Printf("%s: %.3f s/epoch (median of %d), %.0f samples/s, test accuracy %.4f, %d threads\n",
		model, res.SecondsPerEpoch, epochs, res.SamplesPerSec, res.TestAccuracy, res.Threads)
	return nil
}
