package tensor_test

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// Every binary16 and bfloat16 pattern converts to float32 and back unchanged.
func TestFloat16RoundTripIsExact(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := tensor.Float16ToFloat32(uint16(h))
		back := tensor.Float32ToFloat16(f)
		if math.IsNaN(float64(f)) {
			if back&0x7c00 != 0x7c00 || back&0x3ff == 0 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
			continue
		}
		if back != uint16(h) {
			t.Fatalf("%#04x → %v → %#04x", h, f, back)
		}
		b := tensor.BFloat16ToFloat32(uint16(h))
		if !math.IsNaN(float64(b)) && tensor.Float32ToBFloat16(b) != uint16(h) {
			t.Fatalf("bf16 %#04x does not round-trip", h)
		}
	}
}

// TestFloat16RoundsToNearestEven checks the conversion against the
// definition: the result is the nearer of the two neighbours in binary16,
// the even one on a tie.
func TestFloat16RoundsToNearestEven(t *testing.T) {
	rng := tensor.NewRNG(99)
	check := func(f float32, enc func(float32) uint16, dec func(uint16) float32, maxFinite uint16) {
		h := enc(f)
		got := float64(dec(h))
		x := float64(f)
		if math.IsInf(got, 0) {
			if math.Abs(x) < float64(dec(maxFinite)) {
				t.Fatalf("%v overflowed", f)
			}
			return
		}
		// Neighbours of h in magnitude.
		up, down := float64(dec(h+1)), float64(dec(h-1))
		if h&0x7fff == 0 {
			down = -float64(dec(h + 1))
		}
		if d := math.Abs(got - x); d > math.Abs(up-x) || d > math.Abs(down-x) {
			t.Fatalf("%v → %v is not nearest (neighbours %v, %v)", f, got, down, up)
		} else if (d == math.Abs(up-x) || d == math.Abs(down-x)) && h&1 == 1 {
			t.Fatalf("%v → %#04x: tie not to even", f, h)
		}
	}
	for i := 0; i < 200000; i++ {
		// Values across the whole binary16 range including subnormals.
		e := rng.Intn(40) - 26
		f := float32(math.Ldexp(rng.Float64()*2-1, e))
		check(f, tensor.Float32ToFloat16, tensor.Float16ToFloat32, 0x7bff)
		check(float32(math.Ldexp(rng.Float64()*2-1, rng.Intn(200)-100)), tensor.Float32ToBFloat16, tensor.BFloat16ToFloat32, 0x7f7f)
	}
	// Exact ties.
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1 + 1.0/2048, 0x3c00},           // halfway between 1 and 1+2⁻¹⁰: even is 1
		{1 + 3.0/2048, 0x3c02},           // halfway, rounds up to even
		{65520, 0x7c00},                  // halfway to the next binade: overflows to Inf
		{65519, 0x7bff},                  // largest finite
		{float32(math.Ldexp(1, -25)), 0}, // half the smallest subnormal: ties to 0
		{float32(math.Ldexp(3, -26)), 1}, // ¾ of it: rounds up
		{-0.0, 0x0000},
	} {
		if got := tensor.Float32ToFloat16(c.f); got != c.want && !(c.f == 0 && got&0x7fff == 0) {
			t.Fatalf("Float32ToFloat16(%v) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if got := tensor.Float32ToBFloat16(1 + 1.0/256); got != 0x3f80 {
		t.Fatalf("bf16 tie: %#04x", got)
	}
	if got := tensor.Float32ToBFloat16(float32(math.NaN())); got&0x7f80 != 0x7f80 || got&0x7f == 0 {
		t.Fatalf("bf16 NaN: %#04x", got)
	}
}

func TestHalfTensors(t *testing.T) {
	x := tensor.FromValues(tensor.Float16, []float64{1, 2.5, -3, 1e5}, 4)
	if v := x.Values(); v[0] != 1 || v[1] != 2.5 || v[2] != -3 || !math.IsInf(v[3], 1) {
		t.Fatalf("float16 values %v", v)
	}
	y := x.Narrow(0, 0, 3).Mul(x.Narrow(0, 0, 3)).Sum(nil, false)
	if y.DType() != tensor.Float16 || y.Item() != 1+6.25+9 {
		t.Fatalf("float16 compute %v", y)
	}
	b := tensor.FromBFloat16Bits([]uint16{0x3f80, 0x4000})
	if b.To(tensor.Float32).Sum(nil, false).Item() != 3 {
		t.Fatal("bfloat16 bits")
	}
	if len(b.Uint16s()) != 2 || tensor.BFloat16.Size() != 2 || tensor.Float16.String() != "float16" {
		t.Fatal("16-bit accessors")
	}
}
