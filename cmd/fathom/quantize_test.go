package main

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/bench"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/train/job"
)

// trainIrisModel trains examples/iris.yaml into a temp dir and returns the
// model file.
func trainIrisModel(t *testing.T) string {
	t.Helper()
	cfg, err := job.Load("../../examples/iris.yaml", []string{"output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := job.Run(context.Background(), cfg, job.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.ModelPath
}

// TestQuantizeIris quantizes a trained model (dynamic, then static on the
// Iris data), checks the files load with int8 layers and score within a
// point of the float model, and that bad calibration data is refused.
func TestQuantizeIris(t *testing.T) {
	model := trainIrisModel(t)
	dir := t.TempDir()
	score := func(path string) float64 {
		t.Helper()
		out, err := captureStdout(t, true, func() error {
			return runEval(path, evalOptions{source: "../../examples/iris.yaml", batch: 100}, io.Discard, io.Discard)
		})
		if err != nil {
			t.Fatal(err)
		}
		return lastJSON(t, out)["accuracy"].(float64)
	}
	base := score(model)
	for _, o := range []quantizeOptions{
		{mode: "dynamic", observer: "minmax", percentile: 99.99, rows: 1000},
		{mode: "static", calibrate: "iris", observer: "minmax", percentile: 99.99, rows: 1000},
		{mode: "static", calibrate: "iris", observer: "percentile", percentile: 99, symmetric: true, rows: 50},
	} {
		o.out = filepath.Join(dir, o.mode+o.observer+".safetensors")
		var stderr strings.Builder
		if err := runQuantize(model, o, io.Discard, &stderr); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr.String(), "quantized to int8: 2 layers") {
			t.Errorf("report %q", stderr.String())
		}
		m, err := modelfile.Load(o.out)
		if err != nil {
			t.Fatal(err)
		}
		ql, ok := m.Net.At(0).(*nn.QLinear)
		if !ok {
			t.Fatalf("layer 0 of %s is %T", o.out, m.Net.At(0))
		}
		if static := ql.InputScale.Float32s()[0] != 0; static != (o.mode == "static") {
			t.Errorf("%s: static=%v", o.mode, static)
		}
		if _, err := m.PredictRows([]float32{5.1, 3.5, 1.4, 0.2, 6.7, 3.0, 5.2, 2.3}, 2); err != nil {
			t.Fatal(err)
		}
		if acc := score(o.out); math.Abs(acc-base) > 0.05 {
			t.Errorf("%+v: accuracy %.4f, float %.4f", o, acc, base)
		}
	}

	// Calibration data without the model's columns; flags that do not fit.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o    quantizeOptions
		want string
	}{
		{quantizeOptions{mode: "static", calibrate: bad, percentile: 99.99, rows: 10}, "--calibrate " + bad},
		{quantizeOptions{mode: "static", percentile: 99.99, rows: 10}, "needs --calibrate"},
		{quantizeOptions{mode: "dynamic", calibrate: "iris", percentile: 99.99, rows: 10}, "static only"},
		{quantizeOptions{mode: "int4", percentile: 99.99, rows: 10}, "int4"},
		{quantizeOptions{mode: "static", calibrate: "iris", observer: "kl", percentile: 99.99, rows: 10}, "kl"},
	} {
		c.o.out = filepath.Join(dir, "never.safetensors")
		err := runQuantize(model, c.o, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.o, err, c.want)
		}
		if _, serr := os.Stat(c.o.out); serr == nil {
			t.Errorf("%+v wrote the output", c.o)
		}
	}
}

// TestQuantizeFashionMLP: the MLP recipe trained for one epoch, quantized
// (dynamic), loads in `fathom bench infer` and scores within a point of the
// float model on the 10k test images.
func TestQuantizeFashionMLP(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on Fashion-MNIST; skipped with -short")
	}
	if reason := bench.FashionMNISTMissing(); reason != "" {
		t.Skip(reason)
	}
	dir := t.TempDir()
	if _, err := captureStdout(t, true, func() error {
		return runTrain(context.Background(), "../../examples/fashion-mlp.yaml", []string{"epochs=1", "output.dir=" + dir}, true, io.Discard)
	}); err != nil {
		t.Fatal(err)
	}
	model, q := filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "int8.safetensors")
	if err := runQuantize(model, quantizeOptions{out: q, mode: "dynamic", percentile: 99.99, rows: 1}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	acc := func(path string) float64 {
		out, err := captureStdout(t, true, func() error { return runBenchInfer(path, []int{64}, 1) })
		if err != nil {
			t.Fatal(err)
		}
		return lastJSON(t, out)["test_accuracy"].(float64)
	}
	f, i := acc(model), acc(q)
	if math.Abs(f-i) > 0.01 || f < 0.8 {
		t.Errorf("accuracy float32 %.4f, int8 %.4f", f, i)
	}
	if fileSize(q)*3 > fileSize(model) {
		t.Errorf("int8 file %d bytes, float %d: want under a third", fileSize(q), fileSize(model))
	}
}
