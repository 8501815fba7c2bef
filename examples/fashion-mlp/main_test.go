package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/tensor"
)

// tinyImages is a stand-in for Fashion-MNIST: a few random images in 10
// classes, so the tests need no data set.
func tinyImages(split string) (*data.Table, error) {
	rows := 128
	if split == "t10k" {
		rows = 40
	}
	rng := tensor.NewRNG(3)
	t := &data.Table{Rows: rows, Cols: 784, X: make([]float32, rows*784), Labels: make([]int64, rows),
		FeatureShape: []int{28, 28}, Classes: data.FashionMNISTClasses()}
	for i := range t.X {
		t.X[i] = rng.Float32()
	}
	for i := range t.Labels {
		t.Labels[i] = int64(i % 10)
	}
	return t, nil
}

func runOnce(t *testing.T, o options) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	o.stdout, o.stderr = &out, &errb
	if o.load == nil {
		o.load = tinyImages
	}
	if err := run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String()
}

func TestWritesModelIntoDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "fashion-mlp-go")
	path := filepath.Join(dir, modelName)

	out, errs := runOnce(t, options{dir: dir, epochs: 1})
	if !strings.Contains(out, "model written to "+path) {
		t.Errorf("output:\n%s", out)
	}
	if errs != "" {
		t.Errorf("first run wrote to stderr: %q", errs)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != modelName {
		t.Errorf("files in %s: %v, want only %s", dir, entries, modelName)
	}
	m, err := modelfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	test, _ := tinyImages("t10k")
	if _, err := m.Evaluate(test, 100); err != nil {
		t.Errorf("evaluating the written model: %v", err)
	}

	// A rerun trains again and says it replaces the model.
	_, errs = runOnce(t, options{dir: dir, epochs: 1})
	if !strings.Contains(errs, "replacing "+path) {
		t.Errorf("second run's stderr: %q", errs)
	}
}

func TestSubsetOfFashionMNIST(t *testing.T) {
	if _, err := os.Stat(data.FashionMNISTDir()); err != nil {
		t.Skipf("no Fashion-MNIST (apt-get install dataset-fashion-mnist or set FATHOM_DATA): %v", err)
	}
	if testing.Short() {
		t.Skip("reads Fashion-MNIST")
	}
	out, _ := runOnce(t, options{dir: t.TempDir(), epochs: 1, trainRows: 256, testRows: 100, load: data.LoadFashionMNIST})
	if !strings.Contains(out, "test accuracy") {
		t.Errorf("output:\n%s", out)
	}
}
