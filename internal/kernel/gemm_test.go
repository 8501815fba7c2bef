package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

type gemmShape struct{ m, n, k int }

// gemmTestShapes are awkward sizes: empty, single, odd, just past the tile
// sizes, and one large dimension at a time. The small sizes form a cube of
// every m, n and k from gemmSmall when all is set; otherwise a 36-shape
// subset of it in which every pair of dimensions still takes every pair of
// values (m = small[i], n = small[j], k = small[(i+j) mod 6]), so each
// edge class meets each other one in every pair of dimensions.
func gemmTestShapes(short, all bool) []gemmShape {
	var shapes []gemmShape
	small := []int{0, 1, 2, 7, 17, 33}
	for i, m := range small {
		for j, n := range small {
			if !all {
				shapes = append(shapes, gemmShape{m, n, small[(i+j)%len(small)]})
				continue
			}
			for _, k := range small {
				shapes = append(shapes, gemmShape{m, n, k})
			}
		}
	}
	shapes = append(shapes,
		gemmShape{100, 257, 33}, gemmShape{257, 100, 300}, gemmShape{64, 256, 96},
		gemmShape{29, 65, 513}, gemmShape{15, 31, 1}, gemmShape{1, 300, 70}, gemmShape{300, 1, 70},
	)
	if !short {
		shapes = append(shapes,
			gemmShape{1031, 17, 9}, gemmShape{3, 1030, 5}, gemmShape{17, 9, 1029}, gemmShape{130, 70, 600},
		)
	}
	return shapes
}

// gemmCase is one call: transposes, scalars and padded leading dimensions.
type gemmCase struct {
	transA, transB bool
	alpha, beta    float64
	pad            int // extra elements per row of A, B and C
	ld             int // when set, every leading dimension (a 4 KiB stride for 1024 float32s)
}

func gemmCases() []gemmCase {
	var cs []gemmCase
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			cs = append(cs,
				gemmCase{ta, tb, 1, 0, 0, 0},
				gemmCase{ta, tb, -1.5, 0.5, 3, 0},
			)
		}
	}
	cs = append(cs, gemmCase{false, false, 1, 1, 1, 0}, gemmCase{true, false, 0.25, -2, 0, 0}, gemmCase{false, true, 0, 3, 2, 0},
		gemmCase{false, false, 1, 0, 0, 1024}, gemmCase{true, true, 2, 1, 0, 1024})
	return cs
}

// gemmOperands builds A, B, C for one case; C's padding holds a sentinel and,
// when beta == 0, its visible part holds NaN (which must not propagate).
func gemmOperands(rng *rand.Rand, s gemmShape, tc gemmCase) (a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	ar, ac := s.m, s.k
	if tc.transA {
		ar, ac = s.k, s.m
	}
	br, bc := s.k, s.n
	if tc.transB {
		br, bc = s.n, s.k
	}
	lda, ldb, ldc = ac+tc.pad, bc+tc.pad, s.n+tc.pad
	if tc.ld > 0 {
		if ac > tc.ld || bc > tc.ld || s.n > tc.ld {
			return nil, 0, nil, 0, nil, 0
		}
		lda, ldb, ldc = tc.ld, tc.ld, tc.ld
	}
	fill := func(rows, ld int) []float64 {
		x := make([]float64, rows*ld)
		for i := range x {
			x[i] = rng.Float64()*2 - 1
		}
		return x
	}
	a, b, c = fill(ar, lda), fill(br, ldb), fill(s.m, ldc)
	for i := 0; i < s.m; i++ {
		for j := 0; j < ldc; j++ {
			switch {
			case j >= s.n:
				c[i*ldc+j] = 12345
			case tc.beta == 0:
				c[i*ldc+j] = math.NaN()
			}
		}
	}
	return
}

func toF32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// checkGemmResult compares got with want elementwise with a tolerance that
// grows with k, and checks that C's padding was not written.
func checkGemmResult[T gemmFloat](t *testing.T, name string, s gemmShape, ldc int, got, want []T, eps float64) {
	t.Helper()
	tol := eps * float64(s.k+4) * 8
	for i := 0; i < s.m; i++ {
		for j := 0; j < ldc; j++ {
			g, w := float64(got[i*ldc+j]), float64(want[i*ldc+j])
			if j >= s.n {
				if g != 12345 {
					t.Fatalf("%s: C padding (%d,%d) overwritten: %v", name, i, j, g)
				}
				continue
			}
			if math.IsNaN(g) || math.Abs(g-w) > tol*(1+math.Abs(w)) {
				t.Fatalf("%s: C(%d,%d) = %v, want %v", name, i, j, g, w)
			}
		}
	}
}

// testVariants returns each registered variant twice: with its own blocking
// and with tiny cache blocks, so that block edges in k, m and n are crossed.
func testVariants[T gemmFloat](vs []*gemmVariant[T]) []*gemmVariant[T] {
	var out []*gemmVariant[T]
	for _, v := range vs {
		out = append(out, v)
		tiny := &gemmVariant[T]{name: v.name + "/tinyblocks", mr: v.mr, nr: v.nr, kc: 5, mc: 2 * v.mr, nc: 2 * v.nr, masked: v.masked, strided: v.strided, irOuter: v.irOuter, micro: v.micro, trans: v.trans, transN: v.transN}
		out = append(out, tiny)
	}
	return out
}

// gemmModes are the driver paths every variant runs: serially and split
// over workers, with A used in place and always copied.
var gemmModes = []struct{ directA, parallel bool }{{true, false}, {true, true}, {false, false}}

// runGemmModes calls run once per mode with the driver switched to it.
func runGemmModes(run func(mode string)) {
	defer func(d bool, f int) { gemmDirectA, gemmParallelMinFlops = d, f }(gemmDirectA, gemmParallelMinFlops)
	for _, mode := range gemmModes {
		gemmDirectA = mode.directA
		gemmParallelMinFlops = math.MaxInt
		if mode.parallel {
			gemmParallelMinFlops = 0 // split even tiny products
		}
		run(fmt.Sprintf("directA=%v/parallel=%v", mode.directA, mode.parallel))
	}
}

// TestGemmVariants runs every registered variant against the reference:
// serially and split over workers, with A used in place and always copied.
// Each shape and case is set up and computed by the reference once, then
// run by every variant in every mode on a fresh copy of C.
func TestGemmVariants(t *testing.T) {
	t.Run("f32", testSgemmVariants)
	t.Run("f64", testDgemmVariants)
}

func testSgemmVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := testVariants(sgemmVariants)
	for _, s := range gemmTestShapes(testing.Short(), exhaustive()) {
		for _, tc := range gemmCases() {
			a64, lda, b64, ldb, c64, ldc := gemmOperands(rng, s, tc)
			if c64 == nil {
				continue
			}
			a, b, c0 := toF32(a64), toF32(b64), toF32(c64)
			want := append([]float32(nil), c0...)
			sgemmRef(tc.transA, tc.transB, s.m, s.n, s.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), want, ldc)
			c := make([]float32, len(c0))
			runGemmModes(func(mode string) {
				for _, v := range vs {
					copy(c, c0)
					gemm(v, tc.transA, tc.transB, s.m, s.n, s.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), c, ldc)
					name := fmt.Sprintf("sgemm %s %s %+v %+v", mode, v.name, s, tc)
					checkGemmResult(t, name, s, ldc, c, want, 1.2e-7)
				}
			})
		}
	}
}

func testDgemmVariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vs := testVariants(dgemmVariants)
	for _, s := range gemmTestShapes(testing.Short(), exhaustive()) {
		for _, tc := range gemmCases() {
			a, lda, b, ldb, c0, ldc := gemmOperands(rng, s, tc)
			if c0 == nil {
				continue
			}
			want := append([]float64(nil), c0...)
			dgemmRef(tc.transA, tc.transB, s.m, s.n, s.k, tc.alpha, a, lda, b, ldb, tc.beta, want, ldc)
			c := make([]float64, len(c0))
			runGemmModes(func(mode string) {
				for _, v := range vs {
					copy(c, c0)
					gemm(v, tc.transA, tc.transB, s.m, s.n, s.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc)
					name := fmt.Sprintf("dgemm %s %s %+v %+v", mode, v.name, s, tc)
					checkGemmResult(t, name, s, ldc, c, want, 2.3e-16)
				}
			})
		}
	}
}

// TestGemmPublic checks the exported entry points on one shape.
func TestGemmPublic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	checkPublicGemm(t, rng, gemmShape{45, 67, 89}, gemmCase{false, true, 2, 0.5, 1, 0})
}

// checkPublicGemm runs Sgemm and Dgemm on one shape and case and compares
// them with the references.
func checkPublicGemm(t *testing.T, rng *rand.Rand, s gemmShape, tc gemmCase) {
	t.Helper()
	a64, lda, b64, ldb, c64, ldc := gemmOperands(rng, s, tc)
	want64 := append([]float64(nil), c64...)
	dgemmRef(tc.transA, tc.transB, s.m, s.n, s.k, tc.alpha, a64, lda, b64, ldb, tc.beta, want64, ldc)
	a, b, c := toF32(a64), toF32(b64), toF32(c64)
	want := append([]float32(nil), c...)
	sgemmRef(tc.transA, tc.transB, s.m, s.n, s.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), want, ldc)
	Sgemm(tc.transA, tc.transB, s.m, s.n, s.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), c, ldc)
	checkGemmResult(t, "Sgemm", s, ldc, c, want, 1.2e-7)
	Dgemm(tc.transA, tc.transB, s.m, s.n, s.k, tc.alpha, a64, lda, b64, ldb, tc.beta, c64, ldc)
	checkGemmResult(t, "Dgemm", s, ldc, c64, want64, 2.3e-16)
}

func TestGemmPanicsOnShortSlice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Sgemm with a too-short C did not panic")
		}
	}()
	a := make([]float32, 4*4)
	Sgemm(false, false, 4, 4, 4, 1, a, 4, a, 4, 0, make([]float32, 15), 4)
}

// TestGemmNoGarbage checks that steady-state calls allocate nothing, on the
// serial and the parallel paths.
func TestGemmNoGarbage(t *testing.T) {
	for _, s := range []struct {
		m, n, k        int
		transA, transB bool
	}{{32, 32, 32, false, false}, {256, 256, 256, false, false}, {64, 256, 784, false, true}, {784, 256, 64, true, false}} {
		a := make([]float32, s.m*s.k)
		b := make([]float32, s.k*s.n)
		c := make([]float32, s.m*s.n)
		lda, ldb := s.k, s.n
		if s.transA {
			lda = s.m
		}
		if s.transB {
			ldb = s.k
		}
		call := func() { Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, b, ldb, 0, c, s.n) }
		call()
		if allocs := testing.AllocsPerRun(20, call); allocs > 0 {
			t.Errorf("Sgemm %+v: %v allocations per call", s, allocs)
		}
	}
}

// TestGemmParallelWorkers runs the parallel paths with more workers than
// cores and tiny cache blocks, so that chunks of consecutive blocks overlap
// in time across many block boundaries.
func TestGemmParallelWorkers(t *testing.T) {
	defer func(f int) { gemmParallelMinFlops = f }(gemmParallelMinFlops)
	gemmParallelMinFlops = 0
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(7, 8))
	vs := testVariants(sgemmVariants)[:2]
	// {200, 1100, 300} has two column blocks of B (nc = 1024) packed in
	// groups of panels, the last group and panel partial.
	for _, s := range []gemmShape{{257, 100, 300}, {100, 257, 33}, {40, 300, 70}, {300, 40, 70}, {200, 1100, 300}} {
		for _, tc := range []gemmCase{{false, false, 1, 0, 0, 0}, {true, true, 0.5, 2, 1, 0}} {
			a64, lda, b64, ldb, c64, ldc := gemmOperands(rng, s, tc)
			a, b, c0 := toF32(a64), toF32(b64), toF32(c64)
			want := append([]float32(nil), c0...)
			sgemmRef(tc.transA, tc.transB, s.m, s.n, s.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), want, ldc)
			c := make([]float32, len(c0))
			for _, procs := range []int{3, 5} {
				runtime.GOMAXPROCS(procs)
				for _, v := range vs {
					for rep := 0; rep < 3; rep++ {
						copy(c, c0)
						gemm(v, tc.transA, tc.transB, s.m, s.n, s.k, float32(tc.alpha), a, lda, b, ldb, float32(tc.beta), c, ldc)
						checkGemmResult(t, fmt.Sprintf("procs=%d %s %+v %+v rep %d", procs, v.name, s, tc, rep), s, ldc, c, want, 1.2e-7)
					}
				}
			}
		}
	}
}

// TestGemmWidePick checks that the public entry points hand large products
// to the wide tile and small ones to the 14-row tile, and that a large odd
// product through Sgemm/Dgemm matches the reference.
func TestGemmWidePick(t *testing.T) {
	if sgemmActive.wide == nil {
		t.Skip("no wide variant on this CPU")
	}
	if got := sgemmActive.pick(gemmWideMin, gemmWideMin, 256); got != sgemmActive.wide {
		t.Errorf("pick(%d, %d, 256) = %s, want the wide variant", gemmWideMin, gemmWideMin, got.name)
	}
	if got := sgemmActive.pick(gemmWideMin-1, 4096, 4096); got != sgemmActive {
		t.Errorf("pick(%d, 4096, 4096) = %s, want %s", gemmWideMin-1, got.name, sgemmActive.name)
	}
	if got := dgemmActive.pick(4096, 4096, 64); got != dgemmActive {
		t.Errorf("pick(4096, 4096, 64) = %s, want %s (k below the wide kc)", got.name, dgemmActive.name)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	s := gemmShape{gemmWideMin + 13, gemmWideMin + 29, 301}
	// ld = 1024 puts the rows of A 4 KiB apart (read in place by the wide tile).
	for _, tc := range []gemmCase{{false, false, 0.5, -1.5, 3, 0}, {true, true, 2, 0, 0, 0}, {false, false, 1, 1, 0, 1024}} {
		checkPublicGemm(t, rng, s, tc)
	}
}
