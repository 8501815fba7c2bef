package onnx

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/tensor"
)

// torchCase is one model of testdata/torch_expected.json, printed by
// testdata/make_torch.py (PyTorch 1.13, /usr/bin/python3) when it
// exported testdata/torch_*.onnx.
type torchCase struct {
	InputShape  []int     `json:"input_shape"`
	Input       []float32 `json:"input"`
	OutputShape []int     `json:"output_shape"`
	Output      []float64 `json:"output"`
}

func torchCases(t *testing.T) map[string]torchCase {
	t.Helper()
	b, err := os.ReadFile("testdata/torch_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs map[string]torchCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// maxDiff returns the largest |got − want|.
func maxDiff(t *testing.T, got []float32, want []float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	d := 0.0
	for i := range got {
		d = max(d, math.Abs(float64(got[i])-want[i]))
	}
	return d
}

// forward runs m's network on x (evaluation mode, no graph).
func forward(m *modelfile.Model, x []float32, shape []int) *tensor.Tensor {
	return m.Net.Forward(tensor.FromFloat32(slices.Clone(x), shape...).NoGrad())
}

// TestImportTorch loads the files PyTorch exported and compares fathom's
// outputs with PyTorch's (and the test runtime's, which checks the
// runtime the export tests rely on).
func TestImportTorch(t *testing.T) {
	for name, c := range torchCases(t) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "torch_"+name+".onnx")
			m, err := modelfile.Load(path) // through the registered format
			if err != nil {
				t.Fatal(err)
			}
			y := forward(m, c.Input, c.InputShape)
			if !slices.Equal(y.Shape(), c.OutputShape) {
				t.Fatalf("output shape %v, PyTorch %v", y.Shape(), c.OutputShape)
			}
			d := maxDiff(t, y.Float32s(), c.Output)
			if d > 1e-5 {
				t.Errorf("fathom differs from PyTorch by %g", d)
			}
			t.Logf("max |fathom − PyTorch| = %.2g", d)
			mp, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ref := refRunFloat32(t, mp.Graph, c.Input, c.InputShape...)
			for i, v := range ref.v {
				if math.Abs(v-c.Output[i]) > 1e-5 {
					t.Fatalf("test runtime differs from PyTorch at %d: %g vs %g", i, v, c.Output[i])
				}
			}
			// Defaults: three outputs, so three classes named 0..2.
			if m.Task != metrics.Classification || !slices.Equal(m.Classes, []string{"0", "1", "2"}) {
				t.Errorf("task %v classes %v, want classification over 0,1,2", m.Task, m.Classes)
			}
			p, err := m.PredictRows(c.Input, c.InputShape[0])
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Class) != c.InputShape[0] {
				t.Errorf("%d predictions for %d rows", len(p.Class), c.InputShape[0])
			}
			t.Logf("layers: %v", layerTypes(m))
		})
	}
}

func layerTypes(m *modelfile.Model) []string {
	var out []string
	for _, l := range m.Spec.Layers {
		s := l.Type
		for _, b := range l.Layers {
			s += "/" + b.Type
		}
		out = append(out, s)
	}
	return out
}

// TestImportOptions: flags and fathom.* metadata name the task, classes
// and columns of a file fathom did not write.
func TestImportOptions(t *testing.T) {
	mp, err := ReadFile("testdata/torch_mlp.onnx")
	if err != nil {
		t.Fatal(err)
	}
	mp.MetadataProps = append(mp.MetadataProps, StringPair{MetaClasses, "setosa,versicolor,virginica"}, StringPair{MetaColumns, "a,b,c,d"})
	m, err := Import(mp, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Classes[2] != "virginica" || m.Columns[3] != "d" {
		t.Errorf("classes %v columns %v", m.Classes, m.Columns)
	}
	m, err = Import(mp, ImportOptions{Classes: []string{"x", "y", "z"}})
	if err != nil || m.Classes[0] != "x" {
		t.Fatalf("options do not override metadata: %v %v", m, err)
	}
	if _, err := Import(mp, ImportOptions{Task: "regression"}); err == nil || !strings.Contains(err.Error(), "one value") {
		t.Errorf("regression with 3 outputs: %v", err)
	}
	if _, err := Import(mp, ImportOptions{Columns: []string{"a"}}); err == nil {
		t.Error("one column name for four inputs: no error")
	}
}

// TestImportUnsupported: an op without a fathom layer is named with its node.
func TestImportUnsupported(t *testing.T) {
	mp, err := ReadFile("testdata/torch_cnn.onnx")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range mp.Graph.Node {
		if n.OpType == "Sigmoid" {
			n.OpType = "HardSwish"
		}
	}
	_, err = Import(mp, ImportOptions{})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || ue.Op != "HardSwish" || ue.Node != "/features/features.6/Sigmoid" {
		t.Fatalf("error %v, want an UnsupportedError naming HardSwish and its node", err)
	}
	t.Log(err)
}

// BenchmarkImport decodes and imports fathom's exports of the test models
// and PyTorch's CNN.
func BenchmarkImport(b *testing.B) {
	files := map[string][]byte{"torch_cnn": readTestdata(b, "torch_cnn.onnx")}
	for i, c := range exportCases {
		mp, err := Export(testModel(b, i), ExportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		files[c.name] = mp.Marshal()
	}
	for name, raw := range files {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				m, err := Unmarshal(raw)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Import(m, ImportOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
