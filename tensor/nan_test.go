package tensor_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// NaN propagates through fathom's activations, extrema, pooling and fused
// layers as it does in PyTorch: every expected value below was printed by
// torch 1.13 (float64; the Float32 runs compare within float32 rounding).

var (
	nan     = math.NaN()
	inf     = math.Inf(1)
	negZero = math.Copysign(0, -1)
)

// sameTorch reports whether got matches torch's want: both NaN, or equal
// within a relative tol (exactly for infinities).
func sameTorch(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}

func checkTorch(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !sameTorch(got[i], want[i], tol) {
			t.Fatalf("%s[%d] = %v, want %v (torch)\ngot  %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

// tolFor is the comparison tolerance for dt.
func tolFor(dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return 1e-5
	}
	return 1e-12
}

func TestActivationsNaNLikeTorch(t *testing.T) {
	x := []float64{nan, -1, negZero, 0, 2, inf, -inf}
	for _, c := range []struct {
		name    string
		f       func(x *tensor.Tensor) *tensor.Tensor
		y, grad []float64 // torch's output and gradient for an upstream 1
	}{
		{"Relu", func(x *tensor.Tensor) *tensor.Tensor { return x.Relu() },
			[]float64{nan, 0.0, negZero, 0.0, 2.0, inf, 0.0},
			[]float64{1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0}},
		{"LeakyRelu", func(x *tensor.Tensor) *tensor.Tensor { return x.LeakyRelu(0.1) },
			[]float64{nan, -0.1, negZero, 0.0, 2.0, inf, -inf},
			[]float64{0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 0.1}},
		{"Elu", func(x *tensor.Tensor) *tensor.Tensor { return x.Elu(2) },
			[]float64{nan, -1.2642411176571153, 0.0, 0.0, 2.0, inf, -2.0},
			[]float64{1.0, 0.7357588823428847, 2.0, 2.0, 1.0, 1.0, 0.0}},
		{"Gelu", func(x *tensor.Tensor) *tensor.Tensor { return x.Gelu() },
			[]float64{nan, -0.15865525393145702, negZero, 0.0, 1.9544997361036416, inf, nan},
			[]float64{nan, -0.08331547058768635, 0.5, 0.5, 1.085231801078197, nan, nan}},
		{"GeluTanh", func(x *tensor.Tensor) *tensor.Tensor { return x.GeluTanh() },
			[]float64{nan, -0.15880800939172324, negZero, 0.0, 1.954597694087775, inf, nan},
			[]float64{nan, -0.08296408384578252, 0.5, 0.5, 1.0860992566236183, nan, nan}},
		{"Silu", func(x *tensor.Tensor) *tensor.Tensor { return x.Silu() },
			[]float64{nan, -0.2689414213699951, negZero, 0.0, 1.7615941559557646, inf, nan},
			[]float64{nan, 0.07232948812851325, 0.5, 0.5, 1.0907842487848955, nan, nan}},
		{"Sigmoid", func(x *tensor.Tensor) *tensor.Tensor { return x.Sigmoid() },
			[]float64{nan, 0.2689414213699951, 0.5, 0.5, 0.8807970779778823, 1.0, 0.0},
			[]float64{nan, 0.19661193324148185, 0.25, 0.25, 0.10499358540350662, 0.0, 0.0}},
		{"Tanh", func(x *tensor.Tensor) *tensor.Tensor { return x.Tanh() },
			[]float64{nan, -0.7615941559557649, negZero, 0.0, 0.9640275800758169, 1.0, -1.0},
			[]float64{nan, 0.41997434161402614, 1.0, 1.0, 0.07065082485316443, 0.0, 0.0}},
		{"Softplus", func(x *tensor.Tensor) *tensor.Tensor { return x.Softplus(1, 20) },
			[]float64{nan, 0.31326168751822286, 0.6931471805599453, 0.6931471805599453, 2.1269280110429727, inf, 0.0},
			[]float64{nan, 0.2689414213699951, 0.5, 0.5, 0.8807970779778824, 1.0, 0.0}},
		{"LogSigmoid", func(x *tensor.Tensor) *tensor.Tensor { return x.LogSigmoid() },
			[]float64{nan, -1.3132616875182228, -0.6931471805599453, -0.6931471805599453, -0.1269280110429725, 0.0, -inf},
			[]float64{nan, 0.7310585786300049, 0.5, 0.5, 0.11920292202211755, 0.0, 1.0}},
		{"Clamp", func(x *tensor.Tensor) *tensor.Tensor { return x.Clamp(-1, 1) },
			[]float64{nan, -1.0, negZero, 0.0, 1.0, 1.0, -1.0},
			[]float64{0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0}},
		{"Abs", func(x *tensor.Tensor) *tensor.Tensor { return x.Abs() },
			[]float64{nan, 1.0, 0.0, 0.0, 2.0, inf, inf},
			[]float64{0.0, -1.0, 0.0, 0.0, 1.0, 1.0, -1.0}},
	} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			// 6 copies (42 elements): the specials land in the vector
			// body and in the tail of every kernel variant.
			const reps = 6
			var in, y, grad []float64
			for range reps {
				in, y, grad = append(in, x...), append(y, c.y...), append(grad, c.grad...)
			}
			xt := tensor.FromValues(dt, in).SetRequiresGrad(true)
			out := c.f(xt)
			out.SumAll().Backward()
			what := c.name + "/" + dt.String()
			checkTorch(t, what, out.To(tensor.Float64).Float64s(), y, tolFor(dt))
			checkTorch(t, what+" grad", xt.Grad().To(tensor.Float64).Float64s(), grad, tolFor(dt))
			if c.name == "Relu" {
				for i, v := range out.To(tensor.Float64).Float64s() {
					if math.Signbit(v) != math.Signbit(y[i]) && !math.IsNaN(v) {
						t.Fatalf("%s[%d] = %v, want %v (torch keeps −0)", what, i, v, y[i])
					}
				}
			}
		}
	}
}

func TestExtremaNaNLikeTorch(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := tolFor(dt)
		// torch.max(x), torch.min(x): NaN, the gradient shared by the NaNs.
		for _, f := range []func(*tensor.Tensor) *tensor.Tensor{(*tensor.Tensor).MaxAll, (*tensor.Tensor).MinAll} {
			x := tensor.FromValues(dt, []float64{1, nan, 3, nan, -inf}).SetRequiresGrad(true)
			m := f(x)
			m.Backward()
			checkTorch(t, "MaxAll/MinAll "+dt.String(), []float64{m.Item()}, []float64{nan}, tol)
			checkTorch(t, "MaxAll/MinAll grad "+dt.String(), x.Grad().To(tensor.Float64).Float64s(), []float64{0, 0.5, 0, 0.5, 0}, tol)
		}
		// torch.max(x, 1): NaN and its index, the gradient to it.
		x := tensor.FromValues(dt, []float64{1, nan, 3, 4, 5, nan}, 2, 3).SetRequiresGrad(true)
		v, i := x.MaxDim(1, false)
		v.SumAll().Backward()
		checkTorch(t, "MaxDim "+dt.String(), v.To(tensor.Float64).Float64s(), []float64{nan, nan}, tol)
		if got := i.Int64s(); !slices.Equal(got, []int64{1, 2}) {
			t.Fatalf("MaxDim %v indices %v, want [1 2]", dt, got)
		}
		checkTorch(t, "MaxDim grad "+dt.String(), x.Grad().To(tensor.Float64).Float64s(), []float64{0, 1, 0, 0, 0, 1}, tol)
		// torch.max(x, 0) down the columns (strided), and torch.amin(x, 0).
		x = tensor.FromValues(dt, []float64{1, nan, 3, 4, 5, 6, nan, 0, nan}, 3, 3).SetRequiresGrad(true)
		v, i = x.MaxDim(0, false)
		v.SumAll().Backward()
		checkTorch(t, "MaxDim 0 "+dt.String(), v.To(tensor.Float64).Float64s(), []float64{nan, nan, nan}, tol)
		if got := i.Int64s(); !slices.Equal(got, []int64{2, 0, 2}) {
			t.Fatalf("MaxDim 0 %v indices %v, want [2 0 2]", dt, got)
		}
		checkTorch(t, "MaxDim 0 grad "+dt.String(), x.Grad().To(tensor.Float64).Float64s(), []float64{0, 1, 0, 0, 0, 0, 1, 0, 1}, tol)
		checkTorch(t, "Min 0 "+dt.String(), x.Min([]int{0}, false).To(tensor.Float64).Float64s(), []float64{nan, nan, nan}, tol)
		if got := x.ArgMin(0, false).Int64s(); !slices.Equal(got, []int64{2, 0, 2}) {
			t.Fatalf("ArgMin 0 %v = %v, want [2 0 2]", dt, got)
		}
		// torch.argmax, torch.argmin: the first NaN.
		a := tensor.FromValues(dt, []float64{1, nan, 3, nan})
		if am, an := a.ArgMax(0, false).Item(), a.ArgMin(0, false).Item(); am != 1 || an != 1 {
			t.Fatalf("ArgMax/ArgMin %v = %v, %v, want 1, 1", dt, am, an)
		}

		// torch.maximum/minimum: NaN if either is NaN; the gradient goes to
		// both sides at a NaN, half to each on a tie.
		for _, c := range []struct {
			name       string
			f          func(a, b *tensor.Tensor) *tensor.Tensor
			y, ga, gbw []float64
		}{
			{"Maximum", tensor.Maximum, []float64{nan, nan, 3, nan, nan, 2}, []float64{1, 1, 1, 1, 1, 0.5}, []float64{1, 1, 0, 1, 1, 0.5}},
			{"Minimum", tensor.Minimum, []float64{nan, nan, 2, nan, nan, 2}, []float64{1, 1, 0, 1, 1, 0.5}, []float64{1, 1, 1, 1, 1, 0.5}},
		} {
			a := tensor.FromValues(dt, []float64{1, nan, 3, nan, inf, 2}).SetRequiresGrad(true)
			b := tensor.FromValues(dt, []float64{nan, 2, 2, nan, nan, 2}).SetRequiresGrad(true)
			y := c.f(a, b)
			y.SumAll().Backward()
			what := c.name + " " + dt.String()
			checkTorch(t, what, y.To(tensor.Float64).Float64s(), c.y, tol)
			checkTorch(t, what+" grad a", a.Grad().To(tensor.Float64).Float64s(), c.ga, tol)
			checkTorch(t, what+" grad b", b.Grad().To(tensor.Float64).Float64s(), c.gbw, tol)
		}
	}
}

func TestMaxPoolNaNLikeTorch(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := tensor.FromValues(dt, []float64{
			1, nan, 3, 4,
			5, 6, 7, 8,
			nan, 1, 2, nan,
			0, 0, 0, 1,
		}, 1, 1, 4, 4).SetRequiresGrad(true)
		y, idx := tensor.MaxPool2dWithIndices(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{}, [2]int{1, 1}, false)
		y.SumAll().Backward()
		checkTorch(t, "MaxPool2d "+dt.String(), y.To(tensor.Float64).Float64s(), []float64{nan, 8, nan, nan}, 0)
		if got := idx.Int64s(); !slices.Equal(got, []int64{1, 7, 8, 11}) {
			t.Fatalf("MaxPool2d %v indices %v, want [1 7 8 11]", dt, got)
		}
		checkTorch(t, "MaxPool2d grad "+dt.String(), x.Grad().To(tensor.Float64).Float64s(),
			[]float64{0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0}, 0)

		// Several NaNs in a window: torch 1.13 picks the last.
		x2 := tensor.FromValues(dt, []float64{nan, nan, 1, nan, nan, 0, nan, 2}, 1, 1, 2, 4)
		_, idx2 := tensor.MaxPool2dWithIndices(x2, [2]int{2, 2}, [2]int{2, 2}, [2]int{}, [2]int{1, 1}, false)
		if got := idx2.Int64s(); !slices.Equal(got, []int64{4, 6}) {
			t.Fatalf("MaxPool2d %v several NaNs: indices %v, want [4 6]", dt, got)
		}
		// 3×3 windows, stride 1, padding 1: the general kernel.
		x = x.Detach().SetRequiresGrad(true)
		y, idx = tensor.MaxPool2dWithIndices(x, [2]int{3, 3}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, false)
		y.SumAll().Backward()
		checkTorch(t, "MaxPool2d 3×3 "+dt.String(), y.To(tensor.Float64).Float64s(),
			[]float64{nan, nan, nan, 8, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan}, 0)
		if got := idx.Int64s(); !slices.Equal(got, []int64{1, 1, 1, 7, 8, 8, 11, 11, 8, 8, 11, 11, 8, 8, 11, 11}) {
			t.Fatalf("MaxPool2d 3×3 %v indices %v", dt, got)
		}
		checkTorch(t, "MaxPool2d 3×3 grad "+dt.String(), x.Grad().To(tensor.Float64).Float64s(),
			[]float64{0, 3, 0, 0, 0, 0, 0, 1, 6, 0, 0, 6, 0, 0, 0, 0}, 0)
	}
}

// TestFusedReluNaNLikeTorch: LinearRelu and Conv2d with Relu match
// relu(linear(...)) and relu(conv2d(...)) in torch, NaN outputs passing
// their gradient.
func TestFusedReluNaNLikeTorch(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		tol := tolFor(dt)
		x := tensor.FromValues(dt, []float64{1, -2, 3}, 1, 3).SetRequiresGrad(true)
		w := tensor.FromValues(dt, []float64{1, 0, 0, 0, 1, 0, nan, 0, 0, 1, 1, 0}, 4, 3).SetRequiresGrad(true)
		b := tensor.Zeros(dt, 4).SetRequiresGrad(true)
		y := tensor.LinearRelu(x, w, b)
		y.SumAll().Backward()
		what := "LinearRelu " + dt.String()
		checkTorch(t, what, y.To(tensor.Float64).Float64s(), []float64{1, 0, nan, 0}, tol)
		checkTorch(t, what+" grad x", x.Grad().To(tensor.Float64).Float64s(), []float64{nan, 0, 0}, tol)
		checkTorch(t, what+" grad w", w.Grad().To(tensor.Float64).Float64s(), []float64{1, -2, 3, 0, 0, 0, 1, -2, 3, 0, 0, 0}, tol)
		checkTorch(t, what+" grad b", b.Grad().To(tensor.Float64).Float64s(), []float64{1, 0, 1, 0}, tol)

		xc := tensor.FromValues(dt, []float64{nan, -1, 0, 2, inf, -inf, 1, -3, 5}, 1, 1, 3, 3).SetRequiresGrad(true)
		wc := tensor.FromValues(dt, []float64{2, -1}, 2, 1, 1, 1).SetRequiresGrad(true)
		bc := tensor.Zeros(dt, 2).SetRequiresGrad(true)
		yc := tensor.Conv2d(xc, wc, bc, tensor.Conv2dOpts{Relu: true})
		yc.SumAll().Backward()
		what = "Conv2d+Relu " + dt.String()
		checkTorch(t, what, yc.To(tensor.Float64).Float64s(),
			[]float64{nan, 0, 0, 4, inf, 0, 2, 0, 10, nan, 1, 0, 0, 0, inf, 0, 3, 0}, tol)
		checkTorch(t, what+" grad x", xc.Grad().To(tensor.Float64).Float64s(), []float64{1, -1, 0, 2, 2, -1, 2, -1, 2}, tol)
		checkTorch(t, what+" grad w", wc.Grad().To(tensor.Float64).Float64s(), []float64{nan, nan}, tol)
		checkTorch(t, what+" grad b", bc.Grad().To(tensor.Float64).Float64s(), []float64{5, 4}, tol)
	}
}
