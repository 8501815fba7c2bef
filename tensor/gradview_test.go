package tensor_test

import (
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// TestGradAsViewOfBuffer pins what data-parallel training (package ddp)
// relies on: a Grad installed with SetGrad as a view of a slot in a larger
// flat buffer receives Backward's gradient in place, through the GEMM that
// writes a weight's gradient directly, through ordinary accumulation (a
// bias, a weight used twice), and ZeroGrad clears only the slot.
func TestGradAsViewOfBuffer(t *testing.T) {
	build := func() (w, b, s *tensor.Tensor) {
		rng := tensor.NewRNG(5)
		w = rng.Normal(tensor.Float32, 0, 1, 4, 3).SetRequiresGrad(true)
		b = rng.Normal(tensor.Float32, 0, 1, 4).SetRequiresGrad(true)
		s = rng.Normal(tensor.Float32, 0, 1, 4).SetRequiresGrad(true)
		return w, b, s
	}
	x := tensor.NewRNG(6).Normal(tensor.Float32, 0, 1, 5, 3)
	loss := func(w, b, s *tensor.Tensor) *tensor.Tensor {
		h := tensor.LinearRelu(x, w, b)
		return h.Mul(s).Add(h.Mul(s).Square()).SumAll() // s used twice
	}
	// Reference: gradients Backward allocates itself, two passes accumulated.
	w0, b0, s0 := build()
	for range 2 {
		loss(w0, b0, s0).Backward()
	}
	// Views of one buffer with a guard element on either side of each slot.
	w, b, s := build()
	buf := make([]float32, 1+12+1+4+1+4+1)
	for i := range buf {
		buf[i] = 7 // overwritten only inside the slots
	}
	slot := func(off, n int, shape ...int) *tensor.Tensor {
		return tensor.FromFloat32(buf[off:off+n:off+n], shape...)
	}
	gw, gb, gs := slot(1, 12, 4, 3), slot(14, 4, 4), slot(19, 4, 4)
	for _, g := range []*tensor.Tensor{gw, gb, gs} {
		g.Zero()
	}
	w.SetGrad(gw)
	b.SetGrad(gb)
	s.SetGrad(gs)
	for range 2 {
		loss(w, b, s).Backward()
	}
	for _, c := range []struct {
		name      string
		got, want *tensor.Tensor
		view      *tensor.Tensor
	}{{"w", w, w0, gw}, {"b", b, b0, gb}, {"s", s, s0, gs}} {
		if c.got.Grad() != c.view {
			t.Errorf("%s: Backward replaced the Grad view", c.name)
		}
		if !sameValues(c.view, c.want.Grad(), 1e-5) {
			t.Errorf("%s: gradient in the buffer %v, want %v", c.name, c.view.Values(), c.want.Grad().Values())
		}
	}
	for _, i := range []int{0, 13, 18, 23} {
		if buf[i] != 7 {
			t.Errorf("guard element %d changed to %v", i, buf[i])
		}
	}
	w.ZeroGrad()
	if !slices.Equal(buf[1:13], make([]float32, 12)) || buf[0] != 7 || buf[13] != 7 || buf[14] == 0 {
		t.Errorf("ZeroGrad of w did not clear exactly its slot: %v", buf)
	}
}
