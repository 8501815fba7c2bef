package data

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// writeAllTypesParquet writes three rows of every type a Frame reads, plus
// a plain binary column ("raw") and a uint64 column ("big") whose last value
// does not fit in int64.
func writeAllTypesParquet(t *testing.T, path string) {
	t.Helper()
	meta := arrow.MetadataFrom(map[string]string{"origin": "test"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString},
		{Name: "dict", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}},
		{Name: "emb", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)},
		{Name: "dl", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "raw", Type: arrow.BinaryTypes.Binary},
		{Name: "big", Type: arrow.PrimitiveTypes.Uint64},
	}, &meta)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float32Builder).AppendValues([]float32{1.5, 0, -2}, []bool{true, false, true})
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.1, 0.2, 1e300}, nil)
	b.Field(2).(*array.Int8Builder).AppendValues([]int8{-128, 0, 127}, nil)
	b.Field(3).(*array.Int64Builder).AppendValues([]int64{math.MinInt64, 0, math.MaxInt64}, []bool{true, false, true})
	b.Field(4).(*array.Uint32Builder).AppendValues([]uint32{0, 1, math.MaxUint32}, nil)
	b.Field(5).(*array.BooleanBuilder).AppendValues([]bool{true, false, false}, []bool{true, true, false})
	b.Field(6).(*array.StringBuilder).AppendValues([]string{"a", "", "ccc"}, []bool{true, false, true})
	b.Field(7).(*array.LargeStringBuilder).AppendValues([]string{"x", "y", "z"}, nil)
	db := b.Field(8).(*array.BinaryDictionaryBuilder)
	for _, s := range []string{"dog", "cat", "dog"} {
		db.AppendString(s)
	}
	eb := b.Field(9).(*array.FixedSizeListBuilder)
	for r := range 3 {
		eb.Append(true)
		eb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(r), float32(-r)}, nil)
	}
	lb := b.Field(10).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float64Builder)
	lb.AppendNull()
	lb.Append(true)
	vb.AppendValues([]float64{1, 0, 3}, []bool{true, false, true})
	lb.Append(true)
	vb.AppendValues([]float64{4, 5, 6}, nil)
	b.Field(11).(*array.BinaryBuilder).AppendValues([][]byte{{1}, {2}, {3}}, nil)
	b.Field(12).(*array.Uint64Builder).AppendValues([]uint64{1, 2, math.MaxUint64}, nil)
	// One row group: see writeVectorParquet about fixed-size lists.
	writeRecord(t, path, b, 1024)
}

func TestReadParquetFrameTypes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "all.parquet")
	writeAllTypesParquet(t, p)
	cols := []string{"f32", "f64", "i8", "i64", "u32", "flag", "s", "ls", "dict", "emb", "dl"}
	f, err := ReadParquetFrame(p, ParquetFrameOptions{Columns: cols, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "Frame 3×11 [f32 float32, f64 float64, i8 int64, i64 int64, u32 int64, flag bool, s string, ls string, dict string, emb vector<float32, 2>, dl vector<float64, 3>]"
	if f.String() != want {
		t.Fatalf("got %s\nwant %s", f, want)
	}
	if v, ok := f.Metadata("origin"); !ok || v != "test" {
		t.Fatalf("metadata %q %v", v, ok)
	}
	check := func(name string, got, want any, valid []bool) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
		if v := f.Col(name).Valid(); !slices.Equal(v, valid) {
			t.Errorf("%s: valid %v, want %v", name, v, valid)
		}
	}
	f32, _ := f.Float32s("f32")
	check("f32", f32, []float32{1.5, 0, -2}, []bool{true, false, true})
	f64, _ := f.Float64s("f64")
	check("f64", f64, []float64{0.1, 0.2, 1e300}, nil)
	i8, _ := f.Int64s("i8")
	check("i8", i8, []int64{-128, 0, 127}, nil)
	i64, _ := f.Int64s("i64")
	check("i64", i64, []int64{math.MinInt64, 0, math.MaxInt64}, []bool{true, false, true})
	u32, _ := f.Int64s("u32")
	check("u32", u32, []int64{0, 1, math.MaxUint32}, nil)
	flag, _ := f.Bools("flag")
	check("flag", flag, []bool{true, false, false}, []bool{true, true, false})
	s, _ := f.Strings("s")
	check("s", s, []string{"a", "", "ccc"}, []bool{true, false, true})
	ls, _ := f.Strings("ls")
	check("ls", ls, []string{"x", "y", "z"}, nil)
	dict, _ := f.Strings("dict")
	check("dict", dict, []string{"dog", "cat", "dog"}, nil)
	emb, _ := f.Vectors("emb")
	check("emb", emb.Float32s(), []float32{0, 0, 1, -1, 2, -2}, nil)
	dl, _ := f.Vectors("dl")
	check("dl", dl.Float64s(), []float64{0, 0, 0, 1, 0, 3, 4, 5, 6}, []bool{false, true, true})
	if !dl.ElemNull(0, 2) || !dl.ElemNull(1, 1) || dl.ElemNull(1, 2) || dl.ElemNull(2, 0) {
		t.Errorf("dl element nulls: %v", dl.ElemValid())
	}

	for _, test := range []struct {
		opts ParquetFrameOptions
		want string
	}{
		{ParquetFrameOptions{}, `column "raw" has type binary, which a Frame cannot hold (byte arrays are read as strings only with the UTF8/String annotation)`},
		{ParquetFrameOptions{Columns: []string{"big"}, BatchSize: 2}, `row 3: column "big": 18446744073709551615 does not fit in int64`},
		{ParquetFrameOptions{Columns: []string{"nope"}}, `column "nope" not found (columns: f32, f64`},
		{ParquetFrameOptions{Columns: []string{"s", "s"}}, `column "s" is selected twice`},
	} {
		if _, err := ReadParquetFrame(p, test.opts); err == nil || !strings.HasPrefix(err.Error(), p+": ") || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%+v: got %v, want %q", test.opts, err, test.want)
		}
	}
}

func TestReadParquetFrameErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ragged.parquet")
	writeVectorParquet(t, p, []int{2, 2, 3}, nil)
	if _, err := ReadParquetFrame(p, ParquetFrameOptions{}); err == nil || err.Error() != p+`: row 3: column "pix" holds 3 values; the column's lists have 2` {
		t.Fatalf("ragged list: %v", err)
	}
	p = filepath.Join(dir, "nulls.parquet")
	writeVectorParquet(t, p, []int{-1, -1}, nil)
	if _, err := ReadParquetFrame(p, ParquetFrameOptions{}); err == nil || !strings.Contains(err.Error(), `column "pix": cannot tell the length of its lists from the first rows (all null or empty)`) {
		t.Fatalf("all-null lists: %v", err)
	}
	p = filepath.Join(dir, "emptylist.parquet")
	writeVectorParquet(t, p, []int{0, 2}, nil)
	if _, err := ReadParquetFrame(p, ParquetFrameOptions{}); err == nil || !strings.Contains(err.Error(), `row 1: column "pix" holds 0 values; the column's lists have 2`) {
		t.Fatalf("empty list: %v", err)
	}
	if _, err := ReadParquetFrame(filepath.Join(dir, "none.parquet"), ParquetFrameOptions{}); err == nil {
		t.Fatal("missing file")
	}
	iris, _ := Iris()
	p = filepath.Join(dir, "iris.parquet")
	WriteParquet(p, iris)
	b, _ := os.ReadFile(p)
	cut := filepath.Join(dir, "cut.parquet")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	if _, err := ReadParquetFrame(cut, ParquetFrameOptions{}); err == nil || !strings.HasPrefix(err.Error(), cut+": parquet:") {
		t.Fatalf("truncated file: %v", err)
	}
	// Partitions must agree on columns and list widths.
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o755)
	writeVectorParquet(t, filepath.Join(parts, "part-0.parquet"), []int{2, 2}, nil)
	writeVectorParquet(t, filepath.Join(parts, "part-1.parquet"), []int{3, 3}, nil)
	if _, err := ReadParquetFrame(parts, ParquetFrameOptions{}); err == nil || !strings.Contains(err.Error(), "part-1.parquet") {
		t.Fatalf("partitions with different widths: %v", err)
	}
	if _, err := ReadParquetFrame(t.TempDir(), ParquetFrameOptions{}); err == nil || !strings.Contains(err.Error(), "no Parquet files (*.parquet, *.parq, *.pq) in it or below it") {
		t.Fatalf("empty dir: %v", err)
	}
}

// parquetViaFrame reads Parquet as ReadParquet (or ReadParquetDir) does, but
// through a Frame.
func parquetViaFrame(path string, opts ParquetOptions) (*Table, error) {
	f, err := ReadParquetFrame(path, ParquetFrameOptions{BatchSize: opts.BatchSize})
	if err != nil {
		return nil, err
	}
	return f.Table(TableOptions{Label: opts.Label, LabelKind: opts.LabelKind, Classes: opts.Classes, Features: opts.Select, Ignore: opts.Ignore, Impute: opts.Impute, Source: path})
}

// TestParquetFrameTableAgrees checks that a Frame of every column, converted
// with the same options, gives the Table ReadParquet and ReadParquetDir
// give (they read only the columns they need), with the same errors.
func TestParquetFrameTableAgrees(t *testing.T) {
	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed.parquet")
	writeMixedParquet(t, mixed)
	vec := filepath.Join(dir, "vec.parquet")
	writeVectorParquet(t, vec, []int{2, 2, 2}, nil)
	vecNulls := filepath.Join(dir, "vecnulls.parquet")
	writeVectorParquet(t, vecNulls, []int{2, -1, 2}, map[[2]int]bool{{2, 1}: true})
	iris, _ := Iris()
	irisP := filepath.Join(dir, "iris.parquet")
	WriteParquet(irisP, iris)
	img := &Table{Rows: 2, Cols: 4, X: []float32{1, 2, 3, 4, 5, 6, 7, 8}, Columns: []string{"p0", "p1", "p2", "p3"}, FeatureShape: []int{2, 2}, Y: []float32{0.5, 1.5}, LabelName: "t"}
	imgP := filepath.Join(dir, "img.parquet")
	WriteParquet(imgP, img)
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o755)
	for i, rows := range [][]int{{100, 101}, {0, 1, 2}, {50}} {
		WriteParquet(filepath.Join(parts, "part-0000"+string(rune('0'+(2-i)))+".parquet"), iris.Subset(rows))
	}

	for _, test := range []struct {
		path string
		opts ParquetOptions
	}{
		{irisP, ParquetOptions{Label: "species"}},
		{irisP, ParquetOptions{Label: "species", Select: []string{"petal_width", "sepal_length"}}},
		{irisP, ParquetOptions{Label: "sepal_width", LabelKind: LabelNumeric, Ignore: []string{"species"}}},
		{imgP, ParquetOptions{Label: "t", LabelKind: LabelNumeric}},
		{imgP, ParquetOptions{Label: "t", LabelKind: LabelNumeric, Select: []string{"p0"}}},
		{mixed, ParquetOptions{Label: "kind", Ignore: []string{"name"}, Impute: MissingMean, BatchSize: 2}},
		{mixed, ParquetOptions{Label: "kind", Ignore: []string{"name"}}},
		{mixed, ParquetOptions{Label: "u8", Select: []string{"flag"}}},
		{mixed, ParquetOptions{Label: "kind", Classes: []string{"dog", "cat"}, Select: []string{"u8"}}},
		{vec, ParquetOptions{Label: "y", BatchSize: 2}},
		{vec, ParquetOptions{Select: []string{"pix[0]", "pix[1]", "x"}}},
		{vec, ParquetOptions{Select: []string{"emb"}}},
		{vec, ParquetOptions{Select: []string{"emb[0]", "x"}}},
		{vecNulls, ParquetOptions{Label: "y"}},
		{vecNulls, ParquetOptions{Label: "y", Select: []string{"pix"}, Impute: MissingMean}},
		{parts, ParquetOptions{Label: "species"}},
	} {
		var want *Table
		var werr error
		if test.path == parts {
			want, werr = ReadParquetDir(test.path, test.opts)
		} else {
			want, werr = ReadParquet(test.path, test.opts)
		}
		got, gerr := parquetViaFrame(test.path, test.opts)
		name := filepath.Base(test.path)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s %+v: ReadParquet error %v, through a Frame %v", name, test.opts, werr, gerr)
			continue
		}
		if werr != nil {
			if gerr.Error() != werr.Error() {
				t.Errorf("%s %+v: error\nthrough a Frame %v\nReadParquet     %v", name, test.opts, gerr, werr)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %+v:\nthrough a Frame %+v\nReadParquet     %+v", name, test.opts, got, want)
		}
	}
}

// TestReadParquetThroughFrame pins what ReadParquet keeps from its reader
// before Frames: float class names in float32 precision and errors naming
// the partition and its row. (Float64 features beyond the float32 range,
// once kept as infinities, are refused: an infinity turns a standardized
// column into NaNs.)
func TestReadParquetThroughFrame(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "fl.parquet")
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "l", Type: arrow.PrimitiveTypes.Float64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 1e300, 3}, nil)
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.1, 0.30000000000000004, 2}, nil)
	writeRecord(t, p, b, 1024)
	if _, err := ReadParquet(p, ParquetOptions{Label: "l"}); err == nil || !strings.Contains(err.Error(), p+`: row 2: column "x": 1e+300 is outside the float32 range`) {
		t.Fatalf("got %v", err)
	}
	got, err := ReadParquet(p, ParquetOptions{Label: "l", Ignore: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Classes, []string{"0.1", "0.3", "2"}) {
		t.Fatalf("classes %q X %v", got.Classes, got.X)
	}
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o755)
	writeMixedParquet(t, filepath.Join(parts, "part-0.parquet"))
	writeMixedParquet(t, filepath.Join(parts, "part-1.parquet"))
	_, err = ReadParquetDir(parts, ParquetOptions{Label: "kind", Select: []string{"u8"}, Classes: []string{"dog", "cat"}})
	if want := filepath.Join(parts, "part-0.parquet") + `: row 4: label column "kind": unknown class "bird"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	_, err = ReadParquetDir(parts, ParquetOptions{Label: "kind", Select: []string{"f64"}})
	if want := filepath.Join(parts, "part-0.parquet") + `: row 2: column "f64": null value`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	// A null in the second partition names it and its own row.
	vparts := filepath.Join(dir, "vparts")
	os.Mkdir(vparts, 0o755)
	writeVectorParquet(t, filepath.Join(vparts, "part-0.parquet"), []int{2, 2}, nil)
	writeVectorParquet(t, filepath.Join(vparts, "part-1.parquet"), []int{2, 2, -1}, nil)
	_, err = ReadParquetDir(vparts, ParquetOptions{Label: "y"})
	if want := filepath.Join(vparts, "part-1.parquet") + `: row 3: column "pix": null value`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// TestParquetFrameWriterRowGroupRows: batches of 700, 1 and 900 rows
// written with RowGroupRows 500 come back whole, in row groups of 500,
// 500, 500 and 101 rows (a vector, a string and a nullable float column).
func TestParquetFrameWriterRowGroupRows(t *testing.T) {
	const n, w = 1601, 3
	ids := make([]int64, n)
	names := make([]string, n)
	vals := make([]float32, n)
	valid := make([]bool, n)
	vec := make([]float32, n*w)
	for i := range n {
		ids[i], names[i], vals[i], valid[i] = int64(i), string(rune('a'+i%26)), float32(i)/3, i%7 != 0
		if !valid[i] {
			vals[i] = 0
		}
		for k := range w {
			vec[i*w+k] = float32(i*w + k)
		}
	}
	f, err := NewFrame(NewColumn("id", ids, nil), NewColumn("name", names, nil), NewColumn("p", vals, valid), NewVectorColumn32("v", w, vec, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.parquet")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := NewParquetFrameWriter(fh, f, ParquetWriteOptions{RowGroupRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, 700}, {700, 701}, {701, n}} {
		if err := pw.Write(f.Slice(r[0], r[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadParquetFrame(path, ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	framesEqual(t, got, f)
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var groups []int64
	for g := range pf.NumRowGroups() {
		groups = append(groups, pf.RowGroup(g).NumRows())
	}
	if !slices.Equal(groups, []int64{500, 500, 500, 101}) {
		t.Fatalf("row groups of %v rows, want 500, 500, 500, 101", groups)
	}
}
