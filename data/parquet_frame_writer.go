package data

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/atomicfile"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ParquetFrameWriter writes Frames to a Parquet stream one batch at a
// time (each Write is a row group), so that a file of any size is written
// in the memory of one batch. Column kinds map back as ReadParquetFrame
// reads them: Float64, Float32, Int64, Bool and String columns to the
// matching Parquet types, Vector columns to fixed-size lists of float or
// double. Nulls are kept. It is the project's one Parquet writer:
// WriteParquetFrame writes a whole Frame to a path through it, and
// WriteParquet a Table.
type ParquetFrameWriter struct {
	schema *arrow.Schema
	kinds  []Kind
	widths []int
	fw     *pqarrow.FileWriter
	group  int // RowGroupRows
	rows   int // rows in the current buffered row group
	// required: the columns are REQUIRED (ParquetWriteOptions.Required).
	required bool
}

// ParquetFrameSchema returns the Arrow schema a Frame's columns are
// written with; every batch written must have the same columns and kinds.
func ParquetFrameSchema(f *Frame) (*arrow.Schema, error) {
	return frameSchema(f, ParquetWriteOptions{})
}

// frameSchema is the schema of f's columns as opts writes them.
func frameSchema(f *Frame, opts ParquetWriteOptions) (*arrow.Schema, error) {
	fields := make([]arrow.Field, f.NumCols())
	for j, c := range f.cols {
		var dt arrow.DataType
		switch c.Kind() {
		case Float64:
			dt = arrow.PrimitiveTypes.Float64
		case Float32:
			dt = arrow.PrimitiveTypes.Float32
		case Int64:
			dt = arrow.PrimitiveTypes.Int64
		case Bool:
			dt = arrow.FixedWidthTypes.Boolean
		case String:
			dt = arrow.BinaryTypes.String
		case Vector:
			v := c.(*VectorColumn)
			elem := arrow.DataType(arrow.PrimitiveTypes.Float64)
			if v.Elem() == Float32 {
				elem = arrow.PrimitiveTypes.Float32
			}
			dt = arrow.FixedSizeListOf(int32(v.Width()), elem)
		default:
			return nil, fmt.Errorf("column %q: cannot write kind %s", c.Name(), c.Kind())
		}
		fields[j] = arrow.Field{Name: c.Name(), Type: dt, Nullable: !opts.Required}
	}
	if len(opts.Metadata) == 0 {
		return arrow.NewSchema(fields, nil), nil
	}
	keys := slices.Sorted(maps.Keys(opts.Metadata))
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = opts.Metadata[k]
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &md), nil
}

// ParquetWriteOptions says how ParquetFrameWriter encodes. The zero value
// is Snappy compression.
type ParquetWriteOptions struct {
	// Uncompressed leaves the pages uncompressed (for data that does not
	// compress, decoding is then a copy).
	Uncompressed bool
	// Dictionary turns dictionary encoding on for every column, as
	// PyArrow's and Spark's writers do by default (each column chunk falls
	// back to PLAIN pages when its dictionary outgrows the page size
	// limit). Off, only strings are dictionary-encoded: hashing every
	// float of the probabilities costs more than it saves.
	Dictionary bool
	// RowGroupRows, when above 0, gathers the batches written into row
	// groups of that many rows (the last one of the file fewer), rather
	// than one row group per Write: a writer of small batches then makes
	// the row groups readers want, and sets up its column writers once
	// per row group, not once per batch.
	RowGroupRows int
	// Required writes every column REQUIRED (not nullable), as columns
	// that can hold no null are; a batch with nulls is then an error.
	Required bool
	// Metadata is stored in the file's Arrow schema (key, value).
	Metadata map[string]string

	// props are appended to the writer properties (tests: page versions,
	// page sizes, codecs).
	props []parquet.WriterProperty
}

// NewParquetFrameWriter starts a Parquet stream on w with the columns of
// first (which is not written).
func NewParquetFrameWriter(w io.Writer, first *Frame, opts ParquetWriteOptions) (*ParquetFrameWriter, error) {
	schema, err := frameSchema(first, opts)
	if err != nil {
		return nil, err
	}
	codec := compress.Codecs.Snappy
	if opts.Uncompressed {
		codec = compress.Codecs.Uncompressed
	}
	popts := []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDictionaryDefault(opts.Dictionary)}
	if !opts.Dictionary {
		for _, c := range first.cols {
			if c.Kind() == String {
				popts = append(popts, parquet.WithDictionaryFor(c.Name(), true))
			}
		}
	}
	popts = append(popts, opts.props...)
	props := parquet.NewWriterProperties(popts...)
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	pw := &ParquetFrameWriter{schema: schema, fw: fw, group: opts.RowGroupRows, required: opts.Required}
	for _, c := range first.cols {
		pw.kinds = append(pw.kinds, c.Kind())
		w := 0
		if v, ok := c.(*VectorColumn); ok {
			w = v.Width()
		}
		pw.widths = append(pw.widths, w)
	}
	return pw, nil
}

// Write appends f's rows as one row group, or to the current row group
// of RowGroupRows rows (splitting f where a row group fills up).
func (pw *ParquetFrameWriter) Write(f *Frame) error {
	if pw.group <= 0 {
		return pw.write(f, false)
	}
	for f.Len() > 0 {
		if pw.rows == pw.group {
			pw.fw.NewBufferedRowGroup()
			pw.rows = 0
		}
		k := min(f.Len(), pw.group-pw.rows)
		if err := pw.write(f.Slice(0, k), true); err != nil {
			return err
		}
		pw.rows += k
		f = f.Slice(k, f.Len())
	}
	return nil
}

// write appends f as a row group of its own, or to the buffered one.
func (pw *ParquetFrameWriter) write(f *Frame, buffered bool) error {
	if f.NumCols() != len(pw.kinds) {
		return fmt.Errorf("parquet writer: a batch of %d columns, the file has %d", f.NumCols(), len(pw.kinds))
	}
	n := f.Len()
	cols := make([]arrow.Array, len(f.cols))
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j, c := range f.cols {
		if c.Kind() != pw.kinds[j] || c.Name() != pw.schema.Field(j).Name {
			return fmt.Errorf("parquet writer: column %d is %q (%s), the file's is %q (%s)", j, c.Name(), c.Kind(), pw.schema.Field(j).Name, pw.kinds[j])
		}
		if pw.required && c.NullCount() > 0 {
			return fmt.Errorf("parquet writer: column %q has %d nulls, the file's columns are required", c.Name(), c.NullCount())
		}
		var err error
		if cols[j], err = pw.array(j, c, n); err != nil {
			return err
		}
	}
	rec := array.NewRecordBatch(pw.schema, cols, int64(n))
	defer rec.Release()
	if buffered {
		return pw.fw.WriteBuffered(rec)
	}
	return pw.fw.Write(rec)
}

// array returns column c, the file's column j, as an arrow array of n
// rows.
func (pw *ParquetFrameWriter) array(j int, c Column, n int) (arrow.Array, error) {
	typ := pw.schema.Field(j).Type
	valid := c.Valid()
	switch c := c.(type) {
	case *ScalarColumn[float64]:
		return numericArray[float64, *array.Float64Builder](typ, c.Values(), valid), nil
	case *ScalarColumn[float32]:
		return numericArray[float32, *array.Float32Builder](typ, c.Values(), valid), nil
	case *ScalarColumn[int64]:
		return numericArray[int64, *array.Int64Builder](typ, c.Values(), valid), nil
	case *ScalarColumn[bool]:
		b := array.NewBooleanBuilder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(c.Values(), valid)
		return b.NewArray(), nil
	case *ScalarColumn[string]:
		b := array.NewStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		b.AppendValues(c.Values(), valid)
		return b.NewArray(), nil
	case *VectorColumn:
		if c.Width() != pw.widths[j] {
			return nil, fmt.Errorf("parquet writer: vector column %q has width %d, the file's %d", c.Name(), c.Width(), pw.widths[j])
		}
		lb := array.NewBuilder(memory.DefaultAllocator, typ).(*array.FixedSizeListBuilder)
		defer lb.Release()
		lb.AppendValues(validOrAll(valid, n))
		if c.Elem() == Float32 {
			lb.ValueBuilder().(*array.Float32Builder).AppendValues(c.Float32s(), c.ElemValid())
		} else {
			lb.ValueBuilder().(*array.Float64Builder).AppendValues(c.Float64s(), c.ElemValid())
		}
		return lb.NewArray(), nil
	}
	return nil, fmt.Errorf("parquet writer: column %q: cannot write kind %s", c.Name(), c.Kind())
}

// numericArray returns the values v (nulls where valid says so) as an
// arrow array of type typ: without nulls in place, since the writer
// encodes them before write returns; else copied by a builder.
func numericArray[T float32 | float64 | int64, B interface {
	array.Builder
	AppendValues([]T, []bool)
}](typ arrow.DataType, v []T, valid []bool) arrow.Array {
	if valid == nil {
		return inPlaceArray(typ, v)
	}
	b := array.NewBuilder(memory.DefaultAllocator, typ).(B)
	defer b.Release()
	b.AppendValues(v, valid)
	return b.NewArray()
}

// inPlaceArray returns an arrow array of type typ over the values of v,
// without a copy and without nulls.
func inPlaceArray[T float32 | float64 | int64](typ arrow.DataType, v []T) arrow.Array {
	var buf *memory.Buffer
	if len(v) > 0 {
		buf = memory.NewBufferBytes(unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*int(unsafe.Sizeof(v[0]))))
	} else {
		buf = memory.NewBufferBytes(nil)
	}
	d := array.NewData(typ, len(v), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// Close finishes the stream (the footer) and closes the writer under it
// if that is an io.Closer.
func (pw *ParquetFrameWriter) Close() error { return pw.fw.Close() }

// WriteParquetFrame writes f to path as a Parquet file through a
// temporary file renamed into place (internal/atomicfile), with a
// ParquetFrameWriter: row groups of at most 65,536 rows (one, empty, for
// an empty frame) unless opts.RowGroupRows says otherwise.
func WriteParquetFrame(path string, f *Frame, opts ParquetWriteOptions) error {
	return writeParquetBatches(path, f.Len(), opts, func(lo, hi int) (*Frame, error) { return f.Slice(lo, hi), nil })
}

// parquetFileBatch is the number of rows WriteParquetFrame and
// WriteParquet hand the writer at a time.
const parquetFileBatch = 1 << 16

// writeParquetBatches writes rows rows to path through a temporary file,
// the batches of at most parquetFileBatch rows given by batch(lo, hi).
func writeParquetBatches(path string, rows int, opts ParquetWriteOptions, batch func(lo, hi int) (*Frame, error)) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		var pw *ParquetFrameWriter
		for start := 0; start < rows || start == 0; start += parquetFileBatch {
			f, err := batch(start, min(start+parquetFileBatch, rows))
			if err == nil && pw == nil {
				pw, err = NewParquetFrameWriter(w, f, opts)
				if err != nil {
					return err
				}
			}
			if err == nil {
				err = pw.Write(f)
			}
			if err != nil {
				if pw != nil {
					pw.Close()
				}
				return err
			}
		}
		return pw.Close()
	})
}

func validOrAll(valid []bool, n int) []bool {
	if valid != nil {
		return valid
	}
	v := make([]bool, n)
	for i := range v {
		v[i] = true
	}
	return v
}
