package nn

import (
	"fmt"

	"github.com/fathom-ml/fathom/tensor"
)

// Dropout zeroes each element with probability P in training mode and
// scales the survivors by 1/(1−P), so the expected value is unchanged
// (inverted dropout; Srivastava et al., JMLR 2014). In evaluation mode it
// is the identity. The module owns its random stream, split from the RNG
// given to NewDropout, so a run is reproducible from one seed; Forward in
// training mode advances it and is therefore not safe for concurrent use.
type Dropout struct {
	Base
	P   float64
	rng *tensor.RNG
}

// NewDropout returns a Dropout with probability p ∈ [0, 1], drawing its own
// stream from rng (rng.Split()).
func NewDropout(rng *tensor.RNG, p float64) *Dropout {
	if p < 0 || p > 1 {
		panic(fmt.Sprintf("nn: NewDropout: probability %g is outside [0, 1]", p))
	}
	return &Dropout{P: p, rng: rng.Split()}
}

// RNG returns the module's random stream (to save or restore its state in
// a checkpoint).
func (d *Dropout) RNG() *tensor.RNG { return d.rng }

// Forward applies dropout in training mode and returns x in eval mode.
func (d *Dropout) Forward(x *tensor.Tensor) *tensor.Tensor {
	if !d.Training() || d.P == 0 {
		return x
	}
	return x.Mul(dropoutMask(d.rng, x.DType(), d.P, x.Shape()))
}

// dropoutMask returns a tensor of 0 (probability p) and 1/(1−p).
func dropoutMask(rng *tensor.RNG, dt tensor.DType, p float64, shape []int) *tensor.Tensor {
	n := 1
	for _, s := range shape {
		n *= s
	}
	scale := 0.0
	if p < 1 {
		scale = 1 / (1 - p)
	}
	switch dt {
	case tensor.Float64:
		m := make([]float64, n)
		for i := range m {
			if rng.Float64() >= p {
				m[i] = scale
			}
		}
		return tensor.FromFloat64(m, shape...)
	default:
		// float32 draws: 24 random bits are plenty for a keep decision.
		m := make([]float32, n)
		p32, s32 := float32(p), float32(scale)
		for i := range m {
			if rng.Float32() >= p32 {
				m[i] = s32
			}
		}
		t := tensor.FromFloat32(m, shape...)
		if dt != tensor.Float32 {
			t = t.To(dt)
		}
		return t
	}
}

func (d *Dropout) describe() string { return fmt.Sprintf("Dropout(p=%g)", d.P) }

func init() { registerLayer("dropout", []string{"p"}, buildDropout) }

func buildDropout(b *layerBuild) (Layer, []int, error) {
	p := b.spec.P
	if p == nil {
		return b.fail("field \"p\" is required")
	}
	if *p < 0 || *p > 1 {
		return b.fail("p=%g is outside [0, 1]", *p)
	}
	return NewDropout(b.rng, *p), b.same(), nil
}
