package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/infer"
	"github.com/fathom-ml/fathom/nn"
)

// batchPredictFlags are the flags of `fathom predict` over partitions.
type batchPredictFlags struct {
	keep        []string
	maxErrors   int64
	batchSize   int
	outputLayer string
	dash        dashboardFlags
}

func (b *batchPredictFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&b.keep, "keep", nil, "input columns copied into the outputs, first (e.g. --keep id,date)")
	cmd.Flags().Int64Var(&b.maxErrors, "max-errors", 1000, "fail once more rows than this could not be read or scored (-1: no bound)")
	cmd.Flags().IntVar(&b.batchSize, "batch-size", infer.DefaultBatchSize, "rows read and scored at a time (memory is a few batches)")
	b.dash.register(cmd)
	cmd.Flags().StringVar(&b.outputLayer, "output-layer", "", "emit this layer's activations (its index, or -2 for the penultimate) as a vector column \"features\"")
}

// wanted says whether the command line asks for batch prediction over
// partitions rather than the single-file form: several inputs, a batch
// flag, or --out naming a directory (not a .csv, .parquet or .jsonl file).
func (b *batchPredictFlags) wanted(cmd *cobra.Command, args []string, out string) bool {
	if len(args) > 2 {
		return true
	}
	for _, f := range []string{"keep", "max-errors", "output-layer", "dashboard"} {
		if cmd.Flags().Changed(f) {
			return true
		}
	}
	return out != "" && !isFileOut(out)
}

// isFileOut reports whether --out names a predictions file of the
// single-file form.
func isFileOut(out string) bool {
	ext := strings.ToLower(filepath.Ext(out))
	return data.IsParquetFile(out) || ext == ".csv" || ext == ".jsonl" || ext == ".json"
}

// runBatchPredict is `fathom predict MODEL INPUT... --out DIR`.
func runBatchPredict(ctx context.Context, modelPath string, inputs []string, out string, b batchPredictFlags, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if out == "" {
		return fmt.Errorf("predict: --out DIR is required to predict over partitions")
	}
	if isFileOut(out) {
		return fmt.Errorf("predict: --out %s names a file; prediction over partitions writes a directory (one Parquet file per partition)", out)
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return fmt.Errorf("predict: --out %s is a file; batch prediction writes a directory", out)
	}
	absOut, _ := filepath.Abs(out)
	for _, in := range inputs {
		if st, err := os.Stat(in); err == nil && st.IsDir() {
			if absIn, _ := filepath.Abs(in); strings.HasPrefix(absOut, absIn+string(filepath.Separator)) {
				return fmt.Errorf("predict: --out %s is inside the input directory %s: a re-run would read the predictions as input", out, in)
			}
		}
	}
	parts, err := infer.ListPartitions(inputs)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	pred, err := infer.Load(modelPath, b.outputLayer)
	if err != nil {
		return err
	}
	job, err := join.FromEnv(ctx, join.Options{Store: true})
	if err != nil {
		return err
	}
	defer job.Close()
	opts := infer.Options{Out: out, Keep: b.keep, BatchSize: b.batchSize, MaxErrors: b.maxErrors,
		Progress: stderr, Terminal: isTerminal(stderr)}
	var q *infer.Shared
	if job.Distributed() {
		q = infer.NewShared(job.Store, out, len(parts), job.Rank(), job.Size())
		if err := q.Agree(ctx, parts); err != nil {
			return err
		}
		opts.Queue = q.Queue()
		opts.Terminal = false
		opts.Label = fmt.Sprintf("rank %d of %d (its own partitions)", job.Rank(), job.Size())
		if job.Rank() != 0 {
			opts.Progress = nil // rank 0 reports; the summary covers the job
		}
	}
	srv, err := b.dash.start(stderr) // rank 0 serves
	if err != nil {
		return err
	}
	if srv != nil {
		stop := predictDashboard(srv.Board(), modelPath, inputs, pred, len(parts), job.Rank(), job.Size(), &opts)
		defer func() { stop(); b.dash.finish(ctx, srv, stderr) }()
	}
	sum, runErr := infer.Run(ctx, pred, parts, opts)
	if srv != nil {
		srv.Board().Finish(runErr)
	}
	if q != nil {
		if err := q.Finish(ctx, sum, runErr); err != nil && runErr == nil {
			runErr = err
		}
		if job.Rank() != 0 {
			return runErr
		}
		total, err := q.Gather(ctx)
		if runErr == nil {
			runErr = err
		}
		sum = total
	}
	if runErr != nil {
		return runErr
	}
	if sum.ErrorsFile, err = infer.MergeErrors(out, parts); err != nil {
		return err
	}
	js, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", js)
	return nil
}

// predictDashboard has board show a batch prediction: the job (model,
// inputs, partitions), each partition this worker takes (opts.Report),
// and the rows per second about once a second as its steps, until stop.
// Under fathom run rank 0 serves the page with its own partitions; the
// final summary counts every worker's.
func predictDashboard(board *dashboard.Board, modelPath string, inputs []string, pred infer.Predictor, parts, rank, size int, opts *infer.Options) (stop func()) {
	model := ""
	if n, ok := pred.(*infer.Net); ok {
		model = nn.Describe(n.Model().Net)
	}
	board.SetInfo(dashboard.RunInfo{Title: filepath.Base(modelPath), Kind: "predict", Model: model,
		Config: "model: " + modelPath + "\ninputs: " + strings.Join(inputs, " ") + "\nout: " + opts.Out,
		Epochs: parts, WorldSize: size, Machine: dashboard.LocalMachine()})
	var mu sync.Mutex
	rows := map[string]int64{}
	var total int64
	done := 0
	opts.Report = func(p infer.PartitionReport) {
		board.SetPartition(dashboard.Partition{Name: p.Name, Rank: rank, Status: p.Status, Rows: p.Rows, Errors: p.Errors,
			Seconds: p.Seconds, Error: p.Err})
		mu.Lock()
		total += p.Rows - rows[p.Name]
		rows[p.Name] = p.Rows
		if p.Status == "done" || p.Status == "skipped" {
			done++
		}
		mu.Unlock()
	}
	start := time.Now()
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for step := 1; ; step++ {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			mu.Lock()
			n, d := total, done
			mu.Unlock()
			el := time.Since(start).Seconds()
			board.AddStep(dashboard.Step{Step: step, Epoch: d, Loss: math.NaN(), LR: math.NaN(), SamplesPerSec: float64(n) / el, T: el})
		}
	}()
	return func() { close(quit); <-finished }
}
