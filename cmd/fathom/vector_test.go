package main

import (
	"context"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/fathom-ml/fathom/data"
)

// TestTrainPredictParquetVectors trains on Parquet data whose features are
// one list<double> column (as PyArrow stores an embedding or an image) and
// predicts from the same file: the model's columns features[0..3] select
// the list whole.
func TestTrainPredictParquetVectors(t *testing.T) {
	dir := t.TempDir()
	iris, err := data.Iris()
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "features", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
		{Name: "species", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	for r := range iris.Rows {
		lb.Append(true)
		for _, v := range iris.Row(r) {
			lb.ValueBuilder().(*array.Float64Builder).Append(float64(v))
		}
		b.Field(1).(*array.StringBuilder).Append(iris.Classes[iris.Labels[r]])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	pq := filepath.Join(dir, "iris.parquet")
	f, err := os.Create(pq)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // WriteTable closes it too; a second Close is harmless
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	if err := pqarrow.WriteTable(tbl, f, 1024, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "train.yaml")
	if err := os.WriteFile(cfg, []byte(`
output: {dir: `+filepath.Join(dir, "run")+`}
data: {source: parquet, train: iris.parquet, label: species, test_fraction: 0.3, standardize: true}
model:
  - {type: linear, out: 16}
  - {type: relu}
  - {type: linear, out: 3}
loss: cross_entropy
optimizer: {type: adam, lr: 0.01}
epochs: 60
batch_size: 16
seed: 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := captureStdout(t, true, func() error { return runTrain(context.Background(), cfg, nil, true, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	res := lastJSON(t, out)
	if acc := res["test_accuracy"].(float64); acc < 0.9 {
		t.Fatalf("test accuracy %v on Iris as a vector column", acc)
	}
	predPath := filepath.Join(dir, "pred.csv")
	if _, err := captureStdout(t, false, func() error {
		return runPredict(res["model_path"].(string), pq, predPath, 64, io.Discard, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
	pf, err := os.Open(predPath)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	rows, err := csv.NewReader(pf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != iris.Rows+1 || rows[0][0] != "prediction" {
		t.Fatalf("%d prediction rows, header %v", len(rows)-1, rows[0])
	}
	correct := 0
	for r, row := range rows[1:] {
		if row[0] == iris.Classes[iris.Labels[r]] {
			correct++
		}
	}
	if acc := float64(correct) / float64(iris.Rows); acc < 0.9 {
		t.Fatalf("predictions from the Parquet file: accuracy %v over all rows", acc)
	}
}
