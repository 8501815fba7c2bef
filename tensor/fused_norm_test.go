package tensor_test

import (
	"testing"

	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

const normEps = 1e-5

// TestFusedNormsMatchComposite compares the fused LayerNorm and BatchNorm
// (values and the gradients of input, weight and bias) with the
// composites they replace, in float32 and float64.
func TestFusedNormsMatchComposite(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := 1e-10
		if dt == tensor.Float32 {
			tol = 2e-4
		}
		rng := tensor.NewRNG(5)
		t.Run("layernorm/"+dt.String(), func(t *testing.T) {
			x := rng.Normal(dt, 3, 2, 4, 5, 2, 6) // a large mean tests the two-pass variance
			w := rng.Normal(dt, 1, 0.5, 2, 6)
			b := rng.Normal(dt, 0, 0.5, 2, 6)
			seed := rng.Normal(dt, 0, 1, 4, 5, 2, 6)
			fused := func(in []*tensor.Tensor) *tensor.Tensor { return tensor.LayerNorm(in[0], in[1], in[2], 2, normEps) }
			comp := func(in []*tensor.Tensor) *tensor.Tensor {
				return tensor.LayerNormComposite(in[0], in[1], in[2], 2, normEps)
			}
			y1, g1 := gradcheck.Grads(fused, []*tensor.Tensor{x, w, b}, seed)
			y2, g2 := gradcheck.Grads(comp, []*tensor.Tensor{x, w, b}, seed)
			gradcheck.Near(t, "y", y1, y2, tol)
			for i := range g1 {
				gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], tol)
			}
		})
		t.Run("batchnorm2d/"+dt.String(), func(t *testing.T) {
			x := rng.Normal(dt, 2, 3, 6, 3, 4, 5)
			w := rng.Normal(dt, 1, 0.5, 3)
			b := rng.Normal(dt, 0, 0.5, 3)
			seed := rng.Normal(dt, 0, 1, 6, 3, 4, 5)
			fused := func(in []*tensor.Tensor) *tensor.Tensor {
				y, _, _ := tensor.BatchNorm(in[0], in[1], in[2], normEps)
				return y
			}
			comp := func(in []*tensor.Tensor) *tensor.Tensor {
				y, _, _ := tensor.BatchNormComposite(in[0], in[1], in[2], []int{0, 2, 3}, []int{3, 1, 1}, normEps)
				return y
			}
			y1, g1 := gradcheck.Grads(fused, []*tensor.Tensor{x, w, b}, seed)
			y2, g2 := gradcheck.Grads(comp, []*tensor.Tensor{x, w, b}, seed)
			gradcheck.Near(t, "y", y1, y2, tol)
			for i := range g1 {
				gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], tol)
			}
			// The batch statistics, [C] and outside the graph.
			_, mean, variance := tensor.BatchNorm(x, w, b, normEps)
			_, cm, cv := tensor.BatchNormComposite(x, w, b, []int{0, 2, 3}, []int{3, 1, 1}, normEps)
			if mean.Dim() != 1 || mean.Size(0) != 3 || mean.RequiresGrad() || variance.RequiresGrad() {
				t.Fatalf("mean %v (requires grad %v), want [3] outside the graph", mean.Shape(), mean.RequiresGrad())
			}
			gradcheck.Near(t, "mean", mean.Values(), cm.Values(), tol)
			gradcheck.Near(t, "variance", variance.Values(), cv.Values(), tol)
		})
	}
}

// TestNormsCompositeDTypes checks that inputs the fused kernels do not
// take (16-bit floats, parameters of another dtype, no affine) give the
// composite's values.
func TestNormsCompositeDTypes(t *testing.T) {
	rng := tensor.NewRNG(7)
	x := rng.Normal(tensor.Float32, 0, 1, 4, 3, 5)
	w := rng.Normal(tensor.Float32, 1, 0.5, 5)
	for _, c := range []struct {
		name string
		x, w *tensor.Tensor
	}{{"bfloat16", x.To(tensor.BFloat16), w.To(tensor.BFloat16)}, {"mixed", x, w.To(tensor.Float64)}, {"noaffine", x, nil}} {
		got := tensor.LayerNorm(c.x, c.w, nil, 1, normEps).Values()
		gradcheck.Near(t, c.name+"/layernorm", got, tensor.LayerNormComposite(c.x, c.w, nil, 1, normEps).Values(), 1e-6)
	}
	xb := rng.Normal(tensor.Float32, 0, 1, 4, 3, 5).To(tensor.Float16)
	y, mean, _ := tensor.BatchNorm(xb, nil, nil, normEps)
	cy, cm, _ := tensor.BatchNormComposite(xb, nil, nil, []int{0, 2}, []int{3, 1}, normEps)
	gradcheck.Near(t, "batchnorm/float16", y.Values(), cy.Values(), 1e-6)
	gradcheck.Near(t, "batchnorm/float16/mean", mean.Values(), cm.Values(), 1e-6)
	if mean.DType() != tensor.Float16 {
		t.Fatalf("composite mean is %v, want the input's float16", mean.DType())
	}
}

// BenchmarkNorms compares the fused norms with their composites, forward
// and backward, on a transformer-sized LayerNorm and a CNN-sized
// BatchNorm2d.
func BenchmarkNorms(b *testing.B) {
	rng := tensor.NewRNG(6)
	lw, lb := tensor.Ones(tensor.Float32, 512).SetRequiresGrad(true), tensor.Zeros(tensor.Float32, 512).SetRequiresGrad(true)
	bw, bb := tensor.Ones(tensor.Float32, 32).SetRequiresGrad(true), tensor.Zeros(tensor.Float32, 32).SetRequiresGrad(true)
	xl := rng.Normal(tensor.Float32, 0, 1, 64, 128, 512).SetRequiresGrad(true)
	xb := rng.Normal(tensor.Float32, 0, 1, 64, 32, 28, 28).SetRequiresGrad(true)
	for _, c := range []struct {
		name string
		f    func() *tensor.Tensor
	}{
		{"layernorm/fused", func() *tensor.Tensor { return tensor.LayerNorm(xl, lw, lb, 1, normEps) }},
		{"layernorm/composite", func() *tensor.Tensor { return tensor.LayerNormComposite(xl, lw, lb, 1, normEps) }},
		{"batchnorm2d/fused", func() *tensor.Tensor {
			y, _, _ := tensor.BatchNorm(xb, bw, bb, normEps)
			return y
		}},
		{"batchnorm2d/composite", func() *tensor.Tensor {
			y, _, _ := tensor.BatchNormComposite(xb, bw, bb, []int{0, 2, 3}, []int{32, 1, 1}, normEps)
			return y
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.f().SumAll().Backward()
			}
		})
	}
}
