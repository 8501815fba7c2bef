package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/serve"
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

// TestServeTorchONNX: a CNN PyTorch exported to ONNX serves over the Open
// Inference Protocol with PyTorch's probabilities (the softmax of the
// outputs onnx/testdata/make_torch.py printed).
func TestServeTorchONNX(t *testing.T) {
	b, err := os.ReadFile("../../onnx/testdata/torch_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string]struct {
		InputShape []int     `json:"input_shape"`
		Input      []float64 `json:"input"`
		Output     []float64 `json:"output"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	c := cases["cnn"]
	m, err := modelfile.Load("../../onnx/testdata/torch_cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	s, err := serve.New([]serve.Model{{Name: "cnn", Model: m}}, serve.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	req, _ := json.Marshal(map[string]any{
		"inputs":  []any{map[string]any{"name": "input", "shape": []int{c.InputShape[0], 64}, "datatype": "FP32", "data": c.Input}},
		"outputs": []any{map[string]any{"name": "probabilities"}},
	})
	resp, err := http.Post(hs.URL+"/v2/models/cnn/infer", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans struct {
		Outputs []struct {
			Data []float64 `json:"data"`
		} `json:"outputs"`
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &ans) != nil || len(ans.Outputs) != 1 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	got := ans.Outputs[0].Data
	if len(got) != len(c.Output) {
		t.Fatalf("%d probabilities, want %d", len(got), len(c.Output))
	}
	for i := 0; i < len(got); i += 3 {
		z, mx := 0.0, max(c.Output[i], c.Output[i+1], c.Output[i+2])
		for _, v := range c.Output[i : i+3] {
			z += math.Exp(v - mx)
		}
		for j := range 3 {
			if want := math.Exp(c.Output[i+j]-mx) / z; math.Abs(got[i+j]-want) > 1e-5 {
				t.Errorf("row %d class %d: probability %g, PyTorch's softmax %g", i/3, j, got[i+j], want)
			}
		}
	}
}
