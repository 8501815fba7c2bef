package tensor

import (
	"fmt"
	"math"
)

// elem is the set of Go types storage holds. Bool and Uint8 are stored as
// uint8, Float16 and BFloat16 as their uint16 bit patterns.
type elem interface {
	float32 | float64 | int64 | int32 | uint8 | int8 | uint16
}

// number is the set of storage types ops compute in directly.
type number interface {
	float32 | float64 | int64 | int32 | uint8 | int8
}

// float is the set of storage types transcendental ops compute in.
type float interface {
	float32 | float64
}

// storage is a flat typed buffer that tensors view. Its dynamic type is
// always *buffer[T]; a type assertion recovers the typed slice without
// boxing inside loops.
type storage interface {
	length() int
	meta() *storageMeta
	recycle() // give the data back to the recycler (see recycler.go)
}

type buffer[T elem] struct {
	data []T
	storageMeta
}

func (b *buffer[T]) length() int        { return len(b.data) }
func (b *buffer[T]) meta() *storageMeta { return &b.storageMeta }

// newStorage allocates zero-filled storage of n elements.
func newStorage(dt DType, n int) storage { return allocStorage(dt, n, true) }

// allocStorage allocates storage of n elements, zero-filled when clear is
// set and otherwise with undefined contents (for ops that overwrite every
// element). Float storage of recyclable size comes from the recycler.
func allocStorage(dt DType, n int, clear bool) storage {
	switch dt {
	case Float32:
		return recycledBuffer(&recyclerF32, n, clear)
	case Float64:
		return recycledBuffer(&recyclerF64, n, clear)
	case Int64:
		return &buffer[int64]{data: make([]int64, n)}
	case Int32:
		return &buffer[int32]{data: make([]int32, n)}
	case Uint8, Bool:
		return &buffer[uint8]{data: make([]uint8, n)}
	case Int8:
		return &buffer[int8]{data: make([]int8, n)}
	case Float16, BFloat16:
		return &buffer[uint16]{data: make([]uint16, n)}
	}
	panic(fmt.Sprintf("tensor: invalid dtype %d", int(dt)))
}

// Tensor is an n-dimensional array: a view (shape, strides, offset) into a
// typed storage that other tensors may share, plus autograd state.
//
// Tensors are used through pointers. A Tensor's shape never changes; ops
// return new tensors, and view ops return tensors sharing the storage.
type Tensor struct {
	shape   []int
	strides []int // in elements; 0 for broadcast (expanded) dims
	offset  int
	dtype   DType
	st      storage

	requiresGrad bool
	inference    bool // produced under NoGrad: ops record nothing
	retainGrad   bool
	grad         *Tensor
	node         *node      // nil for leaves
	hooks        *leafHooks // grad-ready hooks of a leaf (hooks.go); nil when none

	dims [8]int // backs shape and strides of tensors with up to 4 dims
}

// data returns the typed storage slice of t (the whole buffer; index it
// with t.offset and t.strides).
func data[T elem](t *Tensor) []T { return t.st.(*buffer[T]).data }

// header returns a tensor header with room for shape and strides of nd
// dims, inside the header itself up to 4 dims (one allocation).
func header(dt DType, nd int) *Tensor {
	t := &Tensor{dtype: dt}
	var dims []int
	if 2*nd <= len(t.dims) {
		dims = t.dims[:2*nd]
	} else {
		dims = make([]int, 2*nd)
	}
	t.shape, t.strides = dims[:nd:nd], dims[nd:2*nd:2*nd]
	return t
}

// empty allocates a contiguous tensor of the given shape, zero-filled.
// shape is copied.
func empty(dt DType, shape []int) *Tensor { return emptyTensor(dt, shape, true) }

// emptyUninit is empty without the zero fill: the contents are undefined,
// for ops that write every element of their output.
func emptyUninit(dt DType, shape []int) *Tensor { return emptyTensor(dt, shape, false) }

func emptyTensor(dt DType, shape []int, clear bool) *Tensor {
	t := header(dt, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] < 0 {
			panic(fmt.Sprintf("tensor: negative dimension in shape %v", shape))
		}
		t.shape[i] = shape[i]
		t.strides[i] = n
		n *= shape[i]
	}
	t.st = allocStorage(dt, n, clear)
	return t
}

// fromSlice wraps data without copying.
func fromSlice[T elem](dt DType, d []T, shape []int) *Tensor {
	if len(shape) == 0 {
		shape = []int{len(d)}
	}
	if n := numelOf(shape); n != len(d) {
		panic(fmt.Sprintf("tensor: %d values do not fill shape %v (%d elements)", len(d), shape, n))
	}
	t := header(dt, len(shape))
	copy(t.shape, shape)
	contiguousStrides(t.shape, t.strides)
	t.st = &buffer[T]{data: d}
	return t
}

// FromFloat32 returns a tensor of the given shape viewing data (no copy:
// later writes to data show in the tensor and vice versa). With no shape the
// tensor is 1-D. It panics if len(data) does not match the shape.
func FromFloat32(data []float32, shape ...int) *Tensor { return fromSlice(Float32, data, shape) }

// FromFloat64 is FromFloat32 for float64 data (no copy).
func FromFloat64(data []float64, shape ...int) *Tensor { return fromSlice(Float64, data, shape) }

// FromInt64 is FromFloat32 for int64 data (no copy).
func FromInt64(data []int64, shape ...int) *Tensor { return fromSlice(Int64, data, shape) }

// FromInt32 is FromFloat32 for int32 data (no copy).
func FromInt32(data []int32, shape ...int) *Tensor { return fromSlice(Int32, data, shape) }

// FromUint8 is FromFloat32 for uint8 data (no copy).
func FromUint8(data []uint8, shape ...int) *Tensor { return fromSlice(Uint8, data, shape) }

// FromInt8 is FromFloat32 for int8 data (no copy).
func FromInt8(data []int8, shape ...int) *Tensor { return fromSlice(Int8, data, shape) }

// FromBool returns a Bool tensor holding a copy of data.
func FromBool(data []bool, shape ...int) *Tensor {
	b := make([]uint8, len(data))
	for i, v := range data {
		if v {
			b[i] = 1
		}
	}
	return fromSlice(Bool, b, shape)
}

// FromFloat16Bits views binary16 bit patterns as a Float16 tensor (no copy).
func FromFloat16Bits(bits []uint16, shape ...int) *Tensor { return fromSlice(Float16, bits, shape) }

// FromBFloat16Bits views bfloat16 bit patterns as a BFloat16 tensor (no copy).
func FromBFloat16Bits(bits []uint16, shape ...int) *Tensor { return fromSlice(BFloat16, bits, shape) }

// FromValues returns a new tensor of type dt holding vals (converted, so
// this copies) in the given shape; with no shape it is 1-D.
func FromValues(dt DType, vals []float64, shape ...int) *Tensor {
	return FromFloat64(vals, shape...).castRaw(dt)
}

// Scalar returns a 0-dimensional tensor holding v converted to dt.
func Scalar(v float64, dt DType) *Tensor {
	t := empty(dt, nil)
	t.setFlat(0, v)
	return t
}

// Zeros returns a new tensor of zeros.
func Zeros(dt DType, shape ...int) *Tensor { return empty(dt, shape) }

// Ones returns a new tensor of ones.
func Ones(dt DType, shape ...int) *Tensor { return Full(dt, 1, shape...) }

// Full returns a new tensor with every element v (converted to dt).
func Full(dt DType, v float64, shape ...int) *Tensor {
	t := empty(dt, shape)
	if v != 0 {
		t.fillRaw(v)
	}
	return t
}

// ZerosLike returns zeros with t's shape and dtype.
func ZerosLike(t *Tensor) *Tensor { return empty(t.dtype, t.shape) }

// OnesLike returns ones with t's shape and dtype.
func OnesLike(t *Tensor) *Tensor { return Full(t.dtype, 1, t.shape...) }

// FullLike returns a tensor with t's shape and dtype filled with v.
func FullLike(t *Tensor, v float64) *Tensor { return Full(t.dtype, v, t.shape...) }

// Arange returns the 1-D tensor start, start+step, ... up to but excluding
// end, like torch.arange.
func Arange(dt DType, start, end, step float64) *Tensor {
	if step == 0 || math.IsNaN(step) {
		panic("tensor: Arange step must be non-zero")
	}
	n := int(math.Ceil((end - start) / step))
	if n < 0 {
		n = 0
	}
	t := empty(dt, []int{n})
	for i := 0; i < n; i++ {
		t.setFlat(i, start+float64(i)*step)
	}
	return t
}

// Linspace returns n evenly spaced values from start to end inclusive.
func Linspace(dt DType, start, end float64, n int) *Tensor {
	if n < 0 {
		panic("tensor: Linspace with negative count")
	}
	t := empty(dt, []int{n})
	if n == 1 {
		t.setFlat(0, start)
		return t
	}
	step := (end - start) / float64(n-1)
	for i := 0; i < n; i++ {
		// Fill from both ends, as torch.linspace does, so end is exact.
		if i < n/2 {
			t.setFlat(i, start+step*float64(i))
		} else {
			t.setFlat(i, end-step*float64(n-1-i))
		}
	}
	return t
}

// Eye returns the n×n identity matrix.
func Eye(dt DType, n int) *Tensor {
	t := empty(dt, []int{n, n})
	for i := 0; i < n; i++ {
		t.setFlat(i*n+i, 1)
	}
	return t
}

// OneHot returns a Float32 tensor of shape idx.Shape()+[classes] with a 1 at
// each index of the integer tensor idx. It panics on out-of-range indices.
func OneHot(idx *Tensor, classes int) *Tensor {
	if idx.dtype.IsFloat() {
		panic(fmt.Sprintf("tensor: OneHot needs an integer tensor, got %v", idx.dtype))
	}
	ix := idx.Int64s()
	out := empty(Float32, append(append([]int(nil), idx.shape...), classes))
	o := data[float32](out)
	for i, c := range ix {
		if c < 0 || int(c) >= classes {
			panic(fmt.Sprintf("tensor: OneHot index %d out of range [0, %d)", c, classes))
		}
		o[i*classes+int(c)] = 1
	}
	return inherit(out, idx)
}

// ---- accessors ----

// Shape returns the sizes of the dimensions (a copy).
func (t *Tensor) Shape() []int { return append([]int(nil), t.shape...) }

// Size returns the size of dimension d (negative d counts from the end).
func (t *Tensor) Size(d int) int { return t.shape[t.dim(d, "Size")] }

// Dim returns the number of dimensions.
func (t *Tensor) Dim() int { return len(t.shape) }

// Numel returns the number of elements.
func (t *Tensor) Numel() int { return numelOf(t.shape) }

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Strides returns the strides in elements (a copy).
func (t *Tensor) Strides() []int { return append([]int(nil), t.strides...) }

// Offset returns the position of the first element in the storage.
func (t *Tensor) Offset() int { return t.offset }

// IsContiguous reports whether the elements are laid out densely in
// row-major order (size-1 dims may have any stride).
func (t *Tensor) IsContiguous() bool {
	n := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != n {
			return false
		}
		n *= t.shape[i]
	}
	return true
}

// SharesStorage reports whether t and u view the same storage.
func (t *Tensor) SharesStorage(u *Tensor) bool { return t.st == u.st }

// flatOffset returns the storage position of the element at idx.
func (t *Tensor) flatOffset(op string, idx []int) int {
	if len(idx) != len(t.shape) {
		panic(fmt.Sprintf("tensor: %s got %d indices for shape %v", op, len(idx), t.shape))
	}
	off := t.offset
	for i, v := range idx {
		if v < 0 {
			v += t.shape[i]
		}
		if v < 0 || v >= t.shape[i] {
			panic(fmt.Sprintf("tensor: %s index %v out of range for shape %v", op, idx, t.shape))
		}
		off += v * t.strides[i]
	}
	return off
}

// getFlat reads storage position p as float64.
func (t *Tensor) getFlat(p int) float64 {
	switch s := t.st.(type) {
	case *buffer[float32]:
		return float64(s.data[p])
	case *buffer[float64]:
		return s.data[p]
	case *buffer[int64]:
		return float64(s.data[p])
	case *buffer[int32]:
		return float64(s.data[p])
	case *buffer[uint8]:
		return float64(s.data[p])
	case *buffer[uint16]:
		if t.dtype == BFloat16 {
			return float64(BFloat16ToFloat32(s.data[p]))
		}
		return float64(Float16ToFloat32(s.data[p]))
	}
	panic("tensor: unknown storage")
}

// setFlat writes v (converted to t's dtype) at storage position p.
func (t *Tensor) setFlat(p int, v float64) {
	switch s := t.st.(type) {
	case *buffer[float32]:
		s.data[p] = float32(v)
	case *buffer[float64]:
		s.data[p] = v
	case *buffer[int64]:
		s.data[p] = int64(v)
	case *buffer[int32]:
		s.data[p] = int32(v)
	case *buffer[uint8]:
		if t.dtype == Bool {
			if v != 0 {
				s.data[p] = 1
			} else {
				s.data[p] = 0
			}
		} else {
			s.data[p] = uint8(v)
		}
	case *buffer[uint16]:
		if t.dtype == BFloat16 {
			s.data[p] = Float32ToBFloat16(float32(v))
		} else {
			s.data[p] = Float32ToFloat16(float32(v))
		}
	default:
		panic("tensor: unknown storage")
	}
}

// At returns the element at idx (negative indices count from the end) as a
// float64.
func (t *Tensor) At(idx ...int) float64 { return t.getFlat(t.flatOffset("At", idx)) }

// SetAt writes v at idx, bypassing autograd (see the in-place rules in the
// package documentation).
func (t *Tensor) SetAt(v float64, idx ...int) {
	t.checkInPlace("SetAt")
	t.setFlat(t.flatOffset("SetAt", idx), v)
}

// Item returns the single element of a one-element tensor.
func (t *Tensor) Item() float64 {
	if t.Numel() != 1 {
		panic(fmt.Sprintf("tensor: Item on a tensor of shape %v (needs exactly one element)", t.shape))
	}
	return t.getFlat(t.offset)
}

// contiguousData returns t's elements as a contiguous slice of storage type
// T: a sub-slice of the storage when t is contiguous, else a new copy.
func contiguousData[T elem](t *Tensor) []T {
	n := t.Numel()
	if t.IsContiguous() {
		return data[T](t)[t.offset : t.offset+n : t.offset+n]
	}
	return data[T](t.contiguousRaw())[:n]
}

func (t *Tensor) wantDType(op string, dts ...DType) {
	for _, d := range dts {
		if t.dtype == d {
			return
		}
	}
	panic(fmt.Sprintf("tensor: %s on a %v tensor (convert with To first)", op, t.dtype))
}

// Float32s returns the elements of a Float32 tensor in row-major order. When
// t is contiguous the slice aliases t's storage (writes show in t and every
// view sharing it); otherwise it is a fresh copy. It panics for other dtypes.
func (t *Tensor) Float32s() []float32 {
	t.wantDType("Float32s", Float32)
	return contiguousData[float32](t)
}

// Float64s is Float32s for Float64 tensors.
func (t *Tensor) Float64s() []float64 {
	t.wantDType("Float64s", Float64)
	return contiguousData[float64](t)
}

// Int64s is Float32s for Int64 tensors; for Int32, Uint8 and Bool tensors
// it returns a converted copy.
func (t *Tensor) Int64s() []int64 {
	if t.dtype == Int64 {
		return contiguousData[int64](t)
	}
	t.wantDType("Int64s", Int32, Uint8, Bool)
	return data[int64](t.castRaw(Int64))
}

// Int32s is Float32s for Int32 tensors.
func (t *Tensor) Int32s() []int32 {
	t.wantDType("Int32s", Int32)
	return contiguousData[int32](t)
}

// Uint8s is Float32s for Uint8 and Bool tensors (Bool elements are 0 or 1).
func (t *Tensor) Uint8s() []uint8 {
	t.wantDType("Uint8s", Uint8, Bool)
	return contiguousData[uint8](t)
}

// Int8s is Float32s for Int8 tensors.
func (t *Tensor) Int8s() []int8 {
	t.wantDType("Int8s", Int8)
	return contiguousData[int8](t)
}

// Bools returns a copy of the elements of a Bool tensor.
func (t *Tensor) Bools() []bool {
	t.wantDType("Bools", Bool)
	u := contiguousData[uint8](t)
	out := make([]bool, len(u))
	for i, v := range u {
		out[i] = v != 0
	}
	return out
}

// Uint16s returns the bit patterns of a Float16 or BFloat16 tensor (a view
// when contiguous, else a copy), for serialization.
func (t *Tensor) Uint16s() []uint16 {
	t.wantDType("Uint16s", Float16, BFloat16)
	return contiguousData[uint16](t)
}

// Values returns a copy of the elements converted to float64, in row-major
// order. Convenient for tests and printing; not for hot paths.
func (t *Tensor) Values() []float64 {
	if t.dtype == Float64 {
		return append([]float64(nil), t.Float64s()...)
	}
	return data[float64](t.castRaw(Float64))
}
