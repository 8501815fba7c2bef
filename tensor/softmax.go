package tensor

import (
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// Softmax and LogSoftmax are primitives with their own backward: the
// composite (exp, sum, div) would allocate three tensors and lose accuracy.
// Both subtract the row maximum before exponentiating so nothing overflows.

// rowsAlong returns t with dim moved last, contiguous, plus rows and cols.
func rowsAlong(t *Tensor, d int) (x *Tensor, rows, cols int) {
	last := len(t.shape) - 1
	x = t
	if d != last {
		x = x.transposeRaw(d, last)
	}
	x = x.contiguousRaw()
	cols = x.shape[last]
	if cols > 0 {
		rows = x.Numel() / cols
	}
	return x, rows, cols
}

// fromRows undoes rowsAlong for a result with x's layout.
func fromRows(r *Tensor, d int) *Tensor {
	last := len(r.shape) - 1
	if d == last {
		return r
	}
	return r.transposeRaw(d, last).contiguousRaw()
}

func softmaxRaw(t *Tensor, dim int, log bool) *Tensor {
	if t.dtype.IsHalf() {
		return softmaxRaw(t.castRaw(Float32), dim, log).castRaw(t.dtype)
	}
	if !t.dtype.IsFloat() {
		t = t.castRaw(Float32)
	}
	if len(t.shape) == 0 {
		t = t.reshapeRaw([]int{1})
		return softmaxRaw(t, 0, log).reshapeRaw(nil)
	}
	d := t.dim(dim, "Softmax")
	x, rows, cols := rowsAlong(t, d)
	out := emptyUninit(t.dtype, x.shape)
	switch t.dtype {
	case Float32:
		if log {
			kernel.LogSoftmaxRowsF32(flat[float32](out), flat[float32](x), rows, cols)
		} else {
			kernel.SoftmaxRowsF32(flat[float32](out), flat[float32](x), rows, cols)
		}
	case Float64:
		softmaxRows(flat[float64](out), flat[float64](x), rows, cols, log)
	}
	return fromRows(out, d)
}

// softmaxRows is the float64 reference: per row, m = max, e = exp(x−m),
// softmax = e/Σe, log-softmax = x − m − ln Σe.
func softmaxRows[T float](dst, x []T, rows, cols int, log bool) {
	if cols == 0 {
		return
	}
	parallel.For(rows, max(1, grainElems/(4*cols)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dr := x[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols]
			m := xr[0]
			for _, v := range xr {
				m = maxNaN(m, v)
			}
			var s float64
			for i, v := range xr {
				e := math.Exp(float64(v - m))
				s += e
				if !log {
					dr[i] = T(e)
				}
			}
			if log {
				lse := float64(m) + math.Log(s)
				for i, v := range xr {
					dr[i] = T(float64(v) - lse)
				}
			} else {
				inv := 1 / s
				for i := range dr {
					dr[i] = T(float64(dr[i]) * inv)
				}
			}
		}
	})
}

// softmaxGradRows computes, per row, dx = y·(g − Σ g·y) for softmax output
// y, or dx = g − e^y·Σ g for log-softmax output y.
func softmaxGradRows[T float](dx, g, y []T, rows, cols int, log bool) {
	if cols == 0 {
		return
	}
	parallel.For(rows, max(1, grainElems/(2*cols)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			gr, yr, dr := g[r*cols:(r+1)*cols], y[r*cols:(r+1)*cols], dx[r*cols:(r+1)*cols]
			var s float64
			if log {
				for _, v := range gr {
					s += float64(v)
				}
				st := T(s)
				for i := range dr {
					dr[i] = gr[i] - T(math.Exp(float64(yr[i])))*st
				}
			} else {
				for i := range gr {
					s += float64(gr[i]) * float64(yr[i])
				}
				st := T(s)
				for i := range dr {
					dr[i] = yr[i] * (gr[i] - st)
				}
			}
		}
	})
}

func softmaxGradRaw(g, y *Tensor, dim int, log bool) *Tensor {
	dt := y.dtype
	if dt.IsHalf() {
		return softmaxGradRaw(g.castRaw(Float32), y.castRaw(Float32), dim, log).castRaw(dt)
	}
	if len(y.shape) == 0 {
		return softmaxGradRaw(g.reshapeRaw([]int{1}), y.reshapeRaw([]int{1}), 0, log).reshapeRaw(nil)
	}
	d := y.dim(dim, "Softmax")
	ys, rows, cols := rowsAlong(y, d)
	gs, _, _ := rowsAlong(g.castRaw(dt), d)
	dx := emptyUninit(dt, ys.shape)
	switch dt {
	case Float32:
		softmaxGradRows(flat[float32](dx), flat[float32](gs), flat[float32](ys), rows, cols, log)
	case Float64:
		softmaxGradRows(flat[float64](dx), flat[float64](gs), flat[float64](ys), rows, cols, log)
	}
	return fromRows(dx, d)
}

func (t *Tensor) softmax(dim int, log bool, name string) *Tensor {
	out := softmaxRaw(t, dim, log)
	if track1(out, t) {
		out.attach(name, func(g *Tensor) []*Tensor { return []*Tensor{softmaxGradRaw(g, out, dim, log)} }, t)
	}
	return out
}

// Softmax returns exp(t)/Σexp(t) along dim, computed stably. The last dim
// of a float32 tensor takes the vector kernel.
func (t *Tensor) Softmax(dim int) *Tensor { return t.softmax(dim, false, "Softmax") }

// LogSoftmax returns t − ln Σexp(t) along dim, computed stably.
func (t *Tensor) LogSoftmax(dim int) *Tensor { return t.softmax(dim, true, "LogSoftmax") }
