package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/bench"
)

func init() {
	var rows, threads int
	var sets []string
	var centers string
	cmd := &cobra.Command{
		Use:   "ml ALGO",
		Short: "Time a classic-ML fit on Fashion-MNIST (" + strings.Join(bench.MLAlgos(), ", ") + ")",
		Long: `Fits a registered estimator on the Fashion-MNIST training set (60 000 × 784,
pixels/255 as a features vector) with the settings of the scikit-learn peer
(../shared/anchors/python/job5_sklearn.py), then scores it on the 10 000 test
rows. Prints fit_seconds (Fit alone), iterations (when the model reports
them) and test_accuracy. ALGO is one of:

` + bench.MLHelp() + `
--param overrides a param (key=value, YAML value); --rows fits on the first N
training rows. kmeans and pca are unsupervised: they print inertia or
explained_variance_ratio_sum instead of test_accuracy; --init-centers FILE
(k rows of 784 numbers, comma- or space-separated) starts kmeans from given
centers. scripts/compare-ml.sh and scripts/compare-ml-part2.sh run them
against the peer.`,
		Example: `  fathom bench ml logreg --json
  fathom bench ml mlp --param maxIter=10 --rows 10000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if centers != "" {
				c, err := bench.ReadCenters(centers)
				if err != nil {
					return err
				}
				sets = append(sets, c...)
			}
			return runBenchML(bench.MLOptions{Algo: args[0], Rows: rows, Threads: threads, Params: sets})
		},
	}
	cmd.Flags().IntVar(&rows, "rows", 0, "fit on the first N training rows (0: all)")
	cmd.Flags().IntVar(&threads, "threads", 0, "GOMAXPROCS for the run (0: all cores)")
	cmd.Flags().StringArrayVar(&sets, "param", nil, "override a param: key=value (repeatable)")
	cmd.Flags().StringVar(&centers, "init-centers", "", "kmeans: start from the centers in FILE (one per line)")
	benchCmd.AddCommand(cmd)
}

// runBenchML runs bench.ML and prints its result.
func runBenchML(o bench.MLOptions) error {
	res, err := bench.ML(o)
	if err != nil {
		return err
	}
	switch {
	case jsonOut:
		return printJSON(res)
	case res.Skipped:
		fmt.Fprintln(os.Stderr, "bench ml: skipped:", res.Reason)
	case res.Unsupervised:
		fmt.Printf("%s (%s): fit %.3f s on %d rows, %d iterations, inertia %.6g, explained variance ratio sum %.6g, %d threads\n",
			res.Algo, res.Stage, res.FitSeconds, res.TrainRows, res.Iterations, res.Inertia, res.ExplainedVarianceRatioSum, res.Threads)
	default:
		it := ""
		if res.Iterations > 0 {
			it = fmt.Sprintf(", %d iterations", res.Iterations)
		}
		fmt.Printf("%s (%s): fit %.3f s on %d rows%s, test accuracy %.4f, %d threads\n",
			res.Algo, res.Stage, res.FitSeconds, res.TrainRows, it, res.TestAccuracy, res.Threads)
	}
	return nil
}
