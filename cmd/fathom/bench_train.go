package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
)

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

// runBenchTrain runs bench.Train and prints: an epoch line on stderr (a
// JSON line on stdout with --json) and the result on stdout.
func runBenchTrain(ctx context.Context, model string, epochs, threads int) error {
	res, err := bench.Train(ctx, bench.TrainOptions{Model: model, Epochs: epochs, Threads: threads}, func(e bench.TrainEpoch) error {
		if jsonOut {
			return printJSON(e)
		}
		fmt.Fprintf(os.Stderr, "%s epoch %d: %.3f s (%.0f samples/s), train loss %.4f, test accuracy %.4f\n",
			e.Model, e.Epoch, e.Seconds, e.SamplesPerSec, e.TrainLoss, e.TestAccuracy)
		return nil
	})
	if err != nil {
		return err
	}
	if jsonOut {
		return printJSON(res)
	}
	if res.Skipped {
		fmt.Fprintln(os.Stderr, "bench train: skipped:", res.Reason)
		return nil
	}
	fmt.Printf("%s: %.3f s/epoch (median of %d), %.0f samples/s, test accuracy %.4f, %d threads\n",
		model, res.SecondsPerEpoch, epochs, res.SamplesPerSec, res.TestAccuracy, res.Threads)
	return nil
}
