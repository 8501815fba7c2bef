package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
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

// TestGatherRows16: every variant writes the same bits as the reference
// for every row count around the four-row step, at a row stride wider
// than sixteen, and nothing outside each row's sixteen values.
func TestGatherRows16(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var tab [16][256]float32
	for k := range tab {
		for v := range tab[k] {
			tab[k][v] = math.Float32frombits(rng.Uint32())
		}
	}
	const guard = 0x7f812345
	// Every span with non-temporal stores where they apply (an aligned
	// row start, a row stride of whole cache lines), then none.
	defer func(s int) { gatherNTSpan = s }(gatherNTSpan)
	for _, span := range []int{0, math.MaxInt} {
		gatherNTSpan = span
		testGatherRows16(t, rng, &tab, guard)
	}
}

func testGatherRows16(t *testing.T, rng *rand.Rand, tab *[16][256]float32, guard uint32) {
	forVariants(t, func(t *testing.T, kv *elemKernels) {
		for _, ldx := range []int{16, 21, 784} {
			for n := range 23 {
				var idx [16][]uint8
				for k := range idx {
					// Each column its own allocation, exactly n long:
					// reading past it would be caught by the race
					// detector's and the sanitizers' bounds.
					idx[k] = make([]uint8, n)
					for i := range idx[k] {
						idx[k][i] = uint8(rng.UintN(256))
					}
				}
				// x starts on a cache line (the non-temporal stores need
				// it), guards before it included.
				buf := make([]float32, n*ldx+3+32)
				for i := range buf {
					buf[i] = math.Float32frombits(guard)
				}
				off := 16 + int(64-uintptr(unsafe.Pointer(&buf[16]))%64)%64/4
				x := buf[off : off+n*ldx+3]
				kv.gatherRows16(x, ldx, n, &idx, tab)
				for i := range off {
					if math.Float32bits(buf[i]) != guard {
						t.Fatalf("ldx=%d n=%d: wrote before x", ldx, n)
					}
				}
				for i := range n {
					for k := range 16 {
						if got, want := math.Float32bits(x[i*ldx+k]), math.Float32bits(tab[k][idx[k][i]]); got != want {
							t.Fatalf("ldx=%d n=%d: x[%d][%d] = %#x, want %#x", ldx, n, i, k, got, want)
						}
					}
				}
				for i := range x {
					if r, k := i/ldx, i%ldx; (r >= n || k >= 16) && math.Float32bits(x[i]) != guard {
						t.Fatalf("ldx=%d n=%d: wrote x[%d], outside the rows' sixteen values", ldx, n, i)
					}
				}
			}
		}
	})
}

func BenchmarkGatherRows16(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	var tab [16][256]float32
	const n, ldx = 2048, 784
	var idx [16][]uint8
	for k := range idx {
		idx[k] = make([]uint8, n)
		for i := range idx[k] {
			idx[k][i] = uint8(rng.UintN(256))
		}
	}
	x := make([]float32, n*ldx)
	for _, k := range elemVariants {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(16 * n * 5))
			for b.Loop() {
				for j0 := 0; j0+16 <= ldx; j0 += 16 {
					k.gatherRows16(x[j0:], ldx, n, &idx, &tab)
				}
			}
		})
	}
	b.Run("columns", func(b *testing.B) {
		b.SetBytes(int64(16 * n * 5))
		for b.Loop() {
			for j := 0; j < ldx; j++ {
				elem.gatherF32U8(x[j*n:(j+1)*n], &tab[j%16], idx[j%16])
			}
		}
	})
}
