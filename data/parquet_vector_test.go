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
)

// writeVectorParquet writes rows with a scalar, a fixed-size list of float32
// ("emb", 3 values), a variable-length list of int32 ("pix") and a label, as
// PyArrow and Spark store embeddings and images. pix holds pixLens values per
// row (−1: a null list); pixNull marks null elements. One row group: the
// Arrow writer repeats the first group's values of a fixed-size list column
// in later row groups of the same record (arrow-go v18.8.0), which would
// test that writer rather than the reader.
func writeVectorParquet(t *testing.T, path string, pixLens []int, pixNull map[[2]int]bool) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "emb", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
		{Name: "pix", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "y", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rows := len(pixLens)
	eb := b.Field(1).(*array.FixedSizeListBuilder)
	pb := b.Field(2).(*array.ListBuilder)
	for r := range rows {
		b.Field(0).(*array.Float64Builder).Append(float64(r))
		eb.Append(true)
		eb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(10 * r), float32(10*r + 1), float32(10*r + 2)}, nil)
		if pixLens[r] < 0 {
			pb.AppendNull()
		} else {
			pb.Append(true)
			for e := range pixLens[r] {
				vb := pb.ValueBuilder().(*array.Int32Builder)
				if pixNull[[2]int{r, e}] {
					vb.AppendNull()
				} else {
					vb.Append(int32(100*r + e))
				}
			}
		}
		b.Field(3).(*array.StringBuilder).Append([]string{"a", "b"}[r%2])
	}
	writeRecord(t, path, b, 1024)
}

func TestParquetVectorColumns(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "vec.parquet")
	writeVectorParquet(t, p, []int{2, 2, 2}, nil)
	cols := []string{"x", "emb[0]", "emb[1]", "emb[2]", "pix[0]", "pix[1]"}
	want := &Table{Rows: 3, Cols: 6, Columns: cols,
		X: []float32{
			0, 0, 1, 2, 0, 1,
			1, 10, 11, 12, 100, 101,
			2, 20, 21, 22, 200, 201,
		},
		LabelName: "y", Labels: []int64{0, 1, 0}, Classes: []string{"a", "b"}}
	got, err := ReadParquet(p, ParquetOptions{Label: "y", BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// A model trained on the table names its columns v[i]; selecting them
	// (as prediction does) reads the vectors whole, in the chosen order.
	got, err = ReadParquet(p, ParquetOptions{Select: []string{"pix[0]", "pix[1]", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Columns, []string{"pix[0]", "pix[1]", "x"}) || !reflect.DeepEqual(got.X, []float32{0, 1, 0, 100, 101, 1, 200, 201, 2}) {
		t.Fatalf("selected by element names: %+v", got)
	}
	// So does the bare column name.
	if got, err = ReadParquet(p, ParquetOptions{Select: []string{"emb"}}); err != nil || got.Cols != 3 || got.X[3] != 10 {
		t.Fatalf("selected by vector name: %+v, %v", got, err)
	}
	// Part of a vector is an error, not a silent widening.
	if _, err := ReadParquet(p, ParquetOptions{Select: []string{"emb[0]", "x"}}); err == nil || !strings.Contains(err.Error(), "emb[2]") {
		t.Fatalf("partial vector: got %v", err)
	}
}

func TestParquetVectorErrors(t *testing.T) {
	dir := t.TempDir()
	// A list of the wrong length names the file, row and column.
	p := filepath.Join(dir, "ragged.parquet")
	writeVectorParquet(t, p, []int{2, 2, 3}, nil)
	_, err := ReadParquet(p, ParquetOptions{Label: "y"})
	if want := p + `: row 3: column "pix" holds 3 values; the column's lists have 2`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	// Null lists and null elements are missing values: an error by
	// default, the column mean with MissingMean.
	p = filepath.Join(dir, "nulls.parquet")
	writeVectorParquet(t, p, []int{2, -1, 2}, map[[2]int]bool{{2, 1}: true})
	_, err = ReadParquet(p, ParquetOptions{Label: "y"})
	if want := p + `: row 2: column "pix": null value`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	got, err := ReadParquet(p, ParquetOptions{Label: "y", Select: []string{"pix"}, Impute: MissingMean})
	if err != nil {
		t.Fatal(err)
	}
	// pix[0]: 0, missing, 200 → mean 100; pix[1]: 1, missing, missing → 1.
	if w := []float32{0, 1, 100, 1, 200, 1}; !reflect.DeepEqual(got.X, w) {
		t.Fatalf("imputed %v, want %v", got.X, w)
	}
	// Partitions must agree on list widths.
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o755)
	writeVectorParquet(t, filepath.Join(parts, "part-0.parquet"), []int{2, 2}, nil)
	writeVectorParquet(t, filepath.Join(parts, "part-1.parquet"), []int{3, 3}, nil)
	if _, err := ReadParquetDir(parts, ParquetOptions{Label: "y"}); err == nil || !strings.Contains(err.Error(), "part-1.parquet") {
		t.Fatalf("partitions with different widths: got %v", err)
	}
}
