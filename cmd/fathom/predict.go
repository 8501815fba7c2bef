package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
)

func init() {
	var out string
	var batch int
	var bo batchPredictFlags
	cmd := &cobra.Command{
		Use:   "predict MODEL INPUT...",
		Short: "Predict with a trained model over a CSV or Parquet file",
		Long: `Predict loads a model file written by fathom train and runs it over the rows
of INPUT (CSV, gzip-compressed CSV, a Parquet file or a directory of Parquet
parts). The model picks its feature columns by name (other columns, such as
the label, are ignored) and standardizes them as it did in training.

Predictions go to --out (CSV or Parquet by extension) or to stdout as CSV: the
predicted class and one probability column per class (prob_<class>), or the
predicted value for regression. With --json and no --out, stdout gets one JSON
line per row instead.

Batch prediction over partitions: with --out DIR (a directory, not a .csv
or .parquet file), several INPUTs, or any of --keep, --max-errors,
--output-layer, INPUT is files, globs or directories of Parquet and CSV
partitions (key=value directories kept as columns) and the model may also
be a fitted pipeline from fathom ml fit. Each partition is streamed in
batches of --batch-size rows into one Parquet file under DIR (written
atomically; a re-run skips complete outputs), with the --keep columns and
the predictions, or with --output-layer the activations of that layer as
a vector column "features". Rows that cannot be read or scored go to
DIR/_errors.csv; more than --max-errors of them fail the job. Under
fathom run -n N the workers share the partitions through a work queue. A
JSON summary (rows, rows_per_second, errors) ends the run.`,
		Example: `  fathom predict runs/iris/model.safetensors flowers.csv
  fathom predict runs/iris/model.safetensors flowers.csv --out predictions.parquet
  fathom predict runs/housing/model.safetensors houses.parquet --json
  fathom predict runs/fashion/model.safetensors 'data/images/*.parquet' --out preds/ --keep id
  fathom run -n 2 -- fathom predict model.safetensors data/ --out preds/ --keep id --max-errors 100`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if bo.wanted(cmd, args, out) {
				if !cmd.Flags().Changed("batch-size") && cmd.Flags().Changed("batch") {
					bo.batchSize = batch
				}
				return runBatchPredict(cmd.Context(), args[0], args[1:], out, bo, os.Stdout, os.Stderr)
			}
			if len(args) > 2 {
				return fmt.Errorf("predict: %d inputs: to predict several, give --out a directory", len(args)-1)
			}
			if cmd.Flags().Changed("batch-size") {
				batch = bo.batchSize
			}
			return runPredict(args[0], args[1], out, batch, os.Stdout, os.Stderr)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write predictions to this .csv or .parquet file instead of stdout, or into this directory (one Parquet file per input partition)")
	cmd.Flags().IntVar(&batch, "batch", 1024, "rows per forward pass")
	bo.register(cmd)
	rootCmd.AddCommand(cmd)
}

// runPredict is the body of `fathom predict`.
func runPredict(modelPath, input, out string, batch int, stdout, stderr io.Writer) error {
	m, err := modelfile.Load(modelPath)
	if err != nil {
		return err
	}
	warnUnusedColumns(m, input, stderr)
	t, err := m.ReadInput(input, false)
	if err != nil {
		return err
	}
	if t.Rows == 0 {
		return fmt.Errorf("%s has no data rows", input)
	}
	p, err := m.Predict(t, batch)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	if out == "" {
		if jsonOut {
			return p.WriteJSONLines(os.Stdout)
		}
		w := bufio.NewWriter(stdout)
		if err := p.WriteCSV(w); err != nil {
			return err
		}
		return w.Flush()
	}
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case data.IsParquetFile(out), ext == ".csv":
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return fmt.Errorf("--out %s: %w", out, err)
		}
		if err := p.WriteFile(out); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--out %s: unknown format %q (want .csv or .parquet)", out, ext)
	}
	if jsonOut {
		return printJSON(map[string]any{"rows": p.Rows(), "out": out, "model": modelPath})
	}
	fmt.Fprintf(stderr, "%d predictions written to %s\n", p.Rows(), out)
	return nil
}

// warnUnusedColumns warns on stderr when the input file has many more
// columns than the model reads: a sign that it is not the kind of data the
// model was trained on, even though the model's columns are all there.
func warnUnusedColumns(m *modelfile.Model, input string, stderr io.Writer) {
	unused, err := m.UnusedColumns(input)
	if err != nil || len(unused) <= len(m.Columns) {
		return
	}
	show := unused
	if len(show) > 5 {
		show = append(slices.Clone(show[:5]), "...")
	}
	fmt.Fprintf(stderr, "warning: %s has %d columns the model does not use (%s); the model reads %d: %s\n",
		input, len(unused), strings.Join(show, ", "), len(m.Columns), strings.Join(m.Columns, ", "))
}
