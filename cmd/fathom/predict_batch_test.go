package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/infer"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// writeTestPartitions writes nparts Parquet partitions of rows rows each
// (id, and a vector column v of width 8) under dir/k=<k>/.
func writeTestPartitions(t *testing.T, dir string, nparts, rows int) {
	t.Helper()
	for k := range nparts {
		id := make([]int64, rows)
		v := make([]float32, rows*8)
		for i := range rows {
			id[i] = int64(k*rows + i)
			for e := range 8 {
				v[i*8+e] = float32((k*rows+i)%17+e) / 10
			}
		}
		f, err := data.NewFrame(data.NewColumn("id", id, nil), data.NewVectorColumn32("v", 8, v, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("k=%d", k), "part-0.parquet")
		os.MkdirAll(filepath.Dir(path), 0o755)
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := data.NewParquetFrameWriter(fh, f, data.ParquetWriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// writeTestNet saves a small classifier over the vector column v.
func writeTestNet(t *testing.T, path string) {
	t.Helper()
	spec := nn.Spec{Input: []int{8}, Layers: []nn.LayerSpec{{Type: "linear", Out: 16}, {Type: "relu"}, {Type: "linear", Out: 3}}}
	net, _, err := spec.Build(tensor.NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]string, 8)
	for e := range cols {
		cols[e] = fmt.Sprintf("v[%d]", e)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"x", "y", "z"}, Columns: cols}
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
}

// TestBatchPredictCommand: fathom predict over partitions in one process:
// the JSON summary on stdout, one output per partition with the kept and
// key columns, and --out naming a file refused.
func TestBatchPredictCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	writeTestPartitions(t, in, 3, 50)
	model := filepath.Join(dir, "model.safetensors")
	writeTestNet(t, model)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	b := batchPredictFlags{keep: []string{"id", "k"}, maxErrors: 0, batchSize: 16}
	if err := runBatchPredict(context.Background(), model, []string{in}, out, b, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var sum infer.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if sum.Rows != 150 || sum.Partitions != 3 || sum.Errors != 0 {
		t.Fatalf("summary %+v", sum)
	}
	f, err := data.ReadParquetFrame(filepath.Join(out, "k=2", "part-0.parquet"), data.ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Names(), ","); got != "id,k,prediction,prob_x,prob_y,prob_z" || f.Len() != 50 {
		t.Fatalf("output columns %s, %d rows", got, f.Len())
	}
	err = runBatchPredict(context.Background(), model, []string{in}, filepath.Join(dir, "p.parquet"), b, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "names a file") {
		t.Fatalf("--out p.parquet: err = %v", err)
	}
}
