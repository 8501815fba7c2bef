package nn

import (
	"fmt"

	"github.com/fathom-ml/fathom/tensor"
)

// Linear is a fully connected layer, y = x·Wᵀ + b (torch.nn.Linear). It
// applies to the last dim of an input of any rank ≥ 1. Parameters:
// "weight" [Out, In] and "bias" [Out] (absent with NoBias). It runs as one
// fused GEMM (tensor.Linear).
type Linear struct {
	Base
	Weight *tensor.Tensor
	Bias   *tensor.Tensor // nil without bias
	In     int
	Out    int
}

// LinearConfig configures NewLinearWith.
type LinearConfig struct {
	In, Out int
	NoBias  bool
}

// NewLinear returns a Linear layer with bias, initialized as PyTorch does
// (weight kaiming_uniform with a = √5, bias U(−1/√in, 1/√in)).
func NewLinear(rng *tensor.RNG, in, out int) *Linear {
	return NewLinearWith(rng, LinearConfig{In: in, Out: out})
}

// NewLinearWith returns a Linear layer configured by c.
func NewLinearWith(rng *tensor.RNG, c LinearConfig) *Linear {
	if c.In < 0 || c.Out < 0 {
		panic(fmt.Sprintf("nn: NewLinear(in=%d, out=%d): negative size", c.In, c.Out))
	}
	l := &Linear{In: c.In, Out: c.Out, Weight: tensor.Zeros(tensor.Float32, c.Out, c.In)}
	if !c.NoBias {
		l.Bias = tensor.Zeros(tensor.Float32, c.Out)
	}
	initAffine(rng, l.Weight, l.Bias)
	l.RegisterParameter("weight", &l.Weight)
	l.RegisterParameter("bias", &l.Bias)
	return l
}

// Forward maps x [..., In] to [..., Out].
func (l *Linear) Forward(x *tensor.Tensor) *tensor.Tensor {
	return tensor.Linear(x, l.Weight, l.Bias)
}

func (l *Linear) describe() string {
	return fmt.Sprintf("Linear(in=%d, out=%d, bias=%v)", l.In, l.Out, l.Bias != nil)
}

func init() { registerLayer("linear", []string{"in", "out", "bias"}, buildLinear) }

func buildLinear(b *layerBuild) (Layer, []int, error) {
	s, in := b.spec, b.in
	if len(in) == 0 {
		return b.fail("input has no feature dim")
	}
	if err := b.checkIn(in[len(in)-1], "features"); err != nil {
		return b.fail("%v", err)
	}
	if err := b.needOut(); err != nil {
		return b.fail("%v", err)
	}
	if product(in[len(in)-1], s.Out) > maxParams {
		return b.fail("a weight of %d×%d is too large", s.Out, in[len(in)-1])
	}
	if err := b.reserve(product(in[len(in)-1], s.Out) + b.biasValues(s.Out)); err != nil {
		return nil, nil, err
	}
	return NewLinearWith(b.rng, LinearConfig{In: in[len(in)-1], Out: s.Out, NoBias: !b.bias()}), b.last(s.Out), nil
}
