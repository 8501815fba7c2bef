package main

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
)

// TestImputeMeanSavedWithModel: a model trained with impute: mean fills
// missing values at predict and eval with its training means; without it
// the errors speak of the config key, not of package data's identifiers.
func TestImputeMeanSavedWithModel(t *testing.T) {
	dir := t.TempDir()
	csvText := "x1,x2,y\n1,2,3\n2,,4\n3,4,5\n4,1,2\n5,NA,6\n6,3,1\n7,2,2\n8,5,9\n9,1,3\n10,2,4\n"
	if err := os.WriteFile(filepath.Join(dir, "m.csv"), []byte(csvText), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without impute: mean the hint names the config key.
	cfg := writeLinearConfig(t, dir, "m.csv", "")
	err := runTrain(context.Background(), cfg, nil, true, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "impute: mean") || strings.Contains(err.Error(), "MissingMean") {
		t.Errorf("training without impute: %v, want a hint naming impute: mean", err)
	}
	cfg = writeLinearConfig(t, dir, "m.csv", ", impute: mean")
	if _, err := captureStdout(t, false, func() error { return runTrain(context.Background(), cfg, nil, true, io.Discard) }); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "run", "model.safetensors")
	m, err := modelfile.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{5.5, 20.0 / 8}
	if len(m.Impute) != 2 || math.Abs(m.Impute[0]-want[0]) > 1e-6 || math.Abs(m.Impute[1]-want[1]) > 1e-6 {
		t.Fatalf("imputation means %v, want %v", m.Impute, want)
	}
	out := filepath.Join(dir, "pred.csv")
	if _, err := captureStdout(t, false, func() error { return runPredict(model, filepath.Join(dir, "m.csv"), out, 100, io.Discard, io.Discard) }); err != nil {
		t.Fatalf("predict on the training file: %v", err)
	}
	// Row 2 (x2 missing) predicts as x2 = the training mean.
	filled := &data.Table{Rows: 1, Cols: 2, X: []float32{2, float32(want[1])}, Columns: []string{"x1", "x2"}}
	p, err := m.Predict(filled, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := readCSVRecords(t, out)[2][0]; got != strconv.FormatFloat(float64(p.Values[0]), 'g', -1, 32) {
		t.Errorf("row with x2 missing predicts %s, with x2 = training mean %v", got, p.Values[0])
	}
	if _, err := captureStdout(t, false, func() error {
		return runEval(model, evalOptions{source: filepath.Join(dir, "m.csv"), batch: 100}, io.Discard, io.Discard)
	}); err != nil {
		t.Errorf("eval on the training file: %v", err)
	}
	// The same from Parquet, x2 null in its second row.
	pq := filepath.Join(dir, "m.parquet")
	writeNullableParquet(t, pq, []float64{1, 2, 3}, []float64{2, 0, 4}, []bool{true, false, true})
	pqOut := filepath.Join(dir, "pq.csv")
	if _, err := captureStdout(t, false, func() error { return runPredict(model, pq, pqOut, 100, io.Discard, io.Discard) }); err != nil {
		t.Fatalf("predict on Parquet with a null: %v", err)
	}
	if got := readCSVRecords(t, pqOut)[2][0]; got != strconv.FormatFloat(float64(p.Values[0]), 'g', -1, 32) {
		t.Errorf("Parquet row with x2 null predicts %s, with x2 = training mean %v", got, p.Values[0])
	}
	// A model trained without imputation says how to get it.
	lin := trainRegression(t, filepath.Join(dir, "lin"))
	err = runPredict(lin, filepath.Join(dir, "m.csv"), filepath.Join(dir, "p2.csv"), 100, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "impute: mean") || strings.Contains(err.Error(), "MissingMean") {
		t.Errorf("predict with missing values: %v, want a hint naming impute: mean", err)
	}
}

// TestInputColumnsChecked: the model file records its feature count and
// names; an input with many unused columns gives a warning, one without
// a needed column an error naming it.
func TestInputColumnsChecked(t *testing.T) {
	dir := t.TempDir()
	model := trainRegression(t, filepath.Join(dir, "run"))
	a, _, err := modelfile.ReadModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if a.Features != 2 || !slices.Equal(a.Columns, []string{"x1", "x2"}) {
		t.Errorf("model records %d features %v, want 2 [x1 x2]", a.Features, a.Columns)
	}
	wide := filepath.Join(dir, "wide.csv")
	if err := os.WriteFile(wide, []byte("a,b,x1,c,x2,d,e\n0,0,1,0,2,0,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if _, err := captureStdout(t, false, func() error { return runPredict(model, wide, "", 100, io.Discard, &stderr) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "5 columns the model does not use (a, b, c, d, e)") {
		t.Errorf("stderr %q, want a warning about 5 unused columns", stderr.String())
	}
	narrow := filepath.Join(dir, "narrow.csv")
	if err := os.WriteFile(narrow, []byte("x1,z\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runPredict(model, narrow, "", 100, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"x2"`) {
		t.Errorf("input without x2: %v, want an error naming x2", err)
	}
}

// writeNullableParquet writes columns x1 and x2 (x2 valid where valid says)
// to a Parquet file.
func writeNullableParquet(t *testing.T, path string, x1, x2 []float64, valid []bool) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "x1", Type: arrow.PrimitiveTypes.Float64},
		{Name: "x2", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues(x1, nil)
	b.Field(1).(*array.Float64Builder).AppendValues(x2, valid)
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1024, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}
