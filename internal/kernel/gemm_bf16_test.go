package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBF16Bits pins the rounding: to nearest, ties to even, subnormals to
// zero, NaN kept, overflow to Inf.
func TestBF16Bits(t *testing.T) {
	for _, test := range []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80},             // 1
		{0x3f808000, 0x3f80},             // tie, even below
		{0x3f818000, 0x3f82},             // tie, even above
		{0x3f808001, 0x3f81},             // above the tie
		{0x3f807fff, 0x3f80},             // below the tie
		{0x80000000, 0x8000},             // -0
		{0x00400000, 0x0000},             // subnormal
		{0x80400000, 0x8000},             // negative subnormal
		{0x7f7fffff, 0x7f80},             // max float32 rounds to Inf
		{0x7f800000, 0x7f80},             // Inf
		{0x7fc00001, 0x7fc0},             // NaN
		{0x7f800001, 0x7fc0},             // signalling NaN becomes quiet
		{math.Float32bits(-2.5), 0xc020}, // exact
	} {
		if got := bf16Bits(math.Float32frombits(test.in)); got != test.want {
			t.Errorf("bf16Bits(%#08x) = %#04x, want %#04x", test.in, got, test.want)
		}
	}
}

// sbgemmCase runs variant v on one case and compares it with the reference:
// the sums differ only in their float32 rounding (the products of
// bfloat16 values are exact), so the bound is a few float32 ulps of
// Σ|a||b| per step.
func sbgemmCase(t *testing.T, v *sbgemmVariant, transA, transB bool, m, n, k int, alpha, beta float32, rng *rand.Rand) []float32 {
	t.Helper()
	lda, ldb, ldc := k+3, n+5, n+1
	if transA {
		lda = m + 2
	}
	if transB {
		ldb = k + 1
	}
	rowsA, rowsB := m, k
	if transA {
		rowsA = k
	}
	if transB {
		rowsB = n
	}
	a := randSlice(rng, rowsA*lda)
	b := randSlice(rng, rowsB*ldb)
	c := randSlice(rng, m*ldc)
	want := append([]float32(nil), c...)
	sbgemm(v, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	sbgemmRef(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
	for i := 0; i < m; i++ {
		for j := 0; j < ldc; j++ {
			got, ref := c[i*ldc+j], want[i*ldc+j]
			if j >= n {
				if got != ref {
					t.Fatalf("%s %v: C(%d,%d) outside the product changed", v.name, [2]bool{transA, transB}, i, j)
				}
				continue
			}
			tol := 1e-6 * float64(k+4) * (float64(k) + math.Abs(float64(beta)))
			if d := math.Abs(float64(got - ref)); d > tol {
				t.Fatalf("%s transA=%v transB=%v m=%d n=%d k=%d alpha=%v beta=%v: C(%d,%d) = %v, reference %v (diff %g > %g)",
					v.name, transA, transB, m, n, k, alpha, beta, i, j, got, ref, d, tol)
			}
		}
	}
	return c
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// TestSgemmBF16Variants runs every variant on awkward sizes in every
// orientation against the reference, and the variants against each other:
// they round the same way, so with beta = 0 they agree bit for bit.
func TestSgemmBF16Variants(t *testing.T) {
	if len(sbgemmVariants) < 2 {
		t.Log("no AVX512-BF16: only the Go variant runs")
	}
	sizes := [][3]int{{1, 1, 1}, {1, 1, 2}, {2, 3, 5}, {7, 17, 33}, {14, 32, 64}, {15, 33, 7}, {29, 65, 390}, {3, 100, 17}, {100, 3, 100}, {33, 70, 785}}
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-1, 0.25}} {
				var outs [][]float32
				for _, v := range sbgemmVariants {
					// The same seed for every variant: the same inputs.
					outs = append(outs, sbgemmCase(t, v, tr[0], tr[1], m, n, k, ab[0], ab[1], rand.New(rand.NewPCG(uint64(m*n*k), 7))))
				}
				if ab[1] != 0 {
					continue
				}
				// AMX sums a tile's pairs in its own order; the
				// VDPBF16PS and Go kernels agree bit for bit.
				first := -1
				for i, v := range sbgemmVariants {
					if v.amxStrip != nil {
						continue
					}
					if first < 0 {
						first = i
						continue
					}
					for j := range outs[i] {
						if math.Float32bits(outs[i][j]) != math.Float32bits(outs[first][j]) {
							t.Fatalf("m=%d n=%d k=%d trans=%v: %s and %s differ at %d: %v vs %v",
								m, n, k, tr, sbgemmVariants[first].name, v.name, j, outs[first][j], outs[i][j])
						}
					}
				}
			}
		}
	}
}

// TestSgemmBF16Large covers the parallel split (rows and columns) and k
// blocking.
func TestSgemmBF16Large(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{300, 70, 500}, {20, 400, 300}} {
		for _, v := range sbgemmVariants {
			sbgemmCase(t, v, false, true, sz[0], sz[1], sz[2], 1, 0, rng)
			sbgemmCase(t, v, true, false, sz[0], sz[1], sz[2], 1, 1, rng)
		}
	}
}

// TestSgemmBF16Edges: empty products, k = 0 and NaN in C with beta = 0.
func TestSgemmBF16Edges(t *testing.T) {
	c := []float32{float32(math.NaN()), 2}
	SgemmBF16(false, false, 1, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
	if c[0] != 0 || c[1] != 0 {
		t.Fatalf("k = 0, beta = 0: C = %v, want zeros", c)
	}
	c = []float32{float32(math.NaN())}
	SgemmBF16(false, false, 1, 1, 1, 1, []float32{3}, 1, []float32{2}, 1, 0, c, 1)
	if c[0] != 6 {
		t.Fatalf("beta = 0 read C: got %v", c[0])
	}
	defer func() {
		if recover() == nil {
			t.Fatal("short A did not panic")
		}
	}()
	SgemmBF16(false, false, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, make([]float32, 4), 2)
}

func BenchmarkSgemmBF16(b *testing.B) {
	for _, n := range []int{256, 1024} {
		a, bb, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		for i := range a {
			a[i], bb[i] = float32(i%7)-3, float32(i%5)-2
		}
		for _, name := range []string{"f32", "bf16"} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				for b.Loop() {
					if name == "f32" {
						Sgemm(false, false, n, n, n, 1, a, n, bb, n, 0, c, n)
					} else {
						SgemmBF16(false, false, n, n, n, 1, a, n, bb, n, 0, c, n)
					}
				}
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
