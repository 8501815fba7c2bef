package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/tensor"
)

// tinyImages is a stand-in for Fashion-MNIST: a few random 28x28 images
// in 10 classes, so the tests need no data set and run in a second.
func tinyImages(split string) (*data.Table, error) {
	rows := 96
	if split == "t10k" {
		rows = 32
	}
	rng := tensor.NewRNG(7)
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

// runOnce runs the program's logic and returns its stdout and stderr.
func runOnce(t *testing.T, ctx context.Context, o options) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	o.stdout, o.stderr = &out, &errb
	if o.load == nil {
		o.load = tinyImages
	}
	err = run(ctx, o)
	return out.String(), errb.String(), err
}

func TestWritesIntoDirAndSaysWhenResuming(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "fashion-cnn-go")
	ctx := context.Background()
	ckpt := filepath.Join(dir, checkpointName)

	// First run: trains, leaves only its checkpoint, in dir.
	out1, errs, err := runOnce(t, ctx, options{dir: dir, epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if errs != "" {
		t.Errorf("first run wrote to stderr: %q", errs)
	}
	if !strings.Contains(out1, "test accuracy") {
		t.Errorf("first run printed no accuracy:\n%s", out1)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != checkpointName {
		t.Errorf("files in %s: %v, want only %s", dir, entries, checkpointName)
	}

	// Second run, same epochs: finished; says so and how to start over.
	out2, errs, err := runOnce(t, ctx, options{dir: dir, epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ckpt, "finished run", "-fresh", "-epochs 2"} {
		if !strings.Contains(errs, want) {
			t.Errorf("second run's stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out2, "batch") {
		t.Errorf("second run trained again:\n%s", out2)
	}
	if last(out1) != last(out2) {
		t.Errorf("second run reports %q, the first %q", last(out2), last(out1))
	}

	// More epochs: resumes at epoch 2 and says so.
	out3, errs, err := runOnce(t, ctx, options{dir: dir, epochs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs, "resuming from "+ckpt+" at epoch 2 of 2") {
		t.Errorf("third run's stderr: %q, want it to say it resumes at epoch 2", errs)
	}
	if !strings.Contains(out3, "after 2 epochs") {
		t.Errorf("third run:\n%s", out3)
	}

	// -fresh: deletes the checkpoint and trains from the start.
	out4, errs, err := runOnce(t, ctx, options{dir: dir, epochs: 1, fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs, "-fresh: deleted "+ckpt) {
		t.Errorf("fresh run's stderr: %q", errs)
	}
	if last(out4) != last(out1) {
		t.Errorf("fresh run reports %q, a first run %q", last(out4), last(out1))
	}
}

func TestInterruptedRunResumes(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // as if Ctrl-C came at once
	_, _, err := runOnce(t, ctx, options{dir: dir, epochs: 1})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("interrupted run: %v", err)
	}
	_, errs, err := runOnce(t, context.Background(), options{dir: dir, epochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs, "resuming from") {
		t.Errorf("run after the interrupt did not say it resumes: %q", errs)
	}
}

func TestSubsetOfFashionMNIST(t *testing.T) {
	if _, err := os.Stat(data.FashionMNISTDir()); err != nil {
		t.Skipf("no Fashion-MNIST (apt-get install dataset-fashion-mnist or set FATHOM_DATA): %v", err)
	}
	if testing.Short() {
		t.Skip("reads Fashion-MNIST")
	}
	out, _, err := runOnce(t, context.Background(), options{dir: t.TempDir(), epochs: 1, trainRows: 128, testRows: 100,
		load: data.LoadFashionMNIST})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "test accuracy") {
		t.Errorf("output:\n%s", out)
	}
}

// last returns the last line of s without its timing in parentheses.
func last(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line, _, _ := strings.Cut(lines[len(lines)-1], " (")
	return line
}
