package tensor

import "math"

// Conversions between float32 and the 16-bit storage formats.
//
// IEEE 754-2008 binary16 ("half", Float16): 1 sign, 5 exponent (bias 15),
// 10 mantissa bits. bfloat16 (Google Brain's format, as in Intel's BF16
// white paper): the top 16 bits of a float32. Both conversions from float32
// round to nearest, ties to even; NaN stays NaN (quiet), overflow goes to
// ±Inf, values too small become (signed) subnormals or zero.

// Float32ToFloat16 returns the binary16 bit pattern nearest to f.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 // quiet NaN
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // biased half exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Half subnormal (or zero): value = h·2⁻²⁴ and the float32 value is
		// m·2^(exp-150) with the implicit bit, so h = m >> (14-e).
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry into the exponent is correct, up to 0x7c00 = Inf
	}
	return sign | uint16(h)
}

// Float16ToFloat32 returns the float32 value of the binary16 pattern h (exact).
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		f := float32(mant) * (1.0 / (1 << 24)) // subnormal: mant·2⁻²⁴, exact
		if sign != 0 {
			return -f
		}
		return f
	default:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	}
}

// Float32ToBFloat16 returns the bfloat16 bit pattern nearest to f.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign, make it quiet
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BFloat16ToFloat32 returns the float32 value of the bfloat16 pattern h (exact).
func BFloat16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

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
