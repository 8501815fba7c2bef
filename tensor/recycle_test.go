package tensor_test

import (
	"runtime"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestRecycle: a recycled op output is emptied and its buffer serves the
// next allocation of its size; tensors a caller may still hold (wrapped
// slices, tensors that require grad, graph outputs, views) are left alone.
func TestRecycle(t *testing.T) {
	const n = 1 << 20 // 4 MiB of float32
	x := tensor.Ones(tensor.Float32, n)
	y := x.MulScalar(2)
	y.Recycle()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("reading a recycled tensor did not panic")
			}
		}()
		_ = y.Float32s()
	}()
	if b := allocated(func() { x.MulScalar(3) }); b >= n*4 {
		t.Errorf("an allocation after Recycle took %d bytes from the Go heap, want the pooled buffer (< %d)", b, n*4)
	}

	user := make([]float32, n)
	user[7] = 5
	u := tensor.FromFloat32(user, n)
	u.Recycle()
	if u.Float32s()[7] != 5 {
		t.Error("Recycle touched a wrapped slice")
	}
	p := tensor.Ones(tensor.Float32, n).SetRequiresGrad(true)
	p.Recycle()
	g := p.MulScalar(2) // a graph node
	g.Recycle()
	v := y2(n).Narrow(0, 1, n-1)
	v.Recycle()
	for _, c := range []struct {
		name string
		t    *tensor.Tensor
		want float32
	}{{"requires grad", p, 1}, {"graph output", g, 2}, {"view", v, 2}} {
		if got := c.t.Float32s()[0]; got != c.want {
			t.Errorf("%s: %v after Recycle, want %v (left alone)", c.name, got, c.want)
		}
	}
}

func y2(n int) *tensor.Tensor { return tensor.Ones(tensor.Float32, n).MulScalar(2) }
