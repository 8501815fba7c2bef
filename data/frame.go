package data

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kind is the type of a Frame column's values.
type Kind uint8

const (
	// Float64 values are float64.
	Float64 Kind = iota + 1
	// Float32 values are float32.
	Float32
	// Int64 values are int64 (every integer type of the input).
	Int64
	// String values are strings (text, class names, ids).
	String
	// Bool values are booleans.
	Bool
	// Vector values are fixed-width lists of float64 or float32, one list per
	// row (embeddings, images, the output of a vector assembler).
	Vector
)

func (k Kind) String() string {
	switch k {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case Int64:
		return "int64"
	case String:
		return "string"
	case Bool:
		return "bool"
	case Vector:
		return "vector"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Column is one named, typed column of a Frame, with a null mask. The
// concrete types are *ScalarColumn[T] (Float64Column, Float32Column,
// Int64Column, StringColumn, BoolColumn) and *VectorColumn.
//
// Columns are immutable once built: every method that changes something
// returns a new column, and frames share columns freely.
type Column interface {
	// Name returns the column's name.
	Name() string
	// Kind returns the type of the values.
	Kind() Kind
	// Len returns the number of rows.
	Len() int
	// IsNull reports whether row i is missing.
	IsNull(i int) bool
	// NullCount returns the number of missing rows.
	NullCount() int
	// Valid returns the validity mask (valid[i] is false for a missing row),
	// or nil when no row is missing. The slice is shared: do not modify it.
	Valid() []bool
	// Renamed returns the column under another name, sharing its values.
	Renamed(name string) Column
	// Take returns the given rows, in the given order (rows may repeat).
	Take(rows []int) Column
	// Slice returns rows [lo, hi), sharing the values.
	Slice(lo, hi int) Column
}

// Scalar is the value type of a scalar column.
type Scalar interface {
	float64 | float32 | int64 | string | bool
}

// ScalarColumn is a column of one value per row. A missing row holds the
// zero value of T.
type ScalarColumn[T Scalar] struct {
	name   string
	values []T
	valid  []bool
	nulls  int
}

// The scalar column types.
type (
	Float64Column = ScalarColumn[float64]
	Float32Column = ScalarColumn[float32]
	Int64Column   = ScalarColumn[int64]
	StringColumn  = ScalarColumn[string]
	BoolColumn    = ScalarColumn[bool]
)

// NewColumn returns a column holding values. valid is the validity mask
// (nil: no value is missing; otherwise one entry per value, false for a
// missing one). The column keeps both slices: do not modify them afterwards.
// It panics if valid has the wrong length, a programming error.
func NewColumn[T Scalar](name string, values []T, valid []bool) *ScalarColumn[T] {
	c := &ScalarColumn[T]{name: name, values: values}
	c.setValid(valid, len(values))
	return c
}

func (c *ScalarColumn[T]) setValid(valid []bool, n int) {
	if valid == nil {
		return
	}
	if len(valid) != n {
		panic(fmt.Sprintf("data: column %q: %d validity flags for %d values", c.name, len(valid), n))
	}
	for _, ok := range valid {
		if !ok {
			c.nulls++
		}
	}
	if c.nulls > 0 {
		c.valid = valid
	}
}

// Name returns the column's name.
func (c *ScalarColumn[T]) Name() string { return c.name }

// Kind returns the column's value type.
func (c *ScalarColumn[T]) Kind() Kind {
	var zero T
	switch any(zero).(type) {
	case float64:
		return Float64
	case float32:
		return Float32
	case int64:
		return Int64
	case string:
		return String
	}
	return Bool
}

// Len returns the number of rows.
func (c *ScalarColumn[T]) Len() int { return len(c.values) }

// IsNull reports whether row i is missing.
func (c *ScalarColumn[T]) IsNull(i int) bool { return c.valid != nil && !c.valid[i] }

// NullCount returns the number of missing rows.
func (c *ScalarColumn[T]) NullCount() int { return c.nulls }

// Valid returns the validity mask, or nil when no row is missing.
func (c *ScalarColumn[T]) Valid() []bool { return c.valid }

// Values returns the values (zero where missing). The slice is shared: do
// not modify it.
func (c *ScalarColumn[T]) Values() []T { return c.values }

// Value returns row i.
func (c *ScalarColumn[T]) Value(i int) T { return c.values[i] }

// Renamed returns the column under another name.
func (c *ScalarColumn[T]) Renamed(name string) Column {
	out := *c
	out.name = name
	return &out
}

// Take returns the given rows in the given order.
func (c *ScalarColumn[T]) Take(rows []int) Column {
	out := &ScalarColumn[T]{name: c.name, values: make([]T, len(rows))}
	for k, i := range rows {
		out.values[k] = c.values[i]
	}
	out.setValid(takeValid(c.valid, rows, 1), len(rows))
	return out
}

// Slice returns rows [lo, hi).
func (c *ScalarColumn[T]) Slice(lo, hi int) Column {
	var valid []bool
	if c.valid != nil {
		valid = c.valid[lo:hi:hi]
	}
	return NewColumn(c.name, c.values[lo:hi:hi], valid)
}

// takeValid gathers a validity mask of w flags per row; nil stays nil.
func takeValid(valid []bool, rows []int, w int) []bool {
	if valid == nil {
		return nil
	}
	out := make([]bool, len(rows)*w)
	for k, i := range rows {
		copy(out[k*w:(k+1)*w], valid[i*w:(i+1)*w])
	}
	return out
}

// VectorColumn holds a fixed-width list of numbers per row, row-major: the
// elements of row i are Float64s()[i*Width() : (i+1)*Width()] (or Float32s()).
// A row may be missing (IsNull), and so may single elements of a present row
// (ElemNull), as in a Parquet list with null elements. Missing elements hold 0.
type VectorColumn struct {
	name      string
	width     int
	f64       []float64 // exactly one of f64 and f32 is used
	f32       []float32
	is32      bool
	valid     []bool // per row, nil when no row is missing
	elemValid []bool // per element, nil when no element of a present row is missing
	nulls     int
}

// NewVectorColumn returns a column of float64 vectors of the given width;
// values holds len(values)/width rows. valid (per row) and elemValid (per
// element) may be nil. The column keeps the slices.
func NewVectorColumn(name string, width int, values []float64, valid, elemValid []bool) *VectorColumn {
	c := &VectorColumn{name: name, width: width, f64: values}
	c.init(len(values), valid, elemValid)
	return c
}

// NewVectorColumn32 is NewVectorColumn for float32 elements.
func NewVectorColumn32(name string, width int, values []float32, valid, elemValid []bool) *VectorColumn {
	c := &VectorColumn{name: name, width: width, f32: values, is32: true}
	c.init(len(values), valid, elemValid)
	return c
}

func (c *VectorColumn) init(nvalues int, valid, elemValid []bool) {
	if c.width < 0 || (c.width == 0 && nvalues > 0) || (c.width > 0 && nvalues%c.width != 0) {
		panic(fmt.Sprintf("data: vector column %q: %d values do not make rows of width %d", c.name, nvalues, c.width))
	}
	n := 0
	if c.width > 0 {
		n = nvalues / c.width
	}
	if valid != nil {
		if len(valid) != n {
			panic(fmt.Sprintf("data: vector column %q: %d validity flags for %d rows", c.name, len(valid), n))
		}
		for _, ok := range valid {
			if !ok {
				c.nulls++
			}
		}
		if c.nulls > 0 {
			c.valid = valid
		}
	}
	if elemValid != nil {
		if len(elemValid) != nvalues {
			panic(fmt.Sprintf("data: vector column %q: %d element validity flags for %d elements", c.name, len(elemValid), nvalues))
		}
		if slices.Contains(elemValid, false) {
			c.elemValid = elemValid
		}
	}
}

// Name returns the column's name.
func (c *VectorColumn) Name() string { return c.name }

// Kind returns Vector.
func (c *VectorColumn) Kind() Kind { return Vector }

// Elem returns the element type, Float64 or Float32.
func (c *VectorColumn) Elem() Kind {
	if c.is32 {
		return Float32
	}
	return Float64
}

// Width returns the number of elements per row.
func (c *VectorColumn) Width() int { return c.width }

// Len returns the number of rows.
func (c *VectorColumn) Len() int {
	if c.width == 0 {
		return 0
	}
	if c.is32 {
		return len(c.f32) / c.width
	}
	return len(c.f64) / c.width
}

// IsNull reports whether row i is missing as a whole.
func (c *VectorColumn) IsNull(i int) bool { return c.valid != nil && !c.valid[i] }

// ElemNull reports whether element e of row i is missing (also true in a
// missing row).
func (c *VectorColumn) ElemNull(i, e int) bool {
	return c.IsNull(i) || (c.elemValid != nil && !c.elemValid[i*c.width+e])
}

// NullCount returns the number of missing rows.
func (c *VectorColumn) NullCount() int { return c.nulls }

// Valid returns the row validity mask, or nil when no row is missing.
func (c *VectorColumn) Valid() []bool { return c.valid }

// ElemValid returns the element validity mask, or nil when no element of a
// present row is missing.
func (c *VectorColumn) ElemValid() []bool { return c.elemValid }

// Float64s returns the elements of a float64 vector column (nil for float32).
func (c *VectorColumn) Float64s() []float64 { return c.f64 }

// Float32s returns the elements of a float32 vector column (nil for float64).
func (c *VectorColumn) Float32s() []float32 { return c.f32 }

// At returns element e of row i as float64.
func (c *VectorColumn) At(i, e int) float64 {
	if c.is32 {
		return float64(c.f32[i*c.width+e])
	}
	return c.f64[i*c.width+e]
}

// Renamed returns the column under another name.
func (c *VectorColumn) Renamed(name string) Column {
	out := *c
	out.name = name
	return &out
}

// Take returns the given rows in the given order.
func (c *VectorColumn) Take(rows []int) Column {
	w := c.width
	valid, elemValid := takeValid(c.valid, rows, 1), takeValid(c.elemValid, rows, w)
	if c.is32 {
		v := make([]float32, len(rows)*w)
		for k, i := range rows {
			copy(v[k*w:(k+1)*w], c.f32[i*w:(i+1)*w])
		}
		return NewVectorColumn32(c.name, w, v, valid, elemValid)
	}
	v := make([]float64, len(rows)*w)
	for k, i := range rows {
		copy(v[k*w:(k+1)*w], c.f64[i*w:(i+1)*w])
	}
	return NewVectorColumn(c.name, w, v, valid, elemValid)
}

// Slice returns rows [lo, hi).
func (c *VectorColumn) Slice(lo, hi int) Column {
	w := c.width
	var valid, elemValid []bool
	if c.valid != nil {
		valid = c.valid[lo:hi:hi]
	}
	if c.elemValid != nil {
		elemValid = c.elemValid[lo*w : hi*w : hi*w]
	}
	if c.is32 {
		return NewVectorColumn32(c.name, w, c.f32[lo*w:hi*w:hi*w], valid, elemValid)
	}
	return NewVectorColumn(c.name, w, c.f64[lo*w:hi*w:hi*w], valid, elemValid)
}

// Frame is an in-memory table of named, typed columns of equal length, the
// input of classic machine learning (string indexers, encoders, vector
// assemblers, ALS on id columns). It is immutable: Select, Take, With and the
// like return a new Frame that shares the unchanged columns, so derived
// frames are cheap and the original stays valid.
//
// A Frame also carries string metadata (Parquet's key-value metadata, e.g.
// the feature shape WriteParquet records), kept by derived frames.
type Frame struct {
	cols  []Column
	index map[string]int
	rows  int
	meta  map[string]string
}

// NewFrame returns a frame of the given columns, which must have distinct
// non-empty names and equal lengths.
func NewFrame(cols ...Column) (*Frame, error) {
	f := &Frame{cols: slices.Clone(cols), index: make(map[string]int, len(cols))}
	for i, c := range cols {
		if c == nil {
			return nil, fmt.Errorf("frame: column %d is nil", i)
		}
		if c.Name() == "" {
			return nil, fmt.Errorf("frame: column %d has no name", i)
		}
		if _, dup := f.index[c.Name()]; dup {
			return nil, fmt.Errorf("frame: column name %q appears twice", c.Name())
		}
		if i == 0 {
			f.rows = c.Len()
		} else if c.Len() != f.rows {
			return nil, fmt.Errorf("frame: column %q has %d rows, column %q has %d", c.Name(), c.Len(), cols[0].Name(), f.rows)
		}
		f.index[c.Name()] = i
	}
	return f, nil
}

// Len returns the number of rows.
func (f *Frame) Len() int { return f.rows }

// NumCols returns the number of columns.
func (f *Frame) NumCols() int { return len(f.cols) }

// Names returns the column names in order.
func (f *Frame) Names() []string {
	out := make([]string, len(f.cols))
	for i, c := range f.cols {
		out[i] = c.Name()
	}
	return out
}

// Columns returns the columns in order (a new slice of shared columns).
func (f *Frame) Columns() []Column { return slices.Clone(f.cols) }

// Col returns the column called name, or nil.
func (f *Frame) Col(name string) Column {
	if i, ok := f.index[name]; ok {
		return f.cols[i]
	}
	return nil
}

// Has reports whether the frame has a column called name.
func (f *Frame) Has(name string) bool {
	_, ok := f.index[name]
	return ok
}

// Metadata returns the value stored under key and whether there is one.
func (f *Frame) Metadata(key string) (string, bool) {
	v, ok := f.meta[key]
	return v, ok
}

// WithMetadata returns the frame with key set to value in its metadata.
func (f *Frame) WithMetadata(key, value string) *Frame {
	out := f.derive(f.cols)
	out.meta = maps.Clone(f.meta)
	if out.meta == nil {
		out.meta = map[string]string{}
	}
	out.meta[key] = value
	return out
}

// derive returns a frame of cols (already checked) with f's metadata.
func (f *Frame) derive(cols []Column) *Frame {
	out := &Frame{cols: cols, index: make(map[string]int, len(cols)), rows: f.rows, meta: f.meta}
	for i, c := range cols {
		out.index[c.Name()] = i
	}
	if len(cols) > 0 {
		out.rows = cols[0].Len()
	}
	return out
}

// lookup returns the column called name or an error listing the columns.
func (f *Frame) lookup(name string) (Column, error) {
	c := f.Col(name)
	if c == nil {
		return nil, fmt.Errorf("frame: column %q not found (columns: %s)", name, strings.Join(f.Names(), ", "))
	}
	return c, nil
}

// Select returns a frame of the named columns, in that order.
func (f *Frame) Select(names ...string) (*Frame, error) {
	cols := make([]Column, len(names))
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		c, err := f.lookup(n)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("frame: column %q is selected twice", n)
		}
		seen[n] = true
		cols[i] = c
	}
	out := f.derive(cols)
	out.rows = f.rows
	return out, nil
}

// Drop returns the frame without the named columns.
func (f *Frame) Drop(names ...string) (*Frame, error) {
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		if _, err := f.lookup(n); err != nil {
			return nil, err
		}
		drop[n] = true
	}
	var cols []Column
	for _, c := range f.cols {
		if !drop[c.Name()] {
			cols = append(cols, c)
		}
	}
	out := f.derive(cols)
	out.rows = f.rows
	return out, nil
}

// With returns the frame with column c added at the end, or replacing the
// column of the same name in place. c must have Len() rows.
func (f *Frame) With(c Column) (*Frame, error) {
	if c == nil || c.Name() == "" {
		return nil, fmt.Errorf("frame: With: the column must be non-nil and named")
	}
	if len(f.cols) > 0 && c.Len() != f.rows {
		return nil, fmt.Errorf("frame: column %q has %d rows, the frame %d", c.Name(), c.Len(), f.rows)
	}
	cols := slices.Clone(f.cols)
	if i, ok := f.index[c.Name()]; ok {
		cols[i] = c
	} else {
		cols = append(cols, c)
	}
	return f.derive(cols), nil
}

// Rename returns the frame with column from called to.
func (f *Frame) Rename(from, to string) (*Frame, error) {
	c, err := f.lookup(from)
	if err != nil {
		return nil, err
	}
	if from == to {
		return f, nil
	}
	if f.Has(to) {
		return nil, fmt.Errorf("frame: cannot rename %q to %q: the name is taken", from, to)
	}
	cols := slices.Clone(f.cols)
	cols[f.index[from]] = c.Renamed(to)
	return f.derive(cols), nil
}

// Take returns a frame of the given rows, in the given order (rows may
// repeat). It panics on an index out of range, like a slice index.
func (f *Frame) Take(rows []int) *Frame {
	for _, i := range rows {
		if i < 0 || i >= f.rows {
			panic(fmt.Sprintf("frame: Take: row %d out of range [0, %d)", i, f.rows))
		}
	}
	cols := make([]Column, len(f.cols))
	for i, c := range f.cols {
		cols[i] = c.Take(rows)
	}
	out := f.derive(cols)
	out.rows = len(rows)
	return out
}

// Slice returns rows [lo, hi), sharing the values.
func (f *Frame) Slice(lo, hi int) *Frame {
	if lo < 0 || hi < lo || hi > f.rows {
		panic(fmt.Sprintf("frame: Slice[%d:%d] out of range [0, %d]", lo, hi, f.rows))
	}
	cols := make([]Column, len(f.cols))
	for i, c := range f.cols {
		cols[i] = c.Slice(lo, hi)
	}
	out := f.derive(cols)
	out.rows = hi - lo
	return out
}

// ErrKind is returned (wrapped) by the typed accessors when the column has
// another kind.
var ErrKind = errors.New("frame: wrong column kind")

func scalarValues[T Scalar](f *Frame, name string, want Kind) ([]T, error) {
	c, err := f.lookup(name)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(*ScalarColumn[T])
	if !ok {
		return nil, fmt.Errorf("%w: column %q is %s, not %s", ErrKind, name, c.Kind(), want)
	}
	return sc.values, nil
}

// Float64s returns the values of a float64 column (0 where missing; see
// Col(name).Valid() for the mask). The slice is shared: do not modify it.
func (f *Frame) Float64s(name string) ([]float64, error) {
	return scalarValues[float64](f, name, Float64)
}

// Float32s returns the values of a float32 column.
func (f *Frame) Float32s(name string) ([]float32, error) {
	return scalarValues[float32](f, name, Float32)
}

// Int64s returns the values of an int64 column.
func (f *Frame) Int64s(name string) ([]int64, error) {
	return scalarValues[int64](f, name, Int64)
}

// Strings returns the values of a string column ("" where missing).
func (f *Frame) Strings(name string) ([]string, error) {
	return scalarValues[string](f, name, String)
}

// Bools returns the values of a bool column.
func (f *Frame) Bools(name string) ([]bool, error) {
	return scalarValues[bool](f, name, Bool)
}

// Vectors returns a vector column.
func (f *Frame) Vectors(name string) (*VectorColumn, error) {
	c, err := f.lookup(name)
	if err != nil {
		return nil, err
	}
	vc, ok := c.(*VectorColumn)
	if !ok {
		return nil, fmt.Errorf("%w: column %q is %s, not vector", ErrKind, name, c.Kind())
	}
	return vc, nil
}

// String describes the frame's shape and columns, e.g.
// "Frame 150×5 [sepal_length float64, ..., species string]".
func (f *Frame) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Frame %d×%d [", f.rows, len(f.cols))
	for i, c := range f.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name() + " " + describeKind(c))
	}
	b.WriteString("]")
	return b.String()
}

func describeKind(c Column) string {
	if v, ok := c.(*VectorColumn); ok {
		return fmt.Sprintf("vector<%s, %d>", v.Elem(), v.Width())
	}
	return c.Kind().String()
}
