package nn_test

import (
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

// oneProcess is the StatsReducer of a single process: sums are the
// process's own.
type oneProcess struct{ calls int }

func (o *oneProcess) SumStats([]float64) { o.calls++ }
func (o *oneProcess) Share() float64     { return 1 }

// In one process, the synchronized path computes what BatchNorm computes:
// the same outputs, gradients and running statistics.
func TestSyncBatchNormOneProcessIsBatchNorm(t *testing.T) {
	for _, shape := range [][]int{{6, 3}, {4, 3, 5}, {3, 3, 4, 2}} {
		rng := tensor.NewRNG(3)
		x := rng.Normal(tensor.Float32, 0.5, 2, shape...)
		seed := rng.Normal(tensor.Float32, 0, 1, shape...)
		mk := func() *nn.BatchNorm {
			if len(shape) == 4 {
				return nn.NewBatchNorm2d(3)
			}
			return nn.NewBatchNorm1d(3)
		}
		plain, synced := mk(), mk()
		red := &oneProcess{}
		synced.Sync = red
		for _, b := range []*nn.BatchNorm{plain, synced} {
			copy(b.Weight.Float32s(), []float32{1.5, -0.5, 2})
			copy(b.Bias.Float32s(), []float32{0.1, 0.2, -0.3})
		}
		run := func(b *nn.BatchNorm) ([]float64, [][]float64) {
			return gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
				b.Weight, b.Bias = in[1], in[2]
				return b.Forward(in[0])
			}, []*tensor.Tensor{x, plain.Weight, plain.Bias}, seed)
		}
		y1, g1 := run(plain)
		y2, g2 := run(synced)
		gradcheck.Near(t, "y", y2, y1, 1e-5)
		for i := range g1 {
			gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g2[i], g1[i], 1e-4)
		}
		gradcheck.Near(t, "running_mean", float64s(synced.RunningMean), float64s(plain.RunningMean), 1e-6)
		gradcheck.Near(t, "running_var", float64s(synced.RunningVar), float64s(plain.RunningVar), 1e-6)
		if red.calls != 3 {
			t.Errorf("%v: %d statistics sums per forward and backward, want 3", shape, red.calls)
		}
	}
}

// The synchronized path's gradients against central differences (float64).
func TestSyncBatchNormGradcheck(t *testing.T) {
	rng := tensor.NewRNG(5)
	b := nn.NewBatchNorm1d(2)
	b.Sync = &oneProcess{}
	b.To(tensor.Float64)
	x := rng.Normal(tensor.Float64, 0, 1, 5, 2, 3).SetRequiresGrad(true)
	w := tensor.FromFloat64([]float64{1.2, -0.7}, 2).SetRequiresGrad(true)
	bias := tensor.FromFloat64([]float64{0.3, 0.1}, 2).SetRequiresGrad(true)
	err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor {
		b.Weight, b.Bias = in[1], in[2]
		return b.Forward(in[0]).Mul(in[0]).SumAll()
	}, []*tensor.Tensor{x, w, bias}, 1e-6, 1e-6, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
}

func float64s(t *tensor.Tensor) []float64 {
	out := make([]float64, t.Numel())
	for i, v := range t.Float32s() {
		out[i] = float64(v)
	}
	return out
}
