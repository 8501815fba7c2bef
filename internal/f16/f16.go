// Package f16 converts between float32 and the two 16-bit float formats
// that gradient compression sends: IEEE 754 binary16 ("fp16": 1 sign, 5
// exponent, 10 fraction bits) and bfloat16 ("bf16": float32's top 16 bits,
// 8 exponent bits and 7 fraction bits). Conversions to 16 bits round to
// nearest, ties to even, as hardware does; NaN stays NaN, values beyond
// fp16's range become ±Inf, and fp16 keeps subnormals.
package f16

import "math"

// FromFloat32BF16 returns the bfloat16 nearest to f.
func FromFloat32BF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a (quiet) NaN
		return uint16(b>>16) | 0x40
	}
	// Round to nearest even on the 16 bits dropped.
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// ToFloat32BF16 returns the float32 value of bfloat16 h (exact).
func ToFloat32BF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FromFloat32FP16 returns the binary16 nearest to f.
func FromFloat32FP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	frac := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if frac != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp == 0 && frac == 0:
		return sign
	}
	e := exp - 127 + 15 // the exponent in binary16's bias
	if e >= 0x1f {
		return sign | 0x7c00 // overflow
	}
	if e <= 0 {
		// A subnormal binary16 (or zero): the significand with its
		// implicit bit, shifted right by 1 − e + 13, rounded to even.
		if e < -10 {
			return sign // below half the smallest subnormal
		}
		m := frac | 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := m >> shift
		rest := m & (1<<shift - 1)
		if rest > half || (rest == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | frac>>13
	rest := frac & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent, up to Inf: still right
	}
	return sign | uint16(r)
}

// ToFloat32FP16 returns the float32 value of binary16 h (exact).
func ToFloat32FP16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0:
		if frac == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: frac · 2^-24.
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
