package nn_test

import (
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

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
	y1, g1 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		conv.Weight, conv.Bias = in[1], in[2]
		return seq.Forward(in[0])
	}, []*tensor.Tensor{x, conv.Weight, conv.Bias}, seed)
	y2, g2 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		conv.Weight, conv.Bias = in[1], in[2]
		return relu.Forward(conv.Forward(in[0])).Reshape(3, -1)
	}, []*tensor.Tensor{x, conv.Weight, conv.Bias}, seed)
	gradcheck.Near(t, "y", y1, y2, 1e-6)
	for i := range g1 {
		gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], 1e-5)
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
	y1, g1 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		lin.Weight, lin.Bias = in[1], in[2]
		return seq.Forward(in[0])
	}, []*tensor.Tensor{x, lin.Weight, lin.Bias}, seed)
	y2, g2 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		lin.Weight, lin.Bias = in[1], in[2]
		return relu.Forward(lin.Forward(in[0]))
	}, []*tensor.Tensor{x, lin.Weight, lin.Bias}, seed)
	gradcheck.Near(t, "y", y1, y2, 1e-6)
	for i := range g1 {
		gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], 1e-5)
	}
}
