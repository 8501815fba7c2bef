package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetFrameOptions says how to read Parquet into a Frame. The zero value
// reads every column.
type ParquetFrameOptions struct {
	// Columns, if set, lists the columns to read, in this order; otherwise
	// every column is read, in schema order.
	Columns []string
	// BatchSize is the number of rows decoded at a time; 0 means 65536.
	BatchSize int
	// MaxBytes bounds the memory the Frame's columns may take, checked
	// against each file's declared row count before it is read; 0 means
	// MaxInputBytes (FATHOM_MAX_INPUT_BYTES).
	MaxBytes int64
}

// ReadParquetFrame reads a Parquet file, or every Parquet file of a
// directory and its subdirectories (see ParquetParts) in path order, into a
// Frame. Types map as follows:
//
//   - float and double: Float32 and Float64 columns;
//   - signed and unsigned integers of every width: Int64 (an unsigned
//     64-bit value above math.MaxInt64 is an error);
//   - booleans: Bool;
//   - UTF-8 strings (byte arrays annotated UTF8/String, large strings,
//     string views) and dictionaries of them: String;
//   - decimals, whatever their physical type: Float64, the nearest float64
//     to the decimal value (exact up to 2^53 unscaled, 15 significant
//     digits);
//   - dates: Float64, days since 1970-01-01; timestamps (INT96 included):
//     Float64, seconds since 1970-01-01 00:00:00 (UTC for timestamps
//     adjusted to UTC, wall-clock otherwise), with a fraction; times of day:
//     Float64, seconds since midnight;
//   - lists, large lists and fixed-size lists of numbers or booleans:
//     Vector, of float32 elements for a list of floats, float64 otherwise.
//     Every row's list must have the same length (for a variable-length
//     list, the length of its first non-empty list).
//
// The keys of Hive-style key=value directories of a partitioned data set
// become columns after the files' own: Int64 if every value of a key is an
// integer, Float64 if every one is a number, String otherwise; a value
// __HIVE_DEFAULT_PARTITION__ (or empty) is null, and %XX escapes are
// decoded. Columns can name them like any column.
//
// Nulls become missing values; a null element of a list is a missing element
// (VectorColumn.ElemNull). The schema's key-value metadata becomes the
// frame's metadata. Other types (plain binary, structs, …) are an error
// naming the column: leave them out with Columns. Errors name the file, the
// column and, for bad values, the row (1-based, within the file).
func ReadParquetFrame(path string, opts ParquetFrameOptions) (*Frame, error) {
	ds, err := listParquet(path)
	if err != nil {
		return nil, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 1 << 16
	}
	var cols []*frameColumnBuilder
	var meta map[string]string
	for _, part := range ds.parts {
		cols, meta, err = readParquetFrameFile(part, ds.keys, opts, nil, cols, meta)
		if err != nil {
			return nil, err
		}
	}
	return builtFrame(cols, meta, path, path)
}

// builtFrame turns the column builders of a read into a Frame carrying
// the files' metadata; errors name last (the file whose column failed
// last) or where (the data set).
func builtFrame(cols []*frameColumnBuilder, meta map[string]string, last, where string) (*Frame, error) {
	out := make([]Column, len(cols))
	for k, c := range cols {
		col, err := c.column()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", last, err)
		}
		out[k] = col
	}
	f, err := NewFrame(out...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	f.meta = meta
	return f, nil
}

// parquetColumn is a column a Parquet file offers: one of its own (field
// set) or one of its key=value directories (field nil).
type parquetColumn struct {
	name  string
	typ   arrow.DataType
	field *pqarrow.SchemaField
}

// leaf reports whether the column is not nested.
func (c parquetColumn) leaf() bool { return c.field == nil || c.field.IsLeaf() }

// listOfLeaf reports whether the column is a list of a leaf.
func (c parquetColumn) listOfLeaf() bool {
	return c.field != nil && len(c.field.Children) == 1 && c.field.Children[0].IsLeaf()
}

// parquetPlan chooses the columns to read from those a file offers
// (indices into its argument), checking them as it likes; errors are
// returned as they are.
type parquetPlan func(cols []parquetColumn) ([]int, error)

// readParquetFrameFile appends the rows of one file to cols (nil for the
// first file, which then defines the columns). keys are the data set's
// key=value columns, whose values part holds. plan, if not nil, chooses the
// columns instead of opts.Columns.
func readParquetFrameFile(part parquetPart, keys []hiveKey, opts ParquetFrameOptions, plan parquetPlan, cols []*frameColumnBuilder, meta map[string]string) ([]*frameColumnBuilder, map[string]string, error) {
	path := part.path
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchSize)}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	avail, names, pos, err := parquetFileColumns(path, fr, schema, keys)
	if err != nil {
		return nil, nil, err
	}
	src, err := selectParquetColumns(path, avail, names, pos, opts, plan)
	if err != nil {
		return nil, nil, err
	}
	fileCols, leaves, err := parquetColumnBuilders(path, avail, src, schema.NumFields())
	if err != nil {
		return nil, nil, err
	}
	if cols, meta, err = mergeParquetColumns(path, cols, fileCols, schema, meta); err != nil {
		return nil, nil, err
	}
	if err := checkParquetRows(path, cols, pf.NumRows(), opts); err != nil {
		return nil, nil, err
	}
	for _, c := range cols {
		c.reserve(int(pf.NumRows()))
	}
	fileRow := int(pf.NumRows()) // only key=value columns: nothing to decode
	if len(leaves) > 0 {
		if fileRow, err = readParquetRows(path, fr, leaves, cols); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range cols {
		if c.key >= 0 {
			c.appendRepeated(part.vals[c.key], fileRow)
		}
	}
	return cols, meta, nil
}

// parquetFileColumns lists the columns a file offers: its own, then the
// data set's key=value columns; names are their names and pos their
// positions by name.
func parquetFileColumns(path string, fr *pqarrow.FileReader, schema *arrow.Schema, keys []hiveKey) (avail []parquetColumn, names []string, pos map[string]int, _ error) {
	avail = make([]parquetColumn, 0, schema.NumFields()+len(keys))
	names = make([]string, 0, cap(avail))
	pos = make(map[string]int, cap(avail))
	for i, f := range schema.Fields() {
		if _, dup := pos[f.Name]; dup {
			return nil, nil, nil, fmt.Errorf("%s: column name %q appears twice", path, f.Name)
		}
		pos[f.Name] = i
		names = append(names, f.Name)
		avail = append(avail, parquetColumn{name: f.Name, typ: f.Type, field: &fr.Manifest.Fields[i]})
	}
	for _, k := range keys {
		if _, dup := pos[k.name]; dup {
			return nil, nil, nil, fmt.Errorf("%s: column %q is both in the file and a key of its key=value directories", path, k.name)
		}
		pos[k.name] = len(avail)
		names = append(names, k.name)
		avail = append(avail, parquetColumn{name: k.name, typ: k.arrowType()})
	}
	return avail, names, pos, nil
}

// selectParquetColumns returns the indices into avail of the columns to
// read: plan's choice, opts.Columns, or all of them.
func selectParquetColumns(path string, avail []parquetColumn, names []string, pos map[string]int, opts ParquetFrameOptions, plan parquetPlan) ([]int, error) {
	src := make([]int, 0, len(names))
	if plan != nil {
		var err error
		if src, err = plan(avail); err != nil {
			return nil, err
		}
	} else if len(opts.Columns) > 0 {
		for _, n := range opts.Columns {
			j, ok := pos[n]
			if !ok {
				return nil, fmt.Errorf("%s: column %q not found (columns: %s)", path, n, strings.Join(names, ", "))
			}
			if slices.Contains(src, j) {
				return nil, fmt.Errorf("%s: column %q is selected twice", path, n)
			}
			src = append(src, j)
		}
	} else {
		for j := range names {
			src = append(src, j)
		}
	}
	if len(src) == 0 {
		return nil, fmt.Errorf("%s: no columns", path)
	}
	return src, nil
}

// parquetColumnBuilders returns a builder for each column of avail that
// src selects, and the file's leaf columns to decode for them (the
// first nFile columns of avail are the file's own, the rest key=value
// columns).
func parquetColumnBuilders(path string, avail []parquetColumn, src []int, nFile int) ([]*frameColumnBuilder, []int, error) {
	fileCols := make([]*frameColumnBuilder, len(src))
	var leaves []int
	for k, j := range src {
		c := avail[j]
		b, err := newFrameColumnBuilder(c.name, c.typ)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		fileCols[k] = b
		if j >= nFile {
			b.key = j - nFile
			continue
		}
		b.key = -1
		if b.kind == Vector {
			if !c.listOfLeaf() {
				return nil, nil, fmt.Errorf("%s: column %q has type %s; a vector column must be a list of numbers", path, c.name, c.typ)
			}
			leaves = append(leaves, c.field.Children[0].ColIndex)
		} else {
			if !c.leaf() {
				return nil, nil, fmt.Errorf("%s: column %q has nested type %s", path, c.name, c.typ)
			}
			leaves = append(leaves, c.field.ColIndex)
		}
	}
	return fileCols, leaves, nil
}

// mergeParquetColumns returns the builders of the data set: the first
// file's (cols nil), with its schema's metadata, or the earlier files'
// once checked against this file's.
func mergeParquetColumns(path string, cols, fileCols []*frameColumnBuilder, schema *arrow.Schema, meta map[string]string) ([]*frameColumnBuilder, map[string]string, error) {
	if cols == nil {
		md := schema.Metadata()
		if md.Len() > 0 {
			meta = make(map[string]string, md.Len())
			for i, key := range md.Keys() {
				meta[key] = md.Values()[i]
			}
		}
		return fileCols, meta, nil
	}
	for k, c := range cols {
		fc := fileCols[k]
		if fc.name != c.name || fc.kind != c.kind || fc.elem32 != c.elem32 || (fc.width != 0 && c.width != 0 && fc.width != c.width) {
			return nil, nil, fmt.Errorf("%s: column %q (%s) differs from the earlier partitions' %q (%s)", path, fc.name, fc.describe(), c.name, c.describe())
		}
		if c.width == 0 {
			c.width = fc.width
		}
	}
	return cols, meta, nil
}

// checkParquetRows refuses a file (or a data set) whose columns would
// take more than the limit with the n rows its footer declares, before
// reading it, so that a few bytes of footer cannot claim 2^40 rows.
func checkParquetRows(path string, cols []*frameColumnBuilder, n int64, opts ParquetFrameOptions) error {
	limit := opts.MaxBytes
	if limit <= 0 {
		var err error
		if limit, err = MaxInputBytes(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if n < 0 || n > math.MaxInt32*math.MaxInt32 {
		return fmt.Errorf("%s: parquet: the footer declares %d rows", path, n)
	}
	var need float64
	for _, c := range cols {
		need += float64(c.rows+int(n)) * float64(c.rowBytes())
	}
	if need > float64(limit) {
		return fmt.Errorf("%s: parquet: its footer declares %d rows, which (with earlier files) need about %.0f bytes of memory, over the limit of %d bytes (set %s to raise it)",
			path, n, need, limit, MaxInputBytesEnv)
	}
	return nil
}

// readParquetRows decodes the file's leaf columns into the builders of
// the file's own columns, record batch by record batch, and returns the
// number of rows read.
func readParquetRows(path string, fr *pqarrow.FileReader, leaves []int, cols []*frameColumnBuilder) (int, error) {
	rr, err := fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: parquet: %w", path, err)
	}
	defer rr.Release()
	fileRow := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		for _, c := range cols {
			if c.key >= 0 {
				continue
			}
			a, err := recordColumn(rec, c.name)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", path, err)
			}
			if err := c.append(a, fileRow); err != nil {
				return 0, fmt.Errorf("%s: %w", path, err)
			}
		}
		fileRow += int(rec.NumRows())
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("%s: parquet: after row %d: %w", path, fileRow, err)
	}
	return fileRow, nil
}

// frameColumnBuilder accumulates one Frame column over record batches.
type frameColumnBuilder struct {
	name   string
	kind   Kind
	elem32 bool // a vector of float32
	width  int  // vector width; 0 until known
	key    int  // the index of a key=value column among the keys, −1 for a file's column
	rows   int

	f64       []float64
	f32       []float32
	i64       []int64
	str       []string
	b         []bool
	valid     []bool // nil until a null is seen
	elemValid []bool // nil until a null element is seen
	interned  map[string]string
}

func newFrameColumnBuilder(name string, dt arrow.DataType) (*frameColumnBuilder, error) {
	b := &frameColumnBuilder{name: name}
	if w := vectorWidth(dt); w >= 0 {
		b.kind, b.width = Vector, w
		b.elem32 = dt.(arrow.ListLikeType).Elem().ID() == arrow.FLOAT32
		return b, nil
	}
	k, ok := scalarKind(dt)
	if !ok {
		hint := ""
		if dt.ID() == arrow.BINARY || dt.ID() == arrow.LARGE_BINARY {
			hint = " (byte arrays are read as strings only with the UTF8/String annotation)"
		}
		return nil, fmt.Errorf("column %q has type %s, which a Frame cannot hold%s; leave it out with Columns", name, dt, hint)
	}
	b.kind = k
	return b, nil
}

// scalarKind maps an Arrow type to a scalar column kind.
func scalarKind(dt arrow.DataType) (Kind, bool) {
	switch dt.ID() {
	case arrow.FLOAT64:
		return Float64, true
	case arrow.FLOAT32:
		return Float32, true
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return Int64, true
	case arrow.BOOL:
		return Bool, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return String, true
	case arrow.DICTIONARY:
		return scalarKind(dt.(*arrow.DictionaryType).ValueType)
	}
	if isNumberLikeType(dt) {
		return Float64, true
	}
	return 0, false
}

func (c *frameColumnBuilder) describe() string {
	if c.kind == Vector {
		elem := Float64
		if c.elem32 {
			elem = Float32
		}
		return fmt.Sprintf("vector<%s, %d>", elem, c.width)
	}
	return c.kind.String()
}

// rowBytes is the memory one row of the column takes in a Frame.
func (c *frameColumnBuilder) rowBytes() int {
	switch c.kind {
	case Float32:
		return 4
	case String:
		return 16
	case Bool:
		return 1
	case Vector:
		if c.elem32 {
			return 4 * max(c.width, 1)
		}
		return 8 * max(c.width, 1)
	}
	return 8
}

// reserve makes room for n more rows (a file's row count, from its footer).
func (c *frameColumnBuilder) reserve(n int) {
	switch c.kind {
	case Float64:
		c.f64 = slices.Grow(c.f64, n)
	case Float32:
		c.f32 = slices.Grow(c.f32, n)
	case Int64:
		c.i64 = slices.Grow(c.i64, n)
	case String:
		c.str = slices.Grow(c.str, n)
	case Bool:
		c.b = slices.Grow(c.b, n)
	case Vector:
		if c.elem32 {
			c.f32 = slices.Grow(c.f32, n*c.width)
		} else {
			c.f64 = slices.Grow(c.f64, n*c.width)
		}
	}
}

// setNull marks row (0-based over all files) missing.
func (c *frameColumnBuilder) setNull(row int) {
	if c.valid == nil {
		c.valid = make([]bool, row, max(2*row, 16))
		for i := range c.valid {
			c.valid[i] = true
		}
	}
	c.valid = append(c.valid[:row], false)
}

// setValid records a present row when a mask exists.
func (c *frameColumnBuilder) setValid(row int) {
	if c.valid != nil {
		c.valid = append(c.valid[:row], true)
	}
}

// append adds the rows of a; firstRow is the file row of a's first row.
func (c *frameColumnBuilder) append(a arrow.Array, firstRow int) error {
	n := a.Len()
	if c.kind == Vector {
		return c.appendVector(a.(array.ListLike), firstRow)
	}
	if a.NullN() > 0 || c.valid != nil {
		for i := range n {
			row := c.rows + i
			if a.IsNull(i) {
				c.setNull(row)
			} else {
				c.setValid(row)
			}
		}
	}
	switch a := a.(type) {
	case *array.Float64:
		c.f64 = append(c.f64, a.Float64Values()...)
	case *array.Float32:
		c.f32 = append(c.f32, a.Float32Values()...)
	case *array.Int64:
		c.i64 = append(c.i64, a.Int64Values()...)
	case *array.Boolean:
		for i := range n {
			c.b = append(c.b, a.Value(i))
		}
	case *array.String:
		for i := range n {
			c.str = append(c.str, c.intern(a.Value(i)))
		}
	default:
		for i := range n {
			if err := c.appendOne(a, i, firstRow+i+1); err != nil {
				return err
			}
		}
	}
	// Values under nulls are unspecified in Arrow: make them zero.
	if c.valid != nil && a.NullN() > 0 {
		for i := range n {
			if a.IsNull(i) {
				c.zero(c.rows + i)
			}
		}
	}
	c.rows += n
	return nil
}

func (c *frameColumnBuilder) zero(row int) {
	switch c.kind {
	case Float64:
		c.f64[row] = 0
	case Float32:
		c.f32[row] = 0
	case Int64:
		c.i64[row] = 0
	case String:
		c.str[row] = ""
	case Bool:
		c.b[row] = false
	}
}

// appendOne appends element i of a (row is 1-based, for errors); a null
// element appends a zero value.
func (c *frameColumnBuilder) appendOne(a arrow.Array, i, row int) error {
	if d, ok := a.(*array.Dictionary); ok {
		if d.IsNull(i) {
			c.appendZero()
			return nil
		}
		return c.appendOne(d.Dictionary(), d.GetValueIndex(i), row)
	}
	if a.IsNull(i) {
		c.appendZero()
		return nil
	}
	switch c.kind {
	case String:
		var s string
		switch a := a.(type) {
		case *array.String:
			s = a.Value(i)
		case *array.LargeString:
			s = a.Value(i)
		case *array.StringView:
			s = a.Value(i)
		}
		c.str = append(c.str, c.intern(s))
	case Int64:
		var v int64
		switch a := a.(type) {
		case *array.Int8:
			v = int64(a.Value(i))
		case *array.Int16:
			v = int64(a.Value(i))
		case *array.Int32:
			v = int64(a.Value(i))
		case *array.Int64:
			v = a.Value(i)
		case *array.Uint8:
			v = int64(a.Value(i))
		case *array.Uint16:
			v = int64(a.Value(i))
		case *array.Uint32:
			v = int64(a.Value(i))
		case *array.Uint64:
			u := a.Value(i)
			if u > math.MaxInt64 {
				return fmt.Errorf("row %d: column %q: %d does not fit in int64", row, c.name, u)
			}
			v = int64(u)
		}
		c.i64 = append(c.i64, v)
	case Float64:
		c.f64 = append(c.f64, numericValue64(a, i))
	case Float32:
		c.f32 = append(c.f32, float32(numericValue64(a, i)))
	case Bool:
		c.b = append(c.b, numericValue64(a, i) != 0)
	}
	return nil
}

// maxInterned bounds the strings a column builder interns: categories and
// class names repeat, ids do not.
const maxInterned = 1 << 12

// intern returns a copy of s that does not alias Arrow's buffers, shared
// with earlier equal values while there are few distinct ones.
func (c *frameColumnBuilder) intern(s string) string {
	if v, ok := c.interned[s]; ok {
		return v
	}
	v := strings.Clone(s)
	if len(c.interned) < maxInterned {
		if c.interned == nil {
			c.interned = map[string]string{}
		}
		c.interned[v] = v
	}
	return v
}

// appendRepeated appends n rows of a key=value column's value.
func (c *frameColumnBuilder) appendRepeated(v hiveValue, n int) {
	for range n {
		if v.null {
			c.setNull(c.rows)
			c.appendZero()
		} else {
			c.setValid(c.rows)
			switch c.kind {
			case Int64:
				c.i64 = append(c.i64, v.i)
			case Float64:
				c.f64 = append(c.f64, v.f)
			case String:
				c.str = append(c.str, v.s)
			}
		}
		c.rows++
	}
}

func (c *frameColumnBuilder) appendZero() {
	switch c.kind {
	case Float64:
		c.f64 = append(c.f64, 0)
	case Float32:
		c.f32 = append(c.f32, 0)
	case Int64:
		c.i64 = append(c.i64, 0)
	case String:
		c.str = append(c.str, "")
	case Bool:
		c.b = append(c.b, false)
	}
}

// appendVector appends the rows of a list array.
func (c *frameColumnBuilder) appendVector(list array.ListLike, firstRow int) error {
	n := list.Len()
	if c.width == 0 && n > 0 {
		// Learn the width from the first non-empty list of the first
		// batch (an empty list is then refused as of the wrong length).
		for i := 0; i < n && c.width == 0; i++ {
			if !list.IsNull(i) {
				lo, hi := list.ValueOffsets(i)
				c.width = int(hi - lo)
			}
		}
		if c.width == 0 {
			return fmt.Errorf("column %q: cannot tell the length of its lists from the first rows (all null or empty)", c.name)
		}
		c.grow(c.rows * c.width)
	}
	values := list.ListValues()
	for i := range n {
		row := c.rows + i
		if list.IsNull(i) {
			c.setNull(row)
			if c.width > 0 {
				c.grow(c.width)
				if c.elemValid != nil {
					c.elemValid = append(c.elemValid, make([]bool, c.width)...)
				}
			}
			continue
		}
		c.setValid(row)
		lo, hi := list.ValueOffsets(i)
		if int(hi-lo) != c.width {
			return fmt.Errorf("row %d: column %q holds %d values; the column's lists have %d", firstRow+i+1, c.name, hi-lo, c.width)
		}
		base := row * c.width
		c.grow(c.width)
		for e := range c.width {
			p := int(lo) + e
			if values.IsNull(p) {
				if c.elemValid == nil {
					c.elemValid = make([]bool, base+e, max(2*(base+e), 16))
					for q := range c.elemValid {
						c.elemValid[q] = true
					}
					// Rows already null stay marked by valid; their
					// elements count as valid here, which ElemNull ignores.
				}
				c.elemValid = append(c.elemValid[:base+e], false)
				continue
			}
			if c.elemValid != nil {
				c.elemValid = append(c.elemValid[:base+e], true)
			}
			if c.elem32 {
				c.f32[base+e] = float32(numericValue64(values, p))
			} else {
				c.f64[base+e] = numericValue64(values, p)
			}
		}
	}
	c.rows += n
	return nil
}

// grow appends k zero elements to a vector column's values.
func (c *frameColumnBuilder) grow(k int) {
	if c.elem32 {
		c.f32 = append(c.f32, make([]float32, k)...)
	} else {
		c.f64 = append(c.f64, make([]float64, k)...)
	}
}

// column returns the finished column.
func (c *frameColumnBuilder) column() (Column, error) {
	var valid []bool
	if c.valid != nil {
		valid = c.valid // kept in step with the rows since the first null
	}
	switch c.kind {
	case Float64:
		return NewColumn(c.name, c.f64, valid), nil
	case Float32:
		return NewColumn(c.name, c.f32, valid), nil
	case Int64:
		return NewColumn(c.name, c.i64, valid), nil
	case String:
		return NewColumn(c.name, c.str, valid), nil
	case Bool:
		return NewColumn(c.name, c.b, valid), nil
	}
	if c.width == 0 { // no rows: appendVector learns the width from the first ones
		return nil, fmt.Errorf("column %q is a list of varying length and the file has no rows to tell its width", c.name)
	}
	ev := c.elemValid
	if ev != nil {
		for len(ev) < c.rows*c.width {
			ev = append(ev, true)
		}
	}
	if c.elem32 {
		return NewVectorColumn32(c.name, c.width, c.f32, valid, ev), nil
	}
	return NewVectorColumn(c.name, c.width, c.f64, valid, ev), nil
}

// numericValue64 returns element i of a numeric or boolean array, or of a
// decimal, date, time or timestamp array (see isNumberLikeType), as float64.
func numericValue64(a arrow.Array, i int) float64 {
	switch a := a.(type) {
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Int8:
		return float64(a.Value(i))
	case *array.Int16:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Uint8:
		return float64(a.Value(i))
	case *array.Uint16:
		return float64(a.Value(i))
	case *array.Uint32:
		return float64(a.Value(i))
	case *array.Uint64:
		return float64(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return 1
		}
	default:
		v, _ := numberLikeValue(a, i)
		return v
	}
	return 0
}
