package nn_test

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// gradsOf runs f on fresh leaf copies of inputs, back-propagates a fixed
// random seed and returns the output values and every input's gradient.
func gradsOf(f func(in []*tensor.Tensor) *tensor.Tensor, inputs []*tensor.Tensor, seed *tensor.Tensor) (out []float64, grads [][]float64) {
	leaves := make([]*tensor.Tensor, len(inputs))
	for i, t := range inputs {
		leaves[i] = t.Detach().Clone().SetRequiresGrad(true)
	}
	y := f(leaves)
	y.BackwardWith(seed)
	for _, l := range leaves {
		grads = append(grads, l.Grad().Values())
	}
	return y.Values(), grads
}

func closeAll(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, composite %v", what, i, got[i], want[i])
		}
	}
}

// TestFusedNormsMatchComposite compares the fused LayerNorm and
// training-mode BatchNorm (values and the gradients of input, weight and
// bias) with the composites they replace, in float32 and float64.
func TestFusedNormsMatchComposite(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-10
		if dt == tensor.Float32 {
			tol = 2e-4
		}
		rng := tensor.NewRNG(5)
		t.Run("layernorm/"+dt.String(), func(t *testing.T) {
			x := rng.Normal(dt, 3, 2, 4, 5, 2, 6) // a large mean tests the two-pass variance
			w := rng.Normal(dt, 1, 0.5, 2, 6)
			b := rng.Normal(dt, 0, 0.5, 2, 6)
			seed := rng.Normal(dt, 0, 1, 4, 5, 2, 6)
			m := nn.NewLayerNorm(2, 6)
			m.To(dt)
			fused := func(in []*tensor.Tensor) *tensor.Tensor {
				m.Weight, m.Bias = in[1], in[2]
				return m.Forward(in[0])
			}
			comp := func(in []*tensor.Tensor) *tensor.Tensor { return nn.LayerNormComposite(in[0], in[1], in[2], 2, m.Eps) }
			y1, g1 := gradsOf(fused, []*tensor.Tensor{x, w, b}, seed)
			y2, g2 := gradsOf(comp, []*tensor.Tensor{x, w, b}, seed)
			closeAll(t, "y", y1, y2, tol)
			for i := range g1 {
				closeAll(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], tol)
			}
		})
		t.Run("batchnorm2d/"+dt.String(), func(t *testing.T) {
			x := rng.Normal(dt, 2, 3, 6, 3, 4, 5)
			w := rng.Normal(dt, 1, 0.5, 3)
			b := rng.Normal(dt, 0, 0.5, 3)
			seed := rng.Normal(dt, 0, 1, 6, 3, 4, 5)
			m := nn.NewBatchNorm2d(3)
			m.To(dt)
			fused := func(in []*tensor.Tensor) *tensor.Tensor {
				m.Weight, m.Bias = in[1], in[2]
				return m.Forward(in[0])
			}
			comp := func(in []*tensor.Tensor) *tensor.Tensor {
				y, _, _ := nn.BatchNormComposite(in[0], in[1], in[2], []int{0, 2, 3}, []int{3, 1, 1}, m.Eps)
				return y
			}
			y1, g1 := gradsOf(fused, []*tensor.Tensor{x, w, b}, seed)
			y2, g2 := gradsOf(comp, []*tensor.Tensor{x, w, b}, seed)
			closeAll(t, "y", y1, y2, tol)
			for i := range g1 {
				closeAll(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], tol)
			}
		})
	}
}

// BenchmarkNorms compares the fused norms with their composites, forward
// and backward, on a transformer-sized LayerNorm and a CNN-sized
// BatchNorm2d.
func BenchmarkNorms(b *testing.B) {
	rng := tensor.NewRNG(6)
	ln := nn.NewLayerNorm(512)
	bn := nn.NewBatchNorm2d(32)
	xl := rng.Normal(tensor.Float32, 0, 1, 64, 128, 512).SetRequiresGrad(true)
	xb := rng.Normal(tensor.Float32, 0, 1, 64, 32, 28, 28).SetRequiresGrad(true)
	for _, c := range []struct {
		name string
		f    func() *tensor.Tensor
	}{
		{"layernorm/fused", func() *tensor.Tensor { return ln.Forward(xl) }},
		{"layernorm/composite", func() *tensor.Tensor { return nn.LayerNormComposite(xl, ln.Weight, ln.Bias, 1, ln.Eps) }},
		{"batchnorm2d/fused", func() *tensor.Tensor { return bn.Forward(xb) }},
		{"batchnorm2d/composite", func() *tensor.Tensor {
			y, _, _ := nn.BatchNormComposite(xb, bn.Weight, bn.Bias, []int{0, 2, 3}, []int{32, 1, 1}, bn.Eps)
			return y
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.f().SumAll().Backward()
			}
		})
	}
}

// TestSequentialFusesConvRelu checks that a Sequential running Conv2d and
// ReLU as one fused op gives the values and gradients of the two layers
// run one after the other.
func TestSequentialFusesConvRelu(t *testing.T) {
	rng := tensor.NewRNG(10)
	conv := nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 2, Out: 4, Kernel: nn.Pair(3), Padding: nn.Pair(1)})
	relu := nn.NewReLU()
	seq := nn.NewSequential(conv, relu, nn.NewFlatten())
	x := rng.Normal(tensor.Float32, 0, 1, 3, 2, 6, 6)
	seed := rng.Normal(tensor.Float32, 0, 1, 3, 4*6*6)
	y1, g1 := gradsOf(func(in []*tensor.Tensor) *tensor.Tensor {
		conv.Weight, conv.Bias = in[1], in[2]
		return seq.Forward(in[0])
	}, []*tensor.Tensor{x, conv.Weight, conv.Bias}, seed)
	y2, g2 := gradsOf(func(in []*tensor.Tensor) *tensor.Tensor {
		conv.Weight, conv.Bias = in[1], in[2]
		return relu.Forward(conv.Forward(in[0])).Reshape(3, -1)
	}, []*tensor.Tensor{x, conv.Weight, conv.Bias}, seed)
	closeAll(t, "y", y1, y2, 1e-6)
	for i := range g1 {
		closeAll(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], 1e-5)
	}
}

// TestSequentialFusesLinearRelu is TestSequentialFusesConvRelu for Linear.
func TestSequentialFusesLinearRelu(t *testing.T) {
	rng := tensor.NewRNG(12)
	lin := nn.NewLinear(rng, 5, 7)
	relu := nn.NewReLU()
	seq := nn.NewSequential(lin, relu)
	x := rng.Normal(tensor.Float32, 0, 1, 4, 5)
	seed := rng.Normal(tensor.Float32, 0, 1, 4, 7)
	y1, g1 := gradsOf(func(in []*tensor.Tensor) *tensor.Tensor {
		lin.Weight, lin.Bias = in[1], in[2]
		return seq.Forward(in[0])
	}, []*tensor.Tensor{x, lin.Weight, lin.Bias}, seed)
	y2, g2 := gradsOf(func(in []*tensor.Tensor) *tensor.Tensor {
		lin.Weight, lin.Bias = in[1], in[2]
		return relu.Forward(lin.Forward(in[0]))
	}, []*tensor.Tensor{x, lin.Weight, lin.Bias}, seed)
	closeAll(t, "y", y1, y2, 1e-6)
	for i := range g1 {
		closeAll(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], 1e-5)
	}
}
