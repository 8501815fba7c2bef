package tensor_test

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

// in64 returns a Float64 leaf of uniform values in [lo, hi) that requires grad.
func in64(seed uint64, lo, hi float64, shape ...int) *tensor.Tensor {
	return tensor.NewRNG(seed).Uniform(tensor.Float64, lo, hi, shape...).SetRequiresGrad(true)
}

// transposed returns a non-contiguous leaf of the given 2-D shape (the
// transpose of a contiguous tensor).
func transposed(seed uint64, lo, hi float64, r, c int) *tensor.Tensor {
	return tensor.NewRNG(seed).Uniform(tensor.Float64, lo, hi, c, r).Transpose(0, 1).SetRequiresGrad(true)
}

// narrowed returns a non-contiguous leaf: columns 1..c of a wider tensor.
func narrowed(seed uint64, lo, hi float64, r, c int) *tensor.Tensor {
	return tensor.NewRNG(seed).Uniform(tensor.Float64, lo, hi, r, c+3).Narrow(1, 1, c).SetRequiresGrad(true)
}

// awayFromZero returns values in ±[0.3, 1.5) so kinks at 0 are avoided.
func awayFromZero(seed uint64, shape ...int) *tensor.Tensor {
	r := tensor.NewRNG(seed)
	mag := r.Uniform(tensor.Float64, 0.3, 1.5, shape...)
	sign := r.Bernoulli(tensor.Float64, 0.5, shape...).MulScalar(2).AddScalar(-1)
	return mag.Mul(sign).SetRequiresGrad(true)
}

type gradCase struct {
	name string
	in   func() []*tensor.Tensor
	f    func(x []*tensor.Tensor) *tensor.Tensor
	tol  float64 // 0: float64 tolerances; -1: the op rounds through float32
}

func ins(t ...*tensor.Tensor) func() []*tensor.Tensor {
	return func() []*tensor.Tensor { return t }
}

func unaryCases() []gradCase {
	type u struct {
		name   string
		lo, hi float64
		f      func(x *tensor.Tensor) *tensor.Tensor
	}
	var cases []gradCase
	for i, c := range []u{
		{"Neg", -2, 2, (*tensor.Tensor).Neg},
		{"Exp", -2, 2, (*tensor.Tensor).Exp},
		{"Log", 0.2, 3, (*tensor.Tensor).Log},
		{"Log1p", -0.5, 3, (*tensor.Tensor).Log1p},
		{"Expm1", -2, 2, (*tensor.Tensor).Expm1},
		{"Sqrt", 0.2, 3, (*tensor.Tensor).Sqrt},
		{"Rsqrt", 0.2, 3, (*tensor.Tensor).Rsqrt},
		{"Reciprocal", 0.5, 3, (*tensor.Tensor).Reciprocal},
		{"Square", -2, 2, (*tensor.Tensor).Square},
		{"Sin", -3, 3, (*tensor.Tensor).Sin},
		{"Cos", -3, 3, (*tensor.Tensor).Cos},
		{"Erf", -2, 2, (*tensor.Tensor).Erf},
		{"Tanh", -3, 3, (*tensor.Tensor).Tanh},
		{"Sigmoid", -4, 4, (*tensor.Tensor).Sigmoid},
		{"LogSigmoid", -4, 4, (*tensor.Tensor).LogSigmoid},
		{"Silu", -4, 4, (*tensor.Tensor).Silu},
		{"Gelu", -3, 3, (*tensor.Tensor).Gelu},
		{"GeluTanh", -3, 3, (*tensor.Tensor).GeluTanh},
		{"Softplus", -3, 3, func(x *tensor.Tensor) *tensor.Tensor { return x.Softplus(1, 20) }},
		{"SoftplusBeta", -3, 3, func(x *tensor.Tensor) *tensor.Tensor { return x.Softplus(2, 1) }},
		{"PowScalar", 0.2, 2, func(x *tensor.Tensor) *tensor.Tensor { return x.PowScalar(2.5) }},
		{"PowScalar2", -2, 2, func(x *tensor.Tensor) *tensor.Tensor { return x.PowScalar(2) }},
		{"AddScalar", -2, 2, func(x *tensor.Tensor) *tensor.Tensor { return x.AddScalar(1.5) }},
		{"RSubScalar", -2, 2, func(x *tensor.Tensor) *tensor.Tensor { return x.RSubScalar(1.5) }},
		{"MulScalar", -2, 2, func(x *tensor.Tensor) *tensor.Tensor { return x.MulScalar(-3) }},
		{"DivScalar", -2, 2, func(x *tensor.Tensor) *tensor.Tensor { return x.DivScalar(4) }},
	} {
		seed := uint64(100 + i)
		c := c
		f := func(x []*tensor.Tensor) *tensor.Tensor { return c.f(x[0]) }
		cases = append(cases,
			gradCase{c.name + "/contig", ins(in64(seed, c.lo, c.hi, 3, 4)), f, 0},
			gradCase{c.name + "/transposed", ins(transposed(seed, c.lo, c.hi, 3, 4)), f, 0},
			gradCase{c.name + "/scalar", ins(in64(seed, c.lo, c.hi)), f, 0},
		)
	}
	// Kinked ops, evaluated away from their kinks.
	for i, c := range []struct {
		name string
		f    func(x *tensor.Tensor) *tensor.Tensor
	}{
		{"Abs", (*tensor.Tensor).Abs},
		{"Relu", (*tensor.Tensor).Relu},
		{"LeakyRelu", func(x *tensor.Tensor) *tensor.Tensor { return x.LeakyRelu(0.1) }},
		{"Elu", func(x *tensor.Tensor) *tensor.Tensor { return x.Elu(1.3) }},
		{"Clamp", func(x *tensor.Tensor) *tensor.Tensor { return x.Clamp(-0.9, 0.8) }},
		{"ClampMin", func(x *tensor.Tensor) *tensor.Tensor { return x.Clamp(0.5, math.Inf(1)) }},
		{"Floor", (*tensor.Tensor).Floor},
		{"Sign", (*tensor.Tensor).Sign},
	} {
		c := c
		f := func(x []*tensor.Tensor) *tensor.Tensor { return c.f(x[0]) }
		cases = append(cases, gradCase{c.name, ins(awayFromZero(uint64(200+i), 4, 5)), f, 0})
	}
	return cases
}

func binaryCases() []gradCase {
	type b struct {
		name   string
		lo, hi float64
		f      func(a, b *tensor.Tensor) *tensor.Tensor
	}
	var cases []gradCase
	for i, c := range []b{
		{"Add", -2, 2, tensor.Add},
		{"Sub", -2, 2, tensor.Sub},
		{"Mul", -2, 2, tensor.Mul},
		{"Div", 0.5, 2, tensor.Div},
		{"Pow", 0.5, 2, (*tensor.Tensor).Pow},
		{"Maximum", -2, 2, tensor.Maximum},
		{"Minimum", -2, 2, tensor.Minimum},
	} {
		seed := uint64(300 + 10*i)
		c := c
		f := func(x []*tensor.Tensor) *tensor.Tensor { return c.f(x[0], x[1]) }
		cases = append(cases,
			gradCase{c.name + "/same", ins(in64(seed, c.lo, c.hi, 3, 4), in64(seed+1, c.lo, c.hi, 3, 4)), f, 0},
			gradCase{c.name + "/rowBroadcast", ins(in64(seed, c.lo, c.hi, 3, 4), in64(seed+1, c.lo, c.hi, 4)), f, 0},
			gradCase{c.name + "/colBroadcast", ins(in64(seed, c.lo, c.hi, 3, 1), in64(seed+1, c.lo, c.hi, 2, 1, 4)), f, 0},
			gradCase{c.name + "/scalar", ins(in64(seed, c.lo, c.hi), in64(seed+1, c.lo, c.hi, 2, 3)), f, 0},
			gradCase{c.name + "/transposed", ins(transposed(seed, c.lo, c.hi, 3, 4), narrowed(seed+1, c.lo, c.hi, 3, 4)), f, 0},
			gradCase{c.name + "/oneSide", ins(in64(seed, c.lo, c.hi, 3, 4), tensor.NewRNG(seed+2).Uniform(tensor.Float64, c.lo, c.hi, 4)), f, 0},
		)
	}
	return cases
}

func otherCases() []gradCase {
	x34 := func(s uint64) *tensor.Tensor { return in64(s, -1, 1, 3, 4) }
	x234 := func(s uint64) *tensor.Tensor { return in64(s, -1, 1, 2, 3, 4) }
	return []gradCase{
		{"Sum/all", ins(x234(1)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].SumAll() }, 0},
		{"Sum/dims", ins(x234(2)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Sum([]int{0, 2}, false) }, 0},
		{"Sum/keep", ins(x234(3)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Sum([]int{-1}, true) }, 0},
		{"Sum/transposed", ins(transposed(4, -1, 1, 3, 5)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Sum([]int{1}, false) }, 0},
		{"Mean", ins(x234(5)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Mean([]int{1}, false) }, 0},
		{"Max/dims", ins(x234(6)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Max([]int{1, 2}, false) }, 0},
		{"Min/all", ins(x234(7)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MinAll() }, 0},
		{"MaxDim", ins(x234(8)), func(x []*tensor.Tensor) *tensor.Tensor { v, _ := x[0].MaxDim(1, false); return v }, 0},
		{"MinDim/keep", ins(transposed(9, -1, 1, 4, 3)), func(x []*tensor.Tensor) *tensor.Tensor { v, _ := x[0].MinDim(0, true); return v }, 0},
		{"Prod", ins(in64(10, 0.5, 1.5, 3, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Prod([]int{1}, false) }, 0},
		{"Prod/zero", ins(tensor.FromFloat64([]float64{1, 0, 2, 3, 0, 0, 4, 5, 0.5}, 3, 3).SetRequiresGrad(true)),
			func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Prod([]int{1}, false) }, 0},
		{"Prod/all", ins(in64(11, 0.5, 1.5, 2, 3)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Prod(nil, false) }, 0},
		{"Var", ins(x234(12)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Var([]int{2}, 1, false) }, 0},
		{"Std", ins(x234(13)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Std([]int{0, 1}, 0, true) }, 0},
		{"LogSumExp", ins(x234(14)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].LogSumExp([]int{1}, false) }, 0},
		{"Norm", ins(x34(15)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Norm() }, 0},
		{"Softmax/last", ins(x234(16)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Softmax(-1) }, 0},
		{"Softmax/mid", ins(x234(17)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Softmax(1) }, 0},
		{"Softmax/transposed", ins(transposed(18, -2, 2, 3, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Softmax(1) }, 0},
		{"LogSoftmax/last", ins(x234(19)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].LogSoftmax(-1) }, 0},
		{"LogSoftmax/first", ins(x234(20)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].LogSoftmax(0) }, 0},
		{"MatMul/2d", ins(x34(21), in64(22, -1, 1, 4, 5)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/transposed", ins(transposed(23, -1, 1, 3, 4), transposed(24, -1, 1, 4, 2)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/narrowed", ins(narrowed(25, -1, 1, 3, 4), narrowed(26, -1, 1, 4, 2)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/batched", ins(x234(27), in64(28, -1, 1, 2, 4, 3)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/broadcastBatch", ins(in64(29, -1, 1, 2, 1, 3, 4), in64(30, -1, 1, 3, 4, 2)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/batchBy2d", ins(x234(31), in64(32, -1, 1, 4, 5)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/vecMat", ins(in64(33, -1, 1, 3), x34(34)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/matVec", ins(x34(35), in64(36, -1, 1, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"MatMul/batchVec", ins(x234(37), in64(38, -1, 1, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].MatMul(x[1]) }, 0},
		{"Dot", ins(in64(39, -1, 1, 5), in64(40, -1, 1, 5)), func(x []*tensor.Tensor) *tensor.Tensor { return tensor.Dot(x[0], x[1]) }, 0},
		{"Outer", ins(in64(41, -1, 1, 3), in64(42, -1, 1, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return tensor.Outer(x[0], x[1]) }, 0},
		{"Linear", ins(x34(43), in64(44, -1, 1, 5, 4), in64(45, -1, 1, 5)), func(x []*tensor.Tensor) *tensor.Tensor { return tensor.Linear(x[0], x[1], x[2]) }, 0},
		{"Linear/noBias3d", ins(x234(46), in64(47, -1, 1, 5, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return tensor.Linear(x[0], x[1], nil) }, 0},
		{"Linear/transposedW", ins(narrowed(48, -1, 1, 3, 4), transposed(49, -1, 1, 5, 4), in64(50, -1, 1, 5)), func(x []*tensor.Tensor) *tensor.Tensor { return tensor.Linear(x[0], x[1], x[2]) }, 0},
		{"Where", ins(x34(51), in64(52, -1, 1, 4)), func(x []*tensor.Tensor) *tensor.Tensor {
			cond := tensor.FromBool([]bool{true, false, false, true}, 4)
			return tensor.Where(cond, x[0], x[1])
		}, 0},
		{"MaskedFill", ins(x34(53)), func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].MaskedFill(tensor.FromBool([]bool{true, false, true}, 3, 1), -7)
		}, 0},
		{"Reshape", ins(x234(54)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Reshape(4, -1).MulScalar(2) }, 0},
		{"Reshape/transposed", ins(transposed(55, -1, 1, 3, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Reshape(-1).Square() }, 0},
		{"View", ins(x234(56)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].View(6, 4).Square() }, 0},
		{"Transpose", ins(x234(57)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Transpose(0, 2).Square() }, 0},
		{"Permute", ins(x234(58)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Permute(2, 0, 1).Contiguous().Square() }, 0},
		{"Narrow", ins(x234(59)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Narrow(2, 1, 2).Square() }, 0},
		{"Slice", ins(x234(60)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Slice(-1, 0, 4, 2).Square() }, 0},
		{"Select", ins(x234(61)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Select(1, -1).Square() }, 0},
		{"Expand", ins(in64(62, -1, 1, 3, 1)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Expand(2, 3, 4).Square() }, 0},
		{"Squeeze/Unsqueeze", ins(in64(63, -1, 1, 3, 1)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Squeeze().Unsqueeze(0).Square() }, 0},
		{"Flatten", ins(x234(64)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Flatten(1, 2).Square() }, 0},
		{"Clone", ins(transposed(65, -1, 1, 3, 4)), func(x []*tensor.Tensor) *tensor.Tensor { return x[0].Clone().Square() }, 0},
		{"To32and64", ins(x34(66)), func(x []*tensor.Tensor) *tensor.Tensor {
			return x[0].To(tensor.Float32).To(tensor.Float64).MulScalar(3)
		}, -1},
		{"Composite/MLP", ins(x34(67), in64(68, -1, 1, 5, 4), in64(69, -1, 1, 5), in64(70, -1, 1, 2, 5)), func(x []*tensor.Tensor) *tensor.Tensor {
			h := tensor.Linear(x[0], x[1], x[2]).Tanh()
			return tensor.Linear(h, x[3], nil).LogSoftmax(-1)
		}, 0},
		{"Composite/reuse", ins(x34(71)), func(x []*tensor.Tensor) *tensor.Tensor {
			y := x[0].Mul(x[0]).Add(x[0].Exp())
			return y.Mul(x[0].Sin()).Sum([]int{0}, false)
		}, 0},
	}
}

func TestGradients(t *testing.T) {
	var all []gradCase
	all = append(all, unaryCases()...)
	all = append(all, binaryCases()...)
	all = append(all, otherCases()...)
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) {
			eps, atol, rtol := 1e-6, 1e-6, 1e-4
			if c.tol < 0 { // goes through float32: larger steps and tolerances
				eps, atol, rtol = 1e-2, 1e-3, 1e-3
			}
			if err := gradcheck.Check(c.f, c.in(), eps, atol, rtol); err != nil {
				t.Error(err)
			}
		})
	}
}
