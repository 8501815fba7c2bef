package data

import (
	"errors"
	"fmt"
	"io"
	"math"
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
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// vectorSpec describes a test file of an id and one list column "v" of
// float32: row i holds length(i) values value(i, k) (a null element
// where null(i, k), a null list where length(i) < 0).
type vectorSpec struct {
	n, rg  int
	fixed  int // a fixed_size_list of this many values, or 0 for a list
	length func(i int) int
	value  func(i, k int) float32
	null   func(i, k int) bool
	props  []parquet.WriterProperty
}

func writeVectorSpec(t testing.TB, path string, s vectorSpec) (want []float32) {
	t.Helper()
	var lt arrow.DataType = arrow.ListOf(arrow.PrimitiveTypes.Float32)
	if s.fixed > 0 {
		lt = arrow.FixedSizeListOf(int32(s.fixed), arrow.PrimitiveTypes.Float32)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "v", Type: lt, Nullable: true}}, nil)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := append([]parquet.WriterProperty{parquet.WithBatchSize(64)}, s.props...)
	fw, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(props...), pqarrow.NewArrowWriterProperties())
	if err != nil {
		t.Fatal(err)
	}
	// One record per row group: arrow-go's writer loses the offset of a
	// fixed_size_list sliced into row groups (it writes the first rows
	// again).
	for r0 := 0; r0 < s.n; r0 += s.rg {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		ids := b.Field(0).(*array.Int64Builder)
		lb := b.Field(1).(array.ListLikeBuilder)
		vb := lb.ValueBuilder().(*array.Float32Builder)
		for i := r0; i < min(r0+s.rg, s.n); i++ {
			ids.Append(int64(i))
			l := s.length(i)
			if l < 0 {
				lb.AppendNull()
				if s.fixed > 0 {
					for range s.fixed {
						vb.AppendNull()
					}
				}
				continue
			}
			lb.Append(true)
			for k := range l {
				if s.null != nil && s.null(i, k) {
					vb.AppendNull()
					want = append(want, 0)
					continue
				}
				v := s.value(i, k)
				vb.Append(v)
				want = append(want, v)
			}
		}
		rec := b.NewRecordBatch()
		err := fw.WriteBuffered(rec)
		if err == nil {
			fw.NewBufferedRowGroup()
		}
		rec.Release()
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// readVectorAll reads a vector file through Next in batches of bs rows:
// the values, or the first error; own says whether the list column's
// pages were walked in the mapping.
func readVectorAll(t *testing.T, path string, w, bs int) (x []float32, own bool, err error) {
	t.Helper()
	m, err := OpenParquetMatrix(path, MatrixOptions{Columns: []string{"v"}, Width: w, BatchSize: bs})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf := make([]float32, bs*w)
	for {
		n, nulls, err := m.Next(buf)
		if err == io.EOF {
			return x, own, nil
		}
		if err != nil {
			return x, own, err
		}
		if len(nulls) != 0 {
			t.Fatalf("%s: %d nulls from a vector column", path, len(nulls))
		}
		own = own || (m.pages[0] != nil && m.pages[0].on && m.pages[0].pr == nil)
		finite := true
		for _, v := range buf[:n*w] {
			finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		}
		if m.Finite() != finite {
			t.Fatalf("%s: Finite() %v, want %v", path, m.Finite(), finite)
		}
		x = append(x, buf[:n*w]...)
	}
}

// TestParquetMatrixVectorOwnPages: a list<float32> (or fixed_size_list)
// column of rows of 37 values, uncompressed, Snappy and zstd, data pages
// v1 and v2, PLAIN or dictionary-encoded, pages of a few hundred values
// (rows split across pages), row groups not aligned with the batches:
// Next gives the values written from the pages walked in the mapping and
// from arrow-go's column reader alike; rows of another length, a null
// element, an empty or a null list are ErrNotMatrix wherever they are.
func TestParquetMatrixVectorOwnPages(t *testing.T) {
	const n, w = 900, 37
	dir := t.TempDir()
	distinct := func(i, k int) float32 { return float32(i)*0.25 - float32(k) }
	few := func(i, k int) float32 { return float32((i+3*k)%13) / 4 }
	withInf := func(i, k int) float32 {
		if i == 401 && k == 5 {
			return float32(math.Inf(-1))
		}
		return few(i, k)
	}
	full := func(int) int { return w }
	k := 0
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			for _, dict := range []bool{false, true} {
				for _, fixed := range []int{0, w} {
					value := distinct
					if dict {
						value = few
					}
					if codec == compress.Codecs.Snappy && fixed == 0 {
						value = withInf
					}
					name := fmt.Sprintf("%s v%d dict=%v fixed=%v", codec, v+1, dict, fixed > 0)
					path := filepath.Join(dir, fmt.Sprintf("v%d.parquet", k))
					k++
					want := writeVectorSpec(t, path, vectorSpec{n: n, rg: 350, fixed: fixed, length: full, value: value,
						props: []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageVersion(v),
							parquet.WithDataPageSize(1000), parquet.WithDictionaryDefault(dict)}})
					for _, mode := range pageModes {
						restore := setPageMode(mode.own, mode.pages)
						for _, bs := range []int{128, 61} {
							got, own, err := readVectorAll(t, path, w, bs)
							if err != nil {
								t.Fatalf("%s, %s, batch %d: %v", name, mode.name, bs, err)
							}
							if own != mode.own {
								t.Fatalf("%s, %s: pages walked in the mapping: %v", name, mode.name, own)
							}
							if !slices.Equal(got, want) {
								t.Fatalf("%s, %s, batch %d: the values differ from those written", name, mode.name, bs)
							}
						}
						restore()
					}
				}
			}
		}
	}

	// Rows that are not Width present values, early and late in a file.
	for _, bad := range []struct {
		name   string
		length func(i int) int
		null   func(i, k int) bool
	}{
		{"a short row", func(i int) int { return w - btoi(i == 777) }, nil},
		{"a long row", func(i int) int { return w + btoi(i == 3) }, nil},
		{"an empty list", func(i int) int { return w - w*btoi(i == 500) }, nil},
		{"a null list", func(i int) int { return w - (w+1)*btoi(i == 640) }, nil},
		{"a null element", full, func(i, k int) bool { return i == 222 && k == 36 }},
		{"a null first element", full, func(i, k int) bool { return i == 0 && k == 0 }},
	} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			path := filepath.Join(dir, "bad.parquet")
			writeVectorSpec(t, path, vectorSpec{n: n, rg: 350, length: bad.length, value: few, null: bad.null,
				props: []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageVersion(v), parquet.WithDataPageSize(1000)}})
			for _, mode := range pageModes {
				restore := setPageMode(mode.own, mode.pages)
				_, _, err := readVectorAll(t, path, w, 128)
				restore()
				if !errors.Is(err, ErrNotMatrix) {
					t.Fatalf("%s v%d, %s: %v, want ErrNotMatrix", bad.name, v+1, mode.name, err)
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParquetMatrixVectorCorruptPages: vector files with bytes flipped
// before the footer read through the pages walked in the mapping give
// an error naming the file or values (never a crash), and some give an
// error.
func TestParquetMatrixVectorCorruptPages(t *testing.T) {
	const n, w = 400, 29
	dir := t.TempDir()
	var files []string
	for k, props := range [][]parquet.WriterProperty{
		{parquet.WithDataPageVersion(parquet.DataPageV1), parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(false)},
		{parquet.WithDataPageVersion(parquet.DataPageV1), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false)},
		{parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(true)},
	} {
		p := filepath.Join(dir, fmt.Sprintf("v%d.parquet", k))
		writeVectorSpec(t, p, vectorSpec{n: n, rg: 150, length: func(int) int { return w },
			value: func(i, k int) float32 { return float32((i*k)%7) / 2 }, props: append(props, parquet.WithDataPageSize(600))})
		files = append(files, p)
	}
	for f, path := range files {
		flipPages(t, path, uint64(50+f), 120, func(bad string) int {
			m, err := OpenParquetMatrix(bad, MatrixOptions{Columns: []string{"v"}, Width: w, BatchSize: 64})
			if err == nil {
				buf := make([]float32, 64*w)
				for range n {
					if _, _, err = m.Next(buf); err != nil {
						break
					}
				}
				m.Close()
				if err == io.EOF {
					err = nil
				}
			}
			if err == nil {
				return 0
			}
			if !strings.Contains(err.Error(), bad) {
				t.Fatalf("file %d: %v does not name the file", f, err)
			}
			return 1
		})
	}
}
