package modelfile

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
)

// ReadInput reads the model's input rows from a CSV file (gzip-compressed
// too), a Parquet file or a directory of Parquet parts: its feature
// columns (by name when the model knows them) and, with label, the target
// column too. Other columns are ignored.
func (m *Model) ReadInput(path string, label bool) (*data.Table, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	lower := strings.ToLower(path)
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
