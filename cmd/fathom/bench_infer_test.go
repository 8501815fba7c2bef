package main

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/bench"
)

func TestParseBatchList(t *testing.T) {
	for _, test := range []struct {
		in   string
		want []int
		err  bool
	}{
		{"1,64,10000", []int{1, 64, 10000}, false},
		{" 8 ", []int{8}, false},
		{"0", nil, true},
		{"1,x", nil, true},
		{"", nil, true},
	} {
		got, err := parseBatchList(test.in)
		if (err != nil) != test.err {
			t.Errorf("parseBatchList(%q): error %v, want error %v", test.in, err, test.err)
			continue
		}
		if !test.err && (len(got) != len(test.want) || got[0] != test.want[0] || got[len(got)-1] != test.want[len(test.want)-1]) {
			t.Errorf("parseBatchList(%q) = %v, want %v", test.in, got, test.want)
		}
	}
}

// TestBenchInfer trains the MLP recipe for one epoch and checks that
// `fathom bench infer` reports every batch size over all 10,000 test rows
// with the trained model's accuracy.
func TestBenchInfer(t *testing.T) {
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
	out, err := captureStdout(t, true, func() error {
		return runBenchInfer(filepath.Join(dir, "model.safetensors"), []int{1, 64, 10000}, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), out)
	}
	for i, want := range []int{1, 64, 10000} {
		var r bench.InferBatch
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if r.Batch != want || r.Rows != 10000 || r.RowsPerSec <= 0 || r.Accuracy < 0.8 {
			t.Errorf("line %d: %+v", i, r)
		}
	}
}
