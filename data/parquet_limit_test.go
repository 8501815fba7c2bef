package data

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestParquetRowLimit: a file whose footer declares more rows than the
// memory limit allows is refused before its data is read, through a Frame
// and through a Table (the limit from the environment).
func TestParquetRowLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rows.parquet")
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "y", Type: arrow.PrimitiveTypes.Float32}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 1000 {
		b.Field(0).(*array.Float64Builder).Append(float64(i))
		b.Field(1).(*array.Float32Builder).Append(float32(i))
	}
	writeRecord(t, p, b, 256)
	// 1000 rows of 8 + 4 bytes.
	if _, err := ReadParquetFrame(p, ParquetFrameOptions{MaxBytes: 11999}); err == nil ||
		!strings.Contains(err.Error(), p+": parquet: its footer declares 1000 rows, which (with earlier files) need about 12000 bytes of memory, over the limit of 11999 bytes") {
		t.Fatalf("got %v", err)
	}
	if _, err := ReadParquetFrame(p, ParquetFrameOptions{MaxBytes: 12000}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(MaxInputBytesEnv, "8KiB")
	if _, err := ReadParquet(p, ParquetOptions{}); err == nil || !strings.Contains(err.Error(), "over the limit of 8192 bytes") {
		t.Fatalf("got %v", err)
	}
}

// TestParquetRejectsNonFinite: NaN and infinities in Parquet feature and
// label columns are refused with the file and row.
func TestParquetRejectsNonFinite(t *testing.T) {
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		p := filepath.Join(t.TempDir(), "nf.parquet")
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "y", Type: arrow.PrimitiveTypes.Float32}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, v}, nil)
		b.Field(1).(*array.Float32Builder).AppendValues([]float32{1, 2}, nil)
		writeRecord(t, p, b, 1024)
		b.Release()
		if _, err := ReadParquet(p, ParquetOptions{Label: "y", LabelKind: LabelNumeric}); err == nil ||
			!strings.Contains(err.Error(), p+`: row 2: column "x"`) || !strings.Contains(err.Error(), "is not a finite number") {
			t.Errorf("%v as a feature: got %v", v, err)
		}
		if _, err := ReadParquet(p, ParquetOptions{Label: "x", LabelKind: LabelNumeric}); err == nil ||
			!strings.Contains(err.Error(), p+`: row 2: label column "x"`) || !strings.Contains(err.Error(), "is not a finite number") {
			t.Errorf("%v as a label: got %v", v, err)
		}
	}
}
