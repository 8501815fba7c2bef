package modelfile

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/safetensors"
	"github.com/fathom-ml/fathom/tensor"
)

var update = flag.Bool("update", false, "rewrite testdata/tiny.safetensors")

// regressionModel is y = 10·(a−1)/2 + b + 0.5 with a standardized (mean 1,
// std 2) and b centred only (std 0).
func regressionModel(t *testing.T) *Model {
	t.Helper()
	m := &Model{Spec: nn.Spec{Input: []int{2}, Layers: []nn.LayerSpec{{Type: "linear", Out: 1}}}, Task: metrics.Regression,
		Columns: []string{"a", "b"}, Label: "y", Scaler: &data.Standardizer{Mean: []float64{1, 0}, Std: []float64{2, 0}}}
	net, _, err := m.Spec.Build(tensor.NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	m.Net = net
	lin := net.At(0).(*nn.Linear)
	copy(lin.Weight.Float32s(), []float32{10, 1})
	lin.Bias.Float32s()[0] = 0.5
	return m
}

func TestRegressionModelPredict(t *testing.T) {
	m := regressionModel(t)
	path := filepath.Join(t.TempDir(), "reg.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tab := &data.Table{Rows: 2, Cols: 2, X: []float32{3, 4, 1, -1}, Columns: []string{"a", "b"}}
	p, err := got.Predict(tab, 1)
	if err != nil {
		t.Fatal(err)
	}
	// ((3−1)/2)·10 + 4 + 0.5 = 14.5 and 0·10 − 1 + 0.5 = −0.5 (std 0: centred only).
	if !slices.Equal(p.Values, []float32{14.5, -0.5}) || p.Table().LabelName != "prediction" {
		t.Fatalf("predictions %v", p.Values)
	}
	// PredictRows gives the same without a table and leaves x alone.
	x := []float32{3, 4, 1, -1}
	q, err := got.PredictRows(x, 2)
	if err != nil || !slices.Equal(q.Values, p.Values) || !slices.Equal(x, []float32{3, 4, 1, -1}) {
		t.Fatalf("PredictRows: %v %v, x %v", q, err, x)
	}
	if _, err := got.PredictRows(x, 3); err == nil {
		t.Fatal("PredictRows accepted 4 values for 3 rows")
	}
	// Evaluate on labelled rows: errors 0.5 and 0.5.
	met, err := got.Evaluate(&data.Table{Rows: 2, Cols: 2, X: x, Columns: []string{"a", "b"}, Y: []float32{14, -1}}, 8)
	if err != nil || met.Samples != 2 || met.RMSE != 0.5 {
		t.Fatalf("Evaluate: %+v %v", met, err)
	}
}

func TestPredictionWriters(t *testing.T) {
	cls := &Predictions{Task: metrics.Classification, Classes: []string{"no", "yes"},
		Class: []int64{1, 0}, Probs: []float32{0.25, 0.75, 0.5, 0.5}}
	reg := &Predictions{Task: metrics.Regression, Values: []float32{1.5, -2}}
	for _, test := range []struct {
		name       string
		p          *Predictions
		csv, jsonl string
	}{
		{"classification", cls, "prediction,prob_no,prob_yes\nyes,0.25,0.75\nno,0.5,0.5\n",
			`{"prediction":"yes","probabilities":{"no":0.25,"yes":0.75},"row":1}` + "\n" +
				`{"prediction":"no","probabilities":{"no":0.5,"yes":0.5},"row":2}` + "\n"},
		{"regression", reg, "prediction\n1.5\n-2\n",
			`{"prediction":1.5,"row":1}` + "\n" + `{"prediction":-2,"row":2}` + "\n"},
	} {
		var c, j bytes.Buffer
		if err := test.p.WriteCSV(&c); err != nil || c.String() != test.csv {
			t.Errorf("%s CSV %v:\n%s", test.name, err, c.String())
		}
		if err := test.p.WriteJSONLines(&j); err != nil || j.String() != test.jsonl {
			t.Errorf("%s JSON lines %v:\n%s", test.name, err, j.String())
		}
		dir := t.TempDir()
		for _, name := range []string{"p.csv", "p.jsonl", "p.parquet"} {
			if err := test.p.WriteFile(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s %s: %v", test.name, name, err)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "p.csv")); string(b) != test.csv {
			t.Errorf("%s p.csv:\n%s", test.name, b)
		}
		back, err := data.ReadParquet(filepath.Join(dir, "p.parquet"), data.ParquetOptions{Label: "prediction"})
		if err != nil || back.Rows != 2 {
			t.Errorf("%s p.parquet: %v", test.name, err)
		}
	}
	if err := cls.WriteFile(filepath.Join(t.TempDir(), "p.txt")); err == nil || !strings.Contains(err.Error(), "unknown format") {
		t.Errorf("p.txt: %v", err)
	}
}

// TestTinyModelFile checks testdata/tiny.safetensors, the model the
// package example loads, and rewrites it with -update:
//
//	go test ./modelfile -run TestTinyModelFile -update
func TestTinyModelFile(t *testing.T) {
	const path = "testdata/tiny.safetensors"
	if *update {
		// Two classes of points (x, y): "above" the line y = x or "below".
		m := &Model{Spec: nn.Spec{Input: []int{2}, Layers: []nn.LayerSpec{{Type: "linear", Out: 2}}},
			Task: metrics.Classification, Classes: []string{"below", "above"}, Columns: []string{"x", "y"}, Label: "side"}
		net, _, err := m.Spec.Build(tensor.NewRNG(1))
		if err != nil {
			t.Fatal(err)
		}
		m.Net = net
		lin := net.At(0).(*nn.Linear)
		copy(lin.Weight.Float32s(), []float32{4, -4, -4, 4})
		copy(lin.Bias.Float32s(), []float32{0, 0})
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.PredictRows([]float32{0, 1, 1, 0}, 2)
	if err != nil || !slices.Equal(p.Class, []int64{1, 0}) {
		t.Fatalf("tiny model predicts %v, %v", p, err)
	}
}

// A model file whose architecture declares layers far larger than its
// stored weights (the tiny model's file with its spec rewritten to two
// 65536-wide layers, 4 GiB of float32 each) is refused before the layers
// are allocated.
func TestLoadRefusesArchitectureBomb(t *testing.T) {
	f, err := safetensors.ReadFile("testdata/tiny.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	arch := f.Metadata[ArchitectureKey]
	bomb := strings.Replace(arch, `"layers":[{"type":"linear","out":2}]`,
		`"layers":[{"type":"linear","out":65536},{"type":"linear","out":65536},{"type":"linear","out":2}]`, 1)
	if bomb == arch {
		t.Fatalf("the tiny model's architecture is not as expected: %s", arch)
	}
	meta := maps.Clone(f.Metadata)
	meta[ArchitectureKey] = bomb
	path := filepath.Join(t.TempDir(), "bomb.safetensors")
	if err := safetensors.WriteFile(path, f.Tensors, meta); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Load(path)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "model.layers[0] (linear): the layers up to this one hold 196608 parameter and buffer values, more than the 6 allowed") {
		t.Fatalf("err = %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 { // reading and decoding the file: about 1 MiB
		t.Fatalf("loading the bomb allocated %d bytes", grew)
	}
}

// FuzzLoad feeds arbitrary bytes to Load, which must return an error or a
// model, never panic, and never build more than the file stores (the
// architecture bomb is a seed).
func FuzzLoad(f *testing.F) {
	tiny, err := os.ReadFile("testdata/tiny.safetensors")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tiny)
	st, err := safetensors.ReadFile("testdata/tiny.safetensors")
	if err != nil {
		f.Fatal(err)
	}
	meta := maps.Clone(st.Metadata)
	meta[ArchitectureKey] = strings.Replace(meta[ArchitectureKey], `"layers":[{"type":"linear","out":2}]`,
		`"layers":[{"type":"linear","out":65536},{"type":"linear","out":65536},{"type":"linear","out":2}]`, 1)
	var bomb bytes.Buffer
	if err := safetensors.Write(&bomb, st.Tensors, meta); err != nil {
		f.Fatal(err)
	}
	f.Add(bomb.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "fuzz.safetensors")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(path)
		if err != nil {
			return
		}
		if n := int64(m.Net.NumParameters()); n > int64(len(b)) {
			t.Fatalf("a %d-byte file built a model of %d parameters", len(b), n)
		}
	})
}

// A loaded model serves concurrent predictions (run with -race).
func TestPredictConcurrently(t *testing.T) {
	m, err := Load("testdata/tiny.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				p, err := m.PredictRows([]float32{0, 1, 1, 0}, 2)
				if err == nil && !slices.Equal(p.Class, []int64{1, 0}) {
					err = fmt.Errorf("classes %v", p.Class)
				}
				if err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for g, err := range errs {
		if err != nil {
			t.Errorf("goroutine %d: %v", g, err)
		}
	}
}

// TestPredictRowsClassification: PredictRows (one batch, the rows in
// place) answers as Predict through a data loader in batches of 2.
func TestPredictRowsClassification(t *testing.T) {
	spec := nn.Spec{Input: []int{3}, Layers: []nn.LayerSpec{{Type: "linear", Out: 5}, {Type: "relu"}, {Type: "linear", Out: 3}}}
	net, _, err := spec.Build(tensor.NewRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	m := &Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: []string{"a", "b", "c"},
		Scaler: &data.Standardizer{Mean: []float64{1, 0, -1}, Std: []float64{2, 1, 0.5}}}
	x := []float32{0.5, -1, 2, 3, 0, 1, -2, 4, 0.25, 1, 1, 1, 0, 0, 0}
	want, err := m.Predict(&data.Table{Rows: 5, Cols: 3, X: slices.Clone(x)}, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.PredictRows(x, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Class, want.Class) || len(got.Probs) != len(want.Probs) {
		t.Fatalf("classes %v, want %v", got.Class, want.Class)
	}
	for i := range want.Probs {
		if d := got.Probs[i] - want.Probs[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("probability %d: %v, want %v", i, got.Probs[i], want.Probs[i])
		}
	}
	if x[0] != 0.5 || x[14] != 0 {
		t.Fatal("PredictRows changed its input")
	}
}
