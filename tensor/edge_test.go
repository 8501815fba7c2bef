package tensor_test

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

func TestEmptyAndScalarTensors(t *testing.T) {
	e := tensor.Zeros(tensor.Float32, 0, 3)
	if s := e.Sum([]int{0}, false); fmt.Sprint(s.Values()) != "[0 0 0]" {
		t.Fatalf("sum over empty dim: %v", s)
	}
	if p := e.Prod([]int{0}, false); fmt.Sprint(p.Values()) != "[1 1 1]" {
		t.Fatalf("prod over empty dim: %v", p)
	}
	mustPanic(t, "empty", func() { e.Max([]int{0}, false) })
	if r := e.Relu().Add(tensor.Ones(tensor.Float32, 3)); fmt.Sprint(r.Shape()) != "[0 3]" {
		t.Fatalf("empty broadcast: %v", r.Shape())
	}
	if m := tensor.Zeros(tensor.Float32, 2, 0).MatMul(tensor.Zeros(tensor.Float32, 0, 3)); fmt.Sprint(m.Values()) != "[0 0 0 0 0 0]" {
		t.Fatalf("k=0 matmul: %v", m)
	}
	if s := fmt.Sprint(e); s != "tensor([], size=[0 3], dtype=float32)" {
		t.Fatalf("empty print: %s", s)
	}
	// 0-d tensors behave as scalars everywhere.
	x := tensor.Scalar(2, tensor.Float64).SetRequiresGrad(true)
	y := x.Mul(tensor.FromFloat64([]float64{1, 2, 3})).SumAll().Add(x.Exp())
	y.Backward()
	if y.Dim() != 0 || fmt.Sprintf("%.4f", x.Grad().Item()) != "13.3891" {
		t.Fatalf("0-d gradient: %v", x.Grad())
	}
	if s := tensor.Scalar(3, tensor.Float32).Softmax(0).Item(); s != 1 {
		t.Fatalf("0-d softmax %v", s)
	}
	if v := tensor.Scalar(5, tensor.Int64).Reshape(1, 1).Squeeze(); v.Dim() != 0 || v.Item() != 5 {
		t.Fatal("reshape of 0-d")
	}
	mustPanic(t, "Item", func() { tensor.Ones(tensor.Float32, 2).Item() })
	mustPanic(t, "out of range", func() { tensor.Ones(tensor.Float32, 2).At(2) })
	mustPanic(t, "invalid for", func() { tensor.Ones(tensor.Float32, 6).Reshape(4, -1) })
}

func TestInferenceMarkPropagates(t *testing.T) {
	w := tensor.Ones(tensor.Float32, 4).SetRequiresGrad(true)
	x := tensor.FromFloat32([]float32{-1, 2, -3, 4}).NoGrad()
	mask := x.GtScalar(0).LogicalAnd(x.LtScalar(3))
	idx := x.Reshape(2, 2).ArgMax(1, false)
	for name, t2 := range map[string]*tensor.Tensor{
		"mask":    mask.Mul(w),
		"onehot":  tensor.OneHot(idx, 4).Sum([]int{0}, false).Mul(w),
		"where":   tensor.Where(mask, w, x),
		"reshape": x.Reshape(2, 2).Flatten(0, 1).Mul(w),
	} {
		if t2.RequiresGrad() {
			t.Errorf("%s: recorded although its data came from a NoGrad view", name)
		}
	}
}
