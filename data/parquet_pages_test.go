package data

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// writePagedFloats writes w float32 columns of n rows (every third
// column nullable, with nulls) in row groups of rg rows and data pages of
// about pageBytes bytes, PLAIN-encoded, as data page version v.
func writePagedFloats(t *testing.T, path string, n, w, rg, pageBytes int, v parquet.DataPageVersion, codec compress.Compression) {
	t.Helper()
	fields := make([]arrow.Field, w)
	for j := range fields {
		fields[j] = arrow.Field{Name: fmt.Sprintf("f%d", j), Type: arrow.PrimitiveTypes.Float32, Nullable: j%3 == 1}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := range n {
		for j := range w {
			fb := b.Field(j).(*array.Float32Builder)
			if j%3 == 1 && (i*j)%13 == 4 {
				fb.AppendNull()
				continue
			}
			fb.Append(float32(i)*0.5 + float32(j))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rg)), parquet.WithDataPageSize(int64(pageBytes)),
		parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(v), parquet.WithCompression(codec), parquet.WithBatchSize(64))
	writeArrowRecord(t, path, rec, props)
}

// TestParquetMatrixPages: PLAIN pages of data page versions 1 and 2,
// several pages a column chunk (pages that end inside a tile of rows),
// with nulls, uncompressed and Snappy: the pages decoded by the
// ParquetMatrix itself give what the column readers give, value for value
// and null for null.
func TestParquetMatrixPages(t *testing.T) {
	const n, w = 1800, 35
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
			path := filepath.Join(t.TempDir(), "p.parquet")
			writePagedFloats(t, path, n, w, 1000, 1500, v, codec)
			opts := MatrixOptions{Width: w, BatchSize: 700}
			m, err := OpenParquetMatrix(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]float32, opts.BatchSize*w)
			if _, _, err := m.Next(buf); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(m.pages, nil) {
				t.Fatalf("v%d %s: not every column read page by page", v+1, codec)
			}
			m.Close()
			x, nulls, sizes := readMatrix(t, path, opts)
			matrixPageDecoding = false
			wx, wnulls, wsizes := readMatrix(t, path, opts)
			matrixPageDecoding = true
			cmp := func(a, b NullCell) int { return (a.Row*w + a.Col) - (b.Row*w + b.Col) }
			slices.SortFunc(nulls, cmp)
			slices.SortFunc(wnulls, cmp)
			if len(wnulls) == 0 || !slices.Equal(sizes, wsizes) || !slices.Equal(x, wx) || !slices.Equal(nulls, wnulls) {
				t.Fatalf("v%d %s: batches %v (column readers %v), values equal %v, %d nulls (column readers %d)",
					v+1, codec, sizes, wsizes, slices.Equal(x, wx), len(nulls), len(wnulls))
			}
		}
	}
}

// TestParquetMatrixCorruptPages: bytes of the page region of a file
// flipped at random (a fixed seed) give an error naming the file (and
// the column and row group for a bad page), or values, never a crash,
// through Next and NextColumns, for PLAIN pages (v1 uncompressed, v2
// zstd) and dictionary-encoded ones (v2 Snappy, and v1 Snappy falling
// back to PLAIN); a chunk that ends before its row group's rows names
// the column, row group and page.
func TestParquetMatrixCorruptPages(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.parquet")
	const n, w = 600, 20
	writePagedFloats(t, path, n, w, 300, 800, parquet.DataPageV1, compress.Codecs.Uncompressed)
	files := []string{path}
	for k, props := range [][]parquet.WriterProperty{
		{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false)},
		{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true)},
		{parquet.WithDataPageVersion(parquet.DataPageV1), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true),
			parquet.WithDictionaryPageSizeLimit(400)},
	} {
		p := filepath.Join(dir, fmt.Sprintf("q%d.parquet", k))
		few := k == 1
		writeFloatSpec(t, p, floatSpec{n: n, w: w, rg: 300, nullable: func(j int) bool { return j%2 == 0 }, null: func(i, j int) bool { return (i+j)%11 == 0 },
			value: func(i, j int) float32 {
				if few {
					return float32((i + j) % 6)
				}
				return float32(i) + float32(j)/8
			}, props: append(props, parquet.WithDataPageSize(256))})
		files = append(files, p)
	}
	for f, path := range files {
		flipPages(t, path, uint64(2+f), 120, func(bad string) int {
			errs := 0
			for _, cols := range []bool{false, true} {
				err := readAll(bad, MatrixOptions{Width: w, BatchSize: 256}, cols)
				if err != nil {
					errs++
					if !strings.Contains(err.Error(), bad) {
						t.Fatalf("file %d: %v does not name the file", f, err)
					}
					if errors.Is(err, errPage) && strings.Contains(err.Error(), "page ") &&
						(!strings.Contains(err.Error(), `column "f`) || !strings.Contains(err.Error(), "row group ")) {
						t.Fatalf("file %d: %v does not name the column and row group", f, err)
					}
				}
			}
			return errs
		})
	}
	// A cursor whose chunk ends early.
	m, err := OpenParquetMatrix(path, MatrixOptions{Width: w, BatchSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, err := m.Next(make([]float32, 256*w)); err != nil {
		t.Fatal(err)
	}
	m.rgLeft += 100 // claim more rows than the chunks hold
	_, _, err = m.Next(make([]float32, 256*w))
	_, _, err = m.Next(make([]float32, 256*w))
	if err == nil || !errors.Is(err, errPage) || !strings.Contains(err.Error(), `column "f0", row group 0, page`) {
		t.Fatalf("%v, want an error naming column f0, row group 0 and a page", err)
	}
}

// readAll reads a file through a ParquetMatrix (Next, or NextColumns if
// cols), turning a panic into a test-visible error.
func readAll(path string, opts MatrixOptions, cols bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			panic(err)
		}
	}()
	m, err := OpenParquetMatrix(path, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	buf := make([]float32, opts.BatchSize*opts.Width)
	next := func() error { _, _, err := m.Next(buf); return err }
	if cols {
		next = func() error { _, _, err := m.NextColumns(buf, opts.BatchSize); return err }
	}
	for {
		if err := next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// flipPages writes trials copies of the Parquet file path with one to four
// bytes flipped before its footer (a seeded choice) and calls read on
// each (which returns how many reads of it failed); it fails the test if
// none of them failed at all.
func flipPages(t *testing.T, path string, seed uint64, trials int, read func(bad string) int) {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	footer := len(orig) - 8 - int(uint32(orig[len(orig)-8])|uint32(orig[len(orig)-7])<<8|uint32(orig[len(orig)-6])<<16|uint32(orig[len(orig)-5])<<24)
	rng := rand.New(rand.NewPCG(1, seed))
	errs := 0
	for trial := range trials {
		b := slices.Clone(orig)
		for range 1 + trial%4 {
			b[4+rng.IntN(footer-4)] ^= byte(1 + rng.IntN(255))
		}
		bad := filepath.Join(t.TempDir(), fmt.Sprintf("bad%d.parquet", trial))
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		errs += read(bad)
		os.Remove(bad)
	}
	if errs == 0 {
		t.Fatalf("%s: no corrupted copy gave an error", path)
	}
}
