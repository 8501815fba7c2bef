package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
)

// irisIndexed writes the embedded Iris data with the species as class
// indices 0..2 (the stand-ins have no StringIndexer).
func irisIndexed(t *testing.T, dir string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(string(data.IrisCSV()))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]string{}
	recs[0][4] = "label"
	for _, r := range recs[1:] {
		if _, ok := classes[r[4]]; !ok {
			classes[r[4]] = fmt.Sprint(len(classes))
		}
		r[4] = classes[r[4]]
	}
	path := filepath.Join(dir, "iris.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.WriteAll(recs)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMLFitPredictEval(t *testing.T) {
	dir := t.TempDir()
	irisIndexed(t, dir)
	config := filepath.Join(dir, "iris.yaml")
	os.WriteFile(config, []byte(`data:
  train: iris.csv
  testFraction: 0.3
  seed: 1
pipeline:
  - {type: cmdTestAssembler, params: {inputCols: [sepal_length, sepal_width, petal_length, petal_width]}}
  - {type: cmdTestCentroid, name: nc}
evaluator: {type: cmdTestAccuracy}
tuning:
  trainValidationSplit: {trainRatio: 0.7}
  grid: {nc.scale: [0.01, 1, 10]}
`), 0o644)
	outDir := filepath.Join(dir, "out")
	out, err := execute(t, "ml", "fit", config, "--set", "output.dir="+outDir, "--json", "--quiet")
	if err != nil {
		t.Fatalf("ml fit: %v", err)
	}
	res := lastJSON(t, out)
	metrics, _ := res["metrics"].(map[string]any)
	acc, _ := metrics["accuracy"].(float64)
	if acc < 0.85 || res["model_path"] != filepath.Join(outDir, "model.safetensors") || res["fit_seconds"] == nil {
		t.Fatalf("ml fit --json: %s", out)
	}
	if _, err := os.Stat(filepath.Join(outDir, "metrics.json")); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(outDir, "model.safetensors")

	// predict, CSV and Parquet.
	for _, name := range []string{"pred.csv", "pred.parquet"} {
		p := filepath.Join(dir, name)
		if _, err := execute(t, "ml", "predict", model, filepath.Join(dir, "iris.csv"), "--out", p); err != nil {
			t.Fatalf("ml predict: %v", err)
		}
		var f *data.Frame
		if strings.HasSuffix(name, ".csv") {
			f, err = data.ReadCSVFrame(p, data.CSVFrameOptions{})
		} else {
			f, err = data.ReadParquetFrame(p, data.ParquetFrameOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.Names(), []string{"prediction", "probability_0", "probability_1", "probability_2"}) || f.Len() != 150 {
			t.Fatalf("%s: columns %v, %d rows", name, f.Names(), f.Len())
		}
		p0, _ := f.Float64s("probability_0")
		p1, _ := f.Float64s("probability_1")
		p2, _ := f.Float64s("probability_2")
		if s := p0[7] + p1[7] + p2[7]; math.Abs(s-1) > 1e-12 {
			t.Fatalf("%s: probabilities sum to %g", name, s)
		}
	}

	// --keep copies input columns (an id to join on) in front.
	kept := filepath.Join(dir, "kept.csv")
	if _, err := execute(t, "ml", "predict", model, filepath.Join(dir, "iris.csv"), "--keep", "sepal_width,sepal_length", "--out", kept); err != nil {
		t.Fatalf("ml predict --keep: %v", err)
	}
	kf, err := data.ReadCSVFrame(kept, data.CSVFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := kf.Names(); len(names) < 3 || names[0] != "sepal_width" || names[1] != "sepal_length" || names[2] != "prediction" {
		t.Fatalf("--keep: columns %v", names)
	}
	in, err := data.ReadCSVFrame(filepath.Join(dir, "iris.csv"), data.CSVFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := in.Float64s("sepal_length")
	if got, _ := kf.Float64s("sepal_length"); !slices.Equal(got, want) {
		t.Fatalf("--keep: sepal_length %v, input %v", got[:3], want[:3])
	}

	// eval, on all rows.
	out, err = execute(t, "ml", "eval", model, filepath.Join(dir, "iris.csv"), "--evaluator", "cmdTestAccuracy", "--json")
	if err != nil {
		t.Fatalf("ml eval: %v", err)
	}
	ev := lastJSON(t, out)
	if m := ev["metrics"].(map[string]any); m["accuracy"].(float64) < 0.85 || ev["rows"].(float64) != 150 {
		t.Fatalf("ml eval: %s", out)
	}

	// Errors.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ml", "fit", config, "--set", "pipeline.1.params.scal=1"}, `unknown key "scal" in pipeline[1].params (cmdTestCentroid)`},
		{[]string{"ml", "predict", model, filepath.Join(dir, "iris.csv")}, "--out FILE is required"},
		{[]string{"ml", "predict", model, filepath.Join(dir, "iris.csv"), "--out", filepath.Join(dir, "p.txt")}, "unknown output format"},
		{[]string{"ml", "predict", model, filepath.Join(dir, "iris.csv"), "--keep", "nope", "--out", filepath.Join(dir, "p.csv")}, "--keep nope: no such input column"},
		{[]string{"ml", "eval", model, filepath.Join(dir, "iris.csv"), "--evaluator", "cmdTestAccuracy", "--param", "metric=f1"}, `unknown key "metric"`},
		{[]string{"ml", "eval", config, filepath.Join(dir, "iris.csv")}, "ml: load"},
		{[]string{"bench", "ml", "nope"}, `unknown algorithm "nope" (want one of gnb, kmeans, linsvc, logreg, mlp, pca)`},
	} {
		_, err := execute(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
