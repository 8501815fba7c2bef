package train

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
)

// spyStrategy is Local with counters, and a switch for IsMain.
type spyStrategy struct {
	Local
	main                                   bool
	setups, batches, afterBackward, reduce int
}

func (s *spyStrategy) Setup(m nn.Layer, o optim.Optimizer) error { s.setups++; return nil }
func (s *spyStrategy) Batches(l *data.Loader, epoch, start int) (int, iter.Seq2[int, *data.Batch]) {
	s.batches++
	return s.Local.Batches(l, epoch, start)
}
func (s *spyStrategy) AfterBackward(p []*tensor.Tensor) error {
	if len(p) == 0 {
		panic("no parameters")
	}
	s.afterBackward++
	return nil
}
func (s *spyStrategy) ReduceMetrics(*metrics.Accumulator) error { s.reduce++; return nil }
func (s *spyStrategy) IsMain() bool                             { return s.main }

// TestStrategyCalls checks where the trainer calls its Strategy, that a
// spy equal to Local trains exactly as Local does, and that a process that
// is not the main one writes no checkpoint and runs no hooks.
func TestStrategyCalls(t *testing.T) {
	trainT, testT := irisSplits(t, 1)
	run := func(s Strategy, ckpt string) ([]runlog.Epoch, int) {
		m := irisMLP(t, 1, false)
		hooks := 0
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 2, Strategy: s,
			Train:          loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1}),
			Eval:           loader(t, testT, data.LoaderOptions{BatchSize: 64}),
			CheckpointPath: ckpt, CheckpointEvery: 3,
			Hooks: Hooks{EpochStart: func(int, int) { hooks++ }, Batch: func(BatchEvent) { hooks++ },
				EpochEnd: func(runlog.Epoch) error { hooks++; return nil }}})
		if err != nil {
			t.Fatal(err)
		}
		hist, err := tr.Fit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return hist, hooks
	}
	want, _ := run(nil, "")
	spy := &spyStrategy{main: true}
	got, hooks := run(spy, "")
	// 2 epochs of 8 batches: Batches for training and evaluation each
	// epoch, ReduceMetrics for both sums each epoch.
	if spy.setups != 1 || spy.batches != 4 || spy.afterBackward != 16 || spy.reduce != 4 || hooks != 2*(1+8+1) {
		t.Fatalf("calls: %+v, hooks %d", spy, hooks)
	}
	for i := range want {
		if !sameMetrics(got[i].Train, want[i].Train) || !sameMetrics(*got[i].Eval, *want[i].Eval) {
			t.Fatalf("epoch %d: spy %+v, Local %+v", i+1, got[i], want[i])
		}
	}
	ckpt := filepath.Join(t.TempDir(), "run.ckpt")
	if _, hooks := run(&spyStrategy{main: false}, ckpt); hooks != 0 {
		t.Errorf("a process that is not the main one ran %d hooks", hooks)
	}
	if _, err := os.Stat(ckpt); !os.IsNotExist(err) {
		t.Errorf("a process that is not the main one wrote a checkpoint: %v", err)
	}
}

// TestStepReportOnEveryProcess: StepReport runs after every step on a
// process that is not the main one too, where Hooks do not run.
func TestStepReportOnEveryProcess(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	for _, main := range []bool{true, false} {
		m := irisMLP(t, 1, false)
		var steps []int
		hooks := 0
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 2, Strategy: &spyStrategy{main: main},
			Train: loader(t, trainT, data.LoaderOptions{BatchSize: 16}),
			Hooks: Hooks{Batch: func(BatchEvent) { hooks++ }},
			StepReport: func(e BatchEvent) {
				steps = append(steps, e.Step)
				if e.StepTime <= 0 || e.DataTime < 0 || e.SyncTime < 0 || e.DataTime+e.SyncTime > e.StepTime {
					t.Errorf("step %d: time %v, data %v, sync %v", e.Step, e.StepTime, e.DataTime, e.SyncTime)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Fit(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(steps) != 16 || steps[15] != 16 {
			t.Errorf("main %v: StepReport saw steps %v, want 1..16", main, steps)
		}
		if want := map[bool]int{true: 16, false: 0}[main]; hooks != want {
			t.Errorf("main %v: %d Batch hooks, want %d", main, hooks, want)
		}
	}
}
