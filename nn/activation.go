package nn

import (
	"fmt"

	"github.com/fathom-ml/fathom/tensor"
)

// Activation modules wrap the elementwise tensor methods (x.Relu(),
// x.Gelu(), ...), which are the functional forms. All have no parameters
// and their zero values are ready to use, with PyTorch's defaults filled in
// by the constructors where a parameter exists. As in PyTorch, every
// activation maps NaN to NaN.

// ReLU is max(x, 0); NaN stays NaN and −0 stays −0 (torch.relu).
type ReLU struct{ Base }

// NewReLU returns a ReLU module.
func NewReLU() *ReLU { return &ReLU{} }

// Forward applies the activation.
func (*ReLU) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Relu() }

// LeakyReLU is x for x ≥ 0 and Slope·x otherwise.
type LeakyReLU struct {
	Base
	Slope float64
}

// NewLeakyReLU returns a LeakyReLU with the given negative slope (PyTorch's
// default is 0.01).
func NewLeakyReLU(slope float64) *LeakyReLU { return &LeakyReLU{Slope: slope} }

// Forward applies the activation.
func (m *LeakyReLU) Forward(x *tensor.Tensor) *tensor.Tensor { return x.LeakyRelu(m.Slope) }

func (m *LeakyReLU) describe() string { return fmt.Sprintf("LeakyReLU(slope=%g)", m.Slope) }

// ELU is x for x > 0 and Alpha·(eˣ − 1) otherwise (Clevert et al., 2015).
type ELU struct {
	Base
	Alpha float64
}

// NewELU returns an ELU with the given alpha (PyTorch's default is 1).
func NewELU(alpha float64) *ELU { return &ELU{Alpha: alpha} }

// Forward applies the activation.
func (m *ELU) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Elu(m.Alpha) }

func (m *ELU) describe() string { return fmt.Sprintf("ELU(alpha=%g)", m.Alpha) }

// Sigmoid is 1/(1 + e⁻ˣ).
type Sigmoid struct{ Base }

// NewSigmoid returns a Sigmoid module.
func NewSigmoid() *Sigmoid { return &Sigmoid{} }

// Forward applies the activation.
func (*Sigmoid) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Sigmoid() }

// Tanh is the hyperbolic tangent.
type Tanh struct{ Base }

// NewTanh returns a Tanh module.
func NewTanh() *Tanh { return &Tanh{} }

// Forward applies the activation.
func (*Tanh) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Tanh() }

// Softplus is ln(1 + e^(Beta·x))/Beta, and x where Beta·x > Threshold.
type Softplus struct {
	Base
	Beta, Threshold float64
}

// NewSoftplus returns a Softplus with PyTorch's defaults beta = 1,
// threshold = 20.
func NewSoftplus() *Softplus { return &Softplus{Beta: 1, Threshold: 20} }

// Forward applies the activation.
func (m *Softplus) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Softplus(m.Beta, m.Threshold) }

func (m *Softplus) describe() string {
	return fmt.Sprintf("Softplus(beta=%g, threshold=%g)", m.Beta, m.Threshold)
}

// SiLU is x·σ(x), also called Swish (Ramachandran et al., 2017).
type SiLU struct{ Base }

// NewSiLU returns a SiLU module.
func NewSiLU() *SiLU { return &SiLU{} }

// Forward applies the activation.
func (*SiLU) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Silu() }

// GELU is x·Φ(x) (Hendrycks & Gimpel, 2016), or with Approximate = "tanh"
// the approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
type GELU struct {
	Base
	Approximate string // "" or "none": exact; "tanh": the tanh approximation
}

// NewGELU returns an exact GELU.
func NewGELU() *GELU { return &GELU{} }

// Forward applies the activation.
func (m *GELU) Forward(x *tensor.Tensor) *tensor.Tensor {
	switch m.Approximate {
	case "", "none":
		return x.Gelu()
	case "tanh":
		return x.GeluTanh()
	}
	panic(fmt.Sprintf("nn: GELU: unknown approximation %q (want \"none\" or \"tanh\")", m.Approximate))
}

func (m *GELU) describe() string {
	if m.Approximate == "tanh" {
		return "GELU(approximate=tanh)"
	}
	return "GELU()"
}

// Softmax normalizes exp(x) to sum to 1 along Dim.
type Softmax struct {
	Base
	Dim int
}

// NewSoftmax returns a Softmax over dim (negative counts from the end).
func NewSoftmax(dim int) *Softmax { return &Softmax{Dim: dim} }

// Forward applies the softmax.
func (m *Softmax) Forward(x *tensor.Tensor) *tensor.Tensor { return x.Softmax(m.Dim) }

func (m *Softmax) describe() string { return fmt.Sprintf("Softmax(dim=%d)", m.Dim) }

// LogSoftmax is x − ln Σ exp(x) along Dim.
type LogSoftmax struct {
	Base
	Dim int
}

// NewLogSoftmax returns a LogSoftmax over dim.
func NewLogSoftmax(dim int) *LogSoftmax { return &LogSoftmax{Dim: dim} }

// Forward applies the log-softmax.
func (m *LogSoftmax) Forward(x *tensor.Tensor) *tensor.Tensor { return x.LogSoftmax(m.Dim) }

func (m *LogSoftmax) describe() string { return fmt.Sprintf("LogSoftmax(dim=%d)", m.Dim) }

// Activation returns the activation module called name ("relu", "gelu",
// "tanh", "sigmoid", "silu"/"swish", "elu", "leaky_relu", "softplus",
// "identity"), with PyTorch's default parameters.
func Activation(name string) (Layer, error) {
	switch normType(name) {
	case "relu":
		return NewReLU(), nil
	case "gelu":
		return NewGELU(), nil
	case "tanh":
		return NewTanh(), nil
	case "sigmoid":
		return NewSigmoid(), nil
	case "silu", "swish":
		return NewSiLU(), nil
	case "elu":
		return NewELU(1), nil
	case "leakyrelu":
		return NewLeakyReLU(0.01), nil
	case "softplus":
		return NewSoftplus(), nil
	case "identity", "linear":
		return NewIdentity(), nil
	}
	return nil, fmt.Errorf("unknown activation %q (want relu, gelu, tanh, sigmoid, silu, elu, leaky_relu, softplus or identity)", name)
}

func init() {
	for _, a := range []struct {
		typ string
		new func() Layer
	}{
		{"relu", func() Layer { return NewReLU() }},
		{"sigmoid", func() Layer { return NewSigmoid() }},
		{"tanh", func() Layer { return NewTanh() }},
		{"silu", func() Layer { return NewSiLU() }},
	} {
		registerLayer(a.typ, nil, func(b *layerBuild) (Layer, []int, error) { return a.new(), b.same(), nil })
	}
	registerAlias("swish", "silu")
	registerLayer("leakyrelu", []string{"slope"}, func(b *layerBuild) (Layer, []int, error) {
		slope := 0.01
		if b.spec.Slope != nil {
			slope = *b.spec.Slope
		}
		return NewLeakyReLU(slope), b.same(), nil
	})
	registerLayer("elu", []string{"alpha"}, func(b *layerBuild) (Layer, []int, error) {
		a := b.spec.Alpha
		if a == 0 {
			a = 1
		}
		return NewELU(a), b.same(), nil
	})
	registerLayer("softplus", []string{"beta", "threshold"}, func(b *layerBuild) (Layer, []int, error) {
		sp := NewSoftplus()
		if b.spec.Beta != 0 {
			sp.Beta = b.spec.Beta
		}
		if b.spec.Threshold != 0 {
			sp.Threshold = b.spec.Threshold
		}
		return sp, b.same(), nil
	})
	registerLayer("gelu", []string{"approximate"}, func(b *layerBuild) (Layer, []int, error) {
		switch b.spec.Approximate {
		case "", "none", "tanh":
		default:
			return b.fail("approximate=%q, want none or tanh", b.spec.Approximate)
		}
		return &GELU{Approximate: b.spec.Approximate}, b.same(), nil
	})
	registerLayer("softmax", []string{"dim"}, buildSoftmax)
	registerLayer("logsoftmax", []string{"dim"}, buildSoftmax)
}

// buildSoftmax builds softmax and logsoftmax.
func buildSoftmax(b *layerBuild) (Layer, []int, error) {
	in := b.in
	d := -1
	if b.spec.Dim != nil {
		d = *b.spec.Dim
	}
	// The spec's shapes have no batch dim; dim counts in the batched
	// tensor, so 0 (the batch) is refused.
	if d == 0 || d > len(in) || d < -len(in) {
		return b.fail("dim=%d is outside the example dims (1..%d or -%d..-1)", d, len(in), len(in))
	}
	if b.typ == "softmax" {
		return NewSoftmax(d), b.same(), nil
	}
	return NewLogSoftmax(d), b.same(), nil
}
