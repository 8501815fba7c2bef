package tensor_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-ml/fathom/internal/f16"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// roundTo returns a copy of x (float32) with its values rounded to the
// precision's 16-bit format.
func roundTo(p tensor.Precision, x *tensor.Tensor) *tensor.Tensor {
	v := append([]float32(nil), x.Float32s()...)
	switch p {
	case tensor.PrecisionBF16:
		kernel.RoundBF16(v)
	case tensor.PrecisionFP16:
		for i, f := range v {
			v[i] = f16.ToFloat32FP16(f16.FromFloat32FP16(f))
		}
	}
	return tensor.FromFloat32(v, x.Shape()...)
}

// (The convolution has 4·3·3 ≥ 32 weights per output channel: smaller
// layers compute their weight gradient as float32 dot products, see
// weightGrad, which autocast leaves as they are.)
//
// autocastCase is an op of two inputs whose value and gradients the test
// compares: a matmul, a linear layer, a convolution.
type autocastCase struct {
	name  string
	shape [2][]int
	f     func(x, w *tensor.Tensor) *tensor.Tensor
}

var autocastCases = []autocastCase{
	{"MatMul", [2][]int{{6, 37}, {37, 11}}, func(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w) }},
	{"MatMulT", [2][]int{{6, 37}, {11, 37}}, func(x, w *tensor.Tensor) *tensor.Tensor { return x.MatMul(w.Transpose(0, 1)) }},
	{"Linear", [2][]int{{3, 20}, {7, 20}}, func(x, w *tensor.Tensor) *tensor.Tensor { return tensor.Linear(x, w, nil) }},
	{"Conv2d", [2][]int{{2, 4, 7, 6}, {5, 4, 3, 3}}, func(x, w *tensor.Tensor) *tensor.Tensor {
		return tensor.Conv2d(x, w, nil, tensor.Conv2dOpts{Padding: [2]int{1, 1}})
	}},
}

// run evaluates sum(f(x, w)·r) at precision p and returns f's value and
// the gradients of x and w.
func (c autocastCase) run(p tensor.Precision, x, w, r *tensor.Tensor) (y, gx, gw []float32) {
	prev := tensor.SetAutocast(p)
	defer tensor.SetAutocast(prev)
	x, w = x.Detach().SetRequiresGrad(true), w.Detach().SetRequiresGrad(true)
	out := c.f(x, w)
	out.Mul(r).SumAll().Backward()
	return out.Float32s(), x.Grad().Float32s(), w.Grad().Float32s()
}

// TestAutocastForwardBackward: under autocast the value and both gradients
// equal those of float32 arithmetic on operands rounded to the 16-bit
// format (the upstream gradient r included: the backward products round
// it too), to float32 summation error; and they differ from plain float32
// by no more than the format's rounding.
func TestAutocastForwardBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	normal := func(shape ...int) *tensor.Tensor {
		v := make([]float32, 1)
		for _, d := range shape {
			v = make([]float32, len(v)*d)
		}
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return tensor.FromFloat32(v, shape...)
	}
	for _, p := range []tensor.Precision{tensor.PrecisionBF16, tensor.PrecisionFP16} {
		eps := 1.0 / 256 // bf16: 8 significant bits
		if p == tensor.PrecisionFP16 {
			eps = 1.0 / 2048
		}
		for _, c := range autocastCases {
			x := normal(c.shape[0]...)
			w := normal(c.shape[1]...)
			r := normal(shapeOf(c, x, w)...)
			got := [3][]float32{}
			got[0], got[1], got[2] = c.run(p, x, w, r)
			want := [3][]float32{}
			want[0], want[1], want[2] = c.run(tensor.PrecisionFloat32, roundTo(p, x), roundTo(p, w), roundTo(p, r))
			plain := [3][]float32{}
			plain[0], plain[1], plain[2] = c.run(tensor.PrecisionFloat32, x, w, r)
			differs := false
			for part, name := range []string{"value", "x gradient", "w gradient"} {
				for i := range got[part] {
					g, wv, pl := float64(got[part][i]), float64(want[part][i]), float64(plain[part][i])
					if math.Abs(g-wv) > 1e-5*(1+math.Abs(wv)) {
						t.Fatalf("%v %s %s[%d] = %v, float32 on rounded operands %v", p, c.name, name, i, g, wv)
					}
					if math.Abs(g-pl) > 8*eps*(4+math.Abs(pl)) {
						t.Fatalf("%v %s %s[%d] = %v, float32 %v: beyond the format's rounding", p, c.name, name, i, g, pl)
					}
					differs = differs || g != pl
				}
			}
			if !differs {
				t.Errorf("%v %s: equal to float32 everywhere: autocast did not round", p, c.name)
			}
		}
	}
	if tensor.Autocast() != tensor.PrecisionFloat32 {
		t.Fatal("autocast not restored")
	}
}

// shapeOf is the shape of c's output.
func shapeOf(c autocastCase, x, w *tensor.Tensor) []int { return c.f(x, w).Shape() }

// TestAutocastFP16Range: binary16 overflows above 65504, so a product with
// a large operand becomes Inf under fp16 (what loss scaling detects), and
// stays finite under bf16.
func TestAutocastFP16Range(t *testing.T) {
	x := tensor.FromFloat32([]float32{1e5, 1}, 1, 2)
	w := tensor.FromFloat32([]float32{1, 1}, 2, 1)
	for _, test := range []struct {
		p   tensor.Precision
		inf bool
	}{{tensor.PrecisionFloat32, false}, {tensor.PrecisionBF16, false}, {tensor.PrecisionFP16, true}} {
		prev := tensor.SetAutocast(test.p)
		y := x.MatMul(w).Float32s()[0]
		tensor.SetAutocast(prev)
		if math.IsInf(float64(y), 1) != test.inf {
			t.Errorf("%v: 1e5·1 + 1·1 = %v", test.p, y)
		}
	}
}

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]tensor.Precision{"": tensor.PrecisionFloat32, "float32": tensor.PrecisionFloat32, "bf16": tensor.PrecisionBF16, "fp16": tensor.PrecisionFP16} {
		if got, err := tensor.ParsePrecision(in); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := tensor.ParsePrecision("int4"); err == nil {
		t.Error("int4 accepted")
	}
}
