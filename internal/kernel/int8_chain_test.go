package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// chainSteps is GemmChainF32I8 one layer at a time with the per-layer
// products (GemmF32I8F32, and GemmF32I8U8 / GemmU8I8U8 / GemmU8I8F32
// between static layers): the definition the chain must equal bit for bit.
func chainSteps(m int, x []float32, ldx int, layers []I8Layer) []float32 {
	var xu []uint8 // uint8 activations (static → static)
	for l := range layers {
		L := &layers[l]
		n := L.W.N
		last := l == len(layers)-1
		if !last && !L.PerRow && !layers[l+1].PerRow {
			nx := &layers[l+1].I8Dequant
			r := &I8Requant{I8Dequant: L.I8Dequant, OutScale: nx.AScale, OutZero: nx.AZero}
			out := make([]uint8, m*n)
			if xu != nil {
				GemmU8I8U8(m, xu, ldx, L.W, r, out, n)
			} else {
				GemmF32I8U8(m, x, ldx, L.W, r, out, n)
			}
			xu, x, ldx = out, nil, n
			continue
		}
		out := make([]float32, m*n)
		if xu != nil {
			GemmU8I8F32(m, xu, ldx, L.W, &L.I8Dequant, out, n)
		} else {
			GemmF32I8F32(m, x, ldx, L.W, &L.I8Dequant, out, n)
		}
		xu, x, ldx = nil, out, n
	}
	return x
}

// TestGemmChainF32I8: a chain of int8 layers, in every combination of
// static and dynamic (per-row) input maps, with and without ReLU, on sizes
// around the tile edges and large enough for several cores, equals the
// layers run one by one, bit for bit, on every variant (A in place and
// packed), with one core and with several.
func TestGemmChainF32I8(t *testing.T) {
	dims := [][]int{{1, 1}, {5, 3, 2}, {33, 31, 14, 9}, {784, 256, 128, 10}, {130, 65, 32, 33}}
	ms := []int{1, 4, 13, 14, 15, 29, 64, 200}
	withI8Variant(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(21, 22))
		for di, dim := range dims {
			for mi, m := range ms {
				nl := len(dim) - 1
				layers := make([]I8Layer, nl)
				mode := di + mi // which layers are static
				for l := range nl {
					k, n := dim[l], dim[l+1]
					w := make([]int8, n*k)
					i8Fill(r, nil, w, 0)
					d := I8Dequant{WScale: make([]float32, n), Bias: make([]float32, n), ReLU: (mode+l)%3 != 0}
					for j := range n {
						d.WScale[j] = 0.02 / float32(1+j%7)
						d.Bias[j] = float32(j%5)/4 - 0.5
					}
					if (mode>>l)&1 == 0 {
						d.PerRow = true
					} else {
						d.AScale, d.AZero = 0.05*float32(1+l), int32(20*l+3)
					}
					layers[l] = I8Layer{W: PackI8(n, k, w, k), I8Dequant: d}
				}
				ldx := dim[0] + 2
				x := make([]float32, m*ldx)
				for i := range x {
					x[i] = float32(r.NormFloat64()*float64(1+(i/ldx)%4)) + float32((i/ldx)%3)
				}
				want := chainSteps(m, x, ldx, layers)
				for _, procs := range []int{1, 2, 4} {
					prev := runtime.GOMAXPROCS(procs)
					ldc := dim[nl] + 1
					got := make([]float32, m*ldc)
					for i := range got {
						got[i] = float32(math.NaN())
					}
					GemmChainF32I8(m, x, ldx, layers, got, ldc)
					runtime.GOMAXPROCS(prev)
					for i := range m {
						for j := range dim[nl] {
							if g, w := got[i*ldc+j], want[i*dim[nl]+j]; math.Float32bits(g) != math.Float32bits(w) {
								t.Fatalf("dims %v m=%d mode %b procs %d: C(%d,%d) = %g, want %g", dim, m, mode, procs, i, j, g, w)
							}
						}
					}
				}
			}
		}
	})
}

func TestGemmChainF32I8Errors(t *testing.T) {
	w1, w2 := PackI8(4, 3, make([]int8, 12), 3), PackI8(2, 5, make([]int8, 10), 5)
	d := func(n int) I8Dequant { return I8Dequant{PerRow: true, WScale: make([]float32, n)} }
	for i, layers := range [][]I8Layer{
		nil,
		{{W: w1, I8Dequant: d(4)}, {W: w2, I8Dequant: d(2)}},        // 4 outputs into 5 inputs
		{{W: w1, I8Dequant: d(3)}},                                  // scales
		{{W: w1, I8Dequant: I8Dequant{WScale: make([]float32, 4)}}}, // static map of scale 0
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("layers %d: no panic", i)
				}
			}()
			GemmChainF32I8(2, make([]float32, 6), 3, layers, make([]float32, 8), 4)
		})
	}
}

func BenchmarkGemmChainF32I8(b *testing.B) {
	dims := []int{784, 256, 128, 10}
	r := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{64, 10000} {
		layers := make([]I8Layer, 3)
		for l := range layers {
			k, n := dims[l], dims[l+1]
			w := make([]int8, n*k)
			i8Fill(r, nil, w, 0)
			sc := make([]float32, n)
			for j := range sc {
				sc[j] = 0.01
			}
			layers[l] = I8Layer{W: PackI8(n, k, w, k), I8Dequant: I8Dequant{PerRow: true, WScale: sc, ReLU: l < 2}}
		}
		x := make([]float32, m*784)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		c := make([]float32, m*10)
		b.Run(fmt.Sprint("m=", m), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				GemmChainF32I8(m, x, 784, layers, c, 10)
			}
		})
	}
}
