package data

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// ParquetOptions says how to read Parquet files. The zero value reads every
// column as a numeric feature and no label.
type ParquetOptions struct {
	// Label names the label column ("" for none).
	Label string
	// LabelKind says whether the label is a class (the default; string,
	// dictionary, integer or boolean columns) or a number (Table.Y).
	LabelKind LabelKind
	// Classes, if set, fixes the class list of a class label; see CSVOptions.
	Classes []string
	// Select, if set, lists the feature columns to read, in this order;
	// otherwise every column but the label is a feature.
	Select []string
	// Ignore lists columns to leave out.
	Ignore []string
	// Impute says what to do with a null feature value. A null label is
	// always an error.
	Impute Impute
	// BatchSize is the number of rows decoded at a time; 0 means 65536.
	BatchSize int
}

// featureShapeKey is the Arrow schema metadata key under which WriteParquet
// stores Table.FeatureShape, as JSON.
const featureShapeKey = "fathom.feature_shape"

// ReadParquet reads a Parquet file into a Table, decoding it in record batches.
// Feature columns may be float32/64, signed or unsigned integers or booleans,
// or lists of those (list, large list or fixed-size list: every row's list
// must have the same length), which fill one Table column per element named
// v[0], v[1], …; errors name the file, the column and, for bad values, the
// row (1-based).
//
// It reads the columns it needs into a Frame (see ReadParquetFrame), after
// checking their types, and converts that with Frame.Table.
func ReadParquet(path string, opts ParquetOptions) (*Table, error) {
	return readParquetTable(path, &parquetDataset{parts: []parquetPart{{path: path}}}, opts)
}

// ReadParquetDir reads every Parquet file under dir (see ParquetParts), in
// path order, into one Table. The keys of Hive-style key=value directories
// are columns like the files' own (see ReadParquetFrame): features, the
// label, or ignored. All files must have the selected columns; a class
// label's class list is collected over all of them. An error about a row
// names its file and its row in that file.
func ReadParquetDir(dir string, opts ParquetOptions) (*Table, error) {
	ds, err := listParquetDir(dir)
	if err != nil {
		return nil, err
	}
	return readParquetTable(dir, ds, opts)
}

// vectorWidth returns the length of a fixed-size list of numbers, 0 for a
// variable-length list of numbers, and −1 for any other type.
func vectorWidth(dt arrow.DataType) int {
	switch dt := dt.(type) {
	case *arrow.FixedSizeListType:
		if isNumericType(dt.Elem()) {
			return int(dt.Len())
		}
	case *arrow.ListType:
		if isNumericType(dt.Elem()) {
			return 0
		}
	case *arrow.LargeListType:
		if isNumericType(dt.Elem()) {
			return 0
		}
	}
	return -1
}

// expandVectorNames returns the Table column names of the features: a list
// column v of width w becomes v[0] … v[w−1].
func expandVectorNames(features []string, vector []bool, widths []int) []string {
	var cols []string
	for k, f := range features {
		if !vector[k] {
			cols = append(cols, f)
			continue
		}
		for e := range widths[k] {
			cols = append(cols, f+"["+strconv.Itoa(e)+"]")
		}
	}
	return cols
}

// collapseVectorNames maps a selection of Table column names back to source
// columns: the run v[0], v[1], … of a vector column v of the file becomes v
// (a model trained on vector features names its columns that way). Other
// names pass through.
func collapseVectorNames(sel, names []string, isVector func(j int) bool) []string {
	if len(sel) == 0 {
		return sel
	}
	vec := map[string]bool{}
	for j, n := range names {
		if isVector(j) {
			vec[n] = true
		}
	}
	var out []string
	for i := 0; i < len(sel); {
		base, ok := strings.CutSuffix(sel[i], "[0]")
		if !ok || !vec[base] {
			out = append(out, sel[i])
			i++
			continue
		}
		out = append(out, base)
		e := 0
		for i < len(sel) && sel[i] == base+"["+strconv.Itoa(e)+"]" {
			i++
			e++
		}
	}
	return out
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func recordColumn(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("column %q missing from a record batch", name)
	}
	return rec.Column(idx[0]), nil
}

// isNumericType reports whether dt is read as a number: a float, an
// integer, a boolean, or a decimal, date, time or timestamp (see
// isNumberLikeType).
func isNumericType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT32, arrow.FLOAT64, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL:
		return true
	}
	return isNumberLikeType(dt)
}

func checkLabelType(dt arrow.DataType, kind LabelKind) error {
	if kind == LabelNumeric {
		if !isNumericType(dt) {
			return fmt.Errorf("type %s is not numeric", dt)
		}
		return nil
	}
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return nil
	case arrow.DICTIONARY:
		vt := dt.(*arrow.DictionaryType).ValueType
		if vt.ID() == arrow.STRING || vt.ID() == arrow.LARGE_STRING || isNumericType(vt) {
			return nil
		}
		return fmt.Errorf("dictionary of %s cannot be a class label", vt)
	}
	if isNumericType(dt) {
		return nil
	}
	return fmt.Errorf("type %s cannot be a class label", dt)
}

// WriteParquet writes t to path as a Parquet file (Snappy-compressed), through
// a temporary file renamed into place. Features become non-null float32
// columns named after t.Columns ("c1", "c2", ... when t has no names); class
// labels a string column of class names, numeric targets a float32 column,
// called t.LabelName or "label". t.FeatureShape is kept in the schema metadata.
// It writes with ParquetFrameWriter, a batch of rows at a time.
func WriteParquet(path string, t *Table) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, 0, t.Cols+1)
	for j := 0; j < t.Cols; j++ {
		name := "c" + strconv.Itoa(j+1)
		if t.Columns != nil {
			name = t.Columns[j]
		}
		names = append(names, name)
	}
	labelName := t.LabelName
	if labelName == "" {
		labelName = "label"
	}
	if t.Labels != nil || t.Y != nil {
		names = append(names, labelName)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("%s: column name %q appears twice", path, n)
		}
		seen[n] = true
	}
	opts := ParquetWriteOptions{Dictionary: true, Required: true}
	if t.FeatureShape != nil {
		b, _ := json.Marshal(t.FeatureShape)
		opts.Metadata = map[string]string{featureShapeKey: string(b)}
	}
	return writeParquetBatches(path, t.Rows, opts, func(lo, hi int) (*Frame, error) { return t.frameRows(names, lo, hi) })
}

// frameRows returns rows lo to hi of t as a Frame of float32 feature
// columns and the label (class names or targets), named by names.
func (t *Table) frameRows(names []string, lo, hi int) (*Frame, error) {
	cols := make([]Column, 0, len(names))
	for j := 0; j < t.Cols; j++ {
		v := make([]float32, hi-lo)
		for i := range v {
			v[i] = t.X[(lo+i)*t.Cols+j]
		}
		cols = append(cols, NewColumn(names[j], v, nil))
	}
	switch {
	case t.Labels != nil:
		v := make([]string, hi-lo)
		for i := range v {
			v[i] = t.Classes[t.Labels[lo+i]]
		}
		cols = append(cols, NewColumn(names[t.Cols], v, nil))
	case t.Y != nil:
		cols = append(cols, NewColumn(names[t.Cols], t.Y[lo:hi], nil))
	}
	return NewFrame(cols...)
}
