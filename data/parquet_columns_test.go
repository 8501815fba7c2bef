package data

import (
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
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/fathom-ml/fathom/internal/parquetpage"
	pqgo "github.com/parquet-go/parquet-go"
)

// floatSpec describes a file of float32 columns for the page tests.
type floatSpec struct {
	n, w, rg int                 // rows, columns, rows per row group
	nullable func(j int) bool    // REQUIRED columns otherwise
	null     func(i, j int) bool // in nullable columns
	value    func(i, j int) float32
	props    []parquet.WriterProperty
}

// writeFloatSpec writes the file of s (small data pages, as arrow-go's
// writer cuts them every 64 values) and returns its rows row-major and
// its missing cells.
func writeFloatSpec(t testing.TB, path string, s floatSpec) (want []float32, wantNulls []NullCell) {
	t.Helper()
	fields := make([]arrow.Field, s.w)
	for j := range fields {
		fields[j] = arrow.Field{Name: fmt.Sprintf("f%d", j), Type: arrow.PrimitiveTypes.Float32, Nullable: s.nullable(j)}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	want = make([]float32, s.n*s.w)
	for i := range s.n {
		for j := range s.w {
			fb := b.Field(j).(*array.Float32Builder)
			if s.nullable(j) && s.null(i, j) {
				fb.AppendNull()
				wantNulls = append(wantNulls, NullCell{Row: i, Col: j})
				continue
			}
			v := s.value(i, j)
			fb.Append(v)
			want[i*s.w+j] = v
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(s.rg)), parquet.WithBatchSize(64)}, s.props...)
	writeArrowRecord(t, path, rec, parquet.NewWriterProperties(props...))
	return want, wantNulls
}

// readColumnsAll reads a whole file through NextColumns with leading
// dimension ld and returns the rows row-major, the missing cells (file
// rows) and the batch sizes. It checks that nothing is written past a
// batch's rows.
func readColumnsAll(t testing.TB, path string, opts MatrixOptions, ld int) (x []float32, nulls []NullCell, sizes []int) {
	t.Helper()
	m, err := OpenParquetMatrix(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	w := opts.Width
	buf := make([]float32, (w-1)*ld+opts.BatchSize)
	rows := 0
	for {
		for i := range buf {
			buf[i] = float32(math.NaN())
		}
		n, nl, err := m.NextColumns(buf, ld)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		finite := true
		for i := range n {
			for j := range w {
				v := buf[j*ld+i]
				x = append(x, v)
				finite = finite && !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
			}
		}
		if m.Finite() != finite {
			t.Fatalf("%s: batch of %d rows after row %d: Finite() %v, want %v", path, n, rows, m.Finite(), finite)
		}
		for j := range w {
			for i := n; i < ld && j*ld+i < len(buf); i++ {
				if !math.IsNaN(float64(buf[j*ld+i])) {
					t.Fatalf("%s: batch of %d rows: column %d written at row %d", path, n, j, i)
				}
			}
		}
		for _, c := range nl {
			nulls = append(nulls, NullCell{Row: rows + c.Row, Col: c.Col})
		}
		sizes = append(sizes, n)
		rows += n
	}
	return x, nulls, sizes
}

func sortNulls(nulls []NullCell, w int) []NullCell {
	slices.SortFunc(nulls, func(a, b NullCell) int { return (a.Row*w + a.Col) - (b.Row*w + b.Col) })
	return nulls
}

// pageModes are the three ways a ParquetMatrix reads a chunk: pages
// walked in the mapping, arrow-go's page reader, arrow-go's column
// reader.
var pageModes = []struct {
	name       string
	own, pages bool
}{{"own-pages", true, true}, {"arrow-pages", false, true}, {"column-readers", false, false}}

func setPageMode(own, pages bool) func() {
	matrixOwnPages, matrixPageDecoding = own, pages
	return func() { matrixOwnPages, matrixPageDecoding = true, littleEndian() }
}

// checkMatrixFile reads path by Next and NextColumns in every page mode
// and batch size and compares with want. own says that every chunk must
// be read by the pages walked in the mapping.
func checkMatrixFile(t *testing.T, name, path string, w int, want []float32, wantNulls []NullCell) {
	t.Helper()
	for _, mode := range pageModes {
		restore := setPageMode(mode.own, mode.pages)
		for _, bs := range []int{512, 97} {
			opts := MatrixOptions{Width: w, BatchSize: bs}
			if mode.own {
				m, err := OpenParquetMatrix(path, opts)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := m.Next(make([]float32, bs*w)); err != nil {
					t.Fatal(err)
				}
				for j, c := range m.pages {
					if c == nil || !c.on || c.pr != nil {
						t.Fatalf("%s: column %d not read from its pages in the mapping", name, j)
					}
				}
				m.Close()
			}
			x, nulls, sizes := readMatrix(t, path, opts)
			cx, cnulls, csizes := readColumnsAll(t, path, opts, bs+13)
			nb := (len(want)/w + bs - 1) / bs
			if len(sizes) != nb || !slices.Equal(sizes, csizes) {
				t.Fatalf("%s, %s, batch %d: batches %v and %v", name, mode.name, bs, sizes, csizes)
			}
			if !slices.Equal(x, want) || !slices.Equal(cx, want) {
				t.Fatalf("%s, %s, batch %d: values equal: Next %v, NextColumns %v", name, mode.name, bs, slices.Equal(x, want), slices.Equal(cx, want))
			}
			if !slices.Equal(sortNulls(nulls, w), wantNulls) || !slices.Equal(sortNulls(cnulls, w), wantNulls) {
				t.Fatalf("%s, %s, batch %d: %d and %d missing cells, want %d", name, mode.name, bs, len(nulls), len(cnulls), len(wantNulls))
			}
		}
		restore()
	}
}

// TestParquetMatrixOwnPages: files of 21 float32 columns (a group of
// sixteen and five more), REQUIRED and nullable with nulls (and nullable
// without), in row groups of 700 rows and pages of about 256 values,
// uncompressed, Snappy, zstd and gzip, data pages v1 and v2, PLAIN or
// dictionary-encoded (few distinct values, or a dictionary that outgrows
// its limit and falls back to PLAIN pages midway): Next and NextColumns
// (leading dimension above the batch, a last partial batch) give the
// values and nulls written, whether the pages are walked in the mapping,
// read by arrow-go's page reader or decoded by its column reader.
func TestParquetMatrixOwnPages(t *testing.T) {
	const n, w = 1500, 21
	nullable := func(j int) bool { return j%3 != 0 }
	null := func(i, j int) bool { // many nulls, a few, or none
		return (j%3 == 1 && (i*j)%13 == 4) || (j%6 == 2 && i%97 == 5)
	}
	distinct := func(i, j int) float32 { return float32(i)*0.5 + float32(j) }
	few := func(i, j int) float32 { return float32((i*7+j)%11) / 8 }
	// With an infinity in a dictionary, or in a PLAIN page after the
	// dictionary's (Finite must see both).
	withInf := func(f func(i, j int) float32, i0, j0 int) func(i, j int) float32 {
		return func(i, j int) float32 {
			if i == i0 && j == j0 {
				return float32(math.Inf(1))
			}
			return f(i, j)
		}
	}
	type cfg struct {
		name  string
		value func(i, j int) float32
		props []parquet.WriterProperty
	}
	var cfgs []cfg
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy, compress.Codecs.Zstd, compress.Codecs.Gzip} {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			base := []parquet.WriterProperty{parquet.WithCompression(codec), parquet.WithDataPageVersion(v), parquet.WithDataPageSize(1024)}
			for j := range w {
				// Keep the dictionary of uncompressed columns too.
				base = append(base, parquet.WithDictionaryCostFallbackFor(fmt.Sprintf("f%d", j), false))
			}
			base = slices.Clip(base)
			cfgs = append(cfgs,
				cfg{fmt.Sprintf("plain v%d %s", v+1, codec), distinct, append(base, parquet.WithDictionaryDefault(false))},
				cfg{fmt.Sprintf("dictionary v%d %s", v+1, codec), few, append(base, parquet.WithDictionaryDefault(true))})
			if codec == compress.Codecs.Snappy || codec == compress.Codecs.Uncompressed {
				cfgs = append(cfgs, cfg{fmt.Sprintf("dictionary fallback v%d %s", v+1, codec), distinct,
					append(base, parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(1200), parquet.WithDataPageSize(256))})
			}
			if codec == compress.Codecs.Snappy {
				cfgs = append(cfgs,
					cfg{fmt.Sprintf("dictionary fallback v%d %s, an infinity in a PLAIN page", v+1, codec), withInf(distinct, 650, 3),
						append(base, parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(1200), parquet.WithDataPageSize(256))},
					cfg{fmt.Sprintf("dictionary v%d %s, an infinity in a dictionary", v+1, codec), withInf(few, 650, 3), append(base, parquet.WithDictionaryDefault(true))})
			}
		}
	}
	dir := t.TempDir()
	for k, c := range cfgs {
		path := filepath.Join(dir, fmt.Sprintf("f%d.parquet", k))
		want, wantNulls := writeFloatSpec(t, path, floatSpec{n: n, w: w, rg: 700, nullable: nullable, null: null, value: c.value, props: c.props})
		checkEncodings(t, c.name, path)
		checkMatrixFile(t, c.name, path, w, want, wantNulls)
	}
}

// checkEncodings checks that a test file holds what its name says:
// dictionary pages, and PLAIN pages after them for a fallback.
func checkEncodings(t *testing.T, name, path string) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	encs := cc.Encodings()
	dict := slices.Contains(encs, parquet.Encodings.RLEDict)
	fallback := dict && slices.Contains(encs, parquet.Encodings.Plain) && cc.HasDictionaryPage()
	stats := cc.EncodingStats()
	plainData := false
	for _, s := range stats {
		if int(s.PageType) == parquetpage.PageData || int(s.PageType) == parquetpage.PageDataV2 {
			plainData = plainData || s.Encoding == parquet.Encodings.Plain
		}
	}
	switch {
	case len(name) > 19 && name[:19] == "dictionary fallback":
		if !fallback || !plainData {
			t.Fatalf("%s: encodings %v, stats %v: no fallback to PLAIN", name, encs, stats)
		}
	case name[:10] == "dictionary":
		if !dict || plainData {
			t.Fatalf("%s: encodings %v, stats %v: not all dictionary-encoded", name, encs, stats)
		}
	default:
		if dict {
			t.Fatalf("%s: encodings %v: dictionary-encoded", name, encs)
		}
	}
}

// TestParquetMatrixFrameWriterDictionary: a file written by the Frame
// writer with Dictionary on has its float columns dictionary-encoded, and
// reads back the same through both readers (one row group of 1000 and
// one of 500 rows, batches of 400).
func TestParquetMatrixFrameWriterDictionary(t *testing.T) {
	const n, w = 1500, 18
	cols := make([]Column, w)
	want := make([]float32, n*w)
	var wantNulls []NullCell
	for j := range w {
		v := make([]float32, n)
		var valid []bool
		if j == 2 {
			valid = make([]bool, n)
		}
		for i := range v {
			v[i] = float32((i*j)%9) / 8
			if valid != nil {
				valid[i] = i%17 != 3
				if !valid[i] {
					v[i] = 0
					wantNulls = append(wantNulls, NullCell{Row: i, Col: j})
				}
			}
			want[i*w+j] = v[i]
		}
		cols[j] = NewColumn(fmt.Sprintf("p%d", j), v, valid)
	}
	f, err := NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		path := filepath.Join(t.TempDir(), "d.parquet")
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		pw, err := NewParquetFrameWriter(fh, f, ParquetWriteOptions{Dictionary: true, props: []parquet.WriterProperty{parquet.WithDataPageVersion(v)}})
		if err != nil {
			t.Fatal(err)
		}
		if err := pw.Write(f.Slice(0, 1000)); err != nil {
			t.Fatal(err)
		}
		if err := pw.Write(f.Slice(1000, n)); err != nil {
			t.Fatal(err)
		}
		if err := pw.Close(); err != nil {
			t.Fatal(err)
		}
		checkEncodings(t, "dictionary", path)
		checkMatrixFile(t, fmt.Sprintf("frame writer, dictionary, v%d", v+1), path, w, want, wantNulls)
	}
}

// TestParquetMatrixNextColumnsErrors: a list column, a leading dimension
// below the batch and a short buffer are errors.
func TestParquetMatrixNextColumnsErrors(t *testing.T) {
	const n, w = 100, 4
	path := filepath.Join(t.TempDir(), "s.parquet")
	writeFloatSpec(t, path, floatSpec{n: n, w: w, rg: 50, nullable: func(int) bool { return false }, null: nil,
		value: func(i, j int) float32 { return float32(i + j) }})
	m, err := OpenParquetMatrix(path, MatrixOptions{Width: w, BatchSize: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, _, err := m.NextColumns(make([]float32, 1000), 29); err == nil {
		t.Fatal("leading dimension 29 for batches of 30: no error")
	}
	if _, _, err := m.NextColumns(make([]float32, 3*40+29), 40); err == nil {
		t.Fatal("a buffer one value short: no error")
	}
	if k, _, err := m.NextColumns(make([]float32, 3*40+30), 40); err != nil || k != 30 {
		t.Fatalf("%d rows, %v", k, err)
	}
	vf, err := NewFrame(NewVectorColumn32("v", 2, make([]float32, 2*n), nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	vpath := filepath.Join(t.TempDir(), "v.parquet")
	writeFrameGroups(t, vpath, vf, []int{n})
	vm, err := OpenParquetMatrix(vpath, MatrixOptions{Width: 2, BatchSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	if !vm.Vector() {
		t.Fatal("not a vector layout")
	}
	if _, _, err := vm.NextColumns(make([]float32, 100), 10); err == nil {
		t.Fatal("NextColumns of a list column: no error")
	}
}

// pqgoRow is a row of float32 columns as parquet-go writes them: PLAIN
// and dictionary-encoded, required and optional (with nulls). Names in
// file order.
type pqgoRow struct {
	A float32  `parquet:"a"`
	B *float32 `parquet:"b,optional"`
	C float32  `parquet:"c,dict"`
	D *float32 `parquet:"d,optional,dict"`
	E float32  `parquet:"e"`
}

// TestParquetMatrixParquetGo: files written by parquet-go (a Parquet
// implementation independent of arrow-go: its own page headers, page
// cuts and dictionary encoder), data pages v1 and v2, Snappy and zstd,
// small pages and row groups of 700 rows: Next and NextColumns give the
// values and nulls written in every page mode.
func TestParquetMatrixParquetGo(t *testing.T) {
	const n, w = 1500, 5
	rows := make([]pqgoRow, n)
	want := make([]float32, n*w)
	var wantNulls []NullCell
	for i := range rows {
		r := &rows[i]
		r.A, r.C, r.E = float32(i)*0.25, float32(i%7), float32(-i)
		if i%9 != 4 {
			v := float32(i) + 0.5
			r.B = &v
		}
		if i%13 != 2 {
			v := float32(i % 5)
			r.D = &v
		}
		row := []*float32{&r.A, r.B, &r.C, r.D, &r.E}
		for j, p := range row {
			if p == nil {
				wantNulls = append(wantNulls, NullCell{Row: i, Col: j})
				continue
			}
			want[i*w+j] = *p
		}
	}
	for _, v := range []int{1, 2} {
		for _, codec := range []pqgo.WriterOption{pqgo.Compression(&pqgo.Snappy), pqgo.Compression(&pqgo.Zstd)} {
			path := filepath.Join(t.TempDir(), "g.parquet")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			pw := pqgo.NewGenericWriter[pqgoRow](f, pqgo.DataPageVersion(v), codec, pqgo.PageBufferSize(1024), pqgo.MaxRowsPerRowGroup(700))
			if _, err := pw.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			checkMatrixFile(t, fmt.Sprintf("parquet-go v%d", v), path, w, want, wantNulls)
		}
	}
}

// TestParquetMatrixNarrowDictionary: files of 37 float32 columns (two
// groups of sixteen and five more) in row groups of 700 rows, Snappy,
// pages v1 and v2, whose dictionary pages Next keeps as byte indices
// (dictionaries of at most 256 finite values, no nulls): every column
// so, REQUIRED or nullable without nulls, in pages of one row group or
// of a few hundred rows (tiles across pages); and with other sources in
// the same groups of sixteen: PLAIN columns, dictionaries of more than
// 256 values, nulls, an infinity in a dictionary, a dictionary that
// falls back to PLAIN pages midway. Next and NextColumns give the values
// and nulls written and Finite is right after every batch
// (checkMatrixFile); the byte indices are what a tile of the first row
// group was read from where they can be; RowsFromIndices is true exactly for
// the files whose every column is so.
func TestParquetMatrixNarrowDictionary(t *testing.T) {
	const n, w = 1500, 37
	narrow := func(i, j int) float32 { return float32((i*7+j*3)%(40+5*j)) / 8 } // 40 to 220 values
	wideVals := func(i, j int) float32 { return float32((i+j*17)%(300+j)) / 4 } // 300 or more
	noNulls := func(int, int) bool { return false }
	type cfg struct {
		name     string
		nullable func(j int) bool
		null     func(i, j int) bool
		value    func(i, j int) float32
		props    func(j int) []parquet.WriterProperty // per column
		pageSize int64
		narrowJ  func(j int) bool // columns read from byte indices
		cheap    bool
	}
	all := func(int) bool { return true }
	none := func(int) []parquet.WriterProperty { return nil }
	cfgs := []cfg{
		{"narrow, required", func(int) bool { return false }, noNulls, narrow, none, 0, all, true},
		{"narrow, nullable without nulls", all, noNulls, narrow, none, 0, all, true},
		{"narrow, small pages", func(j int) bool { return j%2 == 0 }, noNulls, narrow, none, 300, all, true},
		{"mixed", func(j int) bool { return j%4 == 1 }, func(i, j int) bool { return j == 21 && i%9 == 2 },
			func(i, j int) float32 {
				switch {
				case j%7 == 3:
					return wideVals(i, j)
				case j == 30 && i == 100:
					return float32(math.Inf(-1)) // in a dictionary (of the first row group)
				}
				return narrow(i, j)
			},
			func(j int) []parquet.WriterProperty {
				if j%5 == 2 {
					return []parquet.WriterProperty{parquet.WithDictionaryFor(fmt.Sprintf("f%d", j), false)}
				}
				return nil
			}, 0,
			func(j int) bool { return j%7 != 3 && j%5 != 2 && j != 21 && j != 30 }, false},
		{"fallback", func(int) bool { return false }, noNulls,
			func(i, j int) float32 {
				if j%3 == 0 && i%700 >= 400 {
					return float32(i) + float32(j)/64 // distinct: the dictionary outgrows its limit
				}
				return narrow(i, j)
			},
			func(j int) []parquet.WriterProperty {
				return []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(600)}
			}, 300, all, false},
		{"wide", func(int) bool { return false }, noNulls, wideVals, none, 0, func(int) bool { return false }, false},
	}
	dir := t.TempDir()
	for k, c := range cfgs {
		for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
			name := fmt.Sprintf("%s, v%d", c.name, v+1)
			props := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageVersion(v), parquet.WithDictionaryDefault(true)}
			if c.pageSize > 0 {
				props = append(props, parquet.WithDataPageSize(c.pageSize))
			}
			for j := range w {
				props = append(props, c.props(j)...)
			}
			path := filepath.Join(dir, fmt.Sprintf("n%d-%d.parquet", k, v))
			want, wantNulls := writeFloatSpec(t, path, floatSpec{n: n, w: w, rg: 700, nullable: c.nullable, null: c.null, value: c.value, props: props})
			if c.name == "fallback" {
				checkEncodings(t, "dictionary fallback (column 0)", path)
			} else if c.name != "mixed" {
				checkEncodings(t, "dictionary", path)
			}
			checkMatrixFile(t, name, path, w, want, wantNulls)

			m, err := OpenParquetMatrix(path, MatrixOptions{Width: w, BatchSize: 512})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.RowsFromIndices(); got != c.cheap {
				t.Errorf("%s: RowsFromIndices() %v, want %v", name, got, c.cheap)
			}
			// The last tile of the first batch (rows 0-511, within a
			// page unless pages are small): the sources of the last
			// group (j0 = 32) and of the group before it.
			if _, _, err := m.Next(make([]float32, 512*w)); err != nil {
				t.Fatal(err)
			}
			for k := range matrixGroup {
				j := 16 + k
				if k < w-32 {
					j = 32 + k
				}
				want := c.narrowJ(j) && (c.pageSize == 0 || !c.nullable(j))
				if c.pageSize > 0 && want {
					want = m.idx[k] != nil // pages of a few hundred rows: the tile may cross one
				}
				if got := m.idx[k] != nil; got != want {
					t.Errorf("%s: column %d read from byte indices %v, want %v", name, j, got, want)
				}
			}
			m.Close()
		}
	}
	restore := setPageMode(false, true)
	defer restore()
	path := filepath.Join(dir, "n0-0.parquet")
	m, err := OpenParquetMatrix(path, MatrixOptions{Width: w, BatchSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.RowsFromIndices() {
		t.Error("pages read through arrow-go's page reader: RowsFromIndices() true")
	}
}
