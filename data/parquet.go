package data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/atomicfile"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
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

var useFrame = true

// featureShapeKey is the Arrow schema metadata key under which WriteParquet
// stores Table.FeatureShape, as JSON.
const featureShapeKey = "fathom.feature_shape"

// ReadParquet reads a Parquet file into a Table, decoding it in record batches.
// Feature columns may be float32/64, signed or unsigned integers or booleans,
// or lists of those (list, large list or fixed-size list: every row's list
// must have the same length), which fill one Table column per element named
// v[0], v[1], …; errors name the file, the column and, for bad values, the
// row (1-based).
func ReadParquet(path string, opts ParquetOptions) (*Table, error) {
	if useFrame {
		return readParquetTable(path, []string{path}, opts)
	}
	pr, err := newParquetReader(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := pr.readFile(path); err != nil {
		return nil, err
	}
	return pr.finish(path)
}

// ParquetParts returns the partition files of a partitioned Parquet data set:
// the files called part-*.parquet in dir (as Spark and fathom write them),
// sorted by name.
func ParquetParts(dir string) ([]string, error) {
	parts, err := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: no part-*.parquet files", dir)
	}
	slices.Sort(parts)
	return parts, nil
}

// ReadParquetDir reads every partition file of dir (see ParquetParts), in
// name order, into one Table. All partitions must have the selected columns;
// a class label's class list is collected over all of them.
func ReadParquetDir(dir string, opts ParquetOptions) (*Table, error) {
	parts, err := ParquetParts(dir)
	if err != nil {
		return nil, err
	}
	if useFrame {
		return readParquetTable(dir, parts, opts)
	}
	pr, err := newParquetReader(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for _, p := range parts {
		if err := pr.readFile(p); err != nil {
			return nil, err
		}
	}
	return pr.finish(dir)
}

// parquetReader accumulates one Table from one or more Parquet files.
type parquetReader struct {
	opts    ParquetOptions
	classes *classEncoder
	missing missingCells
	t       *Table
	file    string // the file being read, for errors
	// Of each selected source feature k: its name, whether it is a list
	// column, and how many Table columns it fills (1 for a scalar, the
	// length of its lists for a list column: 0 until the first row of a
	// variable-length list column has been seen).
	sourceNames []string
	vector      []bool
	widths      []int
}

func newParquetReader(opts ParquetOptions) (*parquetReader, error) {
	classes, err := newClassEncoder(opts.Classes)
	if err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1 << 16
	}
	return &parquetReader{opts: opts, classes: classes}, nil
}

func (pr *parquetReader) readFile(path string) error {
	pr.file = path
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return fmt.Errorf("%s: parquet: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(pr.opts.BatchSize)}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("%s: parquet: %w", path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: parquet: %w", path, err)
	}
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	isVector := func(j int) bool { return vectorWidth(fr.Manifest.Fields[j].Field.Type) >= 0 }
	sel, err := selectColumns(names, pr.opts.Label, 0, collapseVectorNames(pr.opts.Select, names, isVector), pr.opts.Ignore)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if sel.label < 0 && (pr.opts.LabelKind != LabelClass || len(pr.opts.Classes) > 0) {
		return fmt.Errorf("%s: label options given but no label column", path)
	}
	features := make([]string, len(sel.features))
	for k, j := range sel.features {
		features[k] = names[j]
	}
	var shape []int
	if md := schema.Metadata(); md.FindKey(featureShapeKey) >= 0 {
		if err := json.Unmarshal([]byte(md.Values()[md.FindKey(featureShapeKey)]), &shape); err != nil {
			return fmt.Errorf("%s: bad %s metadata: %v", path, featureShapeKey, err)
		}
	}
	// Check the column types before decoding anything.
	leaves := make([]int, 0, len(sel.features)+1)
	wanted := append(slices.Clone(sel.features), sel.label)
	if sel.label < 0 {
		wanted = wanted[:len(wanted)-1]
	}
	widths := make([]int, len(sel.features))
	vector := make([]bool, len(sel.features))
	for k, j := range wanted {
		f := fr.Manifest.Fields[j]
		if j == sel.label {
			if !f.IsLeaf() {
				return fmt.Errorf("%s: label column %q has nested type %s", path, names[j], f.Field.Type)
			}
			if err := checkLabelType(f.Field.Type, pr.opts.LabelKind); err != nil {
				return fmt.Errorf("%s: label column %q: %v", path, names[j], err)
			}
			leaves = append(leaves, f.ColIndex)
			continue
		}
		widths[k] = 1
		if w := vectorWidth(f.Field.Type); w >= 0 {
			// A list of numbers (an embedding, an image) is a vector
			// feature: one Table column per element.
			if len(f.Children) != 1 || !f.Children[0].IsLeaf() {
				return fmt.Errorf("%s: column %q has type %s; a vector feature must be a list of numbers", path, names[j], f.Field.Type)
			}
			widths[k], vector[k] = w, true
			leaves = append(leaves, f.Children[0].ColIndex)
			continue
		}
		if !f.IsLeaf() {
			return fmt.Errorf("%s: column %q has nested type %s; only numbers, booleans and lists of numbers can be features", path, names[j], f.Field.Type)
		}
		if !isNumericType(f.Field.Type) {
			return fmt.Errorf("%s: column %q has type %s; features must be numbers or booleans", path, names[j], f.Field.Type)
		}
		leaves = append(leaves, f.ColIndex)
	}
	if pr.widths != nil {
		// A later partition: the same features, lists as long as before.
		for k := range widths {
			if widths[k] == 0 || pr.widths[k] == 0 {
				widths[k] = pr.widths[k]
			}
		}
		if !slices.Equal(features, pr.sourceNames) || !slices.Equal(widths, pr.widths) {
			return fmt.Errorf("%s: feature columns %v (widths %v) differ from the earlier partitions' %v (widths %v)", path, features, widths, pr.sourceNames, pr.widths)
		}
	}
	pr.widths, pr.sourceNames, pr.vector = widths, features, vector
	newTable := func() error {
		cols := expandVectorNames(features, vector, pr.widths)
		if len(pr.opts.Select) > 0 {
			// Element names (v[0], v[1], …) must select whole vectors.
			var want []string
			for _, n := range pr.opts.Select {
				if k := slices.Index(features, n); k >= 0 && vector[k] {
					want = append(want, expandVectorNames(features[k:k+1], vector[k:k+1], pr.widths[k:k+1])...)
				} else {
					want = append(want, n)
				}
			}
			if !slices.Equal(want, cols) {
				return fmt.Errorf("%s: the selected columns %v do not match the vector columns they name, whose elements are %v", path, pr.opts.Select, cols)
			}
		}
		pr.t = &Table{Cols: len(cols), Columns: cols, X: []float32{}}
		if len(shape) > 0 && product(shape) == len(cols) {
			pr.t.FeatureShape = shape
		}
		if sel.label >= 0 {
			pr.t.LabelName = names[sel.label]
			if pr.opts.LabelKind == LabelNumeric {
				pr.t.Y = []float32{}
			} else {
				pr.t.Labels = []int64{}
			}
		}
		return nil
	}
	if len(leaves) == 0 {
		return fmt.Errorf("%s: no columns selected", path)
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return fmt.Errorf("%s: parquet: %w", path, err)
	}
	defer rr.Release()
	fileRow := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		if pr.t == nil {
			if err := pr.learnWidths(rec, names, sel); err != nil {
				return err
			}
			if err := newTable(); err != nil {
				return err
			}
		}
		if err := pr.appendBatch(rec, names, sel, fileRow); err != nil {
			return err
		}
		fileRow += int(rec.NumRows())
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: parquet: after row %d: %w", path, fileRow, err)
	}
	if pr.t == nil {
		for k, w := range pr.widths {
			if w == 0 {
				return fmt.Errorf("%s: column %q is a list of varying length and the file has no rows to tell its width", path, features[k])
			}
		}
		return newTable()
	}
	return nil
}

// learnWidths sets the width of each variable-length list feature from its
// first non-empty list in rec.
func (pr *parquetReader) learnWidths(rec arrow.RecordBatch, names []string, sel selection) error {
	for k, j := range sel.features {
		if pr.widths[k] != 0 {
			continue
		}
		col, err := recordColumn(rec, names[j])
		if err != nil {
			return fmt.Errorf("%s: %w", pr.file, err)
		}
		for i := 0; i < col.Len() && pr.widths[k] == 0; i++ {
			if !col.IsNull(i) {
				lo, hi := col.(array.ListLike).ValueOffsets(i)
				pr.widths[k] = int(hi - lo) // an empty list is checked (and refused) later
			}
		}
		if pr.widths[k] == 0 {
			return fmt.Errorf("%s: column %q: cannot tell the length of its lists from the first rows (all null or empty)", pr.file, names[j])
		}
	}
	return nil
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

// appendBatch appends the rows of one record batch; firstRow is the 0-based
// index in the file of its first row.
func (pr *parquetReader) appendBatch(rec arrow.RecordBatch, names []string, sel selection, firstRow int) error {
	n := int(rec.NumRows())
	t := pr.t
	base := len(t.X)
	t.X = slices.Grow(t.X, n*t.Cols)[:base+n*t.Cols]
	missing := func(row int, name string, p int) error {
		if pr.opts.Impute != MissingMean {
			return fmt.Errorf("%s: row %d: column %q: null value (set Impute to MissingMean to fill it with the column mean)", pr.file, row, name)
		}
		pr.missing.pos = append(pr.missing.pos, p)
		t.X[p] = float32(math.NaN())
		return nil
	}
	off := 0 // first Table column of feature k
	for k, j := range sel.features {
		col, err := recordColumn(rec, names[j])
		if err != nil {
			return fmt.Errorf("%s: %w", pr.file, err)
		}
		w := pr.widths[k]
		if !pr.vector[k] {
			for i := 0; i < n; i++ {
				p := base + i*t.Cols + off
				if col.IsNull(i) {
					if err := missing(firstRow+i+1, names[j], p); err != nil {
						return err
					}
					continue
				}
				t.X[p] = numericValue(col, i)
			}
			off++
			continue
		}
		list := col.(array.ListLike)
		values := list.ListValues()
		for i := 0; i < n; i++ {
			p := base + i*t.Cols + off
			if col.IsNull(i) { // a null list: every element is missing
				for e := range w {
					if err := missing(firstRow+i+1, names[j], p+e); err != nil {
						return err
					}
				}
				continue
			}
			lo, hi := list.ValueOffsets(i)
			if int(hi-lo) != w {
				return fmt.Errorf("%s: row %d: column %q holds %d values; the column's lists have %d", pr.file, firstRow+i+1, names[j], hi-lo, w)
			}
			for e := range w {
				if values.IsNull(int(lo) + e) {
					if err := missing(firstRow+i+1, fmt.Sprintf("%s[%d]", names[j], e), p+e); err != nil {
						return err
					}
					continue
				}
				t.X[p+e] = numericValue(values, int(lo)+e)
			}
		}
		off += w
	}
	if sel.label >= 0 {
		name := names[sel.label]
		col, err := recordColumn(rec, name)
		if err != nil {
			return fmt.Errorf("%s: %w", pr.file, err)
		}
		for i := 0; i < n; i++ {
			if col.IsNull(i) {
				return fmt.Errorf("%s: row %d: label column %q: null label", pr.file, firstRow+i+1, name)
			}
			if pr.opts.LabelKind == LabelNumeric {
				t.Y = append(t.Y, numericValue(col, i))
				continue
			}
			s := classString(col, i)
			idx, ok := pr.classes.encode(s)
			if !ok {
				return fmt.Errorf("%s: row %d: label column %q: %s", pr.file, firstRow+i+1, name, pr.classes.unknownClass(s))
			}
			t.Labels = append(t.Labels, idx)
		}
	}
	t.Rows += n
	return nil
}

func recordColumn(rec arrow.RecordBatch, name string) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("column %q missing from a record batch", name)
	}
	return rec.Column(idx[0]), nil
}

// finish imputes missing values, orders the classes and returns the table.
func (pr *parquetReader) finish(where string) (*Table, error) {
	t := pr.t
	if pr.opts.Impute == MissingMean {
		if err := pr.missing.imputeMean(t, func(k int) string { return strconv.Quote(t.Columns[k]) }); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	if t.Labels != nil {
		t.Classes = pr.classes.sortClasses(t.Labels)
	}
	return t, nil
}

func isNumericType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.FLOAT32, arrow.FLOAT64, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.BOOL:
		return true
	}
	return false
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

// numericValue returns element i of a numeric or boolean array as float32.
func numericValue(a arrow.Array, i int) float32 {
	switch a := a.(type) {
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return float32(a.Value(i))
	case *array.Int8:
		return float32(a.Value(i))
	case *array.Int16:
		return float32(a.Value(i))
	case *array.Int32:
		return float32(a.Value(i))
	case *array.Int64:
		return float32(a.Value(i))
	case *array.Uint8:
		return float32(a.Value(i))
	case *array.Uint16:
		return float32(a.Value(i))
	case *array.Uint32:
		return float32(a.Value(i))
	case *array.Uint64:
		return float32(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return 1
		}
		return 0
	}
	// Types are checked before decoding; reaching here is a bug.
	panic(fmt.Sprintf("data: numericValue: unexpected Arrow type %s", a.DataType()))
}

// classString returns element i of a label array as a class name.
func classString(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.StringView:
		return a.Value(i)
	case *array.Dictionary:
		return classString(a.Dictionary(), a.GetValueIndex(i))
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Float32, *array.Float64:
		return strconv.FormatFloat(float64(numericValue(a, i)), 'g', -1, 32)
	}
	return a.ValueStr(i)
}

// WriteParquet writes t to path as a Parquet file (Snappy-compressed), through
// a temporary file renamed into place. Features become non-null float32
// columns named after t.Columns ("c1", "c2", ... when t has no names); class
// labels a string column of class names, numeric targets a float32 column,
// called t.LabelName or "label". t.FeatureShape is kept in the schema metadata.
func WriteParquet(path string, t *Table) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fields := make([]arrow.Field, 0, t.Cols+1)
	for j := 0; j < t.Cols; j++ {
		name := "c" + strconv.Itoa(j+1)
		if t.Columns != nil {
			name = t.Columns[j]
		}
		fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float32})
	}
	labelName := t.LabelName
	if labelName == "" {
		labelName = "label"
	}
	switch {
	case t.Labels != nil:
		fields = append(fields, arrow.Field{Name: labelName, Type: arrow.BinaryTypes.String})
	case t.Y != nil:
		fields = append(fields, arrow.Field{Name: labelName, Type: arrow.PrimitiveTypes.Float32})
	}
	var md arrow.Metadata
	if t.FeatureShape != nil {
		b, _ := json.Marshal(t.FeatureShape)
		md = arrow.NewMetadata([]string{featureShapeKey}, []string{string(b)})
	}
	schema := arrow.NewSchema(fields, &md)
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return fmt.Errorf("%s: column name %q appears twice", path, f.Name)
		}
		seen[f.Name] = true
	}

	return atomicfile.Write(path, func(w io.Writer) error {
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
		fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return err
		}
		const batch = 1 << 16
		mem := memory.DefaultAllocator
		for start := 0; start < t.Rows || (start == 0 && t.Rows == 0); start += batch {
			end := min(start+batch, t.Rows)
			b := array.NewRecordBuilder(mem, schema)
			for j := 0; j < t.Cols; j++ {
				fb := b.Field(j).(*array.Float32Builder)
				fb.Reserve(end - start)
				for i := start; i < end; i++ {
					fb.UnsafeAppend(t.X[i*t.Cols+j])
				}
			}
			switch {
			case t.Labels != nil:
				sb := b.Field(t.Cols).(*array.StringBuilder)
				for i := start; i < end; i++ {
					sb.Append(t.Classes[t.Labels[i]])
				}
			case t.Y != nil:
				b.Field(t.Cols).(*array.Float32Builder).AppendValues(t.Y[start:end], nil)
			}
			rec := b.NewRecordBatch()
			err := fw.Write(rec)
			rec.Release()
			b.Release()
			if err != nil {
				fw.Close()
				return err
			}
			if t.Rows == 0 {
				break
			}
		}
		return fw.Close()
	})
}
