package tensor_test

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

func TestComparisonsAndLogic(t *testing.T) {
	a := tensor.FromFloat32([]float32{1, 2, 3})
	b := tensor.FromFloat32([]float32{3, 2, 1})
	for _, c := range []struct {
		name string
		got  *tensor.Tensor
		want string
	}{
		{"Eq", a.Eq(b), "[false true false]"},
		{"Ne", a.Ne(b), "[true false true]"},
		{"Lt", a.Lt(b), "[true false false]"},
		{"Le", a.Le(b), "[true true false]"},
		{"Gt", a.Gt(b), "[false false true]"},
		{"Ge", a.Ge(b), "[false true true]"},
		{"EqScalar", a.EqScalar(2), "[false true false]"},
		{"NeScalar", a.NeScalar(2), "[true false true]"},
		{"LtScalar", a.LtScalar(2), "[true false false]"},
		{"LeScalar", a.LeScalar(2), "[true true false]"},
		{"GtScalar", a.GtScalar(2), "[false false true]"},
		{"GeScalar", a.GeScalar(2), "[false true true]"},
		{"And", a.GtScalar(1).LogicalAnd(b.GtScalar(1)), "[false true false]"},
		{"Or", a.GtScalar(2).LogicalOr(b.GtScalar(2)), "[true false true]"},
		{"Xor", a.GtScalar(1).LogicalXor(b.GtScalar(1)), "[true false true]"},
		{"Not", a.GtScalar(1).LogicalNot(), "[true false false]"},
		{"IntVsFloat", tensor.FromInt64([]int64{1, 2, 3}).GtScalar(1.5), "[false true true]"},
	} {
		if c.got.DType() != tensor.Bool || fmt.Sprint(c.got.Bools()) != c.want {
			t.Errorf("%s = %v, want %s", c.name, c.got, c.want)
		}
	}
}

func TestMiscOps(t *testing.T) {
	x := tensor.FromFloat32([]float32{1.5, -2.5, 3})
	if v := x.Ceil().Values(); fmt.Sprint(v) != "[2 -2 3]" {
		t.Errorf("Ceil %v", v)
	}
	if v := x.SubScalar(1).Values(); fmt.Sprint(v) != "[0.5 -3.5 2]" {
		t.Errorf("SubScalar %v", v)
	}
	if v := x.Swish().Values()[2]; v < 2.857 || v > 2.858 {
		t.Errorf("Swish %v", v)
	}
	y := x.Clone()
	y.SubInPlace(tensor.Ones(tensor.Float32, 3)).MulInPlace(tensor.Full(tensor.Float32, 2, 3)).DivInPlace(tensor.Scalar(4, tensor.Float32))
	if fmt.Sprint(y.Float32s()) != "[0.25 -1.75 1]" {
		t.Errorf("in-place chain %v", y.Float32s())
	}
	iy := tensor.FromInt64([]int64{7, -7}).DivInPlace(tensor.FromInt64([]int64{2, 0}))
	if fmt.Sprint(iy.Int64s()) != "[3 0]" {
		t.Errorf("int DivInPlace %v", iy.Int64s())
	}
	ix := tensor.FromInt32([]int32{-3, 0, 5})
	for _, c := range []struct {
		got  *tensor.Tensor
		want string
	}{
		{ix.Neg(), "[3 0 -5]"}, {ix.Sign(), "[-1 0 1]"}, {ix.Relu(), "[0 0 5]"},
		{ix.Clamp(-1, 2), "[-1 0 2]"}, {ix.Square(), "[9 0 25]"}, {ix.Floor(), "[-3 0 5]"},
	} {
		if c.got.DType() != tensor.Int32 || fmt.Sprint(c.got.Int32s()) != c.want {
			t.Errorf("int unary: %v, want %s", c.got, c.want)
		}
	}
	u := tensor.FromUint8([]uint8{1, 200}, 2)
	if fmt.Sprint(u.Uint8s()) != "[1 200]" || u.Sum(nil, false).Item() != 201 {
		t.Errorf("uint8 %v", u)
	}
	if d, err := tensor.ParseDType("bfloat16"); err != nil || d != tensor.BFloat16 {
		t.Errorf("ParseDType: %v %v", d, err)
	}
	if _, err := tensor.ParseDType("float8"); err == nil {
		t.Error("ParseDType accepted float8")
	}
	m := tensor.Zeros(tensor.Float32, 4, 6).Narrow(1, 2, 3).T()
	if fmt.Sprint(m.Strides(), m.Offset()) != "[1 6] 2" {
		t.Errorf("strides/offset %v %v", m.Strides(), m.Offset())
	}
	if s := tensor.FullLike(m, 2).String(); s != "tensor([[2., 2., 2., 2.],\n        [2., 2., 2., 2.],\n        [2., 2., 2., 2.]], dtype=float32)" {
		t.Errorf("String: %q", s)
	}
	if b := tensor.FromFloat32([]float32{1, 2}).BroadcastTo(3, 2); fmt.Sprint(b.Shape()) != "[3 2]" {
		t.Errorf("BroadcastTo %v", b.Shape())
	}
	if h := tensor.FromFloat16Bits([]uint16{0x3c00, 0xc000}); fmt.Sprint(h.Values()) != "[1 -2]" {
		t.Errorf("FromFloat16Bits %v", h.Values())
	}
	if v := tensor.NewRNG(1).NormFloat64(); v == 0 {
		t.Error("NormFloat64")
	}
	if s := fmt.Sprintf("%+v", tensor.Zeros(tensor.Float32, 2).Narrow(0, 1, 1)); s != "tensor([0.], dtype=float32) shape=[1] strides=[1] offset=1" {
		t.Errorf("%%+v: %q", s)
	}
}

// Dot's float32 fast path (the vector kernel) has its own backward.
func TestDotFloat32(t *testing.T) {
	a := tensor.FromFloat32([]float32{1, 2, 3}).SetRequiresGrad(true)
	b := tensor.FromFloat32([]float32{4, 5, 6}).SetRequiresGrad(true)
	d := tensor.Dot(a, b)
	if d.Item() != 32 {
		t.Fatalf("Dot %v", d)
	}
	d.Backward()
	if fmt.Sprint(a.Grad().Float32s(), b.Grad().Float32s()) != "[4 5 6] [1 2 3]" {
		t.Fatalf("Dot grads %v %v", a.Grad(), b.Grad())
	}
}

// Gradients of parameters used twice accumulate correctly on the direct
// (GEMM into Grad) path.
func TestLinearGradAccumulation(t *testing.T) {
	w := tensor.NewRNG(5).Uniform(tensor.Float64, -1, 1, 4, 4).SetRequiresGrad(true)
	b := tensor.NewRNG(6).Uniform(tensor.Float64, -1, 1, 4).SetRequiresGrad(true)
	x := tensor.NewRNG(7).Uniform(tensor.Float64, -1, 1, 3, 4)
	f := func(in []*tensor.Tensor) *tensor.Tensor {
		h := tensor.Linear(x, in[0], in[1]).Tanh()
		return tensor.Linear(h, in[0], in[1]).MatMul(in[0]).Sum([]int{0}, false)
	}
	if err := gradcheck.Check(f, []*tensor.Tensor{w, b}, 1e-6, 1e-6, 1e-4); err != nil {
		t.Fatal(err)
	}
	w.SetGrad(nil)
	f([]*tensor.Tensor{w, b}).SumAll().Backward()
	g1 := w.Grad().Clone()
	f([]*tensor.Tensor{w, b}).SumAll().Backward()
	g2 := w.Grad().Values()
	for i, v := range g1.Values() {
		if d := g2[i] - 2*v; d > 1e-12 || d < -1e-12 {
			t.Fatalf("second backward did not double the gradient: %v vs %v", g2[i], v)
		}
	}
}
