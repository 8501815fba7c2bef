package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGatherF32U8: every variant looks up the same bits as the reference
// (NaN payloads, infinities and negative zero included), at every length
// around the vector widths and at unaligned starts, and writes nothing
// past len(idx).
func TestGatherF32U8(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var tab [256]float32
	for i := range tab {
		tab[i] = math.Float32frombits(rng.Uint32())
	}
	tab[0], tab[1], tab[2], tab[255] = float32(math.Inf(1)), float32(math.Copysign(0, -1)), math.Float32frombits(0x7fc01234), -1.5
	const guard = 0x7f812345 // a signalling NaN no table entry equals
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for n := range 200 {
			for _, off := range []int{0, 1, 3} {
				idx := make([]uint8, off+n)
				for i := range idx {
					idx[i] = uint8(rng.UintN(256))
				}
				idx = idx[off:]
				dst := make([]float32, off+n+5)
				for i := range dst {
					dst[i] = math.Float32frombits(guard)
				}
				k.gatherF32U8(dst[off:], &tab, idx)
				for i, v := range idx {
					if got, want := math.Float32bits(dst[off+i]), math.Float32bits(tab[v]); got != want {
						t.Fatalf("n=%d off=%d: dst[%d] = %#x, want tab[%d] = %#x", n, off, i, got, v, want)
					}
				}
				for i := range off {
					if math.Float32bits(dst[i]) != guard {
						t.Fatalf("n=%d off=%d: wrote before dst", n, off)
					}
				}
				for i := off + n; i < len(dst); i++ {
					if math.Float32bits(dst[i]) != guard {
						t.Fatalf("n=%d off=%d: wrote dst[%d], past len(idx)", n, off, i-off)
					}
				}
			}
		}
	})
}

func TestGatherF32U8ShortDst(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("GatherF32U8 with dst shorter than idx did not panic")
		}
	}()
	var tab [256]float32
	GatherF32U8(make([]float32, 3), &tab, make([]uint8, 4))
}

func BenchmarkGatherF32U8(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	var tab [256]float32
	for i := range tab {
		tab[i] = float32(i) / 255
	}
	for _, n := range []int{2048, 1 << 16, 1 << 22} {
		idx := make([]uint8, n)
		for i := range idx {
			idx[i] = uint8(rng.UintN(256))
		}
		dst := make([]float32, n)
		for _, k := range elemVariants {
			b.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(5 * n))
				for b.Loop() {
					k.gatherF32U8(dst, &tab, idx)
				}
			})
		}
	}
}
