package data

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func TestParquetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	iris, err := Iris()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "iris.parquet")
	if err := WriteParquet(p, iris); err != nil {
		t.Fatal(err)
	}
	// Small batches exercise the streaming path.
	got, err := ReadParquet(p, ParquetOptions{Label: "species", BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, iris) {
		t.Fatalf("round trip changed the table:\n got %+v\nwant %+v", got, iris)
	}

	// Numeric targets, no column names, a feature shape.
	reg := &Table{Rows: 3, Cols: 4, X: []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		FeatureShape: []int{2, 2}, LabelName: "target", Y: []float32{0.5, -1, 2}}
	p2 := filepath.Join(dir, "reg.parquet")
	if err := WriteParquet(p2, reg); err != nil {
		t.Fatal(err)
	}
	got, err = ReadParquet(p2, ParquetOptions{Label: "target", LabelKind: LabelNumeric})
	if err != nil {
		t.Fatal(err)
	}
	want := reg.Clone()
	want.Columns = []string{"c1", "c2", "c3", "c4"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// Selecting a subset of features, in a chosen order.
	got, err = ReadParquet(p2, ParquetOptions{Select: []string{"c3", "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.X, []float32{3, 1, 7, 5, 11, 9}) || got.Y != nil || got.FeatureShape != nil {
		t.Fatalf("selected: %+v", got)
	}
	// An empty table round-trips too.
	empty := &Table{Cols: 2, X: []float32{}, Columns: []string{"a", "b"}}
	p3 := filepath.Join(dir, "empty.parquet")
	if err := WriteParquet(p3, empty); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadParquet(p3, ParquetOptions{}); err != nil || got.Rows != 0 || got.Cols != 2 {
		t.Fatalf("empty: %+v, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// writeMixedParquet writes a file with nullable columns of several types and a
// dictionary-encoded string label, as other tools produce them.
func writeMixedParquet(t *testing.T, path string) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "kind", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 0, 4}, []bool{true, true, false, true})
	b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0, 1.5, 2.5}, []bool{true, false, true, true})
	b.Field(2).(*array.BooleanBuilder).AppendValues([]bool{true, false, true, false}, nil)
	b.Field(3).(*array.Uint8Builder).AppendValues([]uint8{10, 20, 30, 40}, nil)
	b.Field(4).(*array.StringBuilder).AppendValues([]string{"w", "x", "y", "z"}, nil)
	kb := b.Field(5).(*array.BinaryDictionaryBuilder)
	for _, s := range []string{"dog", "cat", "dog", "bird"} {
		if err := kb.AppendString(s); err != nil {
			t.Fatal(err)
		}
	}
	writeRecord(t, path, b, 3)
}

// writeRecord writes the record built by b to a Parquet file at path, in row
// groups of rowGroup rows.
func writeRecord(t *testing.T, path string, b *array.RecordBuilder, rowGroup int64) {
	t.Helper()
	rec := b.NewRecordBatch()
	defer rec.Release()
	writeArrowRecord(t, path, rec, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroup)), pqarrow.WithStoreSchema())
}

// writeArrowRecord writes rec to a new Parquet file at path through
// arrow-go's writer with props.
func writeArrowRecord(tb testing.TB, path string, rec arrow.RecordBatch, props *parquet.WriterProperties, opts ...pqarrow.WriterOption) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.NewArrowWriterProperties(opts...))
	if err != nil {
		tb.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
}

func TestParquetTypesAndNulls(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mixed.parquet")
	writeMixedParquet(t, p)

	_, err := ReadParquet(p, ParquetOptions{Label: "kind", Ignore: []string{"name"}})
	if want := p + `: row 3: column "i32": null value`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	got, err := ReadParquet(p, ParquetOptions{Label: "kind", Ignore: []string{"name"}, Impute: MissingMean, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	// i32 mean of 1,2,4 = 7/3; f64 mean of 0.5,1.5,2.5 = 1.5.
	want := &Table{
		Rows: 4, Cols: 4, Columns: []string{"i32", "f64", "flag", "u8"},
		X: []float32{
			1, 0.5, 1, 10,
			2, 1.5, 0, 20,
			7.0 / 3, 1.5, 1, 30,
			4, 2.5, 0, 40,
		},
		LabelName: "kind", Labels: []int64{2, 1, 2, 0}, Classes: []string{"bird", "cat", "dog"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}

	// A string feature column is a type error naming file and column.
	_, err = ReadParquet(p, ParquetOptions{Label: "kind", Impute: MissingMean})
	if want := p + `: column "name" has type utf8; features must be numbers or booleans`; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	_, err = ReadParquet(p, ParquetOptions{Label: "name", LabelKind: LabelNumeric, Select: []string{"u8"}})
	if err == nil || !strings.Contains(err.Error(), `label column "name": type utf8 is not numeric`) {
		t.Fatalf("got %v", err)
	}
	_, err = ReadParquet(p, ParquetOptions{Label: "kind", Classes: []string{"dog", "cat"}, Select: []string{"u8"}})
	if err == nil || !strings.Contains(err.Error(), `row 4: label column "kind": unknown class "bird"`) {
		t.Fatalf("got %v", err)
	}
	_, err = ReadParquet(p, ParquetOptions{Select: []string{"nope"}})
	if err == nil || !strings.Contains(err.Error(), `selected column "nope" not found`) {
		t.Fatalf("got %v", err)
	}
	// An integer label is a class label too.
	got, err = ReadParquet(p, ParquetOptions{Label: "u8", Select: []string{"flag"}})
	if err != nil || !reflect.DeepEqual(got.Classes, []string{"10", "20", "30", "40"}) {
		t.Fatalf("integer label: %+v, %v", got, err)
	}
}

func TestParquetCorruptFile(t *testing.T) {
	dir := t.TempDir()
	iris, _ := Iris()
	p := filepath.Join(dir, "iris.parquet")
	if err := WriteParquet(p, iris); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	cut := filepath.Join(dir, "cut.parquet")
	os.WriteFile(cut, b[:len(b)/2], 0o644)
	if _, err := ReadParquet(cut, ParquetOptions{}); err == nil || !strings.HasPrefix(err.Error(), cut+": parquet:") {
		t.Fatalf("truncated file: %v", err)
	}
}

func TestParquetDir(t *testing.T) {
	dir := t.TempDir()
	iris, _ := Iris()
	// Three partitions, written out of order; _SUCCESS is skipped.
	for i, rows := range [][]int{{100, 101}, {0, 1, 2}, {50}} {
		name := filepath.Join(dir, "part-0000"+string(rune('0'+(2-i)))+".parquet")
		part := iris.Subset(rows)
		// Each partition sees only some classes.
		if err := WriteParquet(name, part); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644)
	parts, err := ParquetParts(dir)
	if err != nil || len(parts) != 3 || filepath.Base(parts[0]) != "part-00000.parquet" {
		t.Fatalf("parts %v, %v", parts, err)
	}
	got, err := ReadParquetDir(dir, ParquetOptions{Label: "species"})
	if err != nil {
		t.Fatal(err)
	}
	// part-00000 holds row 50, part-00001 rows 0-2, part-00002 rows 100-101.
	want := iris.Subset([]int{50, 0, 1, 2, 100, 101})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if _, err := ReadParquetDir(t.TempDir(), ParquetOptions{}); err == nil || !strings.Contains(err.Error(), "no Parquet files (*.parquet, *.parq, *.pq) in it or below it") {
		t.Fatalf("empty dir: %v", err)
	}
	// A partition with different columns is an error naming it.
	other := &Table{Rows: 1, Cols: 1, X: []float32{1}, Columns: []string{"zzz"}}
	bad := filepath.Join(dir, "part-00003.parquet")
	WriteParquet(bad, other)
	if _, err := ReadParquetDir(dir, ParquetOptions{Select: []string{"sepal_length"}}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("mismatched partition: %v", err)
	}
}
