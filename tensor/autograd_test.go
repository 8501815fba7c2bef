package tensor_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic; want one mentioning %q", want)
		}
		if !strings.Contains(fmt.Sprint(r), want) {
			t.Fatalf("panic %q does not mention %q", r, want)
		}
	}()
	f()
}

func TestBackwardAccumulatesAndBroadcasts(t *testing.T) {
	w := tensor.FromFloat32([]float32{1, 2, 3}, 3).SetRequiresGrad(true)
	x := tensor.FromFloat32([]float32{1, 1, 1, 2, 2, 2}, 2, 3)
	loss := x.Mul(w).SumAll() // ∂/∂w = column sums of x = [3 3 3]
	loss.Backward()
	if fmt.Sprint(w.Grad().Float32s()) != "[3 3 3]" {
		t.Fatalf("grad %v", w.Grad())
	}
	if !w.Grad().IsContiguous() || w.Grad().DType() != tensor.Float32 {
		t.Fatal("grad must be contiguous float32")
	}
	// A second graph accumulates into the same buffer.
	buf := w.Grad()
	x.Mul(w).SumAll().Backward()
	if w.Grad() != buf || fmt.Sprint(w.Grad().Float32s()) != "[6 6 6]" {
		t.Fatalf("accumulated grad %v", w.Grad())
	}
	w.ZeroGrad()
	if w.Grad() != buf || fmt.Sprint(buf.Float32s()) != "[0 0 0]" {
		t.Fatal("ZeroGrad must zero in place")
	}
	w.SetGrad(nil)
	if w.Grad() != nil {
		t.Fatal("SetGrad(nil)")
	}
	// Mixed dtypes: the float32 leaf gets a float32 gradient.
	y := tensor.Ones(tensor.Float64, 3)
	w.Mul(y).SumAll().Backward()
	if w.Grad().DType() != tensor.Float32 || fmt.Sprint(w.Grad().Float32s()) != "[1 1 1]" {
		t.Fatalf("mixed-dtype grad %v", w.Grad())
	}
}

func TestGraphIsFreedUnlessRetained(t *testing.T) {
	w := tensor.Full(tensor.Float64, 2, 2).SetRequiresGrad(true)
	loss := w.Square().SumAll()
	loss.Backward()
	mustPanic(t, "RetainGraph", func() { loss.Backward() })

	w.SetGrad(nil)
	loss = w.Square().SumAll()
	loss.Backward(tensor.RetainGraph)
	loss.Backward()
	if fmt.Sprint(w.Grad().Values()) != "[8 8]" {
		t.Fatalf("retained twice: %v", w.Grad())
	}
	// A shared subgraph freed by one loss cannot be reused by another.
	w.SetGrad(nil)
	h := w.Exp()
	l1, l2 := h.SumAll(), h.MulScalar(2).SumAll()
	l1.Backward()
	mustPanic(t, "freed", func() { l2.Backward() })
}

func TestBackwardErrors(t *testing.T) {
	x := tensor.Ones(tensor.Float32, 3)
	mustPanic(t, "does not require grad", func() { x.SumAll().Backward() })
	w := tensor.Ones(tensor.Float32, 3).SetRequiresGrad(true)
	mustPanic(t, "one-element", func() { w.MulScalar(2).Backward() })
	mustPanic(t, "only floating-point", func() { tensor.Ones(tensor.Int64, 2).SetRequiresGrad(true) })
	mustPanic(t, "non-leaf", func() { w.MulScalar(2).SetRequiresGrad(false) })
	mustPanic(t, "non-leaf", func() { w.MulScalar(2).AddInPlace(x) })
	mustPanic(t, "do not broadcast", func() { w.Add(tensor.Ones(tensor.Float32, 2)) })
	mustPanic(t, "MatMul", func() { tensor.Ones(tensor.Float32, 2, 3).MatMul(tensor.Ones(tensor.Float32, 2, 3)) })
	// In-place on a leaf parameter is allowed (optimizer updates).
	w.MulScalarInPlace(0.5)
}

func TestBackwardWithAndRetainGrad(t *testing.T) {
	x := tensor.FromFloat64([]float64{1, 2, 3}, 3).SetRequiresGrad(true)
	h := x.Square().RetainGrad()
	y := h.MulScalar(3)
	y.BackwardWith(tensor.FromFloat64([]float64{1, 0, -1}, 3))
	if fmt.Sprint(x.Grad().Values()) != "[6 0 -18]" || fmt.Sprint(h.Grad().Values()) != "[3 0 -3]" {
		t.Fatalf("x.grad %v h.grad %v", x.Grad(), h.Grad())
	}
	if x.IsLeaf() != true || h.IsLeaf() || h.GradFn() != "Square" {
		t.Fatal("leaf bookkeeping")
	}
}

func TestNoGradAndDetach(t *testing.T) {
	w := tensor.Ones(tensor.Float32, 3, 2).SetRequiresGrad(true)
	b := tensor.Zeros(tensor.Float32, 2).SetRequiresGrad(true)
	x := tensor.Ones(tensor.Float32, 4, 3)
	out := tensor.Linear(x.NoGrad(), w.T(), b).Relu().SumAll()
	if out.RequiresGrad() || !out.IsLeaf() || !out.IsInference() {
		t.Fatal("an inference input must stop recording")
	}
	if out.Item() != 4*2*3 {
		t.Fatalf("value %v", out.Item())
	}
	d := w.Detach()
	if d.RequiresGrad() || !d.SharesStorage(w) {
		t.Fatal("Detach shares storage without history")
	}
	// Frozen parameters record nothing.
	frozen := tensor.Ones(tensor.Float32, 3)
	if frozen.Mul(x).RequiresGrad() {
		t.Fatal("frozen parameters must not record")
	}
	// Many goroutines may run inference forward passes on shared parameters.
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				r := tensor.Linear(x.NoGrad(), w.T(), b).Sigmoid().SumAll()
				if r.RequiresGrad() {
					errs <- "recorded"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestDeepGraph(t *testing.T) {
	// A long chain must not overflow the stack (the topological sort is
	// iterative).
	x := tensor.Scalar(1, tensor.Float64).SetRequiresGrad(true)
	y := x
	for i := 0; i < 100000; i++ {
		y = y.MulScalar(1)
	}
	y.Backward()
	if x.Grad().Item() != 1 {
		t.Fatalf("grad %v", x.Grad())
	}
}

func TestHalfPrecisionAutograd(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float16, tensor.BFloat16} {
		w := tensor.Full(dt, 0.5, 2, 2).SetRequiresGrad(true)
		x := tensor.Ones(dt, 3, 2)
		loss := x.MatMul(w).Tanh().SumAll()
		if loss.DType() != dt {
			t.Fatalf("%v: loss dtype %v", dt, loss.DType())
		}
		loss.Backward()
		g := w.Grad()
		if g.DType() != dt {
			t.Fatalf("%v: grad dtype %v", dt, g.DType())
		}
		// d/dw Σ tanh(x·w) = xᵀ·(1−tanh²(1)) with x ones → 3·0.41997 each.
		for _, v := range g.Values() {
			if v < 1.24 || v > 1.28 {
				t.Fatalf("%v: grad %v", dt, g)
			}
		}
	}
}
