package ddp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// mlp is the model of the tests: 6 → 16 → 12 → 3 with ReLUs.
func mlp(seed uint64) *nn.Sequential {
	rng := tensor.NewRNG(seed)
	return nn.NewSequential(nn.NewLinear(rng, 6, 16), nn.NewReLU(), nn.NewLinear(rng, 16, 12), nn.NewReLU(), nn.NewLinear(rng, 12, 3))
}

// problem is a data set cut into global batches; the last is short.
type problem struct {
	x      []float32 // rows × 6
	y      []int64
	global int
}

func newProblem(rows, global int) problem {
	rng := tensor.NewRNG(99)
	x := rng.Normal(tensor.Float32, 0, 1, rows, 6).Float32s()
	y := rng.RandInt(tensor.Int64, 0, 3, rows).Int64s()
	return problem{x: x, y: y, global: global}
}

func (p problem) steps() int { return (len(p.y) + p.global - 1) / p.global }

// part returns rows [lo, hi) of global batch k that rank r of n takes
// (DistributedBatchSampler's split: equal parts, the short tail split
// into parts differing by at most one).
func (p problem) part(k, r, n int) (lo, hi int) {
	start := k * p.global
	m := min(p.global, len(p.y)-start)
	if m == p.global {
		b := p.global / n
		return start + r*b, start + (r+1)*b
	}
	return start + r*m/n, start + (r+1)*m/n
}

func (p problem) batch(lo, hi int) (*tensor.Tensor, *tensor.Tensor) {
	return tensor.FromFloat32(slices.Clone(p.x[lo*6:hi*6]), hi-lo, 6), tensor.FromInt64(slices.Clone(p.y[lo:hi]), hi-lo)
}

func lossOf(m *nn.Sequential, x, y *tensor.Tensor) *tensor.Tensor {
	return nn.CrossEntropyLoss(m.Forward(x), y, nn.ClassOptions{})
}

// trainSingle runs the reference: one process, SGD over every global batch.
func trainSingle(t *testing.T, p problem, epochs int) []float32 {
	m := mlp(1)
	opt, err := optim.NewSGD(m.Parameters(), optim.SGDOptions{LR: 0.1, Momentum: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	for range epochs {
		for k := range p.steps() {
			x, y := p.batch(p.part(k, 0, 1))
			loss := lossOf(m, x, y)
			opt.ZeroGrad()
			loss.Backward()
			if err := opt.Step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return flat(m)
}

func flat(m nn.Module) []float32 {
	var out []float32
	for _, p := range m.Parameters() {
		out = append(out, p.Float32s()...)
	}
	return out
}

// trainDDP runs the same steps on rank g.Rank() of a data-parallel group,
// each rank weighting its gradient by its share of the global batch. The
// replicas start from different weights: New must broadcast rank 0's.
func trainDDP(g *comm.Group, p problem, epochs int, opts Options) ([]float32, error) {
	m := mlp(uint64(1 + 100*g.Rank()))
	d, err := New(m, g, opts)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	opt, err := optim.NewSGD(m.Parameters(), optim.SGDOptions{LR: 0.1, Momentum: 0.9})
	if err != nil {
		return nil, err
	}
	for range epochs {
		for k := range p.steps() {
			lo, hi := p.part(k, g.Rank(), g.Size())
			_, ghi := p.part(k, g.Size()-1, g.Size())
			glo, _ := p.part(k, 0, g.Size())
			d.SetScale(float64(hi-lo) / float64(ghi-glo))
			opt.ZeroGrad()
			if hi > lo {
				x, y := p.batch(lo, hi)
				loss := lossOf(m, x, y)
				if err := d.Prepare(loss); err != nil {
					return nil, err
				}
				loss.Backward()
			}
			if err := d.Sync(); err != nil {
				return nil, err
			}
			if err := opt.Step(); err != nil {
				return nil, err
			}
		}
	}
	return flat(m), nil
}

// The tolerance of the comparison with one process: a rank's gradient is
// a partial sum over its rows, scaled, then summed across ranks, where one
// process sums all rows in one GEMM. Each gradient element thus differs by
// a few float32 roundings (relative 1e-7 each); over 2 epochs of SGD with
// momentum on this small MLP the weights stay within 2e-5 absolute of the
// single-process weights (measured: 3e-8).
const weightTol = 2e-5

func TestMatchesSingleProcess(t *testing.T) {
	// 29 rows in global batches of 12: the last global batch has 5 rows,
	// split unevenly; 32 rows in batches of 6 leave a last batch of 2 rows,
	// so with 3 ranks rank 0's last part is empty.
	for _, tc := range []struct {
		ranks, rows, global int
		tr                  comm.Transport
	}{
		{2, 29, 12, comm.TransportTCP},
		{3, 29, 12, comm.TransportTCP},
		{3, 32, 6, comm.TransportSHM}, // last global batch of 2 rows: rank 0's part is empty
		{2, 29, 12, comm.TransportSHM},
	} {
		name := fmt.Sprintf("%dranks-%drows-%v", tc.ranks, tc.rows, tc.tr)
		t.Run(name, func(t *testing.T) {
			p := newProblem(tc.rows, tc.global)
			want := trainSingle(t, p, 2)
			gs := commtest.Groups(t, tc.ranks, tc.tr, nil)
			got := make([][]float32, tc.ranks)
			errs := commtest.OnAll(gs, func(g *comm.Group) error {
				w, err := trainDDP(g, p, 2, Options{FirstBucketMB: 0.0005, BucketCapMB: 0.001})
				got[g.Rank()] = w
				return err
			})
			commtest.MustAll(t, "train", errs)
			for r := range got {
				if !slices.Equal(got[r], got[0]) {
					t.Errorf("rank %d's weights differ from rank 0's", r)
				}
			}
			worst := 0.0
			for i := range want {
				worst = max(worst, math.Abs(float64(got[0][i]-want[i])))
			}
			t.Logf("largest difference from one process: %.3g", worst)
			if worst > weightTol {
				t.Errorf("weights differ from one process's by up to %g (tolerance %g)", worst, weightTol)
			}
		})
	}
}

func TestBucketLayout(t *testing.T) {
	gs := commtest.Groups(t, 1, comm.TransportTCP, nil)
	m := mlp(1)
	// A bucket closes once it holds at least its limit (40 floats for the
	// first, 100 after), as in PyTorch. Parameters: 0.weight 96, 0.bias 16, 2.weight 192, 2.bias 12, 4.weight 36, 4.bias 3 floats.
	d, err := New(m, gs[0], Options{FirstBucketMB: 40 * 4.0 / (1 << 20), BucketCapMB: 100 * 4.0 / (1 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"4.bias", "4.weight", "2.bias"}, {"2.weight"}, {"0.bias", "0.weight"}}
	if got := d.Buckets(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	// Grads are views of the buckets: backward writes into them.
	x, y := newProblem(4, 4).batch(0, 4)
	lossOf(m, x, y).Backward()
	for _, p := range d.params {
		b := d.buckets[p.bucket]
		if !slices.Equal(p.t.Grad().Float32s(), b.f32[p.off:p.off+p.n]) {
			t.Errorf("%s: Grad is not its bucket slot", p.name)
		}
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if def, err := New(mlp(1), gs[0], Options{}); err != nil || len(def.Buckets()) != 1 {
		t.Errorf("default options: buckets %v, err %v; want one bucket for a tiny model", def.Buckets(), err)
	}
}

// TestOverlap checks that the first bucket's all-reduce is queued while
// Backward still works on the first layer.
func TestOverlap(t *testing.T) {
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	p := newProblem(8, 8)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		m := mlp(1)
		d, err := New(m, g, Options{FirstBucketMB: 0.0001, BucketCapMB: 0.0001})
		if err != nil {
			return err
		}
		var mu sync.Mutex
		var events []string
		d.onLaunch = func(i int) {
			mu.Lock()
			events = append(events, fmt.Sprint("launch ", i))
			mu.Unlock()
		}
		first := m.Parameters()[0] // the first layer's weight: among the last to finish
		first.RegisterGradReadyHook(func(*tensor.Tensor) {
			mu.Lock()
			events = append(events, "first layer done")
			mu.Unlock()
		})
		x, y := p.batch(p.part(0, g.Rank(), 2))
		lossOf(m, x, y).Backward()
		if err := d.Sync(); err != nil {
			return err
		}
		if len(d.Buckets()) < 3 {
			return fmt.Errorf("only %d buckets", len(d.Buckets()))
		}
		if i := slices.Index(events, "first layer done"); i < 1 || events[0] != "launch 0" {
			return fmt.Errorf("events %v: bucket 0 was not queued before the first layer's gradient was done", events)
		}
		return nil
	})
	commtest.MustAll(t, "overlap", errs)
}

// TestNoSync checks gradient accumulation: two micro-batches under NoSync
// and one synchronized step equal the sum over the ranks of all three.
func TestNoSync(t *testing.T) {
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	p := newProblem(24, 8)
	// The reference: the gradients of every micro-batch of both ranks,
	// averaged over the ranks.
	ref := mlp(1)
	for k := range 3 {
		for r := range 2 {
			x, y := p.batch(p.part(k, r, 2))
			lossOf(ref, x, y).Backward()
		}
	}
	var want []float32
	for _, q := range ref.Parameters() {
		for _, v := range q.Grad().Float32s() {
			want = append(want, v/2)
		}
	}
	got := make([][]float32, 2)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		m := mlp(1)
		d, err := New(m, g, Options{FirstBucketMB: 0.0005, BucketCapMB: 0.001})
		if err != nil {
			return err
		}
		var launched int
		d.onLaunch = func(int) { launched++ }
		err = d.NoSync(func() error {
			for k := range 2 {
				x, y := p.batch(p.part(k, g.Rank(), 2))
				lossOf(m, x, y).Backward()
				if err := d.Sync(); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if launched != 0 {
			return fmt.Errorf("%d buckets reduced inside NoSync", launched)
		}
		x, y := p.batch(p.part(2, g.Rank(), 2))
		lossOf(m, x, y).Backward()
		if err := d.Sync(); err != nil {
			return err
		}
		for _, q := range m.Parameters() {
			got[g.Rank()] = append(got[g.Rank()], q.Grad().Float32s()...)
		}
		return nil
	})
	commtest.MustAll(t, "accumulate", errs)
	for i := range want {
		if d := math.Abs(float64(got[0][i] - want[i])); d > 1e-5 {
			t.Fatalf("gradient %d: %g, want %g", i, got[0][i], want[i])
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Error("ranks hold different gradients")
	}
}

// unusedNet has a layer that the loss does not use.
type unusedNet struct {
	nn.Base
	used, spare *nn.Linear
}

func newUnusedNet() *unusedNet {
	rng := tensor.NewRNG(3)
	n := &unusedNet{used: nn.NewLinear(rng, 6, 3), spare: nn.NewLinear(rng, 6, 3)}
	n.Register("used", n.used)
	n.Register("spare", n.spare)
	return n
}

func TestUnusedParameter(t *testing.T) {
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	p := newProblem(8, 8)
	for _, prepare := range []bool{false, true} {
		errs := commtest.OnAll(gs, func(g *comm.Group) error {
			n := newUnusedNet()
			d, err := New(n, g, Options{})
			if err != nil {
				return err
			}
			defer d.Close()
			x, y := p.batch(p.part(0, g.Rank(), 2))
			loss := nn.CrossEntropyLoss(n.used.Forward(x), y, nn.ClassOptions{})
			if prepare {
				if err := d.Prepare(loss); err != nil {
					return err
				}
			}
			loss.Backward()
			return d.Sync()
		})
		for r, err := range errs {
			var ue *UnusedParameterError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), `"spare.weight", "spare.bias"`) {
				t.Errorf("prepare %v, rank %d: error %v, want one naming spare.weight and spare.bias", prepare, r, err)
			}
		}
	}
	// Allowed: the spare layer's slots are reduced as they are (zero).
	for _, prepare := range []bool{false, true} {
		errs := commtest.OnAll(gs, func(g *comm.Group) error {
			n := newUnusedNet()
			d, err := New(n, g, Options{FindUnusedParameters: true})
			if err != nil {
				return err
			}
			defer d.Close()
			x, y := p.batch(p.part(0, g.Rank(), 2))
			loss := nn.CrossEntropyLoss(n.used.Forward(x), y, nn.ClassOptions{})
			if prepare {
				if err := d.Prepare(loss); err != nil {
					return err
				}
			}
			loss.Backward()
			if err := d.Sync(); err != nil {
				return err
			}
			for _, v := range n.spare.Parameters()[0].Grad().Float32s() {
				if v != 0 {
					return fmt.Errorf("unused gradient %v", v)
				}
			}
			return nil
		})
		commtest.MustAll(t, fmt.Sprint("allowed unused, prepare ", prepare), errs)
	}
}

// TestBuffersFollowRankZero checks that BatchNorm's running statistics,
// updated by each replica from its own batch, are rank 0's on every rank
// after Sync, and stay each rank's own with KeepLocalBuffers.
func TestBuffersFollowRankZero(t *testing.T) {
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	p := newProblem(16, 16)
	for _, keep := range []bool{false, true} {
		means := make([][]float32, 2)
		errs := commtest.OnAll(gs, func(g *comm.Group) error {
			rng := tensor.NewRNG(1)
			m := nn.NewSequential(nn.NewLinear(rng, 6, 8), nn.NewBatchNorm1d(8), nn.NewReLU(), nn.NewLinear(rng, 8, 3))
			d, err := New(m, g, Options{KeepLocalBuffers: keep})
			if err != nil {
				return err
			}
			defer d.Close()
			x, y := p.batch(p.part(0, g.Rank(), 2))
			lossOf(m, x, y).Backward()
			if err := d.Sync(); err != nil {
				return err
			}
			means[g.Rank()] = slices.Clone(nn.StateDict(m)["1.running_mean"].Float32s())
			return nil
		})
		commtest.MustAll(t, fmt.Sprint("keep ", keep), errs)
		if same := slices.Equal(means[0], means[1]); same == keep {
			t.Errorf("KeepLocalBuffers %v: running means equal across ranks: %v (%v, %v)", keep, same, means[0], means[1])
		}
	}
}
