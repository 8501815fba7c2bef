package recommend

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refGram is the plain definition: the upper triangle of Σ wa·y yᵀ and
// Σ wb·y.
func refGram(y []float64, ld, k int, idx []int32, wa, wb []float64) (a, b []float64) {
	a = make([]float64, k*k)
	b = make([]float64, k)
	for t, j := range idx {
		yj := y[int(j)*ld : int(j)*ld+k]
		for p := range k {
			b[p] += wb[t] * yj[p]
			for c := p; c < k; c++ {
				a[p*k+c] += wa[t] * yj[p] * yj[c]
			}
		}
	}
	return a, b
}

func relClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(v))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*max(scale, 1e-300) {
			t.Fatalf("%s[%d] = %.17g, want %.17g (tolerance %g relative to %g)", what, i, got[i], want[i], tol, scale)
		}
	}
}

// TestGram checks the normal equations of one entity, through the
// assembly kernels and the Go code, against the definition on awkward
// sizes: no ratings, one, and counts around the vector width.
func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []bool{false}
	if haveAsm {
		paths = append(paths, true)
	}
	defer func(v bool) { useAsm = v }(useAsm)
	for _, asm := range paths {
		useAsm = asm
		for _, k := range []int{1, 3, 8, 10, 12, 13, 20} {
			ld := stride(k)
			nsrc := 37
			y := make([]float64, nsrc*ld)
			for j := range nsrc {
				for p := range k {
					y[j*ld+p] = rng.NormFloat64()
				}
			}
			for _, n := range []int{0, 1, 7, 8, 17, 100} {
				idx := make([]int32, n)
				val := make([]float32, n)
				ones := make([]float64, n)
				wb := make([]float64, n)
				c1 := make([]float64, n)
				wi := make([]float64, n)
				alpha := 0.7
				for t := range n {
					idx[t] = int32(rng.IntN(nsrc))
					val[t] = float32(rng.IntN(11) - 5)
					ones[t], wb[t] = 1, float64(val[t])
					c1[t] = alpha * math.Abs(wb[t])
					if wb[t] > 0 {
						wi[t] = 1 + c1[t]
					}
				}
				var g gram
				a, b := make([]float64, k*k), make([]float64, k)
				g.explicit(a, b, y, ld, k, idx, val)
				ra, rb := refGram(y, ld, k, idx, ones, wb)
				relClose(t, "explicit a", upper(a, k), upper(ra, k), 1e-13)
				relClose(t, "explicit b", b, rb, 1e-13)
				g.implicit(a, b, y, ld, k, alpha, idx, val)
				ra, rb = refGram(y, ld, k, idx, c1, wi)
				relClose(t, "implicit a", upper(a, k), upper(ra, k), 1e-13)
				relClose(t, "implicit b", b, rb, 1e-13)
			}
		}
	}
}

func upper(a []float64, k int) []float64 {
	var out []float64
	for p := range k {
		out = append(out, a[p*k+p:p*k+k]...)
	}
	return out
}

func randSPD(rng *rand.Rand, k int) (a []float64, full [][]float64) {
	m := make([][]float64, k+3)
	for i := range m {
		m[i] = make([]float64, k)
		for j := range m[i] {
			m[i][j] = rng.NormFloat64()
		}
	}
	full = make([][]float64, k)
	a = make([]float64, k*k)
	for p := range k {
		full[p] = make([]float64, k)
		for c := range k {
			for _, r := range m {
				full[p][c] += r[p] * r[c]
			}
			full[p][c] += 0.01 * b2f(p == c)
			if c >= p {
				a[p*k+c] = full[p][c]
			}
		}
	}
	return a, full
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestCholSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 2, 5, 10, 17} {
		a, full := randSPD(rng, k)
		x := make([]float64, k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		b := make([]float64, k)
		for p := range k {
			for c := range k {
				b[p] += full[p][c] * x[c]
			}
		}
		if err := cholSolve(a, b, k); err != nil {
			t.Fatal(err)
		}
		relClose(t, "x", b, x, 1e-8)
	}
	if err := cholSolve([]float64{1, 2, 0, 1}, []float64{1, 1}, 2); err != errNotPD {
		t.Fatalf("indefinite matrix: err %v, want errNotPD", err)
	}
}

// bruteNNLS minimizes ½xᵀAx − bᵀx over x ≥ 0 by trying every support:
// the minimizer is the unconstrained solution on its support.
func bruteNNLS(full [][]float64, b []float64) []float64 {
	k := len(b)
	best, bestF := make([]float64, k), 0.0
	for mask := 1; mask < 1<<k; mask++ {
		var idx []int
		for j := range k {
			if mask&(1<<j) != 0 {
				idx = append(idx, j)
			}
		}
		m := len(idx)
		a := make([]float64, m*m)
		rhs := make([]float64, m)
		for r, i := range idx {
			rhs[r] = b[i]
			for c := r; c < m; c++ {
				a[r*m+c] = full[i][idx[c]]
			}
		}
		if cholSolve(a, rhs, m) != nil {
			continue
		}
		ok := true
		x := make([]float64, k)
		for r, i := range idx {
			if rhs[r] < 0 {
				ok = false
			}
			x[i] = rhs[r]
		}
		if !ok {
			continue
		}
		f := 0.0
		for p := range k {
			f -= b[p] * x[p]
			for c := range k {
				f += 0.5 * x[p] * full[p][c] * x[c]
			}
		}
		if f < bestF {
			best, bestF = x, f
		}
	}
	return best
}

func TestNNLS(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		k := 1 + trial%8
		a, full := randSPD(rng, k)
		b := make([]float64, k)
		for i := range b {
			b[i] = rng.NormFloat64() * 3
		}
		want := bruteNNLS(full, b)
		got := append([]float64(nil), b...)
		var ws nnlsWork
		if err := nnls(a, got, k, &ws); err != nil {
			t.Fatal(err)
		}
		relClose(t, "nnls", got, want, 1e-7)
	}
}

func TestBuildBothOrder(t *testing.T) {
	users := []int32{2, 0, 1, 0, 2, 1, 0}
	items := []int32{1, 2, 0, 0, 0, 2, 1}
	vals := []float32{1, 2, 3, 4, 5, 6, 7}
	bu, bi := buildBoth(len(users), 3, 3, func(t int) (int32, int32, float32) { return users[t], items[t], vals[t] }, nil)
	wantU := []int32{0, 1, 2, 0, 2, 0, 1}
	wantUV := []float32{4, 7, 2, 3, 6, 5, 1}
	for p := range wantU {
		if bu.idx[p] != wantU[p] || bu.val[p] != wantUV[p] {
			t.Fatalf("by user: %v %v, want %v %v", bu.idx, bu.val, wantU, wantUV)
		}
	}
	wantI := []int32{0, 1, 2, 0, 2, 0, 1}
	wantIV := []float32{4, 3, 5, 7, 1, 2, 6}
	for p := range wantI {
		if bi.idx[p] != wantI[p] || bi.val[p] != wantIV[p] {
			t.Fatalf("by item: %v %v, want %v %v", bi.idx, bi.val, wantI, wantIV)
		}
	}
}

func TestDistinctIDs(t *testing.T) {
	for _, ids := range [][]int32{{}, {5}, {3, -1, 3, 7, -1}, {math.MaxInt32, math.MinInt32, 0}} {
		got := distinctIDs(ids)
		want := mergeIDs([][]int32{ids})
		if len(got) != len(want) {
			t.Fatalf("distinctIDs(%v) = %v, want %v", ids, got, want)
		}
		x := newIDIndex(got)
		for i, v := range want {
			if got[i] != v || x.lookup(v) != int32(i) {
				t.Fatalf("distinctIDs(%v) = %v, want %v", ids, got, want)
			}
		}
		if len(ids) > 0 && x.lookup(12345) != -1 {
			t.Fatalf("lookup of an absent id")
		}
	}
}

func BenchmarkGram(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, asm := range []bool{false, true} {
		if asm && !haveAsm {
			continue
		}
		name := "go"
		if asm {
			name = "avx512"
		}
		b.Run(name, func(b *testing.B) {
			defer func(v bool) { useAsm = v }(useAsm)
			useAsm = asm
			k, nsrc, n := 10, 10000, 200
			ld := stride(k)
			y := make([]float64, nsrc*ld)
			for i := range y {
				y[i] = rng.NormFloat64()
			}
			idx := make([]int32, n)
			val := make([]float32, n)
			for t := range idx {
				idx[t] = int32(rng.IntN(nsrc))
				val[t] = 3
			}
			var g gram
			a, bb := make([]float64, k*k), make([]float64, k)
			for b.Loop() {
				g.explicit(a, bb, y, ld, k, idx, val)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds()/1e6, "Mratings/s")
		})
	}
}

// TestBuildBothChunks checks the parallel scatters (many chunks) against
// a stable sort: rows by user, then item, ties in input order.
func TestBuildBothChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n, nu, ni := 300000, 5000, 700
	us, is, vs := make([]int32, n), make([]int32, n), make([]float32, n)
	for t := range n {
		us[t], is[t], vs[t] = int32(rng.IntN(nu)), int32(rng.IntN(ni)), float32(t)
	}
	defer func(v int) { hugeMin = v }(hugeMin)
	hugeMin = 1 // the arena's mapped arrays
	var ar arena
	defer ar.free()
	bu, bi := buildBoth(n, nu, ni, func(t int) (int32, int32, float32) { return us[t], is[t], vs[t] }, &ar)
	order := make([]int, n)
	for t := range order {
		order[t] = t
	}
	var fail func(name string, p int)
	check := func(name string, m *csr, row, col []int32) {
		o := slices.Clone(order)
		slices.SortStableFunc(o, func(a, b int) int {
			if row[a] != row[b] {
				return int(row[a] - row[b])
			}
			return int(col[a] - col[b])
		})
		for p, t := range o {
			if m.idx[p] != col[t] || m.val[p] != vs[t] || p < int(m.ptr[row[t]]) || p >= int(m.ptr[row[t]+1]) {
				fail(name, p)
			}
		}
	}
	fail = func(name string, p int) { t.Fatalf("%s: position %d differs from the stable sort", name, p) }
	check("by user", bu, us, is)
	check("by item", bi, is, us)
}
