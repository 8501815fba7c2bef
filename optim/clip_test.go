package optim

import (
	"errors"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

func gradParams(dt tensor.DType, grads ...[]float64) []*tensor.Tensor {
	var ps []*tensor.Tensor
	for _, g := range grads {
		p := tensor.Zeros(dt, len(g)).SetRequiresGrad(true)
		if g != nil {
			p.SetGrad(tensor.FromValues(dt, g, len(g)))
		}
		ps = append(ps, p)
	}
	return ps
}

func TestClipGradNorm(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			norm, max, want float64 // want: total norm
		}{
			{2, 1, 13},           // √(3²+4²+12²)
			{2, 100, 13},         // no clipping
			{1, 5, 19},           // 3+4+12
			{math.Inf(1), 6, 12}, // max |g|
			{3, 2, math.Cbrt(27 + 64 + 1728)},
		} {
			ps := gradParams(dt, []float64{3, -4}, []float64{12}, nil)
			ps[2].SetGrad(nil)
			total, err := ClipGradNorm(ps, c.max, c.norm)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(total-c.want) > 1e-6*c.want {
				t.Errorf("%v norm %v: total %v, want %v", dt, c.norm, total, c.want)
			}
			coef := math.Min(1, c.max/(c.want+1e-6))
			got := append(ps[0].Grad().Values(), ps[1].Grad().Values()...)
			for i, g := range []float64{3, -4, 12} {
				if math.Abs(got[i]-g*coef) > 1e-6*math.Abs(g) {
					t.Errorf("%v norm %v: grad %d = %v, want %v", dt, c.norm, i, got[i], g*coef)
				}
			}
			if c.max < c.want {
				if after := GradNorm(ps, c.norm); math.Abs(after-c.max) > 1e-5*c.max {
					t.Errorf("%v norm %v: norm after clipping %v, want %v", dt, c.norm, after, c.max)
				}
			}
		}
	}
}

func TestClipGradNormNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		ps := gradParams(tensor.Float32, []float64{1, bad}, []float64{2})
		total, err := ClipGradNorm(ps, 1, 2)
		if !errors.Is(err, ErrNonFinite) {
			t.Errorf("grad %v: err %v, want ErrNonFinite (total %v)", bad, err, total)
		}
		if g := ps[1].Grad().Values()[0]; g != 2 {
			t.Errorf("grad %v: a non-finite norm changed the gradients (%v)", bad, g)
		}
	}
	if _, err := ClipGradNorm(nil, -1, 2); err == nil {
		t.Error("negative max norm accepted")
	}
}

func TestClipGradValue(t *testing.T) {
	ps := gradParams(tensor.Float32, []float64{-3, 0.5, 2, math.NaN()}, nil)
	if err := ClipGradValue(ps, 1); err != nil {
		t.Fatal(err)
	}
	got := ps[0].Grad().Values()
	for i, w := range []float64{-1, 0.5, 1} {
		if got[i] != w {
			t.Errorf("grad %d = %v, want %v", i, got[i], w)
		}
	}
	if !math.IsNaN(got[3]) {
		t.Errorf("NaN became %v", got[3])
	}
	if err := ClipGradValue(ps, -1); err == nil {
		t.Error("negative clip accepted")
	}
}

// TestGradNormLarge compares GradNorm on the MLP's gradients (chunked
// vector kernels) with a direct float64 sum.
func TestGradNormLarge(t *testing.T) {
	ps := mlpParams()
	ps[0].Grad().Float32s()[123456] = -0.5 // the largest magnitude
	sq, mx := 0.0, 0.0
	for _, p := range ps {
		for _, v := range p.Grad().Values() {
			sq += v * v
			mx = math.Max(mx, math.Abs(v))
		}
	}
	if got := GradNorm(ps, 2); math.Abs(got-math.Sqrt(sq)) > 1e-6*math.Sqrt(sq) {
		t.Errorf("2-norm %v, direct %v", got, math.Sqrt(sq))
	}
	if got := GradNorm(ps, math.Inf(1)); got != mx || mx != 0.5 {
		t.Errorf("inf-norm %v, direct %v", got, mx)
	}
	ps[5].Grad().Float32s()[3] = float32(math.NaN())
	if got := GradNorm(ps, math.Inf(1)); !math.IsNaN(got) {
		t.Errorf("inf-norm with a NaN gradient: %v", got)
	}
}
