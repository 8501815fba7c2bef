package modelfile

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// irisTest returns the standardized test split of a stratified 80/20
// split of Iris.
func irisTest(t testing.TB, seed uint64) *data.Table {
	t.Helper()
	iris, err := data.Iris()
	if err != nil {
		t.Fatal(err)
	}
	parts, err := data.Split(iris, data.SplitOptions{Train: 0.8, Seed: seed, Stratify: true})
	if err != nil {
		t.Fatal(err)
	}
	s := data.FitStandardizer(parts.Train)
	s.Apply(parts.Test)
	return parts.Test
}

func irisLoader(t testing.TB, tab *data.Table, batch int) *data.Loader {
	t.Helper()
	ds, err := data.NewDataset(tab, data.DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func irisNet(t testing.TB, seed uint64) *nn.Sequential {
	t.Helper()
	m, _, err := nn.Build([]nn.LayerSpec{{Type: "linear", Out: 16}, {Type: "relu"}, {Type: "linear", Out: 3}}, []int{4}, tensor.NewRNG(seed))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEvaluateMatchesManual checks Evaluate's loss and accuracy against a
// direct computation over the whole table, and that it records no graph.
func TestEvaluateMatchesManual(t *testing.T) {
	testT := irisTest(t, 2)
	m := irisNet(t, 3)
	got, err := Evaluate(m, irisLoader(t, testT, 7), metrics.Classification, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.FromFloat32(testT.X, testT.Rows, testT.Cols).NoGrad()
	out := m.Forward(x)
	if !out.IsInference() {
		t.Fatal("forward of a NoGrad input recorded a graph")
	}
	y := tensor.FromInt64(testT.Labels, testT.Rows)
	wantLoss := nn.CrossEntropyLoss(out, y, nn.ClassOptions{}).Item()
	wantAcc := out.ArgMax(1, false).Eq(y).To(tensor.Float64).MeanAll().Item()
	if math.Abs(got.Loss-wantLoss) > 1e-5 || got.Accuracy != wantAcc || got.Samples != testT.Rows {
		t.Fatalf("Evaluate = %+v, want loss %v accuracy %v", got, wantLoss, wantAcc)
	}
	for _, p := range m.Parameters() {
		if p.Grad() != nil {
			t.Fatal("evaluation produced gradients")
		}
	}
}
