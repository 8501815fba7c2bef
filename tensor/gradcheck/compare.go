package gradcheck

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// Values and gradients for comparing a fused op with the composite it
// replaces: run both through Grads on the same inputs and seed, then
// compare with Near.

// Grads runs f on fresh leaf copies of inputs, back-propagates seed (the
// gradient of the output) and returns the output values and every input's
// gradient.
func Grads(f func(in []*tensor.Tensor) *tensor.Tensor, inputs []*tensor.Tensor, seed *tensor.Tensor) (out []float64, grads [][]float64) {
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

// Near fails t when got and want differ in length or an element differs
// by more than tol·(1 + |want|).
func Near(t testing.TB, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}
