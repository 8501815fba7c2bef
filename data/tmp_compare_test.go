package data

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestTmpCompareOldNew(t *testing.T) {
	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed.parquet")
	writeMixedParquet(t, mixed)
	vec := filepath.Join(dir, "vec.parquet")
	writeVectorParquet(t, vec, []int{2, 2, 2}, nil)
	vecNulls := filepath.Join(dir, "vecnulls.parquet")
	writeVectorParquet(t, vecNulls, []int{2, -1, 2}, map[[2]int]bool{{2, 1}: true})
	ragged := filepath.Join(dir, "ragged.parquet")
	writeVectorParquet(t, ragged, []int{2, 2, 3}, nil)
	empty0 := filepath.Join(dir, "empty0.parquet")
	writeVectorParquet(t, empty0, []int{0, 2, 2}, nil)
	empty1 := filepath.Join(dir, "empty1.parquet")
	writeVectorParquet(t, empty1, []int{2, 0, 2}, nil)
	allnull := filepath.Join(dir, "allnull.parquet")
	writeVectorParquet(t, allnull, []int{-1, -1}, nil)
	all := filepath.Join(dir, "all.parquet")
	writeAllTypesParquet(t, all)
	iris, _ := Iris()
	irisP := filepath.Join(dir, "iris.parquet")
	WriteParquet(irisP, iris)
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o755)
	for i, rows := range [][]int{{100, 101}, {0, 1, 2}, {50}} {
		WriteParquet(filepath.Join(parts, "part-0000"+string(rune('0'+(2-i)))+".parquet"), iris.Subset(rows))
	}
	nparts := filepath.Join(dir, "nparts")
	os.Mkdir(nparts, 0o755)
	writeMixedParquet(t, filepath.Join(nparts, "part-0.parquet"))
	writeMixedParquet(t, filepath.Join(nparts, "part-1.parquet"))
	// float label
	fl := filepath.Join(dir, "fl.parquet")
	{
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "l", Type: arrow.PrimitiveTypes.Float64}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 1e300, 3}, nil)
		b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.1, 0.30000000000000004, 2}, nil)
		writeRecord(t, fl, b, 1024)
		b.Release()
	}
	type c struct {
		path string
		dir  bool
		opts ParquetOptions
	}
	cases := []c{
		{irisP, false, ParquetOptions{Label: "species"}},
		{irisP, false, ParquetOptions{Label: "species", Select: []string{"petal_width", "sepal_length"}}},
		{irisP, false, ParquetOptions{Label: "sepal_width", LabelKind: LabelNumeric, Ignore: []string{"species"}}},
		{irisP, false, ParquetOptions{}},
		{irisP, false, ParquetOptions{Label: "species", Classes: []string{"setosa"}}},
		{irisP, false, ParquetOptions{Label: "species", Classes: []string{"a", "a"}}},
		{irisP, false, ParquetOptions{LabelKind: LabelNumeric}},
		{irisP, false, ParquetOptions{Label: "species", Select: []string{"species"}}},
		{mixed, false, ParquetOptions{Label: "kind", Ignore: []string{"name"}, Impute: MissingMean, BatchSize: 2}},
		{mixed, false, ParquetOptions{Label: "kind", Ignore: []string{"name"}}},
		{mixed, false, ParquetOptions{Label: "kind", Impute: MissingMean}},
		{mixed, false, ParquetOptions{Label: "name", LabelKind: LabelNumeric, Select: []string{"u8"}}},
		{mixed, false, ParquetOptions{Label: "u8", Select: []string{"flag"}}},
		{mixed, false, ParquetOptions{Label: "flag", Select: []string{"u8"}}},
		{mixed, false, ParquetOptions{Label: "kind", Classes: []string{"dog", "cat"}, Select: []string{"u8"}}},
		{mixed, false, ParquetOptions{Select: []string{"nope"}}},
		{mixed, false, ParquetOptions{Label: "kind", Ignore: []string{"name", "i32", "f64", "flag", "u8"}}},
		{vec, false, ParquetOptions{Label: "y", BatchSize: 2}},
		{vec, false, ParquetOptions{Label: "y", BatchSize: 1}},
		{vec, false, ParquetOptions{Select: []string{"pix[0]", "pix[1]", "x"}}},
		{vec, false, ParquetOptions{Select: []string{"emb"}}},
		{vec, false, ParquetOptions{Select: []string{"emb[0]", "x"}}},
		{vec, false, ParquetOptions{Label: "emb"}},
		{vecNulls, false, ParquetOptions{Label: "y"}},
		{vecNulls, false, ParquetOptions{Label: "y", Select: []string{"pix"}, Impute: MissingMean}},
		{vecNulls, false, ParquetOptions{Label: "y", Impute: MissingMean, BatchSize: 1}},
		{ragged, false, ParquetOptions{Label: "y"}},
		{empty1, false, ParquetOptions{Label: "y"}},
		{empty0, false, ParquetOptions{Label: "y"}},
		{allnull, false, ParquetOptions{Label: "y", Impute: MissingMean}},
		{all, false, ParquetOptions{Select: []string{"f32", "f64", "i8", "i64", "u32", "flag"}, Impute: MissingMean}},
		{all, false, ParquetOptions{Label: "dict", Select: []string{"emb", "dl"}, Impute: MissingMean}},
		{all, false, ParquetOptions{Label: "s", Select: []string{"i8"}}},
		{all, false, ParquetOptions{Label: "ls", Select: []string{"i8"}}},
		{all, false, ParquetOptions{Label: "raw", Select: []string{"i8"}}},
		{all, false, ParquetOptions{Select: []string{"raw"}}},
		{all, false, ParquetOptions{Label: "i8", LabelKind: LabelNumeric, Select: []string{"u32"}}},
		{fl, false, ParquetOptions{Label: "l"}},
		{fl, false, ParquetOptions{Label: "l", LabelKind: LabelNumeric}},
		{parts, true, ParquetOptions{Label: "species"}},
		{parts, true, ParquetOptions{Label: "species", Classes: []string{"setosa", "versicolor"}}},
		{nparts, true, ParquetOptions{Label: "kind", Ignore: []string{"name"}}},
		{nparts, true, ParquetOptions{Label: "kind", Ignore: []string{"name"}, Impute: MissingMean}},
		{nparts, true, ParquetOptions{Label: "kind", Select: []string{"u8"}, Classes: []string{"dog", "cat"}}},
	}
	for _, cs := range cases {
		read := func() (*Table, error) {
			if cs.dir {
				return ReadParquetDir(cs.path, cs.opts)
			}
			return ReadParquet(cs.path, cs.opts)
		}
		useFrame = false
		want, werr := read()
		useFrame = true
		got, gerr := read()
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Errorf("%s %+v:\n old %v\n new %v", filepath.Base(cs.path), cs.opts, werr, gerr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s %+v:\n old %+v\n new %+v", filepath.Base(cs.path), cs.opts, want, got)
		}
	}
}
