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
