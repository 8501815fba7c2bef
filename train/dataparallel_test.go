package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
)

// TestDataParallelMatchesLocal trains Iris with a global batch of 12
// (105 rows: the last global batch has 9, split unevenly) on 2 and 3
// ranks, and of 8 on 4 ranks, and on one process: the weights agree within float32 reduction
// error, every rank holds the same weights, and the reduced metrics count
// every example once.
func TestDataParallelMatchesLocal(t *testing.T) {
	trainT, testT := irisSplits(t, 1)
	fit := func(s Strategy, seed uint64, batch int) ([]runlog.Epoch, []float32, error) {
		m := irisMLP(t, seed, false)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 3, Strategy: s,
			Train: loader(t, trainT, data.LoaderOptions{BatchSize: batch, Shuffle: true, Seed: 1}),
			Eval:  loader(t, testT, data.LoaderOptions{BatchSize: 64})})
		if err != nil {
			return nil, nil, err
		}
		hist, err := tr.Fit(context.Background())
		var w []float32
		for _, p := range m.Parameters() {
			w = append(w, p.Float32s()...)
		}
		return hist, w, err
	}
	for _, tc := range []struct{ n, batch int }{{2, 12}, {3, 12}, {4, 8}} {
		// 4 ranks, batch 8: the last global batch has 1 row, so ranks 0-2
		// have empty parts (no backward, weight 0).
		n := tc.n
		want, wantW, err := fit(nil, 1, tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%dranks-batch%d", n, tc.batch), func(t *testing.T) {
			gs := commtest.Groups(t, n, comm.TransportAuto, nil)
			hists := make([][]runlog.Epoch, n)
			ws := make([][]float32, n)
			errs := commtest.OnAll(gs, func(g *comm.Group) error {
				var err error
				// Other ranks start elsewhere: Setup broadcasts rank 0's weights.
				hists[g.Rank()], ws[g.Rank()], err = fit(NewDataParallel(g, ddp.Options{}), uint64(1+g.Rank()), tc.batch)
				return err
			})
			commtest.MustAll(t, "fit", errs)
			for r := 1; r < n; r++ {
				if !slices.Equal(ws[r], ws[0]) {
					t.Errorf("rank %d's weights differ from rank 0's", r)
				}
			}
			worst := 0.0
			for i := range wantW {
				worst = max(worst, math.Abs(float64(ws[0][i]-wantW[i])))
			}
			t.Logf("largest weight difference from one process: %.3g", worst)
			if worst > 1e-4 {
				t.Errorf("weights differ from one process's by up to %g", worst)
			}
			for e := range want {
				got := hists[0][e]
				if got.Train.Samples != want[e].Train.Samples || got.Eval.Samples != want[e].Eval.Samples {
					t.Errorf("epoch %d: samples train %d eval %d, want %d and %d", e+1, got.Train.Samples, got.Eval.Samples,
						want[e].Train.Samples, want[e].Eval.Samples)
				}
				if math.Abs(got.Train.Loss-want[e].Train.Loss) > 1e-4 || math.Abs(got.Eval.Accuracy-want[e].Eval.Accuracy) > 1e-9 {
					t.Errorf("epoch %d: train loss %v eval acc %v, want %v and %v", e+1, got.Train.Loss, got.Eval.Accuracy,
						want[e].Train.Loss, want[e].Eval.Accuracy)
				}
			}
		})
	}
}

// TestDataParallelResume resumes a 2-rank run from a mid-epoch checkpoint
// (rank 0 writes it, both ranks load it): the epoch's reduced training
// metrics count every example once and equal those of the run without a
// break, and the weights agree.
func TestDataParallelResume(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	dir := t.TempDir()
	ckpt, saved := filepath.Join(dir, "run.ckpt"), filepath.Join(dir, "step3.ckpt")
	newTrainer := func(g *comm.Group, every int, hooks Hooks) (*Trainer, *nn.Sequential) {
		m := irisMLP(t, 1, false)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 1, Strategy: NewDataParallel(g, ddp.Options{}),
			Train:          loader(t, trainT, data.LoaderOptions{BatchSize: 12, Shuffle: true, Seed: 1}),
			CheckpointPath: ckpt, CheckpointEvery: every, Hooks: hooks})
		if err != nil {
			t.Fatal(err)
		}
		return tr, m
	}
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	full := make([]runlog.Epoch, 2)
	fullW := make([][]float32, 2)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		// Rank 0's hook after step 4 keeps the checkpoint written after step 3.
		hooks := Hooks{Batch: func(e BatchEvent) {
			if e.Step == 4 {
				b, err := os.ReadFile(ckpt)
				if err == nil {
					err = os.WriteFile(saved, b, 0o644)
				}
				if err != nil {
					t.Error(err)
				}
			}
		}}
		tr, m := newTrainer(g, 3, hooks)
		hist, err := tr.Fit(context.Background())
		if err != nil {
			return err
		}
		full[g.Rank()], fullW[g.Rank()] = hist[0], flatParams(m)
		return nil
	})
	commtest.MustAll(t, "uninterrupted", errs)
	resumed := make([]runlog.Epoch, 2)
	resumedW := make([][]float32, 2)
	errs = commtest.OnAll(gs, func(g *comm.Group) error {
		tr, m := newTrainer(g, 0, Hooks{})
		if err := tr.LoadCheckpoint(saved); err != nil {
			return err
		}
		if e, s, _ := tr.Position(); e != 0 || s != 3 {
			return fmt.Errorf("resumed at epoch %d, step %d; want 0, 3", e, s)
		}
		hist, err := tr.Fit(context.Background())
		if err != nil {
			return err
		}
		resumed[g.Rank()], resumedW[g.Rank()] = hist[0], flatParams(m)
		return nil
	})
	commtest.MustAll(t, "resumed", errs)
	got, want := resumed[0].Train, full[0].Train
	if got.Samples != trainT.Rows || want.Samples != trainT.Rows || math.Abs(got.Loss-want.Loss) > 1e-12 || got.Accuracy != want.Accuracy {
		t.Errorf("resumed epoch: %+v, uninterrupted %+v (%d samples)", got, want, trainT.Rows)
	}
	if !slices.Equal(resumedW[0], fullW[0]) || !slices.Equal(resumedW[1], fullW[0]) {
		t.Error("resumed weights differ from the uninterrupted run's")
	}
}

func flatParams(m *nn.Sequential) []float32 {
	var w []float32
	for _, p := range m.Parameters() {
		w = append(w, p.Float32s()...)
	}
	return w
}

// spareMLP is the Iris MLP with a layer the loss does not use.
type spareMLP struct {
	nn.Base
	mlp   *nn.Sequential
	spare *nn.Linear
}

func (m *spareMLP) Forward(x *tensor.Tensor) *tensor.Tensor { return m.mlp.Forward(x) }

func newSpareMLP(t *testing.T, seed uint64) *spareMLP {
	m := &spareMLP{mlp: irisMLP(t, seed, false), spare: nn.NewLinear(tensor.NewRNG(seed), 4, 3)}
	m.Register("mlp", m.mlp)
	m.Register("spare", m.spare)
	return m
}

// TestDataParallelUnusedParameter: under DataParallel the trainer checks the
// loss before Backward (BeforeBackward, ddp.Prepare), so a parameter that
// takes no part in it stops training, named, before its gradients are
// computed or reduced; with FindUnusedParameters the model trains and the
// unused parameter stays as it was.
func TestDataParallelUnusedParameter(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	for _, find := range []bool{false, true} {
		t.Run(fmt.Sprintf("find_unused=%v", find), func(t *testing.T) {
			gs := commtest.Groups(t, 2, comm.TransportAuto, nil)
			errs := commtest.OnAll(gs, func(g *comm.Group) error {
				m := newSpareMLP(t, 1)
				opt, err := optim.NewAdam(m.Parameters(), optim.AdamOptions{LR: 0.01})
				if err != nil {
					return err
				}
				spare := slices.Clone(m.spare.Parameters()[0].Float32s())
				var steps int
				tr, err := New(Options{Model: m, Optimizer: opt, Epochs: 2,
					Strategy: NewDataParallel(g, ddp.Options{FindUnusedParameters: find}),
					Train:    loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1}),
					Hooks:    Hooks{Batch: func(BatchEvent) { steps++ }}})
				if err != nil {
					return err
				}
				_, err = tr.Fit(context.Background())
				if find {
					if err != nil {
						return err
					}
					if g.Rank() == 0 && steps != 16 {
						return fmt.Errorf("%d steps, want 16", steps)
					}
					if !slices.Equal(m.spare.Parameters()[0].Float32s(), spare) {
						return errors.New("the unused parameter changed")
					}
					return nil
				}
				var ue *ddp.UnusedParameterError
				if !errors.As(err, &ue) || !slices.Equal(ue.Names, []string{"spare.weight", "spare.bias"}) {
					return fmt.Errorf("error %v, want an UnusedParameterError naming spare.weight and spare.bias", err)
				}
				// Stopped before Backward: no gradient was computed, so
				// none was reduced, and no step was taken.
				for _, p := range m.mlp.Parameters() {
					if gr := p.Grad(); gr != nil && slices.ContainsFunc(gr.Float32s(), func(v float32) bool { return v != 0 }) {
						return errors.New("a used parameter has a gradient: Backward ran")
					}
				}
				if steps != 0 {
					return fmt.Errorf("%d steps before the error", steps)
				}
				return nil
			})
			commtest.MustAll(t, "fit", errs)
		})
	}
}

// TestDataParallelInterruptKeepsMainSums pins what docs/distributed.md
// describes: a checkpoint written when the run is interrupted holds rank
// 0's metric sums only (no collective at interrupt time, where ranks may be
// at different steps), so the resumed epoch's training metrics count rank
// 0's rows before the interrupt and every rank's after it.
func TestDataParallelInterruptKeepsMainSums(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	ckpt := filepath.Join(t.TempDir(), "run.ckpt")
	newTrainer := func(g *comm.Group, loss LossFunc) *Trainer {
		m := irisMLP(t, 1, false)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 1, Strategy: NewDataParallel(g, ddp.Options{}),
			Loss:           loss,
			Train:          loader(t, trainT, data.LoaderOptions{BatchSize: 12, Shuffle: true, Seed: 1}),
			CheckpointPath: ckpt})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	gs := commtest.Groups(t, 2, comm.TransportAuto, nil)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		// Every rank cancels during its third step, so all stop before the
		// fourth.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ce, calls := CrossEntropy(nn.ClassOptions{}), 0
		tr := newTrainer(g, func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
			if calls++; calls == 3 {
				cancel()
			}
			return ce(out, b)
		})
		_, err := tr.Fit(ctx)
		if !errors.Is(err, context.Canceled) {
			return fmt.Errorf("error %v, want the interrupt", err)
		}
		return nil
	})
	commtest.MustAll(t, "interrupted", errs)
	c, err := modelfile.ReadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	var ts trainerState
	if err := json.Unmarshal(c.Trainer, &ts); err != nil {
		t.Fatal(err)
	}
	// 3 steps of rank 0's 6 rows of each global batch of 12.
	if c.Step != 3 || ts.Seen != 18 {
		t.Fatalf("checkpoint at step %d with %d rows counted, want step 3 and rank 0's 18", c.Step, ts.Seen)
	}
	resumed := make([]runlog.Epoch, 2)
	errs = commtest.OnAll(gs, func(g *comm.Group) error {
		tr := newTrainer(g, nil)
		if err := tr.LoadCheckpoint(ckpt); err != nil {
			return err
		}
		hist, err := tr.Fit(context.Background())
		if err != nil {
			return err
		}
		resumed[g.Rank()] = hist[0]
		return nil
	})
	commtest.MustAll(t, "resumed", errs)
	if got, want := resumed[0].Train.Samples, trainT.Rows-18; got != want {
		t.Errorf("resumed epoch counts %d rows, want %d (rank 1's 18 before the interrupt are not in the checkpoint)", got, want)
	}
}

// SyncBatchNorm needs rows on every rank in every step: a last global
// batch of 1 row for 4 ranks is refused up front, named.
func TestDataParallelSyncBatchNormRefusesEmptyParts(t *testing.T) {
	_, testT := irisSplits(t, 1) // 30 rows: batches of 28 leave 2
	gs := commtest.Groups(t, 4, comm.TransportTCP, nil)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		m := mlp(t, 1, 4, nn.LayerSpec{Type: "linear", Out: 8}, nn.LayerSpec{Type: "batchnorm1d"}, nn.LayerSpec{Type: "linear", Out: 3})
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 1,
			Strategy: NewDataParallel(g, ddp.Options{SyncBatchNorm: true}),
			Train:    loader(t, testT, data.LoaderOptions{BatchSize: 28})})
		if err != nil {
			return err
		}
		_, err = tr.Fit(context.Background())
		return err
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "SyncBatchNorm needs rows on every worker in every step, but the last global batch has 2 rows for 4 workers") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// ZeRO-1 through the trainer: a ddp.ShardedOptimizer under DataParallel
// with ShardOptimizer trains plain data parallelism's weights, and each
// rank keeps half the optimizer state; the optimizer and the option must
// go together.
func TestDataParallelShardedOptimizer(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	fit := func(g *comm.Group, shard bool) ([]float32, int64, error) {
		m := irisMLP(t, 1, false)
		var opt optim.Optimizer = adam(t, m, 0.01)
		if shard {
			opt = ddp.NewShardedOptimizer(func(ps []*tensor.Tensor) (optim.Optimizer, error) {
				return optim.NewAdam(ps, optim.AdamOptions{LR: 0.01})
			})
		}
		tr, err := New(Options{Model: m, Optimizer: opt, Epochs: 3,
			Strategy: NewDataParallel(g, ddp.Options{ShardOptimizer: shard}),
			Train:    loader(t, trainT, data.LoaderOptions{BatchSize: 12, Shuffle: true, Seed: 1})})
		if err != nil {
			return nil, 0, err
		}
		if _, err := tr.Fit(context.Background()); err != nil {
			return nil, 0, err
		}
		return flatParams(m), ddp.StateBytes(opt), nil
	}
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	type out struct {
		w []float32
		b int64
	}
	res := map[bool][]out{}
	for _, shard := range []bool{false, true} {
		res[shard] = make([]out, 2)
		errs := commtest.OnAll(gs, func(g *comm.Group) error {
			w, b, err := fit(g, shard)
			res[shard][g.Rank()] = out{w, b}
			return err
		})
		commtest.MustAll(t, "fit", errs)
	}
	for i, v := range res[false][0].w {
		if d := math.Abs(float64(v - res[true][0].w[i])); d > 1e-6 {
			t.Fatalf("weight %d: sharded %v, plain %v", i, res[true][0].w[i], v)
		}
	}
	if p, z := res[false][0].b, res[true][0].b; z > p/2+64 || z < p/2-64 {
		t.Errorf("optimizer state: plain %d bytes, sharded %d", p, z)
	}
	// The option without the optimizer is refused.
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		m := irisMLP(t, 1, false)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 1,
			Strategy: NewDataParallel(g, ddp.Options{ShardOptimizer: true}),
			Train:    loader(t, trainT, data.LoaderOptions{BatchSize: 12})})
		if err != nil {
			return err
		}
		_, err = tr.Fit(context.Background())
		return err
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "needs a *ddp.ShardedOptimizer") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}
