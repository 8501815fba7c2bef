package nn_test

import (
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

type convertible = nn.Layer

// TestLayerGradients checks every layer's gradients with respect to its
// input and all its parameters against finite differences in float64.
func TestLayerGradients(t *testing.T) {
	rng := tensor.NewRNG(21)
	in := func(shape ...int) *tensor.Tensor { return rng.Normal(tensor.Float64, 0, 1, shape...) }
	train := func(m convertible) convertible { return m }
	eval := func(m convertible) convertible { m.Eval(); return m }
	bnEval := nn.NewBatchNorm2d(3)
	bnEval.To(tensor.Float64)
	bnEval.RunningMean.CopyFrom(rng.Normal(tensor.Float64, 0, 1, 3))
	bnEval.RunningVar.CopyFrom(rng.Uniform(tensor.Float64, 0.5, 2, 3))
	for _, c := range []struct {
		name string
		m    convertible
		x    *tensor.Tensor
	}{
		{"linear", nn.NewLinear(rng, 4, 3), in(5, 4)},
		{"linear 3-D input, no bias", nn.NewLinearWith(rng, nn.LinearConfig{In: 4, Out: 2, NoBias: true}), in(2, 3, 4)},
		{"conv2d", nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 2, Out: 3, Kernel: [2]int{3, 2}, Stride: [2]int{2, 1}, Padding: nn.Pair(1), Dilation: [2]int{1, 2}}), in(2, 2, 6, 5)},
		{"conv2d groups", nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 4, Out: 2, Kernel: nn.Pair(3), Groups: 2}), in(1, 4, 5, 5)},
		{"maxpool2d", &nn.MaxPool2d{Kernel: nn.Pair(2), Stride: nn.Pair(2)}, in(2, 2, 4, 6)},
		{"avgpool2d", &nn.AvgPool2d{Kernel: nn.Pair(3), Stride: nn.Pair(2), Padding: nn.Pair(1)}, in(1, 2, 5, 5)},
		{"maxpool2d/ceil", &nn.MaxPool2d{Kernel: nn.Pair(2), Stride: nn.Pair(2), CeilMode: true}, in(2, 2, 5, 7)},
		{"avgpool2d/ceil", &nn.AvgPool2d{Kernel: nn.Pair(3), Stride: nn.Pair(2), Padding: nn.Pair(1), CeilMode: true, CountIncludePad: true}, in(1, 2, 6, 6)},
		{"adaptiveavgpool2d", nn.NewAdaptiveAvgPool2d(2, 3), in(2, 2, 5, 4)},
		{"batchnorm1d train", train(nn.NewBatchNorm1d(3)), in(6, 3)},
		{"batchnorm1d 3-D train", train(nn.NewBatchNorm1d(3)), in(4, 3, 2)},
		{"batchnorm2d train", train(nn.NewBatchNorm2d(3)), in(3, 3, 2, 2)},
		{"batchnorm2d eval", eval(bnEval), in(2, 3, 2, 2)},
		{"layernorm", nn.NewLayerNorm(2, 3), in(4, 2, 3)},
		{"flatten", nn.NewFlatten(), in(2, 3, 2)},
		{"dropout eval", eval(nn.NewDropout(rng, 0.5)), in(3, 3)},
		{"sequential", nn.NewSequential(nn.NewLinear(rng, 3, 4), nn.NewTanh(), nn.NewLinear(rng, 4, 2)), in(5, 3)},
		{"residual", nn.NewResidual(nn.NewSequential(nn.NewLinear(rng, 3, 3), nn.NewGELU()), nil), in(4, 3)},
		{"residual with projection", nn.NewResidual(nn.NewLinear(rng, 3, 5), nn.NewLinear(rng, 3, 5)), in(4, 3)},
		{"encoder layer", eval(nn.NewTransformerEncoderLayer(rng, nn.TransformerEncoderLayerConfig{DModel: 4, Heads: 2, FF: 6, BatchFirst: true})), in(2, 3, 4)},
		{"encoder layer norm first gelu", eval(nn.NewTransformerEncoderLayer(rng, nn.TransformerEncoderLayerConfig{DModel: 4, Heads: 2, FF: 6, NormFirst: true, Activation: "gelu"})), in(3, 2, 4)},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.m.To(tensor.Float64)
			x := c.x.SetRequiresGrad(true)
			inputs := append([]*tensor.Tensor{x}, c.m.Parameters()...)
			err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor { return c.m.Forward(in[0]) }, inputs, 1e-6, 1e-7, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestActivationGradients(t *testing.T) {
	rng := tensor.NewRNG(22)
	for _, m := range []nn.Layer{nn.NewReLU(), nn.NewLeakyReLU(0.1), nn.NewELU(0.8), nn.NewSigmoid(), nn.NewTanh(),
		&nn.Softplus{Beta: 2, Threshold: 3}, nn.NewSiLU(), nn.NewGELU(), &nn.GELU{Approximate: "tanh"}, nn.NewSoftmax(-1), nn.NewLogSoftmax(0)} {
		// Stay away from the kinks of ReLU-like functions at 0.
		x := rng.Uniform(tensor.Float64, 0.1, 2, 4, 5).Mul(rng.Bernoulli(tensor.Float64, 0.5, 4, 5).MulScalar(2).AddScalar(-1)).SetRequiresGrad(true)
		if err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor { return m.Forward(in[0]) }, []*tensor.Tensor{x}, 1e-6, 1e-7, 1e-5); err != nil {
			t.Errorf("%T: %v", m, err)
		}
	}
}

func TestAttentionGradients(t *testing.T) {
	rng := tensor.NewRNG(23)
	m := nn.NewMultiheadAttention(rng, nn.MultiheadAttentionConfig{EmbedDim: 4, Heads: 2, BatchFirst: true})
	m.To(tensor.Float64)
	q := rng.Normal(tensor.Float64, 0, 1, 2, 3, 4).SetRequiresGrad(true)
	k := rng.Normal(tensor.Float64, 0, 1, 2, 2, 4).SetRequiresGrad(true)
	v := rng.Normal(tensor.Float64, 0, 1, 2, 2, 4).SetRequiresGrad(true)
	kpm := tensor.FromBool([]bool{false, true, false, false}, 2, 2)
	inputs := append([]*tensor.Tensor{q, k, v}, m.Parameters()...)
	err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor {
		out, w := m.Forward(in[0], in[1], in[2], nn.AttentionOptions{KeyPaddingMask: kpm, NeedWeights: true})
		return out.Sum([]int{2}, false).Add(w.Sum([]int{2}, false).MulScalar(0)).Add(w.Select(2, 0))
	}, inputs, 1e-6, 1e-7, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	// Self-attention takes the packed projection path.
	x := rng.Normal(tensor.Float64, 0, 1, 2, 3, 4).SetRequiresGrad(true)
	err = gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor {
		out, _ := m.Forward(in[0], in[0], in[0], nn.AttentionOptions{Causal: true})
		return out
	}, append([]*tensor.Tensor{x}, m.Parameters()...), 1e-6, 1e-7, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
}

func TestEmbeddingGradient(t *testing.T) {
	rng := tensor.NewRNG(24)
	m := nn.NewEmbedding(rng, 5, 3)
	m.To(tensor.Float64)
	idx := tensor.FromInt64([]int64{1, 4, 1, 0}, 2, 2)
	if err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor { return m.Forward(idx) }, m.Parameters(), 1e-6, 1e-7, 1e-5); err != nil {
		t.Fatal(err)
	}
}
