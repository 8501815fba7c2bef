package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/tensor"
)

// benchInferResult is one line of `fathom bench infer --json`.
type benchInferResult struct {
	Batch      int     `json:"batch"`
	Rows       int     `json:"rows"`
	SecPerPass float64 `json:"sec_per_pass"`
	RowsPerSec float64 `json:"rows_per_s"`
	USPerCall  float64 `json:"us_per_call"`
	Accuracy   float64 `json:"test_accuracy"`
}

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

func runBenchInfer(modelPath string, batches []int, passes int) error {
	m, err := modelfile.Load(modelPath)
	if err != nil {
		return err
	}
	test, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		return fmt.Errorf("bench infer needs the Fashion-MNIST test set (apt-get install dataset-fashion-mnist, or FATHOM_DATA): %w", err)
	}
	in, err := m.PrepareInput(test)
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	m.Net.Eval()
	n, cols := in.Rows, in.Cols
	shape := m.Spec.Input

	// Accuracy of the loaded model, as the reference prints it.
	correct := 0
	out := m.Net.Forward(tensor.FromFloat32(in.X, append([]int{n}, shape...)...).NoGrad())
	pred := out.ArgMax(1, false).Int64s()
	for i, p := range pred {
		if p == test.Labels[i] {
			correct++
		}
	}
	acc := float64(correct) / float64(n)
	if !jsonOut {
		fmt.Fprintf(os.Stderr, "test accuracy of loaded model: %.4f\n", acc)
	}

	for _, bs := range batches {
		var chunks []*tensor.Tensor
		for i := 0; i < n; i += bs {
			rows := min(bs, n-i)
			chunks = append(chunks, tensor.FromFloat32(in.X[i*cols:(i+rows)*cols], append([]int{rows}, shape...)...).NoGrad())
		}
		pass := func() time.Duration {
			start := time.Now()
			for _, c := range chunks {
				m.Net.Forward(c)
			}
			return time.Since(start)
		}
		pass() // warm-up
		times := make([]float64, passes)
		for i := range times {
			times[i] = pass().Seconds()
		}
		sort.Float64s(times)
		sec := times[len(times)/2]
		r := benchInferResult{Batch: bs, Rows: n, SecPerPass: sec, RowsPerSec: float64(n) / sec,
			USPerCall: sec / float64(len(chunks)) * 1e6, Accuracy: acc}
		if jsonOut {
			if err := printJSON(r); err != nil {
				return err
			}
		} else {
			fmt.Printf("batch %6d: %12.0f rows/s  (%10.1f µs/call)\n", bs, r.RowsPerSec, r.USPerCall)
		}
	}
	return nil
}
