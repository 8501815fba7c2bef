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
	a := b & 0x7fffffff
	sign := uint16(b>>16) & 0x8000
	switch {
	case a < 0x38800000:
		// |f| < 2^-14: a subnormal binary16 or zero, round(|f|·2^24).
		// Adding 0.5, whose float32 ulp is 2^-24, rounds |f| to a
		// multiple of 2^-24 (to nearest even, in hardware), and the
		// multiple is the low bits of the sum. Gradients are mostly this
		// small, so this case must be fast.
		return sign | uint16(math.Float32bits(math.Float32frombits(a)+0.5)-0x3f000000)
	case a < 0x47800000:
		// 2^-14 ≤ |f| < 2^16, binary16's normal range and what rounds up
		// to Inf: round the 13 dropped bits to nearest even, then rebias
		// the exponent (127 → 15); a carry out of the fraction moves
		// into the exponent, as it must.
		a += 0xfff + (a>>13)&1
		return sign | uint16((a-112<<23)>>13)
	case a > 0x7f800000:
		return sign | 0x7e00 // NaN
	}
	return sign | 0x7c00 // overflow and Inf
}

// ToFloat32FP16 returns the float32 value of binary16 h (exact).
func ToFloat32FP16(h uint16) float32 {
	a := uint32(h & 0x7fff)
	sign := uint32(h&0x8000) << 16
	switch {
	case a < 0x0400:
		// Zero or subnormal, a·2^-24: 0.5 + a·2^-24 has a as its low
		// bits, and subtracting 0.5 is exact.
		return math.Float32frombits(sign | math.Float32bits(math.Float32frombits(0x3f000000|a)-0.5))
	case a >= 0x7c00: // Inf, NaN
		return math.Float32frombits(sign | 0x7f800000 | (a&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (a<<13 + 112<<23))
}
