package f16

import (
	"math"
	"testing"
)

// Every binary16 and bfloat16 value survives the round trip through
// float32 (NaNs stay NaN).
func TestRoundTripEvery16BitValue(t *testing.T) {
	for h := range 1 << 16 {
		u := uint16(h)
		if f := ToFloat32FP16(u); f != f {
			if g := ToFloat32FP16(FromFloat32FP16(f)); g == g {
				t.Fatalf("fp16 %#04x: NaN became %v", u, g)
			}
		} else if back := FromFloat32FP16(f); back != u {
			t.Fatalf("fp16 %#04x -> %v -> %#04x", u, f, back)
		}
		if f := ToFloat32BF16(u); f != f {
			if g := ToFloat32BF16(FromFloat32BF16(f)); g == g {
				t.Fatalf("bf16 %#04x: NaN became %v", u, g)
			}
		} else if back := FromFloat32BF16(f); back != u {
			t.Fatalf("bf16 %#04x -> %v -> %#04x", u, f, back)
		}
	}
}

// Conversions to 16 bits round to the nearest value, ties to even:
// checked against the two neighbours of every float32 of a sweep.
func TestRoundsToNearestEven(t *testing.T) {
	check := func(name string, enc func(float32) uint16, dec func(uint16) float32, f float32) {
		h := enc(f)
		got := float64(dec(h))
		if math.IsInf(got, 0) {
			return // overflow: checked below
		}
		for _, nb := range []uint16{h - 1, h + 1} {
			v := float64(dec(nb))
			if math.IsNaN(v) || math.Signbit(v) != math.Signbit(got) && v != 0 {
				continue
			}
			dg, dn := math.Abs(got-float64(f)), math.Abs(v-float64(f))
			if dn < dg || (dn == dg && h&1 == 1) {
				t.Fatalf("%s(%v) = %v (%#04x), but %v (%#04x) is nearer or the even tie", name, f, got, h, v, nb)
			}
		}
	}
	for i := uint32(0); i < 1<<32-1<<20; i += 1<<20 - 7 {
		f := math.Float32frombits(i)
		if f != f || math.IsInf(float64(f), 0) {
			continue
		}
		check("fp16", FromFloat32FP16, ToFloat32FP16, f)
		check("bf16", FromFloat32BF16, ToFloat32BF16, f)
	}
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e6, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-08, 0x0001}, {2.98e-08, 0x0000},
		{1 + 1.0/2048, 0x3c00}, {1 + 3.0/2048, 0x3c02}, // ties to even
	} {
		if got := FromFloat32FP16(c.f); got != c.want {
			t.Errorf("FromFloat32FP16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if got := FromFloat32BF16(1 + 1.0/256); got != 0x3f80 { // a tie: to even
		t.Errorf("FromFloat32BF16(1+2^-8) = %#04x", got)
	}
}

func BenchmarkFP16RoundTrip(b *testing.B) {
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = float32(i-1<<15) * 1e-9 // gradient-sized: mostly binary16 subnormals
	}
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		for i, v := range x {
			x[i] = ToFloat32FP16(FromFloat32FP16(v))
		}
	}
}

func BenchmarkBF16RoundTrip(b *testing.B) {
	x := make([]float32, 1<<16)
	for i := range x {
		x[i] = float32(i-1<<15) * 1e-9 // gradient-sized: mostly binary16 subnormals
	}
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		for i, v := range x {
			x[i] = ToFloat32BF16(FromFloat32BF16(v))
		}
	}
}
