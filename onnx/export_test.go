package onnx

import (
	"cmp"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// exportCases are models covering every layer Export writes.
var exportCases = []struct {
	name    string
	spec    string
	task    metrics.Task
	classes []string
	scale   bool
}{
	{"mlp", `{"input": [6], "layers": [
		{"type": "linear", "out": 16}, {"type": "batchnorm1d"}, {"type": "relu"}, {"type": "dropout", "p": 0.2},
		{"type": "linear", "out": 8}, {"type": "layernorm"}, {"type": "gelu"},
		{"type": "linear", "out": 8, "bias": false}, {"type": "gelu", "approximate": "tanh"},
		{"type": "leakyrelu", "slope": 0.2}, {"type": "elu", "alpha": 0.5}, {"type": "softplus"},
		{"type": "softplus", "beta": 2}, {"type": "silu"}, {"type": "sigmoid"}, {"type": "tanh"}, {"type": "identity"},
		{"type": "residual", "layers": [{"type": "linear", "out": 8}, {"type": "relu"}]},
		{"type": "residual", "layers": [{"type": "gelu"}, {"type": "linear", "out": 8}, {"type": "silu"}]},
		{"type": "residual", "layers": [{"type": "linear", "out": 5}], "proj": true},
		{"type": "linear", "out": 3}, {"type": "logsoftmax"}]}`,
		metrics.Classification, []string{"a", "b", "c"}, true},
	{"cnn", `{"input": [2, 8, 8], "layers": [
		{"type": "conv2d", "out": 4, "kernel": 3, "padding": 1}, {"type": "batchnorm2d"}, {"type": "relu"},
		{"type": "conv2d", "out": 4, "kernel": 3, "padding": 2, "dilation": 2, "groups": 2, "bias": false},
		{"type": "maxpool2d", "kernel": 2},
		{"type": "residual", "layers": [{"type": "conv2d", "out": 4, "kernel": 3, "padding": 1}, {"type": "relu"}]},
		{"type": "residual", "layers": [{"type": "conv2d", "out": 6, "kernel": 3, "padding": 1, "stride": 2}], "proj": true},
		{"type": "avgpool2d", "kernel": 2, "stride": 1, "padding": 1, "count_include_pad": false},
		{"type": "avgpool2d", "kernel": 2, "stride": 1, "padding": 1},
		{"type": "maxpool2d", "kernel": 2, "stride": 2, "padding": 1, "ceil_mode": true},
		{"type": "adaptiveavgpool2d", "size": 1},
		{"type": "flatten"}, {"type": "linear", "out": 1}]}`,
		metrics.Regression, nil, true},
	{"cnn-pool", `{"input": [1, 6, 6], "layers": [
		{"type": "conv2d", "out": 3, "kernel": [3, 1], "padding": [1, 0], "stride": [1, 2]},
		{"type": "adaptiveavgpool2d", "size": [3, 1]}, {"type": "flatten"}, {"type": "linear", "out": 2}, {"type": "softmax"}]}`,
		metrics.Classification, []string{"no", "yes"}, false},
	{"transformer", `{"input": [5, 8], "layers": [
		{"type": "transformer", "heads": 2, "ff": 16},
		{"type": "transformer", "heads": 4, "ff": 12, "norm_first": true, "activation": "gelu", "eps": 1e-6},
		{"type": "linear", "out": 4}, {"type": "flatten"}, {"type": "linear", "out": 1}]}`,
		metrics.Regression, nil, true},
}

// testModel builds a case's model with random weights and batch-norm
// statistics (as after training) and a standardization.
func testModel(t testing.TB, i int) *modelfile.Model {
	t.Helper()
	c := exportCases[i]
	spec, err := nn.DecodeSpecJSON([]byte(c.spec))
	if err != nil {
		t.Fatal(err)
	}
	rng := tensor.NewRNG(uint64(10 + i))
	net, _, err := spec.Build(rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range nn.StateEntries(net) {
		if e.Tensor.DType() != tensor.Float32 {
			continue
		}
		v := e.Tensor.Float32s()
		for j := range v {
			v[j] = float32(rng.NormFloat64() * 0.5)
			if strings.HasSuffix(e.Name, "running_var") {
				v[j] = 0.5 + rng.Float32()
			}
		}
		e.Tensor.CopyFrom(tensor.FromFloat32(v, e.Tensor.Shape()...))
	}
	net.Eval()
	m := &modelfile.Model{Net: net, Spec: spec, Task: c.task, Classes: c.classes}
	n := numelInts(spec.Input)
	for j := range n {
		m.Columns = append(m.Columns, "f"+string(rune('a'+j%26))+strings.Repeat("x", j/26))
	}
	if c.scale {
		m.Scaler = &data.Standardizer{Mean: make([]float64, n), Std: make([]float64, n)}
		for j := range n {
			m.Scaler.Mean[j] = rng.NormFloat64()
			m.Scaler.Std[j] = 0.5 + rng.Float64()
		}
		m.Scaler.Std[0] = 0 // a constant column: centred only
	}
	return m
}

// testInput returns rows of random raw features.
func testInput(m *modelfile.Model, rows int) []float32 {
	rng := tensor.NewRNG(99)
	x := make([]float32, rows*numelInts(m.Spec.Input))
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 1.5)
	}
	return x
}

// fathomOutput runs m's standardization and network as Predict does.
func fathomOutput(t *testing.T, m *modelfile.Model, x []float32, rows int) *tensor.Tensor {
	t.Helper()
	tb := &data.Table{Rows: rows, Cols: len(x) / rows, X: slices.Clone(x)}
	in, err := m.PrepareInput(tb)
	if err != nil {
		t.Fatal(err)
	}
	return m.Net.Forward(tensor.FromFloat32(in.X, append([]int{rows}, m.Spec.Input...)...).NoGrad())
}

// TestExportMatchesReferenceRuntime: the exported graph, run by the test
// runtime (float64, written from the operator specs), gives fathom's
// outputs within 1e-5.
func TestExportMatchesReferenceRuntime(t *testing.T) {
	for i, c := range exportCases {
		t.Run(c.name, func(t *testing.T) {
			m := testModel(t, i)
			mp, err := Export(m, ExportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			back, err := Unmarshal(mp.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			const rows = 5
			x := testInput(m, rows)
			want := fathomOutput(t, m, x, rows)
			got := refRunFloat32(t, back.Graph, x, append([]int{rows}, m.Spec.Input...)...)
			if !slices.Equal(got.shape, want.Shape()) {
				t.Fatalf("runtime output %v, fathom %v", got.shape, want.Shape())
			}
			d := 0.0
			for j, v := range want.Float32s() {
				d = max(d, math.Abs(float64(v)-got.v[j]))
			}
			t.Logf("%d nodes, max |fathom − runtime| = %.2g", len(back.Graph.Node), d)
			if d > 1e-5 {
				t.Errorf("fathom and the test runtime differ by %g", d)
			}
		})
	}
}

// onnxChecker returns a command running onnx.checker.check_model (with
// shape inference) on a file, or skips the test when python3-onnx is
// missing.
func onnxChecker(t *testing.T) func(path string) error {
	t.Helper()
	py := "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import onnx").CombinedOutput(); err != nil {
		t.Skipf("python3-onnx is not installed (apt-get install python3-onnx): %v %s", err, out)
	}
	return func(path string) error {
		out, err := exec.Command(py, "-c", "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)", path).CombinedOutput()
		if err != nil {
			return &checkError{string(out)}
		}
		return nil
	}
}

type checkError struct{ out string }

func (e *checkError) Error() string { return "onnx.checker: " + e.out }

// TestExportPassesChecker: python3-onnx's checker (with full shape
// inference) accepts every exported file, at the default and the oldest
// supported opset.
func TestExportPassesChecker(t *testing.T) {
	check := onnxChecker(t)
	dir := t.TempDir()
	for i, c := range exportCases {
		for _, opset := range []int{DefaultOpset, MinExportOpset} {
			m := testModel(t, i)
			path := filepath.Join(dir, c.name+".onnx")
			err := WriteFile(path, m, ExportOptions{Opset: opset})
			if opset < 17 && (strings.Contains(c.spec, "layernorm") || strings.Contains(c.spec, "transformer")) {
				if err == nil || !strings.Contains(err.Error(), "opset 17") {
					t.Errorf("%s at opset %d: %v, want an error about LayerNormalization's opset", c.name, opset, err)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := check(path); err != nil {
				t.Errorf("%s at opset %d: %v", c.name, opset, err)
			}
		}
	}
}

// TestRoundTrip: fathom → ONNX → fathom keeps the layers, the outputs,
// the predictions and everything around the network.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for i, c := range exportCases {
		t.Run(c.name, func(t *testing.T) {
			m := testModel(t, i)
			path := filepath.Join(dir, c.name+".onnx")
			if err := WriteFile(path, m, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			back, err := modelfile.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			const rows = 7
			x := testInput(m, rows)
			want, got := fathomOutput(t, m, x, rows), fathomOutput(t, back, x, rows)
			endsInSoftmax := strings.HasSuffix(c.spec, `{"type": "softmax"}]}`)
			if endsInSoftmax {
				got = got.Exp() // the imported model ends in a logsoftmax
			}
			d := 0.0
			for j, v := range want.Float32s() {
				d = max(d, math.Abs(float64(v-got.Float32s()[j])))
			}
			// The same layers with the same weights: the same outputs, bit
			// for bit (but through exp for the softmax case).
			if d > 0 && !(endsInSoftmax && d < 1e-6) {
				t.Errorf("outputs differ by %g after the round trip", d)
			}
			if back.Task != m.Task || !slices.Equal(back.Classes, m.Classes) || !slices.Equal(back.Columns, m.Columns) {
				t.Errorf("task %v classes %v columns %v, want %v %v %v", back.Task, back.Classes, back.Columns, m.Task, m.Classes, m.Columns)
			}
			if (m.Scaler == nil) != (back.Scaler == nil) {
				t.Fatalf("scaler %v after the round trip, was %v", back.Scaler, m.Scaler)
			}
			// An identity maps to no layer; adaptive pooling to [3, 1] of 6×3
			// is exported as an AveragePool.
			want1 := slices.DeleteFunc(layerTypes(m), func(s string) bool { return s == "identity" })
			for j, s := range want1 {
				if s == "transformer" {
					want1[j] = "transformerencoderlayer"
				}
			}
			got1 := layerTypes(back)
			if c.name == "cnn-pool" {
				want1[1] = "avgpool2d"
			}
			if endsInSoftmax {
				want1[len(want1)-1] = "logsoftmax"
			}
			if !slices.Equal(want1, got1) {
				t.Errorf("layers %v, want %v", got1, want1)
			}
			for j, l := range back.Spec.Layers {
				if l.Type != "transformerencoderlayer" {
					continue
				}
				o := m.Spec.Layers[j]
				act, eps := cmp.Or(o.Activation, "relu"), cmp.Or(o.Eps, 1e-5)
				if l.Heads != o.Heads || l.FF != o.FF || l.NormFirst != o.NormFirst || l.Activation != act || l.Eps != eps {
					t.Errorf("layer %d: %+v, want %+v", j, l, o)
				}
			}
			p1, err := m.PredictRows(x, rows)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := back.PredictRows(x, rows)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p1.Class, p2.Class) {
				t.Errorf("classes %v, want %v", p2.Class, p1.Class)
			}
			wantP := p1.Probs
			if endsInSoftmax {
				// Predict took a second softmax of the original's softmax;
				// the import's probabilities are the network's own.
				wantP = want.Float32s()
			}
			for j := range wantP {
				if math.Abs(float64(wantP[j]-p2.Probs[j])) > 1e-5 {
					t.Fatalf("probability %d: %g, want %g", j, p2.Probs[j], wantP[j])
				}
			}
		})
	}
}

// TestExportErrors: layers ONNX cannot express name the layer.
func TestExportErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{`{"input": [1, 4, 4], "layers": [{"type": "avgpool2d", "kernel": 3, "ceil_mode": true}, {"type": "flatten"}, {"type": "linear", "out": 1}]}`, "layer 0"},
		{`{"input": [1, 5, 5], "layers": [{"type": "adaptiveavgpool2d", "size": 2}, {"type": "flatten"}, {"type": "linear", "out": 1}]}`, "uneven"},
		{`{"input": [4], "layers": [{"type": "batchnorm1d", "track_running_stats": false}, {"type": "linear", "out": 1}]}`, "running statistics"},
	} {
		spec, err := nn.DecodeSpecJSON([]byte(c.spec))
		if err != nil {
			t.Fatal(err)
		}
		net, _, err := spec.Build(tensor.NewRNG(1))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Export(&modelfile.Model{Net: net, Spec: spec, Task: metrics.Regression}, ExportOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.spec, err, c.want)
		}
	}
	if _, err := Export(testModel(t, 0), ExportOptions{Opset: 99}); err == nil || !strings.Contains(err.Error(), "opset 99") {
		t.Errorf("opset 99: %v", err)
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
