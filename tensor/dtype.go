package tensor

import "fmt"

// DType is the element type of a tensor.
//
// Float32 is the first-class type: every op has a fast path for it. Float64
// is fully supported (gradient checks run in it). Float16 and BFloat16 are
// storage types: values are kept as 16-bit patterns and every op converts
// them to float32, computes, and rounds the result back (round to nearest,
// ties to even). Integer and Bool tensors support creation, views, copies,
// casts, comparisons and integer-preserving arithmetic, and are never
// differentiable.
type DType int

// The element types.
const (
	Float32 DType = iota
	Float64
	Int64
	Int32
	Uint8
	Bool
	Float16
	BFloat16
	// Int8 holds quantized values (weights of int8 layers); see the DType
	// doc for what integer tensors support.
	Int8
)

var dtypeNames = [...]string{"float32", "float64", "int64", "int32", "uint8", "bool", "float16", "bfloat16", "int8"}
var dtypeSizes = [...]int{4, 8, 8, 4, 1, 1, 2, 2, 1}

// String returns the lower-case name PyTorch uses ("float32", "bfloat16", ...).
func (d DType) String() string {
	if d < 0 || int(d) >= len(dtypeNames) {
		return fmt.Sprintf("DType(%d)", int(d))
	}
	return dtypeNames[d]
}

// Size returns the number of bytes one element occupies.
func (d DType) Size() int {
	if d < 0 || int(d) >= len(dtypeSizes) {
		panic(fmt.Sprintf("tensor: invalid dtype %d", int(d)))
	}
	return dtypeSizes[d]
}

// IsFloat reports whether d is a floating-point type (and so may require grad).
func (d DType) IsFloat() bool {
	return d == Float32 || d == Float64 || d == Float16 || d == BFloat16
}

// IsHalf reports whether d is one of the 16-bit storage types.
func (d DType) IsHalf() bool { return d == Float16 || d == BFloat16 }

// ParseDType returns the DType with the given name (as printed by String).
func ParseDType(name string) (DType, error) {
	for i, n := range dtypeNames {
		if n == name {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("tensor: unknown dtype %q", name)
}

// rank orders dtypes for promotion: the result of a binary op between two
// dtypes is the one of higher rank (Float16 with BFloat16 gives Float32).
func (d DType) rank() int {
	switch d {
	case Bool:
		return 0
	case Uint8:
		return 1
	case Int8:
		return 2
	case Int32:
		return 3
	case Int64:
		return 4
	case Float16, BFloat16:
		return 5
	case Float32:
		return 6
	case Float64:
		return 7
	}
	panic(fmt.Sprintf("tensor: invalid dtype %d", int(d)))
}

// PromoteTypes returns the dtype a binary op between a and b computes in,
// following PyTorch's category rules for tensors (bool < integers < floats,
// wider wins; float16 with bfloat16 gives float32).
func PromoteTypes(a, b DType) DType {
	if a == b {
		return a
	}
	if a.IsHalf() && b.IsHalf() {
		return Float32
	}
	if a.rank() >= b.rank() {
		return a
	}
	return b
}

// floatOf returns the floating dtype an op that needs real numbers uses for
// an input of type d: d itself if it is a float, else Float32.
func floatOf(d DType) DType {
	if d.IsFloat() {
		return d
	}
	return Float32
}
