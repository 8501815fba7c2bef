package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
)

func init() {
	var batches string
	var passes int
	cmd := &cobra.Command{
		Use:   "infer MODEL",
		Short: "Inference throughput of a saved classifier on the Fashion-MNIST test set",
		Long: `Loads MODEL (written by fathom train), feeds the 10,000 Fashion-MNIST test
images through it as consecutive slices of each batch size (no graph is
recorded) and reports rows per second: the median of several passes after
one warm-up pass, as the PyTorch reference job4_infer.py measures.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sizes, err := parseBatchList(batches)
			if err != nil {
				return err
			}
			return runBenchInfer(args[0], sizes, max(passes, 1))
		},
	}
	cmd.Flags().StringVar(&batches, "batches", "1,64,10000", "comma-separated batch sizes")
	cmd.Flags().IntVar(&passes, "passes", 3, "timed passes over the test set per batch size (median reported)")
	benchCmd.AddCommand(cmd)
}

func parseBatchList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--batches: %q is not a positive batch size", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// runBenchInfer measures and prints: the accuracy on stderr, a line
// per batch size on stdout (JSON lines with --json).
func runBenchInfer(modelPath string, batches []int, passes int) error {
	res, err := bench.Infer(modelPath, batches, passes)
	if err != nil {
		return err
	}
	if !jsonOut {
		fmt.Fprintf(os.Stderr, "test accuracy of loaded model: %.4f\n", res.Accuracy)
	}
	for _, r := range res.Batches {
		if jsonOut {
			if err := printJSON(r); err != nil {
				return err
			}
		} else {
			fmt.Printf("batch %6d: %12.0f rows/s  (%10.1f µs/call)\n", r.Batch, r.RowsPerSec, r.USPerCall)
		}
	}
	return nil
}
