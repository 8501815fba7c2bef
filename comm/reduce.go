package comm

import (
	"fmt"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/f16"
	"github.com/fathom-ml/fathom/internal/kernel"
)

// Number is the element type of the collectives: the slice-based core works
// on float32, float64 and int64 slices; a tensor wrapper passes its flat
// storage.
type Number interface {
	~float32 | ~float64 | ~int64 | BFloat16 | Float16
}

// BFloat16 and Float16 are the 16-bit floats of compressed all-reduces
// (bfloat16, and IEEE binary16 "fp16"; package internal/f16 converts).
// They take Sum (and Avg) only: each reduction step widens both operands
// to float32, adds and rounds back to 16 bits, as NCCL's 16-bit sums do.
type (
	BFloat16 uint16
	Float16  uint16
)

// validOp reports whether op reduces T: every op reduces the 32- and
// 64-bit types; the 16-bit floats take Sum and Avg only.
func validOp[T Number](op ReduceOp) bool {
	switch any(*new(T)).(type) {
	case BFloat16, Float16:
		return op == Sum || op == Avg
	}
	return op.valid()
}

// ReduceOp is the element-wise reduction of AllReduce, ReduceScatter and
// friends.
type ReduceOp int

const (
	Sum  ReduceOp = iota // element-wise sum
	Avg                  // sum divided by the world size (integer division for int64)
	Max                  // element-wise maximum; NaN wins
	Min                  // element-wise minimum; NaN wins
	Prod                 // element-wise product
)

func (op ReduceOp) String() string {
	switch op {
	case Sum:
		return "sum"
	case Avg:
		return "avg"
	case Max:
		return "max"
	case Min:
		return "min"
	case Prod:
		return "prod"
	}
	return fmt.Sprintf("ReduceOp(%d)", int(op))
}

func (op ReduceOp) valid() bool { return op >= Sum && op <= Prod }

// reduceInto sets dst[i] = dst[i] op src[i]. Avg sums; the caller divides
// once at the end. Max and Min propagate NaN so that the result does not
// depend on operand order (every rank of a tree or ring computes the same
// bits whichever side an operand came from).
func reduceInto[T Number](dst, src []T, op ReduceOp) {
	if len(src) != len(dst) {
		panic(fmt.Sprintf("comm.reduceInto: len(dst)=%d len(src)=%d", len(dst), len(src)))
	}
	switch op {
	case Sum, Avg:
		// Floats take the vector kernels, in pieces below their parallel
		// threshold: ranks are processes that already share the cores.
		switch d := any(dst).(type) {
		case []float32:
			addPieces(kernel.AddF32, d, any(src).([]float32))
			return
		case []float64:
			addPieces(kernel.AddF64, d, any(src).([]float64))
			return
		case []BFloat16:
			s := any(src).([]BFloat16)
			for i := range d {
				d[i] = BFloat16(f16.FromFloat32BF16(f16.ToFloat32BF16(uint16(d[i])) + f16.ToFloat32BF16(uint16(s[i]))))
			}
			return
		case []Float16:
			s := any(src).([]Float16)
			for i := range d {
				d[i] = Float16(f16.FromFloat32FP16(f16.ToFloat32FP16(uint16(d[i])) + f16.ToFloat32FP16(uint16(s[i]))))
			}
			return
		}
		i := 0
		for ; i+4 <= len(dst); i += 4 {
			d, s := dst[i:i+4:i+4], src[i:i+4:i+4]
			d[0] += s[0]
			d[1] += s[1]
			d[2] += s[2]
			d[3] += s[3]
		}
		for ; i < len(dst); i++ {
			dst[i] += src[i]
		}
	case Prod:
		for i := range dst {
			dst[i] *= src[i]
		}
	case Max:
		for i := range dst {
			if s := src[i]; s > dst[i] || s != s {
				if d := dst[i]; d == d {
					dst[i] = s
				}
			}
		}
	case Min:
		for i := range dst {
			if s := src[i]; s < dst[i] || s != s {
				if d := dst[i]; d == d {
					dst[i] = s
				}
			}
		}
	default:
		panic(fmt.Sprintf("comm: unknown reduce op %d", int(op)))
	}
}

// addPieces sets dst += src with add in pieces of reducePiece elements.
func addPieces[F float32 | float64](add func(dst, a, b []F), dst, src []F) {
	for lo := 0; lo < len(dst); lo += reducePiece {
		hi := min(lo+reducePiece, len(dst))
		add(dst[lo:hi], dst[lo:hi], src[lo:hi])
	}
}

// reducePiece is the largest piece reduceInto hands to a vector kernel at
// once, below the size at which the kernels split work over goroutines.
const reducePiece = 32 << 10

// divide implements the final step of Avg.
func divide[T Number](x []T, n int) {
	switch v := any(x).(type) {
	case []BFloat16:
		for i := range v {
			v[i] = BFloat16(f16.FromFloat32BF16(f16.ToFloat32BF16(uint16(v[i])) / float32(n)))
		}
		return
	case []Float16:
		for i := range v {
			v[i] = Float16(f16.FromFloat32FP16(f16.ToFloat32FP16(uint16(v[i])) / float32(n)))
		}
		return
	}
	d := T(n)
	for i := range x {
		x[i] /= d
	}
}

func elemSize[T Number]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// asBytes views a slice's memory as bytes without copying (the wire format
// is the machine's, little-endian; New refuses big-endian hosts).
func asBytes[T Number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*elemSize[T]())
}

// fromBytes views b as a []T; len(b) must be a multiple of the element size
// and b suitably aligned (all buffers here are 8-byte aligned).
func fromBytes[T Number](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/elemSize[T]())
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
