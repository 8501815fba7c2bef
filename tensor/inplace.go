package tensor

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// In-place ops update the receiver's elements and return it. They bypass
// autograd: nothing is recorded, and a graph that saved the receiver (or a
// view of it) sees the new values. They are meant for optimizers, gradient
// buffers and initialization. Each panics on a non-leaf tensor that
// requires grad, as PyTorch does. The other operand broadcasts to the
// receiver's shape and is converted to its dtype; it must not overlap the
// receiver except by being the very same tensor.

// binaryInPlace sets t = op(t, o).
func (t *Tensor) binaryInPlace(op binOp, o *Tensor) {
	if t.dtype.IsHalf() {
		copyRaw(t, binaryRaw(op, t, o).castRaw(t.dtype))
		return
	}
	o = o.castRaw(t.dtype)
	switch t.dtype {
	case Float32:
		binaryTyped(op, t, t, o, kernF32)
	case Float64:
		binaryTyped(op, t, t, o, kernF64)
	case Int64:
		binaryTyped[int64](op, t, t, o, nil)
	case Int32:
		binaryTyped[int32](op, t, t, o, nil)
	case Uint8, Bool:
		binaryTyped[uint8](op, t, t, o, nil)
	}
}

// addInPlaceRaw is t += g for the autograd engine (no checks).
func (t *Tensor) addInPlaceRaw(g *Tensor) {
	if t.dtype == Float32 && g.dtype == Float32 && t.IsContiguous() && g.IsContiguous() && slices.Equal(t.shape, g.shape) {
		kernel.AxpyF32(1, flat[float32](g), flat[float32](t))
		return
	}
	t.binaryInPlace(opAdd, g)
}

// AddInPlace sets t += o.
func (t *Tensor) AddInPlace(o *Tensor) *Tensor {
	t.checkInPlace("AddInPlace")
	t.binaryInPlace(opAdd, o)
	return t
}

// SubInPlace sets t −= o.
func (t *Tensor) SubInPlace(o *Tensor) *Tensor {
	t.checkInPlace("SubInPlace")
	t.binaryInPlace(opSub, o)
	return t
}

// MulInPlace sets t *= o.
func (t *Tensor) MulInPlace(o *Tensor) *Tensor {
	t.checkInPlace("MulInPlace")
	t.binaryInPlace(opMul, o)
	return t
}

// DivInPlace sets t /= o (integer tensors divide with truncation, and
// division by zero gives 0).
func (t *Tensor) DivInPlace(o *Tensor) *Tensor {
	t.checkInPlace("DivInPlace")
	t.binaryInPlace(opDiv, o)
	return t
}

// AddScalarInPlace sets t += s.
func (t *Tensor) AddScalarInPlace(s float64) *Tensor {
	t.checkInPlace("AddScalarInPlace")
	if t.dtype == Float32 && t.IsContiguous() {
		d := flat[float32](t)
		kernel.AddScalarF32(d, d, float32(s))
		return t
	}
	t.binaryInPlace(opAdd, Scalar(s, floatOf(t.dtype)))
	return t
}

// MulScalarInPlace sets t *= s.
func (t *Tensor) MulScalarInPlace(s float64) *Tensor {
	t.checkInPlace("MulScalarInPlace")
	if t.dtype == Float32 && t.IsContiguous() {
		kernel.ScaleF32(float32(s), flat[float32](t))
		return t
	}
	t.binaryInPlace(opMul, Scalar(s, floatOf(t.dtype)))
	return t
}

// AxpyInPlace sets t += alpha·x (BLAS axpy).
func (t *Tensor) AxpyInPlace(alpha float64, x *Tensor) *Tensor {
	t.checkInPlace("AxpyInPlace")
	if t.IsContiguous() && x.IsContiguous() && slices.Equal(t.shape, x.shape) && x.dtype == t.dtype {
		switch t.dtype {
		case Float32:
			kernel.AxpyF32(float32(alpha), flat[float32](x), flat[float32](t))
			return t
		case Float64:
			kernel.AxpyF64(alpha, flat[float64](x), flat[float64](t))
			return t
		}
	}
	t.binaryInPlace(opAdd, binaryScalarRaw(opMul, x, alpha))
	return t
}

// AddcmulInPlace sets t += value·a·b (torch.addcmul_).
func (t *Tensor) AddcmulInPlace(value float64, a, b *Tensor) *Tensor {
	t.checkInPlace("AddcmulInPlace")
	if t.dtype == Float32 && sameDense(t, a, b) {
		d, x, y, v := flat[float32](t), flat[float32](a), flat[float32](b), float32(value)
		parallelChunks(len(d), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d[i] += v * x[i] * y[i]
			}
		})
		return t
	}
	t.binaryInPlace(opAdd, binaryScalarRaw(opMul, binaryRaw(opMul, a, b), value))
	return t
}

// AddcdivInPlace sets t += value·a/b (torch.addcdiv_).
func (t *Tensor) AddcdivInPlace(value float64, a, b *Tensor) *Tensor {
	t.checkInPlace("AddcdivInPlace")
	if t.dtype == Float32 && sameDense(t, a, b) {
		d, x, y, v := flat[float32](t), flat[float32](a), flat[float32](b), float32(value)
		parallelChunks(len(d), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d[i] += v * x[i] / y[i]
			}
		})
		return t
	}
	t.binaryInPlace(opAdd, binaryScalarRaw(opMul, binaryRaw(opDiv, a, b), value))
	return t
}

// sameDense reports whether all tensors are contiguous with t's shape and dtype.
func sameDense(t *Tensor, others ...*Tensor) bool {
	if !t.IsContiguous() {
		return false
	}
	for _, o := range others {
		if o.dtype != t.dtype || !o.IsContiguous() || !slices.Equal(o.shape, t.shape) {
			return false
		}
	}
	return true
}

// ClampInPlace limits t to [lo, hi].
func (t *Tensor) ClampInPlace(lo, hi float64) *Tensor {
	t.checkInPlace("ClampInPlace")
	copyRaw(t, unaryRaw(opClamp, t, lo, hi).castRaw(t.dtype))
	return t
}

// CopyFrom copies src (broadcast to t's shape, converted to t's dtype) into t.
func (t *Tensor) CopyFrom(src *Tensor) *Tensor {
	t.checkInPlace("CopyFrom")
	if t.st == src.st && t.offset == src.offset && slices.Equal(t.shape, src.shape) && t.dtype == src.dtype {
		return t
	}
	copyRaw(t, src.castRaw(t.dtype))
	return t
}

// Fill sets every element to v.
func (t *Tensor) Fill(v float64) *Tensor {
	t.checkInPlace("Fill")
	t.fillRaw(v)
	return t
}

// Zero sets every element to 0.
func (t *Tensor) Zero() *Tensor { return t.Fill(0) }

// mustFloat panics unless t is a float tensor.
func (t *Tensor) mustFloat(op string) {
	if !t.dtype.IsFloat() {
		panic(fmt.Sprintf("tensor: %s needs a floating-point tensor, got %v", op, t.dtype))
	}
}
