package tensor

import (
	"math"

	"github.com/fathom-ml/fathom/internal/f16"
)

// Conversions between float32 and the 16-bit storage formats.
//
// IEEE 754-2008 binary16 ("half", Float16): 1 sign, 5 exponent (bias 15),
// 10 mantissa bits. bfloat16 (Google Brain's format, as in Intel's BF16
// white paper): the top 16 bits of a float32. Both conversions from float32
// round to nearest, ties to even; NaN stays NaN (quiet), overflow goes to
// ±Inf, values too small become (signed) subnormals or zero. The
// conversions themselves are internal/f16's, shared with package comm.

// Float32ToFloat16 returns the binary16 bit pattern nearest to f.
func Float32ToFloat16(f float32) uint16 { return f16.FromFloat32FP16(f) }

// Float16ToFloat32 returns the float32 value of the binary16 pattern h (exact).
func Float16ToFloat32(h uint16) float32 { return f16.ToFloat32FP16(h) }

// Float32ToBFloat16 returns the bfloat16 bit pattern nearest to f.
func Float32ToBFloat16(f float32) uint16 { return f16.FromFloat32BF16(f) }

// BFloat16ToFloat32 returns the float32 value of the bfloat16 pattern h (exact).
func BFloat16ToFloat32(h uint16) float32 { return f16.ToFloat32BF16(h) }

// halfToF32 converts a run of 16-bit patterns of type dt to float32.
func halfToF32(dt DType, dst []float32, src []uint16) {
	if dt == BFloat16 {
		for i, h := range src {
			dst[i] = math.Float32frombits(uint32(h) << 16)
		}
		return
	}
	for i, h := range src {
		dst[i] = Float16ToFloat32(h)
	}
}

// f32ToHalf converts float32 values to 16-bit patterns of type dt.
func f32ToHalf(dt DType, dst []uint16, src []float32) {
	if dt == BFloat16 {
		for i, f := range src {
			dst[i] = Float32ToBFloat16(f)
		}
		return
	}
	for i, f := range src {
		dst[i] = Float32ToFloat16(f)
	}
}
