package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportPredictONNX: fathom export writes an ONNX file that fathom
// predict opens directly with the same predictions as the model file,
// and --format fathom converts it back.
func TestExportPredictONNX(t *testing.T) {
	dir := t.TempDir()
	model := "../../modelfile/testdata/tiny.safetensors"
	onnxPath := filepath.Join(dir, "tiny.onnx")
	var stdout bytes.Buffer
	if err := runExport(model, exportOptions{format: "onnx", out: onnxPath, opset: 17}, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), onnxPath) {
		t.Errorf("output %q does not name the file", stdout.String())
	}
	back := filepath.Join(dir, "back.safetensors")
	if err := runExport(onnxPath, exportOptions{format: "fathom", out: back}, io.Discard); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("y,x\n0.5,1\n-2,0.25\n3,-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, m := range []string{model, onnxPath, back} {
		out := filepath.Join(dir, filepath.Base(m)+".csv")
		if err := runPredict(m, in, out, 16, io.Discard, io.Discard); err != nil {
			t.Fatalf("predict with %s: %v", m, err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("predictions differ:\nmodel file:\n%s\nONNX:\n%s\nconverted back:\n%s", outs[0], outs[1], outs[2])
	}
	for _, o := range []exportOptions{{format: "tflite"}, {format: "onnx", opset: 5}, {format: "onnx", classes: []string{"a"}}, {format: "fathom"}} {
		if err := runExport(model, o, io.Discard); err == nil {
			t.Errorf("export %+v: no error", o)
		}
	}
}
