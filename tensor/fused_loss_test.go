package tensor_test

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

// crossEntropyComposite is −Σ_c a[i, c]·log_softmax(x)[i, c] per row from
// primitive ops, the reference of the fused op.
func crossEntropyComposite(x *tensor.Tensor, ct *tensor.CrossEntropyTargets) *tensor.Tensor {
	m, c := x.Size(0), x.Size(1)
	a := make([]float64, m*c)
	for i := range m {
		ct.Row(i, a[i*c:(i+1)*c])
	}
	at := tensor.FromFloat64(a, m, c).To(x.DType())
	return x.LogSoftmax(1).Mul(at).Sum([]int{1}, false).Neg()
}

// TestCrossEntropyMatchesComposite compares CrossEntropyRows and
// CrossEntropySum (values and the logits' gradient) with the composite,
// for class-index targets (plain, weighted, smoothed, with skipped rows)
// and dense targets, in float32 and float64.
func TestCrossEntropyMatchesComposite(t *testing.T) {
	const m, c = 9, 7
	rng := tensor.NewRNG(11)
	class := rng.RandInt(tensor.Int64, 0, c, m).Int64s()
	weight := rng.Uniform(tensor.Float64, 0.2, 2, m).Float64s()
	smooth := rng.Uniform(tensor.Float64, 0, 0.05, c).Float64s()
	skip := make([]bool, m)
	skip[2], skip[5] = true, true
	class[5] = -100 // a skipped row's class is not looked at
	dense := rng.Uniform(tensor.Float64, 0, 1, m*c).Float64s()
	ones := make([]float64, m)
	for i := range ones {
		ones[i] = 1
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 2e-6
		}
		for _, tc := range []struct {
			name string
			ct   tensor.CrossEntropyTargets
		}{
			{"class", tensor.CrossEntropyTargets{Class: class[:3:3], Weight: ones[:3]}},
			{"weighted", tensor.CrossEntropyTargets{Class: class, Weight: weight, Skip: skip}},
			{"smoothed", tensor.CrossEntropyTargets{Class: class, Weight: weight, Skip: skip, Smooth: smooth}},
			{"dense", tensor.CrossEntropyTargets{Dense: dense}},
		} {
			ct := tc.ct
			rows := m
			if ct.Class != nil {
				rows = len(ct.Class)
			}
			logits := rng.Normal(dt, 0, 4, rows, c)
			for _, div := range []float64{0, 1, 3.5} { // 0: per row
				t.Run(fmt.Sprintf("%v/%s/div=%g", dt, tc.name, div), func(t *testing.T) {
					var seed *tensor.Tensor
					fused := func(in []*tensor.Tensor) *tensor.Tensor {
						if div == 0 {
							return tensor.CrossEntropyRows(in[0], &ct)
						}
						return tensor.CrossEntropySum(in[0], &ct, div)
					}
					comp := func(in []*tensor.Tensor) *tensor.Tensor {
						l := crossEntropyComposite(in[0], &ct)
						if div == 0 {
							return l
						}
						return l.SumAll().DivScalar(div)
					}
					if div == 0 {
						seed = rng.Uniform(dt, 0.5, 1.5, rows)
					} else {
						seed = tensor.Scalar(1.5, dt)
					}
					y1, g1 := gradcheck.Grads(fused, []*tensor.Tensor{logits}, seed)
					y2, g2 := gradcheck.Grads(comp, []*tensor.Tensor{logits}, seed)
					gradcheck.Near(t, "loss", y1, y2, tol)
					gradcheck.Near(t, "gradient", g1[0], g2[0], tol)
				})
			}
		}
	}
	// Without grad, the fused op records nothing.
	l := tensor.CrossEntropySum(rng.Normal(tensor.Float32, 0, 1, 2, 3).NoGrad(), &tensor.CrossEntropyTargets{Class: []int64{0, 2}, Weight: []float64{1, 1}}, 2)
	if l.RequiresGrad() {
		t.Fatal("loss of inference logits requires grad")
	}
}
