package data

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeFrameGroups writes f through the Frame writer, one row group per
// entry of groups (row counts).
func writeFrameGroups(t *testing.T, path string, f *Frame, groups []int) {
	t.Helper()
	writeFrameGroupsWith(t, path, f, groups, ParquetWriteOptions{})
}

// writeFrameGroupsWith is writeFrameGroups with write options.
func writeFrameGroupsWith(t *testing.T, path string, f *Frame, groups []int, opts ParquetWriteOptions) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewParquetFrameWriter(fh, f, opts)
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, g := range groups {
		if err := w.Write(f.Slice(at, at+g)); err != nil {
			t.Fatal(err)
		}
		at += g
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// readMatrix reads a whole file through a ParquetMatrix: the rows, the
// missing cells (file rows) and the batch sizes. It checks Finite after
// every batch.
func readMatrix(t *testing.T, path string, opts MatrixOptions) (x []float32, nulls []NullCell, sizes []int) {
	t.Helper()
	m, err := OpenParquetMatrix(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf := make([]float32, opts.BatchSize*opts.Width)
	for i := range buf {
		buf[i] = float32(math.NaN()) // every value must be written
	}
	rows := 0
	for {
		n, nl, err := m.Next(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range nl {
			nulls = append(nulls, NullCell{Row: rows + c.Row, Col: c.Col})
		}
		finite := true
		for _, v := range buf[:n*opts.Width] {
			finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		}
		if m.Finite() != finite {
			t.Fatalf("%s: batch of %d rows after row %d: Finite() %v, want %v", path, n, rows, m.Finite(), finite)
		}
		x = append(x, buf[:n*opts.Width]...)
		sizes = append(sizes, n)
		rows += n
	}
	return x, nulls, sizes
}

// TestParquetMatrixScalars: 37 float32 columns (two groups of sixteen and
// five more) with nulls, in row groups of 700, 1 and 799 rows, read in
// batches of 512 rows (tiles and batches cross the row groups): the
// values in row-major order, zeros and a NullCell where a value is
// missing; the id column left out by Except.
func TestParquetMatrixScalars(t *testing.T) {
	const w, n = 37, 1500
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(3*i + 1)
	}
	cols := []Column{NewColumn("id", ids, nil)}
	want := make([]float32, n*w)
	var wantNulls []NullCell
	for j := range w {
		v := make([]float32, n)
		var valid []bool
		if j%5 == 2 {
			valid = make([]bool, n)
		}
		for i := range v {
			v[i] = float32(i*w+j) / 7
			if valid != nil {
				valid[i] = (i+j)%11 != 0
				if !valid[i] {
					wantNulls = append(wantNulls, NullCell{Row: i, Col: j})
					v[i] = 0
				}
			}
			want[i*w+j] = v[i]
		}
		cols = append(cols, NewColumn(fmt.Sprintf("c%d", j), v, valid))
	}
	f, err := NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.parquet")
	writeFrameGroups(t, path, f, []int{700, 1, 799})
	x, nulls, sizes := readMatrix(t, path, MatrixOptions{Except: []string{"id"}, Width: w, BatchSize: 512})
	if !slices.Equal(sizes, []int{512, 512, 476}) {
		t.Fatalf("batches of %v rows, want 512, 512, 476", sizes)
	}
	if !slices.Equal(x, want) {
		for k := range want {
			if x[k] != want[k] {
				t.Fatalf("row %d column %d: %v, want %v", k/w, k%w, x[k], want[k])
			}
		}
	}
	slices.SortFunc(nulls, func(a, b NullCell) int { return (a.Row*w + a.Col) - (b.Row*w + b.Col) })
	slices.SortFunc(wantNulls, func(a, b NullCell) int { return (a.Row*w + a.Col) - (b.Row*w + b.Col) })
	if !slices.Equal(nulls, wantNulls) {
		t.Fatalf("%d missing cells, want %d (first %v, want %v)", len(nulls), len(wantNulls), nulls[:1], wantNulls[:1])
	}
	// The id column beside the matrix, batch by batch (OpenBatches).
	m, err := OpenParquetMatrix(path, MatrixOptions{Except: []string{"id"}, Width: w, BatchSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	keep, err := m.OpenBatches([]string{"id"})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]float32, 512*w)
	for row := 0; ; {
		k, _, err := m.Next(buf)
		kf, _, kerr := keep.Next()
		if err == io.EOF && kerr == io.EOF {
			break
		}
		if err != nil || kerr != nil {
			t.Fatalf("row %d: %v, %v", row, err, kerr)
		}
		got, _ := kf.Int64s("id")
		if !slices.Equal(got, ids[row:row+k]) {
			t.Fatalf("ids of the batch at row %d differ", row)
		}
		row += k
	}
	keep.Close()
	m.Close()
	// Named columns, in another order than the file's.
	x, _, _ = readMatrix(t, path, MatrixOptions{Columns: []string{"c1", "c0"}, Width: 2, BatchSize: 100})
	if x[0] != want[1] || x[1] != want[0] || x[2*77+1] != want[77*w] {
		t.Fatalf("c1, c0: %v, want %v, %v", x[:2], want[1], want[0])
	}
}

// TestParquetMatrixVector: one fixed-size list of float32 per row, in
// three row groups, decoded straight into the matrix.
func TestParquetMatrixVector(t *testing.T) {
	const w, n = 20, 900
	vals := make([]float32, n*w)
	for k := range vals {
		vals[k] = float32(k) * 0.5
	}
	f, err := NewFrame(NewColumn("id", make([]int64, n), nil), NewVectorColumn32("image", w, vals, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v.parquet")
	writeFrameGroups(t, path, f, []int{300, 300, 300})
	m, err := OpenParquetMatrix(path, MatrixOptions{Columns: []string{"image"}, Width: w, BatchSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Vector() {
		t.Fatal("not read as a vector column")
	}
	m.Close()
	x, nulls, _ := readMatrix(t, path, MatrixOptions{Except: []string{"id"}, Width: w, BatchSize: 256})
	if !slices.Equal(x, vals) || len(nulls) != 0 {
		t.Fatalf("vector column read back differently (%d values, want %d; %d nulls)", len(x), len(vals), len(nulls))
	}
	// Finite: every value of the batch, as a vector column and as scalar
	// columns; an infinity in the second batch of each.
	vals[300*w+7] = float32(math.Inf(-1))
	cols := []Column{NewVectorColumn32("image", w, vals, nil, nil)}
	for j := range w {
		v := make([]float32, n)
		for i := range v {
			v[i] = vals[i*w+j]
		}
		cols = append(cols, NewColumn(fmt.Sprintf("c%d", j), v, nil))
	}
	f, _ = NewFrame(cols...)
	writeFrameGroups(t, path, f, []int{300, 600})
	// Also dictionary-encoded (NextColumns skips the sum of a column whose
	// values all come from a finite dictionary: the infinity is in the
	// dictionaries of the second row group only, so the first batch's
	// columns are not summed and the second's must be).
	dictPath := filepath.Join(filepath.Dir(path), "dict.parquet")
	writeFrameGroupsWith(t, dictPath, f, []int{300, 600}, ParquetWriteOptions{Dictionary: true})
	for _, tc := range []struct {
		path string
		opts MatrixOptions
	}{{path, MatrixOptions{Columns: []string{"image"}}}, {path, MatrixOptions{Except: []string{"image"}}}, {dictPath, MatrixOptions{Except: []string{"image"}}}} {
		path, opts := tc.path, tc.opts
		opts.Width, opts.BatchSize = w, 256
		m, err := OpenParquetMatrix(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float32, 256*w)
		for b, want := range []bool{true, false, true, true} {
			if _, _, err := m.Next(buf); err != nil {
				t.Fatal(err)
			}
			if m.Finite() != want {
				t.Errorf("%s %v: batch %d: Finite() %v, want %v", filepath.Base(path), opts.Columns, b, !want, want)
			}
		}
		m.Close()
		if opts.Columns != nil {
			continue
		}
		// The same through NextColumns, in each page mode.
		for _, mode := range pageModes {
			restore := setPageMode(mode.own, mode.pages)
			m, err := OpenParquetMatrix(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			for b, want := range []bool{true, false, true, true} {
				if _, _, err := m.NextColumns(buf, 256); err != nil {
					t.Fatal(err)
				}
				if m.Finite() != want {
					t.Errorf("NextColumns, %s, %s: batch %d: Finite() %v, want %v", filepath.Base(path), mode.name, b, !want, want)
				}
			}
			m.Close()
			restore()
		}
	}
}

// TestParquetMatrixNotMatrix: other layouts are ErrNotMatrix, at open (a
// float64 column, a list of int32, a count of features other than
// Width) or at the batch that shows it (rows of another length, a null
// element).
func TestParquetMatrixNotMatrix(t *testing.T) {
	dir := t.TempDir()
	f64 := filepath.Join(dir, "f64.parquet")
	f, _ := NewFrame(NewColumn("a", []float64{1, 2}, nil), NewColumn("b", []float32{1, 2}, nil))
	writeFrameGroups(t, f64, f, []int{2})
	for _, opts := range []MatrixOptions{{Width: 2}, {Columns: []string{"b"}, Width: 2}, {Columns: []string{"nope"}, Width: 1}} {
		if _, err := OpenParquetMatrix(f64, opts); !errors.Is(err, ErrNotMatrix) {
			t.Errorf("%+v: %v, want ErrNotMatrix", opts, err)
		}
	}
	ints := filepath.Join(dir, "ints.parquet")
	writeVectorParquet(t, ints, []int{2, 2}, nil)
	if _, err := OpenParquetMatrix(ints, MatrixOptions{Columns: []string{"pix"}, Width: 2}); !errors.Is(err, ErrNotMatrix) {
		t.Errorf("list<int32>: %v, want ErrNotMatrix", err)
	}
	for name, rows := range map[string][][]float32{
		"ragged": {{1, 2}, {3}, {4, 5}},
		"null":   {{1, 2}, {3, float32(math.Inf(1))}, {4, 5}},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		lb := b.Field(0).(*array.ListBuilder)
		vb := lb.ValueBuilder().(*array.Float32Builder)
		for _, r := range rows {
			lb.Append(true)
			for _, v := range r {
				if math.IsInf(float64(v), 1) {
					vb.AppendNull()
				} else {
					vb.Append(v)
				}
			}
		}
		p := filepath.Join(dir, name+".parquet")
		writeRecord(t, p, b, 1024)
		b.Release()
		m, err := OpenParquetMatrix(p, MatrixOptions{Width: 2, BatchSize: 10})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, _, err := m.Next(make([]float32, 20)); !errors.Is(err, ErrNotMatrix) {
			t.Errorf("%s: %v, want ErrNotMatrix", name, err)
		}
		m.Close()
	}
}

// BenchmarkParquetMatrix: 20,000 rows of 784 float32 pixel-like columns
// (Snappy, row groups of 10,000; zeros around values of k/255, like
// Fashion-MNIST's), PLAIN or dictionary-encoded (the Frame writer's
// Dictionary, as PyArrow and Spark write by default), read as batches of
// 10,000: row-major by Next with the pages walked in the mapping
// (matrix), through arrow-go's page reader (matrix-arrowpages) or its
// column readers (matrix-readers); column-major by NextColumns
// (columns, columns-arrowpages); and as record batches of the same size
// (frames, the features left in columns).
//
//	go test ./data -run - -bench ParquetMatrix -count 5
func BenchmarkParquetMatrix(b *testing.B) {
	const w, n, bs = 784, 20000, 10000
	cols := make([]Column, w)
	for j := range cols {
		v := make([]float32, n)
		for i := range v {
			if h := uint32(i*w+j) * 2654435761; (j%28 > 4 && j%28 < 24) && h%3 != 0 {
				v[i] = float32(h>>24) / 255
			}
		}
		cols[j] = NewColumn(fmt.Sprintf("c%d", j+1), v, nil)
	}
	f, err := NewFrame(cols...)
	if err != nil {
		b.Fatal(err)
	}
	for _, layout := range []string{"plain", "dict"} {
		path := filepath.Join(b.TempDir(), "px.parquet")
		fh, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		pw, err := NewParquetFrameWriter(fh, f, ParquetWriteOptions{Dictionary: layout == "dict"})
		if err != nil {
			b.Fatal(err)
		}
		pw.Write(f.Slice(0, n/2))
		pw.Write(f.Slice(n/2, n))
		if err := pw.Close(); err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name       string
			own, pages bool
			cols       bool
		}{
			{"matrix-readers", false, false, false},
			{"matrix-arrowpages", false, true, false},
			{"matrix", true, true, false},
			{"columns-arrowpages", false, true, true},
			{"columns", true, true, true},
		} {
			b.Run(layout+"/"+c.name, func(b *testing.B) {
				defer setPageMode(c.own, c.pages)()
				x := make([]float32, bs*w)
				for range b.N {
					m, err := OpenParquetMatrix(path, MatrixOptions{Width: w, BatchSize: bs})
					if err != nil {
						b.Fatal(err)
					}
					for {
						var err error
						if c.cols {
							_, _, err = m.NextColumns(x, bs)
						} else {
							_, _, err = m.Next(x)
						}
						if err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
					m.Close()
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
		b.Run(layout+"/frames", func(b *testing.B) {
			for range b.N {
				rd, err := OpenBatches(path, BatchOptions{BatchSize: bs})
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, _, err := rd.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
				rd.Close()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestParquetMatrixDictionary: float32 columns as PyArrow writes them by
// default, dictionary-encoded (few distinct values), with nulls, in row
// groups of 700 rows, read in batches of 300.
func TestParquetMatrixDictionary(t *testing.T) {
	const n, w = 2000, 3
	fields := make([]arrow.Field, w)
	for j := range fields {
		fields[j] = arrow.Field{Name: fmt.Sprintf("p%d", j), Type: arrow.PrimitiveTypes.Float32, Nullable: true}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	want := make([]float32, n*w)
	var wantNulls []NullCell
	for i := range n {
		for j := range w {
			fb := b.Field(j).(*array.Float32Builder)
			if (i+j)%97 == 5 {
				fb.AppendNull()
				wantNulls = append(wantNulls, NullCell{Row: i, Col: j})
				continue
			}
			v := float32((i*7+j)%5) / 4
			fb.Append(v)
			want[i*w+j] = v
		}
	}
	path := filepath.Join(t.TempDir(), "dict.parquet")
	writeRecord(t, path, b, 700)
	x, nulls, sizes := readMatrix(t, path, MatrixOptions{Width: w, BatchSize: 300})
	if len(sizes) != 7 || !slices.Equal(x, want) {
		t.Fatalf("%d batches; values equal: %v", len(sizes), slices.Equal(x, want))
	}
	slices.SortFunc(nulls, func(a, b NullCell) int { return (a.Row*w + a.Col) - (b.Row*w + b.Col) })
	if !slices.Equal(nulls, wantNulls) {
		t.Fatalf("%d missing cells, want %d", len(nulls), len(wantNulls))
	}
}
