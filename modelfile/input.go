package modelfile

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
)

// ReadInput reads the model's input rows from a CSV file (gzip-compressed
// too), a Parquet file or a directory of Parquet parts: its feature
// columns (by name when the model knows them) and, with label, the target
// column too. Other columns are ignored. A model trained with mean
// imputation fills missing feature values with its training means.
func (m *Model) ReadInput(path string, label bool) (*data.Table, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	// The label's kind only matters when the label is read: the readers
	// refuse label options without a label column.
	lab, kind := "", data.LabelClass
	if label {
		if m.Label == "" {
			return nil, fmt.Errorf("%s: the model does not record its label column", path)
		}
		lab = m.Label
		if m.Task == metrics.Regression {
			kind = data.LabelNumeric
		}
	}
	parquet := st.IsDir() || data.IsParquetFile(path)
	if m.Impute != nil && m.Columns != nil {
		t, err := m.readImputed(path, parquet, lab, kind)
		return t, m.missingHint(err)
	}
	var ignore []string
	if !label && m.Columns == nil && m.Label != "" {
		ignore = []string{m.Label}
	}
	var t *data.Table
	switch {
	case parquet:
		opts := data.ParquetOptions{Label: lab, LabelKind: kind, Select: m.Columns}
		if st.IsDir() {
			t, err = data.ReadParquetDir(path, opts)
		} else {
			t, err = data.ReadParquet(path, opts)
		}
	default:
		opts := data.CSVOptions{Label: lab, LabelKind: kind, Select: m.Columns}
		if len(ignore) > 0 {
			if cols, err := csvHeader(path); err == nil && slices.Contains(cols, m.Label) {
				opts.Ignore = ignore
			}
		}
		t, err = data.ReadCSV(path, opts)
	}
	return t, m.missingHint(err)
}

// readImputed reads the input as a Frame, fills the nulls of the model's
// feature columns with the training means (Features.ImputeFrame) and
// converts it to a Table.
func (m *Model) readImputed(path string, parquet bool, label string, kind data.LabelKind) (*data.Table, error) {
	cols := slices.Clone(m.Columns)
	if label != "" {
		cols = append(cols, label)
	}
	var f *data.Frame
	var err error
	if parquet {
		f, err = data.ReadParquetFrame(path, data.ParquetFrameOptions{Columns: cols})
	} else {
		f, err = data.ReadCSVFrame(path, data.CSVFrameOptions{Select: cols})
	}
	if err != nil {
		return nil, err
	}
	if f, err = m.Features().ImputeFrame(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t, err := f.Table(data.TableOptions{Label: label, LabelKind: kind, Features: m.Columns, Source: path})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// missingHint rewrites the readers' advice about missing values (which
// names package data's Go identifiers) for someone holding a model file.
func (m *Model) missingHint(err error) error {
	return ReplaceHint(err, "set Impute to MissingMean to fill it with the column mean",
		"the model was trained without impute: mean; fill in the value, or retrain with impute: mean under data: in the config")
}

// ReplaceHint returns err with the text old in its message replaced by
// new (errors.Is and errors.As still see err); nil stays nil.
func ReplaceHint(err error, old, new string) error {
	if err == nil || !strings.Contains(err.Error(), old) {
		return err
	}
	return &hintError{msg: strings.ReplaceAll(err.Error(), old, new), err: err}
}

type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// InputColumns returns the column names of a CSV file's header or a
// Parquet file's schema (the first part of a directory).
func InputColumns(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() && !data.IsParquetFile(path) {
		return csvHeader(path)
	}
	if st.IsDir() {
		parts, err := data.ParquetParts(path)
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			return nil, errors.New(path + ": no Parquet parts")
		}
		path = parts[0]
	}
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	root := r.MetaData().Schema.Root()
	names := make([]string, root.NumFields())
	for i := range names {
		names[i] = root.Field(i).Name()
	}
	return names, nil
}

// UnusedColumns returns the columns of the input file at path that the
// model does not read (its feature columns and label excepted); nil when
// the model does not know its columns.
func (m *Model) UnusedColumns(path string) ([]string, error) {
	if m.Columns == nil {
		return nil, nil
	}
	names, err := InputColumns(path)
	if err != nil {
		return nil, err
	}
	var unused []string
	for _, n := range names {
		if n != m.Label && !slices.Contains(m.Columns, n) && !usedVectorColumn(m.Columns, n) {
			unused = append(unused, n)
		}
	}
	return unused, nil
}

// usedVectorColumn reports whether a vector column n is read element by
// element (the model's columns are named n[0], n[1], ...).
func usedVectorColumn(cols []string, n string) bool {
	return slices.ContainsFunc(cols, func(c string) bool { return strings.HasPrefix(c, n+"[") })
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
