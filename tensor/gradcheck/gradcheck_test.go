package gradcheck_test

import (
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

func TestCheckPassesCorrectGradient(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.5, -1, 2}, 3).SetRequiresGrad(true)
	err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Tanh() },
		[]*tensor.Tensor{x}, gradcheck.Eps, gradcheck.Atol, gradcheck.Rtol)
	if err != nil {
		t.Fatal(err)
	}
}

// A function whose recorded graph misses part of its dependence on x (a
// detached factor) has a wrong analytic gradient; the check must say so.
func TestCheckCatchesWrongGradient(t *testing.T) {
	x := tensor.FromFloat64([]float64{0.5, -1, 2}, 3).SetRequiresGrad(true)
	err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor { return in[0].Detach().Mul(in[0]) },
		[]*tensor.Tensor{x}, gradcheck.Eps, gradcheck.Atol, gradcheck.Rtol)
	if err == nil || !strings.Contains(err.Error(), "analytic") {
		t.Fatalf("want a gradient mismatch, got %v", err)
	}
}

func TestCheckRejectsFloat32(t *testing.T) {
	x := tensor.Ones(tensor.Float32, 2).SetRequiresGrad(true)
	err := gradcheck.Check(func(in []*tensor.Tensor) *tensor.Tensor { return in[0] }, []*tensor.Tensor{x}, 1e-3, 1e-3, 1e-3)
	if err == nil {
		t.Fatal("want an error for a float32 input")
	}
}
