package data

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// BatchReader streams the rows of one file as Frames of at most a fixed
// number of rows, so that the memory a reader holds is bounded by the
// batch whatever the size of the file. Every batch of a reader has the same
// columns, of the same kinds.
type BatchReader interface {
	// Next returns the next batch and the rows of it that could not be
	// read (their cells are nulls in the batch), or io.EOF after the last
	// batch. Other errors end the file.
	Next() (*Frame, []BadRow, error)
	// Columns names the columns of every batch, in order.
	Columns() []string
	// Close releases the file.
	Close() error
}

// BadRow is a row of a batch that could not be read: its index in the
// batch (0-based) and why.
type BadRow struct {
	Row    int
	Reason string
}

// BatchOptions says how to stream a file.
type BatchOptions struct {
	// Columns, if set, lists the columns to read, in this order; otherwise
	// every column is read, in file order.
	Columns []string
	// BatchSize is the number of rows per batch; 0 means 10000.
	BatchSize int
	// Comma is the field delimiter of a CSV file; 0 means ','.
	Comma rune
	// Missing lists the CSV cell values that mean "missing"; nil means
	// DefaultMissing().
	Missing []string
}

func (o *BatchOptions) batch() int {
	if o.BatchSize <= 0 {
		return 10000
	}
	return o.BatchSize
}

// OpenBatches opens a Parquet file (by its name's ending, see
// IsParquetFile) or a CSV file (gzip-compressed too) for streaming.
//
// Parquet columns map to kinds as ReadParquetFrame says; the file is read
// one record batch at a time through a buffered stream, so neither a whole
// column chunk nor a whole row group is held in memory.
//
// A CSV file's column kinds are decided by its first batch: Float64 when
// every present cell of the column is a number, String otherwise. In later
// batches a cell of a Float64 column that is not a number makes its row a
// BadRow (the cell null), as does a record with the wrong number of
// fields.
func OpenBatches(path string, opts BatchOptions) (BatchReader, error) {
	if IsParquetFile(path) {
		return openParquetBatches(path, opts, nil)
	}
	return openCSVBatches(path, opts)
}

// parquetBatches streams a Parquet file.
type parquetBatches struct {
	path  string
	pf    *file.Reader
	rr    pqarrow.RecordReader
	names []string
	types []arrow.DataType
	row   int // file rows read so far
}

// arrowColumns opens pf for reading as Arrow record batches of batch rows
// (0: the reader's default) and indexes its top-level columns: pos by
// name, all in the file's order. A name that appears twice is an error.
func arrowColumns(path string, pf *file.Reader, batch int) (*pqarrow.FileReader, *arrow.Schema, map[string]int, []string, error) {
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batch)}, memory.DefaultAllocator)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	pos := map[string]int{}
	var all []string
	for i, f := range schema.Fields() {
		if _, dup := pos[f.Name]; dup {
			return nil, nil, nil, nil, fmt.Errorf("%s: column name %q appears twice", path, f.Name)
		}
		pos[f.Name] = i
		all = append(all, f.Name)
	}
	return fr, schema, pos, all, nil
}

func openParquetBatches(path string, opts BatchOptions, md *metadata.FileMetaData) (_ *parquetBatches, err error) {
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	popts := []file.ReadOption{file.WithReadProps(props)}
	if md != nil {
		popts = append(popts, file.WithMetadata(md)) // parsed already
	}
	pf, err := file.OpenParquetFile(path, false, popts...)
	if err != nil {
		return nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	defer func() {
		if err != nil {
			pf.Close()
		}
	}()
	fr, schema, pos, all, err := arrowColumns(path, pf, opts.batch())
	if err != nil {
		return nil, err
	}
	sel := opts.Columns
	if len(sel) == 0 {
		sel = all
	}
	b := &parquetBatches{path: path, pf: pf}
	var leaves []int
	for _, n := range sel {
		i, ok := pos[n]
		if !ok {
			return nil, fmt.Errorf("%s: column %q not found (columns: %s)", path, n, strings.Join(all, ", "))
		}
		if slices.Contains(b.names, n) {
			return nil, fmt.Errorf("%s: column %q is selected twice", path, n)
		}
		f := schema.Field(i)
		cb, err := newFrameColumnBuilder(n, f.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		sf := &fr.Manifest.Fields[i]
		if cb.kind == Vector {
			if len(sf.Children) != 1 || !sf.Children[0].IsLeaf() {
				return nil, fmt.Errorf("%s: column %q has type %s; a vector column must be a list of numbers", path, n, f.Type)
			}
			leaves = append(leaves, sf.Children[0].ColIndex)
		} else {
			if !sf.IsLeaf() {
				return nil, fmt.Errorf("%s: column %q has nested type %s", path, n, f.Type)
			}
			leaves = append(leaves, sf.ColIndex)
		}
		b.names = append(b.names, n)
		b.types = append(b.types, f.Type)
	}
	if len(leaves) == 0 {
		return nil, fmt.Errorf("%s: no columns", path)
	}
	b.rr, err = fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: parquet: %w", path, err)
	}
	return b, nil
}

func (b *parquetBatches) Columns() []string { return slices.Clone(b.names) }

func (b *parquetBatches) Next() (*Frame, []BadRow, error) {
	if !b.rr.Next() {
		if err := b.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: parquet: after row %d: %w", b.path, b.row, err)
		}
		return nil, nil, io.EOF
	}
	rec := b.rr.RecordBatch()
	n := int(rec.NumRows())
	cols := make([]Column, len(b.names))
	for k, name := range b.names {
		a, err := recordColumn(rec, name)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.path, err)
		}
		if c := zeroCopyColumn(name, a); c != nil {
			cols[k] = c
			continue
		}
		cb, err := newFrameColumnBuilder(name, b.types[k])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.path, err)
		}
		cb.key = -1
		cb.reserve(n)
		if err := cb.append(a, b.row); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.path, err)
		}
		if cols[k], err = cb.column(); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.path, err)
		}
	}
	b.row += n
	f, err := NewFrame(cols...)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.path, err)
	}
	return f, nil, nil
}

// zeroCopyColumn returns a column over the values of a numeric array
// without nulls, without copying them, or nil. The record reader hands
// each batch's buffers over to its record and allocates new ones for the
// next, and the Go allocator (memory.DefaultAllocator) leaves freeing to
// the garbage collector, so the column may keep them after the record is
// released.
func zeroCopyColumn(name string, a arrow.Array) Column {
	if a.NullN() > 0 || a.Data().Offset() != 0 {
		return nil
	}
	switch a := a.(type) {
	case *array.Float32:
		return NewColumn(name, a.Float32Values(), nil)
	case *array.Float64:
		return NewColumn(name, a.Float64Values(), nil)
	case *array.Int64:
		return NewColumn(name, a.Int64Values(), nil)
	}
	return nil
}

func (b *parquetBatches) Close() error {
	b.rr.Release()
	return b.pf.Close()
}

// csvBatches streams a CSV file.
type csvBatches struct {
	path   string
	f      *os.File
	cr     *csv.Reader
	batch  int
	header []string
	src    []int  // file column of each batch column
	kinds  []Kind // decided by the first batch; nil before it
	isNA   map[string]bool
	line   int // data records read so far
	eof    bool
}

func openCSVBatches(path string, opts BatchOptions) (_ *csvBatches, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cr := csv.NewReader(skipBOM(r))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file (no header)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	pos := map[string]int{}
	for j, h := range header {
		h = strings.TrimSpace(h)
		header[j] = h
		if _, dup := pos[h]; dup {
			return nil, fmt.Errorf("%s: column name %q appears twice", path, h)
		}
		pos[h] = j
	}
	b := &csvBatches{path: path, f: f, cr: cr, batch: opts.batch(), header: header, isNA: missingSet(opts.Missing)}
	if len(opts.Columns) == 0 {
		for j := range header {
			b.src = append(b.src, j)
		}
	} else {
		for _, n := range opts.Columns {
			j, ok := pos[n]
			if !ok {
				return nil, fmt.Errorf("%s: column %q not found (columns: %s)", path, n, strings.Join(header, ", "))
			}
			if slices.Contains(b.src, j) {
				return nil, fmt.Errorf("%s: column %q is selected twice", path, n)
			}
			b.src = append(b.src, j)
		}
	}
	return b, nil
}

func (b *csvBatches) Columns() []string {
	out := make([]string, len(b.src))
	for k, j := range b.src {
		out[k] = b.header[j]
	}
	return out
}

func (b *csvBatches) Next() (*Frame, []BadRow, error) {
	if b.eof {
		return nil, nil, io.EOF
	}
	var recs [][]string
	var bad []BadRow
	for len(recs) < b.batch {
		rec, err := b.cr.Read()
		if err == io.EOF {
			b.eof = true
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && !errors.Is(err, csv.ErrFieldCount) {
				// A malformed quote: the reader resumes at the next line.
				bad = append(bad, BadRow{Row: len(recs), Reason: pe.Err.Error()})
				recs = append(recs, nil)
				b.line++
				continue
			}
			return nil, nil, fmt.Errorf("%s: after data row %d: %w", b.path, b.line, err)
		}
		b.line++
		if len(rec) != len(b.header) {
			bad = append(bad, BadRow{Row: len(recs), Reason: fmt.Sprintf("%d fields, the header has %d", len(rec), len(b.header))})
			rec = nil
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		b.eof = true
		return nil, nil, io.EOF
	}
	if b.kinds == nil {
		b.kinds = make([]Kind, len(b.src))
		for k, j := range b.src {
			b.kinds[k] = Float64
			for _, rec := range recs {
				if rec == nil {
					continue
				}
				cell := strings.TrimSpace(rec[j])
				if b.isNA[strings.ToLower(cell)] {
					continue
				}
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					b.kinds[k] = String
					break
				}
			}
		}
	}
	badAt := map[int]bool{}
	for _, r := range bad {
		badAt[r.Row] = true
	}
	cols := make([]Column, len(b.src))
	for k, j := range b.src {
		valid := make([]bool, len(recs))
		name := b.header[j]
		if b.kinds[k] == String {
			vals := make([]string, len(recs))
			for i, rec := range recs {
				if rec == nil {
					continue
				}
				cell := strings.TrimSpace(rec[j])
				if !b.isNA[strings.ToLower(cell)] {
					vals[i], valid[i] = cell, true
				}
			}
			cols[k] = NewColumn(name, vals, valid)
			continue
		}
		vals := make([]float64, len(recs))
		for i, rec := range recs {
			if rec == nil {
				continue
			}
			cell := strings.TrimSpace(rec[j])
			if b.isNA[strings.ToLower(cell)] {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				if !badAt[i] {
					badAt[i] = true
					bad = append(bad, BadRow{Row: i, Reason: fmt.Sprintf("column %q: cannot parse %q as a number", name, cell)})
				}
				continue
			}
			vals[i], valid[i] = v, true
		}
		cols[k] = NewColumn(name, vals, valid)
	}
	f, err := NewFrame(cols...)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", b.path, err)
	}
	slices.SortFunc(bad, func(x, y BadRow) int { return x.Row - y.Row })
	return f, bad, nil
}

func (b *csvBatches) Close() error { return b.f.Close() }
