package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/atomicfile"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/train"
)

func init() {
	var out string
	var batch int
	cmd := &cobra.Command{
		Use:   "predict MODEL INPUT",
		Short: "Predict with a trained model over a CSV or Parquet file",
		Long: `Predict loads a model file written by fathom train and runs it over the rows
of INPUT (CSV, gzip-compressed CSV, a Parquet file or a directory of Parquet
parts). The model picks its feature columns by name (other columns, such as
the label, are ignored) and standardizes them as it did in training.

Predictions go to --out (CSV or Parquet by extension) or to stdout as CSV: the
predicted class and one probability column per class (prob_<class>), or the
predicted value for regression. With --json and no --out, stdout gets one JSON
line per row instead.`,
		Example: `  fathom predict runs/iris/model.safetensors flowers.csv
  fathom predict runs/iris/model.safetensors flowers.csv --out predictions.parquet
  fathom predict runs/housing/model.safetensors houses.parquet --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPredict(args[0], args[1], out, batch, os.Stdout)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write predictions to this .csv or .parquet file instead of stdout")
	cmd.Flags().IntVar(&batch, "batch", 1024, "rows per forward pass")
	rootCmd.AddCommand(cmd)
}

// readModelInput reads a CSV or Parquet input for a model: its feature
// columns (by name when the model knows them) and, with label, the
// target column too.
func readModelInput(path string, m *train.Model, label bool) (*data.Table, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	lower := strings.ToLower(path)
	kind := data.LabelClass
	if m.Task == train.Regression {
		kind = data.LabelNumeric
	}
	lab := ""
	if label {
		if m.Label == "" {
			return nil, fmt.Errorf("%s: the model does not record its label column", path)
		}
		lab = m.Label
	}
	var ignore []string
	if !label && m.Columns == nil && m.Label != "" {
		ignore = []string{m.Label}
	}
	switch {
	case st.IsDir() || strings.HasSuffix(lower, ".parquet") || strings.HasSuffix(lower, ".pq"):
		opts := data.ParquetOptions{Label: lab, LabelKind: kind, Select: m.Columns}
		if st.IsDir() {
			return data.ReadParquetDir(path, opts)
		}
		return data.ReadParquet(path, opts)
	default:
		opts := data.CSVOptions{Label: lab, LabelKind: kind, Select: m.Columns}
		if len(ignore) > 0 {
			if cols, err := csvHeader(path); err == nil && slices.Contains(cols, m.Label) {
				opts.Ignore = ignore
			}
		}
		return data.ReadCSV(path, opts)
	}
}

// csvHeader returns the column names of a CSV file's header.
func csvHeader(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := data.NewCSVScanner(f, path, data.CSVOptions{})
	if err != nil {
		return nil, err
	}
	return s.Columns(), nil
}

// runPredict is the body of `fathom predict`.
func runPredict(modelPath, input, out string, batch int, stdout io.Writer) error {
	m, err := train.LoadModel(modelPath)
	if err != nil {
		return err
	}
	t, err := readModelInput(input, m, false)
	if err != nil {
		return err
	}
	p, err := m.Predict(t, batch)
	if err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	switch ext := strings.ToLower(filepath.Ext(out)); {
	case out == "":
		if jsonOut {
			return writePredictionsJSON(p)
		}
		w := bufio.NewWriter(stdout)
		if err := writePredictionsCSV(w, p); err != nil {
			return err
		}
		return w.Flush()
	case ext == ".parquet" || ext == ".pq":
		if err := data.WriteParquet(out, p.Table()); err != nil {
			return err
		}
	case ext == ".csv":
		var b strings.Builder
		if err := writePredictionsCSV(&b, p); err != nil {
			return err
		}
		if err := atomicfile.WriteBytes(out, []byte(b.String())); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--out %s: unknown format %q (want .csv or .parquet)", out, ext)
	}
	if jsonOut {
		return printJSON(map[string]any{"rows": p.Rows(), "out": out, "model": modelPath})
	}
	fmt.Fprintf(os.Stderr, "%d predictions written to %s\n", p.Rows(), out)
	return nil
}

// writePredictionsCSV writes a header and one row per prediction.
func writePredictionsCSV(w io.Writer, p *train.Predictions) error {
	cw := csv.NewWriter(w)
	f := func(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
	if p.Task == train.Regression {
		cw.Write([]string{"prediction"})
		for _, v := range p.Values {
			cw.Write([]string{f(v)})
		}
	} else {
		c := len(p.Classes)
		head := []string{"prediction"}
		for _, name := range p.Classes {
			head = append(head, "prob_"+name)
		}
		cw.Write(head)
		rec := make([]string, c+1)
		for i, k := range p.Class {
			rec[0] = p.Classes[k]
			for j := range c {
				rec[j+1] = f(p.Probs[i*c+j])
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// writePredictionsJSON prints one JSON line per row.
func writePredictionsJSON(p *train.Predictions) error {
	for i := range p.Rows() {
		var line map[string]any
		if p.Task == train.Regression {
			line = map[string]any{"row": i + 1, "prediction": p.Values[i]}
		} else {
			c := len(p.Classes)
			probs := map[string]float32{}
			for j, name := range p.Classes {
				probs[name] = p.Probs[i*c+j]
			}
			line = map[string]any{"row": i + 1, "prediction": p.Classes[p.Class[i]], "probabilities": probs}
		}
		if err := printJSON(line); err != nil {
			return err
		}
	}
	return nil
}
