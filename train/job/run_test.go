package job

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/safetensors"
)

// trainedIris trains the iris config briefly through Run and returns the
// result (model in memory, file on disk).
func trainedIris(t *testing.T) *Result {
	t.Helper()
	c, err := ParseConfig([]byte(baseConfig), "iris.yaml", []string{"epochs=20", "output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), c, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunWritesOutputs(t *testing.T) {
	r := trainedIris(t)
	if len(r.Epochs) != 20 || r.Test.Samples != 30 || r.Test.Accuracy < 0.8 || r.SecondsPerEpoch <= 0 {
		t.Fatalf("result %+v", r)
	}
	csv, err := os.ReadFile(r.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	// baseConfig has no validation split: the test split is scored every
	// epoch, and the columns say so.
	if len(lines) != 21 || lines[0] != "epoch,train_loss,train_accuracy,test_loss,test_accuracy,lr,seconds,eval_seconds" ||
		!strings.HasPrefix(lines[20], "20,") {
		t.Fatalf("metrics.csv:\n%s", csv)
	}
	png, err := os.ReadFile(r.PlotPath)
	if err != nil || len(png) < 1000 || string(png[1:4]) != "PNG" {
		t.Fatalf("curves.png: %d bytes, %v", len(png), err)
	}
}

func TestModelFileRoundTrip(t *testing.T) {
	r := trainedIris(t)
	m, err := modelfile.Load(r.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Task != metrics.Classification || !slices.Equal(m.Classes, []string{"setosa", "versicolor", "virginica"}) ||
		len(m.Columns) != 4 || m.Label != "species" || m.Scaler == nil || !slices.Equal(m.Spec.Input, []int{4}) {
		t.Fatalf("loaded %+v", m)
	}
	iris, err := data.Iris()
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Model.Predict(iris, 7)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Predict(iris, 64)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Probs, want.Probs) || !slices.Equal(got.Class, want.Class) || got.Rows() != 150 {
		t.Fatal("predictions of the loaded model differ from the trained one")
	}
	// Probabilities sum to one and the class is their arg-max.
	for i := range 150 {
		row := got.Probs[3*i : 3*i+3]
		if s := row[0] + row[1] + row[2]; math.Abs(float64(s)-1) > 1e-5 || int64(metrics.Argmax(row)) != got.Class[i] {
			t.Fatalf("row %d: probabilities %v, class %d", i, row, got.Class[i])
		}
	}
	// The raw table is not changed by prediction (the model standardizes a copy).
	again, _ := data.Iris()
	if !slices.Equal(iris.X, again.X) {
		t.Fatal("Predict changed its input table")
	}
	// Columns in another order are matched by name.
	perm := []int{3, 1, 0, 2}
	shuffled := &data.Table{Rows: iris.Rows, Cols: 4, X: make([]float32, len(iris.X)), Columns: make([]string, 4)}
	for j, k := range perm {
		shuffled.Columns[j] = iris.Columns[k]
		for i := range iris.Rows {
			shuffled.X[i*4+j] = iris.X[i*4+k]
		}
	}
	p2, err := m.Predict(shuffled, 32)
	if err != nil || !slices.Equal(p2.Probs, want.Probs) {
		t.Fatalf("reordered columns: %v", err)
	}
	shuffled.Columns[0] = "stem_length"
	if _, err := m.Predict(shuffled, 32); err == nil || !strings.Contains(err.Error(), "petal_width") {
		t.Fatalf("missing column: %v", err)
	}
	// Evaluate agrees with the run's test metrics on the same rows.
	met, err := m.Evaluate(iris, 50)
	if err != nil || met.Samples != 150 || met.Accuracy < 0.8 {
		t.Fatalf("Evaluate: %+v %v", met, err)
	}
}

func TestLoadModelErrors(t *testing.T) {
	r := trainedIris(t)
	raw, err := os.ReadFile(r.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trunc := filepath.Join(dir, "trunc.safetensors")
	os.WriteFile(trunc, raw[:len(raw)-100], 0o644)
	if _, err := modelfile.Load(trunc); !errors.Is(err, safetensors.ErrFormat) || !strings.Contains(err.Error(), "trunc.safetensors") {
		t.Errorf("truncated: %v", err)
	}
	// An architecture whose layers do not fit the stored weights.
	a, f, err := modelfile.ReadModel(r.ModelPath)
	if err != nil {
		t.Fatal(err)
	}
	a.Model = json.RawMessage(`{"input":[4],"layers":[{"type":"linear","out":9},{"type":"relu"},{"type":"linear","out":3}]}`)
	wrong := filepath.Join(dir, "wrong.safetensors")
	if err := modelfile.WriteModel(wrong, a, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	// 75 values declared, 67 stored: refused before the layers are built.
	if _, err := modelfile.Load(wrong); err == nil || !strings.Contains(err.Error(), "more than the 67 allowed") {
		t.Errorf("larger architecture: %v", err)
	}
	a.Model = json.RawMessage(`{"input":[4],"layers":[{"type":"linear","out":7},{"type":"relu"},{"type":"linear","out":3}]}`)
	if err := modelfile.WriteModel(wrong, a, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := modelfile.Load(wrong); err == nil || !strings.Contains(err.Error(), "size mismatch") {
		t.Errorf("mismatched weights: %v", err)
	}
	a.Model = json.RawMessage(`{"input":[4],"layers":[{"type":"linear","out":8},{"type":"relu"},{"type":"linear","out":2}]}`)
	if err := modelfile.WriteModel(wrong, a, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := modelfile.Load(wrong); err == nil || !strings.Contains(err.Error(), "3 classes") {
		t.Errorf("output/class mismatch: %v", err)
	}
}

// TestEvalColumnsNamedAfterSplit: with data.validation the per-epoch
// columns are val_*, and early stopping without a validation split is a
// config error naming the fix instead of model selection on test data.
func TestEvalColumnsNamedAfterSplit(t *testing.T) {
	c, err := ParseConfig([]byte(baseConfig), "iris.yaml", []string{"epochs=3", "data.validation=0.2",
		"early_stopping.patience=2", "output.dir=" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(t.Context(), c, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(r.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "epoch,train_loss,train_accuracy,val_loss,val_accuracy,") {
		t.Errorf("metrics.csv header: %s", strings.SplitN(string(b), "\n", 2)[0])
	}
	_, err = ParseConfig([]byte(baseConfig), "iris.yaml", []string{"early_stopping.patience=2"})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "set data.validation") {
		t.Errorf("early stopping without validation: %v, want a ConfigError naming data.validation", err)
	}
}

// TestRunClipsGradients: optimizer.clip_grad_value reaches the trainer. A
// clip of 1e-9 leaves the model where it started (the test loss after
// every epoch the same to 1e-5), while the same run unclipped learns.
func TestRunClipsGradients(t *testing.T) {
	losses := func(extra ...string) []float64 {
		over := append([]string{"epochs=4", "optimizer.type=sgd", "optimizer.lr=0.1", "output.dir=" + t.TempDir()}, extra...)
		c, err := ParseConfig([]byte(baseConfig), "iris.yaml", over)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(t.Context(), c, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var l []float64
		for _, e := range r.Epochs {
			l = append(l, e.Eval.Loss)
		}
		return l
	}
	free, clipped := losses(), losses("optimizer.clip_grad_value=1e-9")
	if free[len(free)-1] > free[0]-0.1 {
		t.Fatalf("unclipped run did not learn: %v", free)
	}
	for _, l := range clipped {
		if math.Abs(l-clipped[0]) > 1e-5 {
			t.Fatalf("clip_grad_value 1e-9 did not reach the trainer: losses %v", clipped)
		}
	}
}
