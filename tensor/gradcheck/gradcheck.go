// Package gradcheck verifies the gradients package tensor's autograd
// computes against central finite differences in float64.
//
// A check projects the output of f onto fixed pseudo-random weights w
// (L = Σ w·f(x)), runs Backward on L, and compares every element of every
// input's gradient with (L(x+ε) − L(x−ε)) / 2ε. Inputs that require grad
// must be Float64 leaves; they may be non-contiguous views (make the view
// first, then call SetRequiresGrad(true) on it).
//
//	x := tensor.FromFloat64([]float64{0.5, -1, 2}, 3).SetRequiresGrad(true)
//	err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor {
//		return in[0].Tanh()
//	}, []*tensor.Tensor{x}, 1e-6, 1e-7, 1e-5)
package gradcheck

import (
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/tensor"
)

// Default tolerances that suit smooth ops evaluated in float64.
const (
	Eps  = 1e-6
	Atol = 1e-6
	Rtol = 1e-5
)

// Check runs f on inputs and compares analytic with numerical gradients for
// every input that requires grad. An element passes when
// |analytic − numeric| ≤ atol + rtol·|numeric|. The returned error
// describes the worst element. f must be deterministic; it is called once
// per perturbed element and side, on inference views of the inputs.
func Check(f func(inputs []*tensor.Tensor) *tensor.Tensor, inputs []*tensor.Tensor, eps, atol, rtol float64) error {
	for i, in := range inputs {
		if in.RequiresGrad() && in.DType() != tensor.Float64 {
			return fmt.Errorf("gradcheck: input %d is %v; checks need float64", i, in.DType())
		}
		if in.RequiresGrad() && !in.IsLeaf() {
			return fmt.Errorf("gradcheck: input %d is not a leaf", i)
		}
	}
	out := f(inputs)
	w := tensor.NewRNG(12345).Uniform(tensor.Float64, 0.5, 1.5, out.Shape()...)
	wv := w.Values()
	// Analytic gradients.
	for _, in := range inputs {
		in.SetGrad(nil)
	}
	loss := out.To(tensor.Float64).Mul(w).SumAll()
	if loss.RequiresGrad() {
		loss.Backward()
	}
	views := make([]*tensor.Tensor, len(inputs))
	for i, in := range inputs {
		views[i] = in.NoGrad()
	}
	eval := func() float64 {
		v := f(views).Values()
		if len(v) != len(wv) {
			panic("gradcheck: output size changed between calls")
		}
		var s float64
		for j := range v {
			s += v[j] * wv[j]
		}
		return s
	}
	var worst struct {
		excess           float64
		input            int
		index            []int
		analytic, number float64
	}
	worst.excess = math.Inf(-1)
	for i, in := range inputs {
		if !in.RequiresGrad() {
			continue
		}
		var grad []float64
		if g := in.Grad(); g != nil {
			if !slices.Equal(g.Shape(), in.Shape()) {
				return fmt.Errorf("gradcheck: input %d has shape %v but its gradient %v", i, in.Shape(), g.Shape())
			}
			grad = g.Values()
		} else {
			grad = make([]float64, in.Numel())
		}
		shape := in.Shape()
		idx := make([]int, len(shape))
		for k := 0; k < in.Numel(); k++ {
			orig := in.At(idx...)
			in.SetAt(orig+eps, idx...)
			lp := eval()
			in.SetAt(orig-eps, idx...)
			lm := eval()
			in.SetAt(orig, idx...)
			num := (lp - lm) / (2 * eps)
			a := grad[k]
			excess := math.Abs(a-num) - (atol + rtol*math.Abs(num))
			if math.IsNaN(a) != math.IsNaN(num) {
				excess = math.Inf(1)
			}
			if excess > worst.excess {
				worst.excess, worst.input, worst.index = excess, i, append([]int(nil), idx...)
				worst.analytic, worst.number = a, num
			}
			for d := len(idx) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < shape[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	if worst.excess > 0 {
		return fmt.Errorf("gradcheck: input %d at %v: analytic %.10g, numeric %.10g (|diff| %.3g > atol %g + rtol %g·|numeric|)",
			worst.input, worst.index, worst.analytic, worst.number, math.Abs(worst.analytic-worst.number), atol, rtol)
	}
	return nil
}
