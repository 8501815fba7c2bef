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
	in, err := b.linearIn()
	if err != nil {
		return nil, nil, err
	}
	out := b.spec.Out
	if err := b.reserve(product(in, out) + b.biasValues(out)); err != nil {
		return nil, nil, err
	}
	return NewLinearWith(b.rng, LinearConfig{In: in, Out: out, NoBias: !b.bias()}), b.last(out), nil
}

// linearIn checks the input and "out" of a Linear-shaped layer (linear,
// qlinear) and returns its number of input features.
func (b *layerBuild) linearIn() (int, error) {
	s, in := b.spec, b.in
	if len(in) == 0 {
		return 0, b.errorf("input has no feature dim")
	}
	f := in[len(in)-1]
	if err := b.checkIn(f, "features"); err != nil {
		return 0, b.errorf("%v", err)
	}
	if err := b.needOut(); err != nil {
		return 0, b.errorf("%v", err)
	}
	if product(f, s.Out) > maxParams {
		return 0, b.errorf("a weight of %d×%d is too large", s.Out, f)
	}
	return f, nil
}
