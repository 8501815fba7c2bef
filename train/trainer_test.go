package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
)

// irisSplits returns standardized, stratified Iris train/test tables.
func irisSplits(t testing.TB, seed uint64) (train, test *data.Table) {
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
	s.Apply(parts.Train)
	s.Apply(parts.Test)
	return parts.Train, parts.Test
}

func loader(t testing.TB, tab *data.Table, opts data.LoaderOptions) *data.Loader {
	t.Helper()
	ds, err := data.NewDataset(tab, data.DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := data.NewLoader(ds, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mlp(t testing.TB, seed uint64, in int, layers ...nn.LayerSpec) *nn.Sequential {
	t.Helper()
	m, _, err := nn.Build(layers, []int{in}, tensor.NewRNG(seed))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func irisMLP(t testing.TB, seed uint64, dropout bool) *nn.Sequential {
	specs := []nn.LayerSpec{{Type: "linear", Out: 16}, {Type: "relu"}}
	if dropout {
		p := 0.1
		specs = append(specs, nn.LayerSpec{Type: "dropout", P: &p})
	}
	specs = append(specs, nn.LayerSpec{Type: "linear", Out: 3})
	return mlp(t, seed, 4, specs...)
}

func adam(t testing.TB, m *nn.Sequential, lr float64) optim.Optimizer {
	t.Helper()
	o, err := optim.NewAdam(m.Parameters(), optim.AdamOptions{LR: lr})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestFitIris(t *testing.T) {
	trainT, testT := irisSplits(t, 1)
	m := irisMLP(t, 1, false)
	var batches, starts int
	var ends []runlog.Epoch
	tr, err := New(Options{
		Model: m, Optimizer: adam(t, m, 0.01), Epochs: 40,
		Train: loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1}),
		Eval:  loader(t, testT, data.LoaderOptions{BatchSize: 64}),
		Hooks: Hooks{
			EpochStart: func(epoch, n int) { starts++ },
			Batch: func(e BatchEvent) {
				batches++
				if e.Batches != 8 || e.Batch < 1 || e.Batch > 8 {
					t.Errorf("batch event %+v", e)
				}
			},
			EpochEnd: func(r runlog.Epoch) error { ends = append(ends, r); return nil },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := tr.Fit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 40 || starts != 40 || len(ends) != 40 || batches != 40*8 {
		t.Fatalf("%d epochs, %d starts, %d ends, %d batches", len(hist), starts, len(ends), batches)
	}
	first, last := hist[0], hist[len(hist)-1]
	if !(last.Train.Loss < first.Train.Loss/3) {
		t.Errorf("train loss %.3f → %.3f: did not fall", first.Train.Loss, last.Train.Loss)
	}
	if last.Eval == nil || last.Eval.Accuracy < 0.9 || last.Eval.Samples != 30 {
		t.Errorf("final eval %+v, want accuracy ≥ 0.9 on 30 samples", last.Eval)
	}
	if !math.IsNaN(last.Train.RMSE) || last.Train.Samples != 120 || last.Steps != 320 {
		t.Errorf("final train metrics %+v, steps %d", last.Train, last.Steps)
	}
	if m.Training() {
		t.Error("model left in training mode after evaluation")
	}
}

// linearTable returns y = 2·x1 − 3·x2 + 0.5 + noise·N(0,1) on n rows.
func linearTable(n int, noise float64, seed uint64) *data.Table {
	r := tensor.NewRNG(seed)
	tab := &data.Table{Rows: n, Cols: 2, X: make([]float32, 2*n), Y: make([]float32, n)}
	for i := range n {
		x1, x2 := r.NormFloat64(), r.NormFloat64()
		tab.X[2*i], tab.X[2*i+1] = float32(x1), float32(x2)
		tab.Y[i] = float32(2*x1 - 3*x2 + 0.5 + noise*r.NormFloat64())
	}
	return tab
}

func TestFitLinearRegression(t *testing.T) {
	m := mlp(t, 1, 2, nn.LayerSpec{Type: "linear", Out: 1})
	opt, err := optim.NewSGD(m.Parameters(), optim.SGDOptions{LR: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{
		Model: m, Task: metrics.Regression, Optimizer: opt, Epochs: 30,
		Train: loader(t, linearTable(256, 0.1, 1), data.LoaderOptions{BatchSize: 32, Shuffle: true}),
		Eval:  loader(t, linearTable(128, 0.1, 2), data.LoaderOptions{BatchSize: 128}),
	})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := tr.Fit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ev := hist[len(hist)-1].Eval
	// The noise has standard deviation 0.1, the floor of the RMSE.
	if ev.RMSE > 0.13 || !math.IsNaN(ev.Accuracy) {
		t.Fatalf("eval %+v, want RMSE ≈ 0.1", ev)
	}
	lin := m.At(0).(*nn.Linear)
	w, b := lin.Weight.Float32s(), lin.Bias.Float32s()
	if math.Abs(float64(w[0])-2) > 0.05 || math.Abs(float64(w[1])+3) > 0.05 || math.Abs(float64(b[0])-0.5) > 0.05 {
		t.Fatalf("fitted w %v b %v, want [2 -3] 0.5", w, b)
	}
}

func TestNonFiniteLossNamesEpochAndBatch(t *testing.T) {
	tab := linearTable(64, 0, 1)
	tab.X[2*40] = float32(math.NaN()) // row 40 is in batch 3 of 4 (batch size 16, no shuffle)
	m := mlp(t, 1, 2, nn.LayerSpec{Type: "linear", Out: 1})
	opt, _ := optim.NewSGD(m.Parameters(), optim.SGDOptions{LR: 0.01})
	tr, err := New(Options{Model: m, Task: metrics.Regression, Optimizer: opt, Epochs: 2,
		Train: loader(t, tab, data.LoaderOptions{BatchSize: 16})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Fit(context.Background())
	var nf *NonFiniteLossError
	if !errors.As(err, &nf) || nf.Epoch != 1 || nf.Batch != 3 || nf.Batches != 4 {
		t.Fatalf("error %v, want a non-finite loss at epoch 1, batch 3 of 4", err)
	}
	if !strings.Contains(err.Error(), "epoch 1, batch 3 of 4") {
		t.Fatalf("message %q does not name the epoch and batch", err)
	}
}

// A NaN in the evaluation data (or a model that outputs one there) stops
// training after the epoch, naming the epoch and the split, instead of
// going on to select and save a model on a NaN score.
func TestNonFiniteEvalLossStops(t *testing.T) {
	tab := linearTable(64, 0, 1)
	eval := linearTable(16, 0, 2)
	eval.X[2*5] = float32(math.Inf(1))
	for _, split := range []string{"", "validation"} {
		m := mlp(t, 1, 2, nn.LayerSpec{Type: "linear", Out: 1})
		opt, _ := optim.NewSGD(m.Parameters(), optim.SGDOptions{LR: 0.01})
		tr, err := New(Options{Model: m, Task: metrics.Regression, Optimizer: opt, Epochs: 3, EvalSplit: split,
			Train: loader(t, tab, data.LoaderOptions{BatchSize: 16}), Eval: loader(t, eval, data.LoaderOptions{BatchSize: 16})})
		if err != nil {
			t.Fatal(err)
		}
		hist, err := tr.Fit(context.Background())
		var nf *NonFiniteEvalLossError
		if !errors.As(err, &nf) || nf.Epoch != 1 || len(hist) != 0 {
			t.Fatalf("error %v after %d epochs, want a non-finite evaluation loss after epoch 1", err, len(hist))
		}
		want := "validation loss is +Inf after epoch 1"
		if split == "" {
			want = "evaluation loss is +Inf after epoch 1"
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("message %q lacks %q", err, want)
		}
	}
}

func TestEarlyStopping(t *testing.T) {
	trainT, testT := irisSplits(t, 1)
	m := irisMLP(t, 1, false)
	// Accuracy cannot rise by more than MinDelta = 1, so training stops
	// after the first epoch plus Patience epochs without improvement.
	opt := adam(t, m, 0.01)
	tr, err := New(Options{Model: m, Optimizer: opt, Epochs: 50,
		Train:         loader(t, trainT, data.LoaderOptions{BatchSize: 32}),
		Eval:          loader(t, testT, data.LoaderOptions{BatchSize: 32}),
		EarlyStopping: EarlyStopping{Patience: 3, Monitor: "val_accuracy", MinDelta: 1}})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := tr.Fit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 || !tr.Stopped() {
		t.Fatalf("ran %d epochs (stopped %v), want 4", len(hist), tr.Stopped())
	}
	if _, err := New(Options{Model: m, Optimizer: opt, Epochs: 1, Train: loader(t, trainT, data.LoaderOptions{BatchSize: 32}),
		EarlyStopping: EarlyStopping{Patience: 1, Monitor: "val_accuracy"}}); err == nil {
		t.Fatal("monitoring val_accuracy without evaluation data was accepted")
	}
	if _, err := New(Options{Model: m, Optimizer: opt, Epochs: 1, Train: loader(t, trainT, data.LoaderOptions{BatchSize: 32}),
		EarlyStopping: EarlyStopping{Patience: 1, Monitor: "train_f1"}}); err == nil || !strings.Contains(err.Error(), "f1") {
		t.Fatalf("unknown metric: %v", err)
	}
}

// TestSchedules checks that the trainer applies an optim schedule per
// epoch (the schedules' values are pinned in package optim).
func TestSchedules(t *testing.T) {
	// The trainer applies the schedule to the optimizer each epoch.
	trainT, _ := irisSplits(t, 1)
	m := irisMLP(t, 1, false)
	var lrs []float64
	opt := adam(t, m, 0.1)
	sched, err := optim.NewStepLR(opt, 1, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Model: m, Optimizer: opt, Epochs: 3, Schedule: sched,
		Train: loader(t, trainT, data.LoaderOptions{BatchSize: 64}),
		Hooks: Hooks{EpochEnd: func(r runlog.Epoch) error { lrs = append(lrs, r.LR); return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Fit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(lrs, []float64{0.1, 0.05, 0.025}) {
		t.Fatalf("learning rates %v", lrs)
	}
}

// resumeSetup builds the same run (model with dropout, Adam, shuffled
// prefetching loader) from scratch.
func resumeSetup(t *testing.T, ckpt string, every int, hooks Hooks) (*Trainer, *nn.Sequential) {
	trainT, testT := irisSplits(t, 5)
	m := irisMLP(t, 9, true)
	tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 4,
		Train:          loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 3}),
		Eval:           loader(t, testT, data.LoaderOptions{BatchSize: 64}),
		CheckpointPath: ckpt, CheckpointEvery: every, Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	return tr, m
}

func TestCheckpointResumeIsExact(t *testing.T) {
	dir := t.TempDir()
	// The uninterrupted run.
	ref, refModel := resumeSetup(t, "", 0, Hooks{})
	want, err := ref.Fit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A run cancelled in the middle of epoch 2 (step 13 of 32), resumed by a
	// fresh process-like setup from the checkpoint.
	for _, every := range []int{0, 5} {
		ckpt := filepath.Join(dir, "run.ckpt")
		ctx, cancel := context.WithCancel(context.Background())
		first, _ := resumeSetup(t, ckpt, every, Hooks{Batch: func(e BatchEvent) {
			if e.Step == 13 {
				cancel()
			}
		}})
		_, err := first.Fit(ctx)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "checkpoint written") {
			t.Fatalf("cancelled Fit: %v", err)
		}
		second, m := resumeSetup(t, ckpt, every, Hooks{})
		if err := second.LoadCheckpoint(ckpt); err != nil {
			t.Fatal(err)
		}
		if e, s, g := second.Position(); e != 1 || s != 5 || g != 13 {
			t.Fatalf("resumed at epoch %d step %d (global %d), want 1, 5, 13", e, s, g)
		}
		got, err := second.Fit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d epochs after resume, want %d", len(got), len(want))
		}
		for i := range want {
			if !sameMetrics(got[i].Train, want[i].Train) || !sameMetrics(*got[i].Eval, *want[i].Eval) || got[i].Steps != want[i].Steps {
				t.Fatalf("every=%d epoch %d: resumed %+v %+v, uninterrupted %+v %+v", every, i+1, got[i].Train, *got[i].Eval, want[i].Train, *want[i].Eval)
			}
		}
		wp, gp := refModel.NamedParameters(), m.NamedParameters()
		for i := range wp {
			if !slices.Equal(wp[i].Tensor.Float32s(), gp[i].Tensor.Float32s()) {
				t.Fatalf("every=%d: parameter %s differs after resume", every, wp[i].Name)
			}
		}
	}
}

func TestCheckpointMismatch(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "c.ckpt")
	tr, _ := resumeSetup(t, ckpt, 0, Hooks{})
	if err := tr.SaveCheckpoint(ckpt); err != nil {
		t.Fatal(err)
	}
	trainT, _ := irisSplits(t, 5)
	other := mlp(t, 1, 4, nn.LayerSpec{Type: "linear", Out: 3})
	tr2, err := New(Options{Model: other, Optimizer: adam(t, other, 0.01), Epochs: 1,
		Train: loader(t, trainT, data.LoaderOptions{BatchSize: 16})})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr2.LoadCheckpoint(ckpt); err == nil {
		t.Fatal("checkpoint of another architecture loaded")
	}
	if err := tr2.LoadCheckpoint(filepath.Join(t.TempDir(), "missing.ckpt")); err == nil {
		t.Fatal("missing checkpoint loaded")
	}
}

// sameMetrics compares metrics exactly, NaN equal to NaN.
func sameMetrics(a, b metrics.Metrics) bool {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return eq(a.Loss, b.Loss) && eq(a.Accuracy, b.Accuracy) && eq(a.RMSE, b.RMSE) && a.Samples == b.Samples
}
