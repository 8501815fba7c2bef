package mljob

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/ml"
)

// outColumn is one column of a predictions file: float64 values or
// strings.
type outColumn struct {
	name string
	nums []float64
	strs []string
}

// PredictionColumns picks the columns of a predictions file out of a
// transformed frame: the prediction column, the probability vector as
// one column per class ("probability_0", ...), and every string column
// the model added (a predicted label). in is the input frame.
func PredictionColumns(in, out *data.Frame) ([]string, error) {
	var names []string
	if !out.Has(ml.PredictionCol) {
		return nil, fmt.Errorf("the model's output has no %q column (columns: %s)", ml.PredictionCol, strings.Join(out.Names(), ", "))
	}
	names = append(names, ml.PredictionCol)
	if out.Has(ml.ProbabilityCol) {
		names = append(names, ml.ProbabilityCol)
	}
	for _, c := range out.Columns() {
		if c.Kind() == data.String && !in.Has(c.Name()) {
			names = append(names, c.Name())
		}
	}
	return names, nil
}

func outColumns(f *data.Frame, names []string) ([]outColumn, error) {
	var out []outColumn
	for _, name := range names {
		c := f.Col(name)
		switch c := c.(type) {
		case nil:
			return nil, fmt.Errorf("no column %q", name)
		case *data.ScalarColumn[string]:
			out = append(out, outColumn{name: name, strs: c.Values()})
		case *data.VectorColumn:
			m, err := ml.Features(f, name)
			if err != nil {
				return nil, err
			}
			for e := range m.Cols {
				v := make([]float64, m.Rows)
				for i := range v {
					v[i] = m.Data[i*m.Cols+e]
				}
				out = append(out, outColumn{name: name + "_" + strconv.Itoa(e), nums: v})
			}
		default:
			v, err := ml.Numbers(f, name)
			if err != nil {
				return nil, err
			}
			out = append(out, outColumn{name: name, nums: v})
		}
	}
	return out, nil
}

// WritePredictions writes the named columns of f (vectors one column per
// element) to path, as CSV (.csv) or Parquet (.parquet, .parq, .pq) by
// its extension, through a temporary file renamed into place. Numbers
// keep full float64 precision in both.
func WritePredictions(path string, f *data.Frame, names []string) error {
	cols, err := outColumns(f, names)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case data.IsParquetFile(path):
		return writeParquet(path, cols)
	case strings.EqualFold(filepath.Ext(path), ".csv"):
		return atomicfile.Write(path, func(w io.Writer) error { return writeCSV(w, f.Len(), cols) })
	}
	return fmt.Errorf("%s: unknown output format %q (want .csv or .parquet)", path, filepath.Ext(path))
}

func writeCSV(w io.Writer, rows int, cols []outColumn) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(cols))
	for j, c := range cols {
		rec[j] = c.name
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	for i := range rows {
		for j, c := range cols {
			if c.strs != nil {
				rec[j] = c.strs[i]
			} else {
				rec[j] = strconv.FormatFloat(c.nums[i], 'g', -1, 64)
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeParquet writes the columns with data's Parquet writer: REQUIRED
// float64 and string columns, dictionary-encoded where it pays, Snappy.
func writeParquet(path string, cols []outColumn) error {
	names := make([]string, len(cols))
	for j, c := range cols {
		names[j] = c.name
	}
	if s := slices.Clone(names); len(slices.Compact(slices.Sorted(slices.Values(s)))) != len(names) {
		return fmt.Errorf("%s: column names repeat: %v", path, names)
	}
	fcols := make([]data.Column, len(cols))
	for j, c := range cols {
		if c.strs != nil {
			fcols[j] = data.NewColumn(c.name, c.strs, nil)
		} else {
			fcols[j] = data.NewColumn(c.name, c.nums, nil)
		}
	}
	f, err := data.NewFrame(fcols...)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return data.WriteParquetFrame(path, f, data.ParquetWriteOptions{Dictionary: true, Required: true})
}

// DefaultEvaluator is the evaluator type `fathom ml eval` uses when none
// is given: multiclass classification when the model outputs
// probabilities, regression otherwise.
func DefaultEvaluator(out *data.Frame) string {
	if out.Has(ml.ProbabilityCol) {
		return "MulticlassClassificationEvaluator"
	}
	return "RegressionEvaluator"
}

// NewEvaluator builds a registered evaluator with params given as
// "key=value" strings (values parsed as YAML), decoded strictly over its
// defaults.
func NewEvaluator(typ string, params []string) (ml.Evaluator, error) {
	ev, err := ml.NewEvaluator(typ)
	if err != nil {
		return nil, err
	}
	if err := SetParams(ev, params); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return ev, nil
}
