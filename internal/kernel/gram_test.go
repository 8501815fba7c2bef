package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGramVariants compares Gram, through the assembly where it runs and
// through gramGo, with the definition, and the assembly with gramGo bit
// for bit, on both row strides, explicit and weighted, for rating counts
// around the prefetch distance.
func TestGramVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	paths := []bool{false}
	if HaveGramAsm() {
		paths = append(paths, true)
	}
	defer func(v bool) { gramUseAsm = v }(gramUseAsm)
	for _, ld := range []int{8, 16} {
		rows := GramRows(ld)
		const nsrc = 29
		y := make([]float64, nsrc*ld)
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		for _, n := range []int{0, 1, 7, 8, 9, 17, 100} {
			idx := make([]int32, n)
			val := make([]float32, n)
			wa, wb := make([]float64, n), make([]float64, n)
			for i := range n {
				idx[i] = int32(rng.IntN(nsrc))
				val[i] = float32(rng.IntN(11) - 5)
				wa[i], wb[i] = rng.Float64()*2, rng.Float64()*3
			}
			for _, weighted := range []bool{false, true} {
				var pa, pb []float64 // the previous path's result
				for _, asm := range paths {
					gramUseAsm = asm
					a, b := make([]float64, rows*ld), make([]float64, ld)
					for i := range a {
						a[i] = math.NaN() // Gram must overwrite, not add
					}
					for i := range b {
						b[i] = math.NaN()
					}
					if weighted {
						Gram(ld, y, idx, nil, wa, wb, a, b)
					} else {
						Gram(ld, y, idx, val, nil, nil, a, b)
					}
					for p := range rows {
						for q := range ld {
							var want float64
							for t, j := range idx {
								w := 1.0
								if weighted {
									w = wa[t]
								}
								want += w * y[int(j)*ld+p] * y[int(j)*ld+q]
							}
							if got := a[p*ld+q]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
								t.Fatalf("ld=%d n=%d weighted=%v asm=%v: a[%d][%d] = %g, want %g", ld, n, weighted, asm, p, q, got, want)
							}
						}
					}
					for q := range ld {
						var want float64
						for t, j := range idx {
							w := float64(val[t])
							if weighted {
								w = wb[t]
							}
							want += w * y[int(j)*ld+q]
						}
						if got := b[q]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
							t.Fatalf("ld=%d n=%d weighted=%v asm=%v: b[%d] = %g, want %g", ld, n, weighted, asm, q, got, want)
						}
					}
					if pa != nil {
						for i := range a {
							if math.Float64bits(a[i]) != math.Float64bits(pa[i]) {
								t.Fatalf("ld=%d n=%d weighted=%v: a[%d] = %v in assembly, %v in Go", ld, n, weighted, i, a[i], pa[i])
							}
						}
						for i := range b {
							if math.Float64bits(b[i]) != math.Float64bits(pb[i]) {
								t.Fatalf("ld=%d n=%d weighted=%v: b[%d] = %v in assembly, %v in Go", ld, n, weighted, i, b[i], pb[i])
							}
						}
					}
					pa, pb = a, b
				}
			}
		}
	}
}
