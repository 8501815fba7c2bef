package nn

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/tensor"
)

// Initializers fill a tensor in place from an explicit RNG, as
// torch.nn.init does. Each layer's constructor applies PyTorch's default
// for that layer; call these to choose another scheme afterwards:
//
//	l := nn.NewLinear(rng, 256, 128)
//	nn.InitKaimingNormal(rng, l.Weight, 0, nn.FanIn, "relu")
//	l.Bias.Zero()
//
// The formulas are those of Glorot & Bengio, "Understanding the difficulty
// of training deep feedforward neural networks" (AISTATS 2010) for Xavier,
// and He et al., "Delving Deep into Rectifiers" (ICCV 2015) for Kaiming.

// FanMode selects which fan Kaiming initialization preserves the variance of.
type FanMode int

const (
	// FanIn preserves the variance of activations in the forward pass.
	FanIn FanMode = iota
	// FanOut preserves the variance of gradients in the backward pass.
	FanOut
)

// Fans returns the fan-in and fan-out of a weight of the given shape as
// PyTorch computes them: dim 1 and dim 0 times the receptive field (the
// product of dims 2 and up). It panics for fewer than 2 dims.
func Fans(shape []int) (fanIn, fanOut int) {
	if len(shape) < 2 {
		panic(fmt.Sprintf("nn: fan in and fan out need a tensor of at least 2 dims, got shape %v", shape))
	}
	rf := 1
	for _, s := range shape[2:] {
		rf *= s
	}
	return shape[1] * rf, shape[0] * rf
}

// CalculateGain returns the recommended gain for a nonlinearity, as
// torch.nn.init.calculate_gain: 1 for "linear", "identity", "conv1d",
// "conv2d", "conv3d" and "sigmoid"; 5/3 for "tanh"; √2 for "relu";
// √(2/(1+slope²)) for "leaky_relu" with slope = param (pass PyTorch's
// default 0.01 explicitly); 3/4 for "selu". It panics on other names.
func CalculateGain(nonlinearity string, param float64) float64 {
	switch nonlinearity {
	case "linear", "identity", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sigmoid":
		return 1
	case "tanh":
		return 5.0 / 3
	case "relu":
		return math.Sqrt2
	case "leaky_relu":
		return math.Sqrt(2 / (1 + param*param))
	case "selu":
		return 3.0 / 4
	}
	panic(fmt.Sprintf("nn: CalculateGain: unsupported nonlinearity %q", nonlinearity))
}

func fan(t *tensor.Tensor, mode FanMode) int {
	in, out := Fans(t.Shape())
	if mode == FanOut {
		return out
	}
	return in
}

// InitUniform fills t with values drawn from U(lo, hi).
func InitUniform(rng *tensor.RNG, t *tensor.Tensor, lo, hi float64) {
	t.CopyFrom(rng.Uniform(t.DType(), lo, hi, t.Shape()...))
}

// InitNormal fills t with values drawn from N(mean, std²).
func InitNormal(rng *tensor.RNG, t *tensor.Tensor, mean, std float64) {
	t.CopyFrom(rng.Normal(t.DType(), mean, std, t.Shape()...))
}

// InitXavierUniform fills t from U(−a, a) with a = gain·√(6/(fan_in+fan_out)).
func InitXavierUniform(rng *tensor.RNG, t *tensor.Tensor, gain float64) {
	in, out := Fans(t.Shape())
	a := gain * math.Sqrt(6/float64(in+out))
	InitUniform(rng, t, -a, a)
}

// InitXavierNormal fills t from N(0, std²) with std = gain·√(2/(fan_in+fan_out)).
func InitXavierNormal(rng *tensor.RNG, t *tensor.Tensor, gain float64) {
	in, out := Fans(t.Shape())
	InitNormal(rng, t, 0, gain*math.Sqrt(2/float64(in+out)))
}

// InitKaimingUniform fills t from U(−b, b) with b = gain·√(3/fan), gain =
// CalculateGain(nonlinearity, a) and fan chosen by mode. PyTorch's default
// for Linear and Conv weights is a = √5, FanIn, "leaky_relu", which gives
// b = 1/√fan_in.
func InitKaimingUniform(rng *tensor.RNG, t *tensor.Tensor, a float64, mode FanMode, nonlinearity string) {
	gain := CalculateGain(nonlinearity, a)
	b := gain * math.Sqrt(3/float64(fan(t, mode)))
	InitUniform(rng, t, -b, b)
}

// InitKaimingNormal fills t from N(0, std²) with std = gain/√fan.
func InitKaimingNormal(rng *tensor.RNG, t *tensor.Tensor, a float64, mode FanMode, nonlinearity string) {
	gain := CalculateGain(nonlinearity, a)
	InitNormal(rng, t, 0, gain/math.Sqrt(float64(fan(t, mode))))
}

// initAffine applies PyTorch's default initialization of Linear and Conv
// layers: weight kaiming_uniform(a=√5), bias U(−1/√fan_in, 1/√fan_in).
func initAffine(rng *tensor.RNG, w, b *tensor.Tensor) {
	InitKaimingUniform(rng, w, math.Sqrt(5), FanIn, "leaky_relu")
	if b != nil {
		in, _ := Fans(w.Shape())
		bound := 0.0
		if in > 0 {
			bound = 1 / math.Sqrt(float64(in))
		}
		InitUniform(rng, b, -bound, bound)
	}
}
