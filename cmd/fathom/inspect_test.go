package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/safetensors"
)

func TestInspect(t *testing.T) {
	model := trainIrisModel(t)
	dir := t.TempDir()
	q := filepath.Join(dir, "q.safetensors")
	if err := runQuantize(model, quantizeOptions{out: q, mode: "dynamic", percentile: 99.99, rows: 1}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := runInspect(q, &text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"network", "QLinear(in=4, out=16, bias=true, int8 dynamic)", "by dtype: F32 42, I8 112"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, text.String())
		}
	}
	out, err := captureStdout(t, true, func() error { return runInspect(model, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	r := lastJSON(t, out)
	// 4·16 + 16 + 16·3 + 3 parameters (examples/iris.yaml).
	if r["kind"] != "network" || r["params"].(float64) != 131 || r["bytes"].(float64) != 4*131 || len(r["tensors"].([]any)) != 4 {
		t.Errorf("inspect --json of the float model: %v", r)
	}

	// Any safetensors file: sparsity counts zeros (and −0) per tensor.
	plain := filepath.Join(dir, "plain.safetensors")
	if err := safetensors.WriteFile(plain, []safetensors.Entry{
		safetensors.F32("w", []int{2, 2}, []float32{0, 1, float32(negZero()), 2}),
		{Name: "q", DType: "I8", Shape: []int{4}, Data: []byte{0, 0, 0, 0x80}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	out, err = captureStdout(t, true, func() error { return runInspect(plain, io.Discard) })
	if err != nil {
		t.Fatal(err)
	}
	r = lastJSON(t, out)
	ts := r["tensors"].([]any)
	sp := map[string]float64{}
	for _, x := range ts {
		m := x.(map[string]any)
		sp[m["name"].(string)] = m["sparsity"].(float64)
	}
	if r["kind"] != "safetensors" || sp["w"] != 0.5 || sp["q"] != 0.75 || r["sparsity"].(float64) != 5.0/8 {
		t.Errorf("inspect --json of a plain file: %v", r)
	}
	if err := runInspect(filepath.Join(dir, "missing.safetensors"), io.Discard); err == nil {
		t.Error("a missing file was inspected")
	}
}

func negZero() float64 {
	z := 0.0
	return -z
}
