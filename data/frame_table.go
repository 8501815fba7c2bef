package data

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// TableOptions says how Frame.Table turns a frame into a Table: which column
// is the label and how it is read, which columns are features and what to do
// with missing feature values. The zero value makes every column a feature
// and reads no label.
type TableOptions struct {
	// Label names the label column ("" for none).
	Label string
	// LabelKind says whether the label is a class (the default; string,
	// integer, boolean or float columns, whose values become class names)
	// or a number (Table.Y; numeric or boolean columns).
	LabelKind LabelKind
	// Classes, if set, fixes the class list of a class label: its order
	// gives the class indices and any other value is an error. Otherwise
	// classes are collected and sorted (numerically if all are numbers).
	Classes []string
	// Features, if set, lists the feature columns in order; otherwise every
	// column but the label is a feature. A vector column may be named whole
	// or by the run of its element names v[0], v[1], … (as a Table names
	// them).
	Features []string
	// Ignore lists columns to leave out.
	Ignore []string
	// Impute says what to do with a missing feature value. A missing label
	// is always an error.
	Impute Impute
	// Source names the data in error messages (a file or directory).
	Source string

	// parquetCompat converts as ReadParquet always has: float labels name
	// their classes in float32 precision, and float64 features outside the
	// float32 range become ±Inf.
	parquetCompat bool
}

// rowError is an error about row (0-based) of a frame; ReadParquetDir turns
// the row into a file and a row within it.
type rowError struct {
	row int
	msg string
}

func (e *rowError) Error() string { return fmt.Sprintf("row %d: %s", e.row+1, e.msg) }

func rowErrorf(row int, format string, args ...any) error {
	return &rowError{row: row, msg: fmt.Sprintf(format, args...)}
}

// Table converts the frame to a dense float32 Table, as the readers build
// them: scalar numeric and boolean features (true is 1) fill one Table
// column each, a vector column v of width w fills w columns named v[0] …
// v[w−1], and the label becomes class indices (Labels, Classes) or numeric
// targets (Y). String features are refused: index or encode them first.
// The frame's "fathom.feature_shape" metadata, when it matches the number of
// columns, becomes the Table's FeatureShape.
//
// Errors name the source, the row (1-based) and the column.
func (f *Frame) Table(opts TableOptions) (*Table, error) {
	t, err := f.table(opts)
	if err != nil && opts.Source != "" {
		return nil, fmt.Errorf("%s: %w", opts.Source, err)
	}
	return t, err
}

func (f *Frame) table(opts TableOptions) (*Table, error) {
	names := f.Names()
	isVector := func(j int) bool { return f.cols[j].Kind() == Vector }
	sel, err := selectColumns(names, opts.Label, 0, collapseVectorNames(opts.Features, names, isVector), opts.Ignore)
	if err != nil {
		return nil, err
	}
	if sel.label < 0 && (opts.LabelKind != LabelClass || len(opts.Classes) > 0) {
		return nil, fmt.Errorf("label options given but no label column")
	}
	classes, err := newClassEncoder(opts.Classes)
	if err != nil {
		return nil, err
	}
	cols, vector, widths, err := f.tableLayout(sel.features, opts.Features)
	if err != nil {
		return nil, err
	}
	if sel.label >= 0 {
		if err := checkTableLabel(f.cols[sel.label], opts.LabelKind); err != nil {
			return nil, err
		}
	}

	n := f.rows
	t := &Table{Rows: n, Cols: len(cols), Columns: cols, X: make([]float32, n*len(cols))}
	if cols == nil && !opts.parquetCompat {
		t.Columns = []string{} // as ReadCSV names no columns
	}
	if s, ok := f.Metadata(featureShapeKey); ok {
		var shape []int
		if err := json.Unmarshal([]byte(s), &shape); err != nil {
			return nil, fmt.Errorf("bad %s metadata: %v", featureShapeKey, err)
		}
		if len(shape) > 0 && product(shape) == len(cols) {
			t.FeatureShape = shape
		}
	}
	missing, err := f.fillTableFeatures(t, sel.features, vector, widths, opts)
	if err != nil {
		return nil, err
	}
	if sel.label >= 0 {
		if err := fillTableLabel(t, f.cols[sel.label], classes, opts); err != nil {
			return nil, err
		}
	}
	if opts.Impute == MissingMean {
		if err := missing.imputeMean(t, func(k int) string { return strconv.Quote(t.Columns[k]) }); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// tableLayout checks the types of the feature columns (indices into
// f.cols) and lays out the Table's columns: their names (a vector's
// elements one each), which features are vectors and their widths.
// selected, the features as the caller named them, must name whole
// vectors, in order.
func (f *Frame) tableLayout(features []int, selected []string) (cols []string, vector []bool, widths []int, _ error) {
	featureNames := make([]string, len(features))
	vector = make([]bool, len(features))
	widths = make([]int, len(features))
	for k, j := range features {
		c := f.cols[j]
		featureNames[k], widths[k] = c.Name(), 1
		switch c := c.(type) {
		case *Float64Column, *Float32Column, *Int64Column, *BoolColumn:
		case *VectorColumn:
			vector[k], widths[k] = true, c.Width()
		case *StringColumn:
			return nil, nil, nil, fmt.Errorf("column %q has type string; features must be numbers, booleans or vectors (index or encode strings first)", c.Name())
		default:
			return nil, nil, nil, fmt.Errorf("column %q: Table cannot convert a column of Go type %T", c.Name(), c)
		}
	}
	cols = expandVectorNames(featureNames, vector, widths)
	if len(selected) > 0 {
		// Element names must select whole vectors, in order.
		var want []string
		for _, n := range selected {
			if k := slices.Index(featureNames, n); k >= 0 && vector[k] {
				want = append(want, expandVectorNames(featureNames[k:k+1], vector[k:k+1], widths[k:k+1])...)
			} else {
				want = append(want, n)
			}
		}
		if !slices.Equal(want, cols) {
			return nil, nil, nil, fmt.Errorf("the selected columns %v do not match the vector columns they name, whose elements are %v", selected, cols)
		}
	}
	return cols, vector, widths, nil
}

// checkTableLabel checks that c can be a label of kind kind.
func checkTableLabel(c Column, kind LabelKind) error {
	switch c.(type) {
	case *Float64Column, *Float32Column, *Int64Column, *BoolColumn, *StringColumn, *VectorColumn:
	default:
		return fmt.Errorf("label column %q: Table cannot convert a column of Go type %T", c.Name(), c)
	}
	switch {
	case c.Kind() == Vector:
		return fmt.Errorf("label column %q has type %s", c.Name(), describeKind(c))
	case kind == LabelNumeric && c.Kind() == String:
		return fmt.Errorf("label column %q: type string is not numeric", c.Name())
	}
	return nil
}

// fillTableFeatures writes the feature columns into t.X and returns the
// cells left missing (NaN) for imputation; a null is an error unless
// opts imputes it.
func (f *Frame) fillTableFeatures(t *Table, features []int, vector []bool, widths []int, opts TableOptions) (missingCells, error) {
	var missing missingCells
	null := func(i int, name string, p int) error {
		if opts.Impute != MissingMean {
			return rowErrorf(i, "column %q: null value (set Impute to MissingMean to fill it with the column mean)", name)
		}
		missing.pos = append(missing.pos, p)
		t.X[p] = float32(math.NaN())
		return nil
	}
	stride := t.Cols
	off := 0
	for k, j := range features {
		c := f.cols[j]
		if vector[k] {
			if err := fillVector(t.X, stride, off, c.(*VectorColumn), null); err != nil {
				return missing, err
			}
			off += widths[k]
			continue
		}
		if err := fillScalar(t.X, stride, off, c, opts.parquetCompat); err != nil {
			return missing, err
		}
		for i, ok := range c.Valid() { // nil when nothing is missing
			if !ok {
				if err := null(i, c.Name(), i*stride+off); err != nil {
					return missing, err
				}
			}
		}
		off++
	}
	return missing, nil
}

// fillTableLabel sets t's label from column c: numeric targets (Y) or
// class indices (Labels, Classes) encoded by classes. A null label is an
// error.
func fillTableLabel(t *Table, c Column, classes *classEncoder, opts TableOptions) error {
	n := t.Rows
	t.LabelName = c.Name()
	for i := range n {
		if c.IsNull(i) {
			return rowErrorf(i, "label column %q: null label", c.Name())
		}
	}
	if opts.LabelKind == LabelNumeric {
		t.Y = make([]float32, n)
		for i := range n {
			t.Y[i] = scalarFloat32(c, i)
			if !isFinite32(t.Y[i]) {
				return rowErrorf(i, "label column %q: %v is not a finite number", c.Name(), scalarFloat64(c, i))
			}
		}
		return nil
	}
	t.Labels = make([]int64, n)
	for i := range n {
		s := classNameOf(c, i, opts.parquetCompat)
		idx, ok := classes.encode(s)
		if !ok {
			return rowErrorf(i, "label column %q: %s", c.Name(), classes.unknownClass(s))
		}
		t.Labels[i] = idx
	}
	t.Classes = classes.sortClasses(t.Labels)
	return nil
}

// fillScalar writes the values of a numeric or boolean column into Table
// column off of x (row stride stride); missing rows get the zero value,
// for the caller to handle. NaN, infinities and finite float64s outside the
// float32 range are errors (one would turn a standardized column into NaNs).
func fillScalar(x []float32, stride, off int, c Column, compat bool) error {
	switch c := c.(type) {
	case *Float32Column:
		for i, v := range c.values {
			if !isFinite32(v) {
				return rowErrorf(i, "column %q: %v is not a finite number", c.name, v)
			}
			x[i*stride+off] = v
		}
	case *Float64Column:
		for i, v := range c.values {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return rowErrorf(i, "column %q: %v is not a finite number", c.name, v)
			}
			if v > math.MaxFloat32 || v < -math.MaxFloat32 {
				return rowErrorf(i, "column %q: %v is outside the float32 range", c.name, v)
			}
			x[i*stride+off] = float32(v)
		}
	case *Int64Column:
		for i, v := range c.values {
			x[i*stride+off] = float32(v)
		}
	case *BoolColumn:
		for i, v := range c.values {
			if v {
				x[i*stride+off] = 1
			}
		}
	}
	return nil
}

// fillVector writes the elements of c into Table columns off… of x.
func fillVector(x []float32, stride, off int, c *VectorColumn, null func(i int, name string, p int) error) error {
	w := c.width
	for i := range c.Len() {
		p := i*stride + off
		if c.IsNull(i) { // a missing row: every element is missing
			for e := range w {
				if err := null(i, c.name, p+e); err != nil {
					return err
				}
			}
			continue
		}
		for e := range w {
			if c.elemValid != nil && !c.elemValid[i*w+e] {
				if err := null(i, fmt.Sprintf("%s[%d]", c.name, e), p+e); err != nil {
					return err
				}
				continue
			}
			if c.is32 {
				x[p+e] = c.f32[i*w+e]
			} else {
				x[p+e] = float32(c.f64[i*w+e])
			}
			if !isFinite32(x[p+e]) {
				v := float64(x[p+e])
				if !c.is32 {
					v = c.f64[i*w+e]
				}
				return rowErrorf(i, "column %q: %v is not a finite float32", fmt.Sprintf("%s[%d]", c.name, e), v)
			}
		}
	}
	return nil
}

// isFinite32 reports whether v is neither infinite nor NaN.
func isFinite32(v float32) bool {
	return !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v))
}

// scalarFloat64 returns row i of a numeric or boolean column as float64,
// for messages.
func scalarFloat64(c Column, i int) float64 {
	if c, ok := c.(*Float64Column); ok {
		return c.values[i]
	}
	return float64(scalarFloat32(c, i))
}

// scalarFloat32 returns row i of a numeric or boolean column as float32.
func scalarFloat32(c Column, i int) float32 {
	switch c := c.(type) {
	case *Float64Column:
		return float32(c.values[i])
	case *Float32Column:
		return c.values[i]
	case *Int64Column:
		return float32(c.values[i])
	case *BoolColumn:
		if c.values[i] {
			return 1
		}
	}
	return 0
}

// classNameOf returns row i of a scalar column as a class name: strings as
// they are, integers in decimal, booleans as true/false, floats in the
// shortest form that reads back as the same value (as a float32 with
// float32Floats).
func classNameOf(c Column, i int, float32Floats bool) string {
	switch c := c.(type) {
	case *StringColumn:
		return c.values[i]
	case *Int64Column:
		return strconv.FormatInt(c.values[i], 10)
	case *BoolColumn:
		return strconv.FormatBool(c.values[i])
	case *Float32Column:
		return strconv.FormatFloat(float64(c.values[i]), 'g', -1, 32)
	case *Float64Column:
		if float32Floats {
			return strconv.FormatFloat(float64(float32(c.values[i])), 'g', -1, 32)
		}
		return strconv.FormatFloat(c.values[i], 'g', -1, 64)
	}
	return ""
}

// Frame returns the table as a Frame: one float32 column per feature (named
// after Columns, or c1, c2, … when the table has no names), then the label,
// if any, as a string column of class names or a float32 column of targets
// (named LabelName, or "label"). FeatureShape is kept in the metadata, so
// Frame.Table with the same label options (and Classes, to keep the class
// order) gives back an equal table.
func (t *Table) Frame() (*Frame, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	cols := make([]Column, 0, t.Cols+1)
	for j := range t.Cols {
		name := "c" + strconv.Itoa(j+1)
		if t.Columns != nil {
			name = t.Columns[j]
		}
		v := make([]float32, t.Rows)
		for i := range v {
			v[i] = t.X[i*t.Cols+j]
		}
		cols = append(cols, NewColumn(name, v, nil))
	}
	label := t.LabelName
	if label == "" {
		label = "label"
	}
	switch {
	case t.Labels != nil:
		names := make([]string, t.Rows)
		for i, l := range t.Labels {
			names[i] = t.Classes[l]
		}
		cols = append(cols, NewColumn(label, names, nil))
	case t.Y != nil:
		cols = append(cols, NewColumn(label, slices.Clone(t.Y), nil))
	}
	f, err := NewFrame(cols...)
	if err != nil {
		return nil, err
	}
	f.rows = t.Rows
	if t.FeatureShape != nil {
		b, _ := json.Marshal(t.FeatureShape)
		f = f.WithMetadata(featureShapeKey, string(b))
	}
	return f, nil
}
