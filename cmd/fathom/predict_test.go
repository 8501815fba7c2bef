package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/train/job"
)

// TestPredictMatchesTraining trains through the same code path as `fathom
// train`, then checks that `fathom predict` on the saved file prints the
// trained model's predictions exactly.
func TestPredictMatchesTraining(t *testing.T) {
	dir := t.TempDir()
	cfg, err := job.Load("../../examples/iris.yaml", []string{"epochs=10", "output.dir=" + dir})
	if err != nil {
		t.Fatal(err)
	}
	res, err := job.Run(context.Background(), cfg, job.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "iris.csv")
	if err := os.WriteFile(input, data.IrisCSV(), 0o644); err != nil {
		t.Fatal(err)
	}
	iris, _ := data.Iris()
	want, err := res.Model.Predict(iris, 16)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	if err := runPredict(res.ModelPath, input, "", 1024, &buf, io.Discard); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 151 || !reflect.DeepEqual(recs[0], []string{"prediction", "prob_setosa", "prob_versicolor", "prob_virginica"}) {
		t.Fatalf("header %v, %d rows", recs[0], len(recs))
	}
	for i, rec := range recs[1:] {
		if rec[0] != want.Classes[want.Class[i]] {
			t.Fatalf("row %d: class %s, trained model says %s", i+1, rec[0], want.Classes[want.Class[i]])
		}
		for j := range 3 {
			v, err := strconv.ParseFloat(rec[j+1], 32)
			if err != nil || float32(v) != want.Probs[3*i+j] {
				t.Fatalf("row %d: probability %s, trained model says %v", i+1, rec[j+1], want.Probs[3*i+j])
			}
		}
	}
	// Parquet output holds the same predictions.
	pq := filepath.Join(dir, "pred.parquet")
	if _, err := captureStdout(t, false, func() error { return runPredict(res.ModelPath, input, pq, 64, io.Discard, io.Discard) }); err != nil {
		t.Fatal(err)
	}
	tab, err := data.ReadParquet(pq, data.ParquetOptions{Label: "prediction", Classes: want.Classes})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tab.X, want.Probs) || !reflect.DeepEqual(tab.Labels, want.Class) {
		t.Fatal("Parquet predictions differ")
	}
	// fathom eval on the config scores the same test rows as training did.
	out, err := captureStdout(t, true, func() error {
		return runEval(res.ModelPath, evalOptions{source: "../../examples/iris.yaml", batch: 100}, io.Discard, io.Discard)
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := lastJSON(t, out)
	if ev["accuracy"] != res.Test.Accuracy || int(ev["rows"].(float64)) != res.Test.Samples {
		t.Fatalf("eval %v, training reported %+v", ev, res.Test)
	}
}

// TestPredictJSONLines checks the one-line-per-row JSON output.
func TestPredictJSONLines(t *testing.T) {
	dir := t.TempDir()
	if _, err := captureStdout(t, true, func() error {
		return runTrain(context.Background(), "../../examples/iris.yaml", []string{"epochs=3", "output.dir=" + dir}, true, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "iris.csv")
	os.WriteFile(input, data.IrisCSV(), 0o644)
	out, err := captureStdout(t, true, func() error {
		return runPredict(filepath.Join(dir, "model.safetensors"), input, "", 100, io.Discard, io.Discard)
	})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var line struct {
			Row           int                `json:"row"`
			Prediction    string             `json:"prediction"`
			Probabilities map[string]float64 `json:"probabilities"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Row != n+1 || len(line.Probabilities) != 3 {
			t.Fatalf("line %d: %s (%v)", n+1, sc.Text(), err)
		}
		n++
	}
	if n != 150 {
		t.Fatalf("%d lines, want 150", n)
	}
}
