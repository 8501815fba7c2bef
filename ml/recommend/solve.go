package recommend

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// csr holds the ratings of one side's entities (users, or items) as
// compressed rows: entity e's ratings are idx[ptr[e]:ptr[e+1]] (indices
// of the other side, increasing) with values val[ptr[e]:ptr[e+1]].
type csr struct {
	ptr []int64
	idx []int32
	val []float32
}

// buildBoth builds the user-major and item-major compressed rows of n
// ratings given by at(t) → (user index, item index, rating). Within every
// row the other side's indices increase (ties keep at's order), whatever
// order at yields: the first scatter groups the ratings by item, the
// second (a transpose) by user, so items increase within a user, the third
// by item again, so users increase within an item. That canonical order
// makes every sum over a row's ratings the same however the ratings were
// partitioned. Each scatter is a stable counting sort run in parallel
// over chunks of its input (each chunk with its own row offsets), so its
// result does not depend on the number of chunks. Large buffers come
// from ar (nil: the heap).
func buildBoth(n, nu, ni int, at func(t int) (int32, int32, float32), ar *arena) (byUser, byItem *csr) {
	parts := chunksOf(n)
	// First scatter: by item, keeping the user index.
	counts := make([][]int64, len(parts)-1)
	parallel.For(len(counts), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			cnt := make([]int64, ni)
			for t := parts[c]; t < parts[c+1]; t++ {
				_, i, _ := at(t)
				cnt[i]++
			}
			counts[c] = cnt
		}
	})
	ci := offsets(counts, ni)
	tmp := &csr{ptr: ci, idx: arenaMake[int32](ar, n), val: arenaMake[float32](ar, n)}
	parallel.For(len(counts), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			off := counts[c]
			for t := parts[c]; t < parts[c+1]; t++ {
				u, i, r := at(t)
				q := off[i]
				off[i]++
				tmp.idx[q], tmp.val[q] = u, r
			}
		}
	})
	byUser = transpose(tmp, nu, nil, ar)
	byItem = transpose(byUser, ni, tmp, ar)
	return byUser, byItem
}

// chunksOf cuts [0, n) into about two chunks per worker (boundaries
// returned, first 0, last n).
func chunksOf(n int) []int {
	p := max(1, min(2*parallel.Workers(), n/(1<<15)))
	b := make([]int, p+1)
	for c := range b {
		b[c] = n * c / p
	}
	return b
}

// offsets turns per-chunk row counts into each chunk's first position in
// every row (in place) and returns the rows' starts (len rows+1).
func offsets(counts [][]int64, rows int) []int64 {
	ptr := make([]int64, rows+1)
	for r := range rows {
		base := ptr[r]
		for _, cnt := range counts {
			x := cnt[r]
			cnt[r] = base
			base += x
		}
		ptr[r+1] = base
	}
	return ptr
}

// transpose returns the compressed rows of m's transpose (rows indexed by
// m's indices, ndst of them), each row in m's row order; reuse, if not
// nil, lends its idx and val buffers (of the same length); new buffers
// come from ar.
func transpose(m *csr, ndst int, reuse *csr, ar *arena) *csr {
	nsrc := len(m.ptr) - 1
	n := m.ptr[nsrc]
	// Chunks of source rows holding about equal numbers of ratings.
	pos := chunksOf(int(n))
	rows := make([]int, len(pos))
	for c, p := range pos {
		rows[c] = sort.Search(nsrc, func(r int) bool { return m.ptr[r] >= int64(p) })
	}
	rows[len(rows)-1] = nsrc
	counts := make([][]int64, len(rows)-1)
	parallel.For(len(counts), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			cnt := make([]int64, ndst)
			for _, x := range m.idx[m.ptr[rows[c]]:m.ptr[rows[c+1]]] {
				cnt[x]++
			}
			counts[c] = cnt
		}
	})
	out := &csr{ptr: offsets(counts, ndst)}
	if reuse != nil {
		out.idx, out.val = reuse.idx, reuse.val
	} else {
		out.idx, out.val = arenaMake[int32](ar, int(n)), arenaMake[float32](ar, int(n))
	}
	parallel.For(len(counts), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			off := counts[c]
			for r := rows[c]; r < rows[c+1]; r++ {
				for p := m.ptr[r]; p < m.ptr[r+1]; p++ {
					x := m.idx[p]
					q := off[x]
					off[x]++
					out.idx[q], out.val[q] = int32(r), m.val[p]
				}
			}
		}
	})
	return out
}

// initFactor fills f (one factor, len rank) from (seed, side, id) alone, so
// that any partitioning of the data starts from the same factors: a
// Gaussian vector scaled to unit norm (MLlib's initialization), its
// absolute values when nonnegative.
func initFactor(f []float64, seed int64, side uint64, id int32, nonneg bool) {
	g := rand.New(rand.NewPCG(uint64(seed)^side*0x9e3779b97f4a7c15, uint64(uint32(id))*0xbf58476d1ce4e5b9+side))
	s := 0.0
	for j := range f {
		v := g.NormFloat64()
		if nonneg {
			v = math.Abs(v)
		}
		f[j] = v
		s += v * v
	}
	s = math.Sqrt(s)
	if s == 0 {
		s = 1
	}
	for j := range f {
		f[j] /= s
	}
}

// errNotPD reports a normal-equation matrix that is not positive definite.
var errNotPD = errors.New("matrix not positive definite")

// cholSolve solves A x = b for a symmetric positive definite k×k matrix
// of which the upper triangle a[r*k+c], c ≥ r, is given; a is overwritten
// by the Cholesky factor U (A = UᵀU) and b by x.
func cholSolve(a, b []float64, k int) error {
	for j := range k {
		rj := a[j*k : j*k+k]
		s := rj[j]
		for p := range j {
			u := a[p*k+j]
			s -= u * u
		}
		if !(s > 0) {
			return errNotPD
		}
		d := math.Sqrt(s)
		rj[j] = d
		inv := 1 / d
		for c := j + 1; c < k; c++ {
			s := rj[c]
			for p := range j {
				s -= a[p*k+j] * a[p*k+c]
			}
			rj[c] = s * inv
		}
	}
	// Uᵀ z = b
	for j := range k {
		s := b[j]
		for p := range j {
			s -= a[p*k+j] * b[p]
		}
		b[j] = s / a[j*k+j]
	}
	// U x = z
	for j := k - 1; j >= 0; j-- {
		s := b[j]
		for c := j + 1; c < k; c++ {
			s -= a[j*k+c] * b[c]
		}
		b[j] = s / a[j*k+j]
	}
	return nil
}

// useAsm selects the AVX-512 kernels where they apply (tests turn it off
// to compare with the Go code).
var useAsm = haveAsm

// haveAsm says whether the AVX-512 Gram kernels of package kernel run here.
var haveAsm = kernel.HaveGramAsm()

// stride returns the row stride of rank-k factors: 8 or 16 (zero padded)
// where the AVX-512 kernels take them, else k.
func stride(k int) int {
	switch {
	case !useAsm || k > 12:
		return k
	case k <= 8:
		return 8
	}
	return 16
}

// gram is a worker's scratch for the normal equations of one entity.
// Without the assembly kernels, it gathers the rated factors column by
// column (one column per latent dimension, one row per rating) so that
// every entry of Σ w·y yᵀ is one dot product of two contiguous columns
// (kernel.DotF64, vectorized).
type gram struct {
	g, gw, r, c []float64
	acc, rhs    []float64
}

// gather fills g.g with the k columns of the factors y[idx] (row stride
// ld), n = len(idx) values each.
func (g *gram) gather(y []float64, ld, k int, idx []int32) []float64 {
	n := len(idx)
	cols := grow(&g.g, k*n)
	for t, j := range idx {
		row := y[int(j)*ld : int(j)*ld+k]
		for c, v := range row {
			cols[c*n+t] = v
		}
	}
	return cols
}

func grow(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n+n/2)
	}
	return (*b)[:n]
}

// kernel runs the assembly kernel (kernel.Gram) and copies its upper triangle to a
// (k×k) and its right-hand side to b.
func (g *gram) kernel(a, b, y []float64, ld, k int, idx []int32, val []float32, wa, wb []float64) {
	acc := grow(&g.acc, kernel.GramRows(ld)*ld)
	rhs := grow(&g.rhs, ld)
	kernel.Gram(ld, y, idx, val, wa, wb, acc, rhs)
	for p := range k {
		copy(a[p*k+p:p*k+k], acc[p*ld+p:p*ld+k])
	}
	copy(b[:k], rhs)
}

// explicit sets the upper triangle of a (k×k) to Σ y yᵀ and b to Σ r·y
// over the ratings (idx, val), y = the rated entity's factor (row stride
// ld in y).
func (g *gram) explicit(a, b, y []float64, ld, k int, idx []int32, val []float32) {
	if useAsm && (ld == 8 || ld == 16) {
		g.kernel(a, b, y, ld, k, idx, val, nil, nil)
		return
	}
	n := len(idx)
	cols := g.gather(y, ld, k, idx)
	r := grow(&g.r, n)
	for t, v := range val {
		r[t] = float64(v)
	}
	for p := range k {
		cp := cols[p*n : p*n+n]
		b[p] = kernel.DotF64(cp, r)
		for c := p; c < k; c++ {
			a[p*k+c] = kernel.DotF64(cp, cols[c*n:c*n+n])
		}
	}
}

// implicit sets the upper triangle of a to Σ c1·y yᵀ and b to Σ w·y with
// MLlib's implicit weights, c1 = α|r| (confidence − 1) and w = 1 + c1 for
// r > 0, else 0; it returns the number of positive ratings.
func (g *gram) implicit(a, b, y []float64, ld, k int, alpha float64, idx []int32, val []float32) int {
	n := len(idx)
	w := grow(&g.r, n)
	c1 := grow(&g.c, n)
	pos := 0
	for t, v := range val {
		r := float64(v)
		c1[t] = alpha * math.Abs(r)
		w[t] = 0
		if r > 0 {
			w[t] = 1 + c1[t]
			pos++
		}
	}
	if useAsm && (ld == 8 || ld == 16) {
		g.kernel(a, b, y, ld, k, idx, nil, c1, w)
		return pos
	}
	cols := g.gather(y, ld, k, idx)
	gw := grow(&g.gw, n)
	for p := range k {
		cp := cols[p*n : p*n+n]
		b[p] = kernel.DotF64(cp, w)
		for t, v := range cp {
			gw[t] = v * c1[t]
		}
		for c := p; c < k; c++ {
			a[p*k+c] = kernel.DotF64(gw, cols[c*n:c*n+n])
		}
	}
	return pos
}

// gramAll returns YᵀY (upper triangle, k×k) over the n factors of Y
// (row stride ld), summed in fixed chunks folded in order so that the
// result does not depend on the number of workers.
func gramAll(y []float64, n, ld, k int) []float64 {
	const chunk = 4096
	nc := (n + chunk - 1) / chunk
	parts := make([][]float64, nc)
	parallel.For(nc, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			a := make([]float64, k*k)
			for j := c * chunk; j < min(n, (c+1)*chunk); j++ {
				yj := y[j*ld : j*ld+k]
				for p, yp := range yj {
					row := a[p*k+p : p*k+k]
					tail := yj[p:]
					for q := range row {
						row[q] += yp * tail[q]
					}
				}
			}
			parts[c] = a
		}
	})
	out := make([]float64, k*k)
	for _, p := range parts {
		for i, v := range p {
			out[i] += v
		}
	}
	return out
}

// nnls solves min ½xᵀAx − bᵀx subject to x ≥ 0 for symmetric positive
// definite A (upper triangle given, k×k) by Lawson and Hanson's active-set
// method on the normal equations; x is written to b. a is not modified;
// ws is scratch (reused across calls).
func nnls(a, b []float64, k int, ws *nnlsWork) error {
	if len(ws.f) < 2*k*k+4*k {
		ws.f = make([]float64, 2*k*k+4*k)
		ws.passive = make([]bool, k)
		ws.idx = make([]int, 0, k)
	}
	work := ws.f
	full := work[:k*k]
	sub := work[k*k : 2*k*k]
	x := work[2*k*k : 2*k*k+k]
	z := work[2*k*k+k : 2*k*k+2*k]
	w := work[2*k*k+2*k : 2*k*k+3*k]
	rhsBuf := work[2*k*k+3*k : 2*k*k+4*k]
	for r := range k {
		for c := r; c < k; c++ {
			full[r*k+c] = a[r*k+c]
			full[c*k+r] = a[r*k+c]
		}
	}
	passive := ws.passive[:k]
	clear(passive)
	idx := ws.idx[:0]
	clear(x)
	grad := func() {
		for r := range k {
			s := b[r]
			for c := range k {
				s -= full[r*k+c] * x[c]
			}
			w[r] = s
		}
	}
	// solveP solves the passive subsystem into z (zero outside P).
	solveP := func() error {
		idx = idx[:0]
		for j := range k {
			z[j] = 0
			if passive[j] {
				idx = append(idx, j)
			}
		}
		m := len(idx)
		rhs := rhsBuf[:m]
		for r, i := range idx {
			rhs[r] = b[i]
			for c := r; c < m; c++ {
				sub[r*m+c] = full[i*k+idx[c]]
			}
		}
		if err := cholSolve(sub[:m*m], rhs, m); err != nil {
			return err
		}
		for r, i := range idx {
			z[i] = rhs[r]
		}
		return nil
	}
	const tol = 1e-12
	scale := 0.0
	for _, v := range b {
		scale = max(scale, math.Abs(v))
	}
	for outer := 0; outer < 3*k+10; outer++ {
		grad()
		best, bj := tol*max(scale, 1), -1
		for j := range k {
			if !passive[j] && w[j] > best {
				best, bj = w[j], j
			}
		}
		if bj < 0 {
			break
		}
		passive[bj] = true
		for inner := 0; inner < 3*k+10; inner++ {
			if err := solveP(); err != nil {
				return err
			}
			ok := true
			for j := range k {
				if passive[j] && z[j] <= 0 {
					ok = false
				}
			}
			if ok {
				copy(x, z)
				break
			}
			alpha := math.Inf(1)
			for j := range k {
				if passive[j] && z[j] <= 0 {
					alpha = min(alpha, x[j]/(x[j]-z[j]))
				}
			}
			for j := range k {
				x[j] += alpha * (z[j] - x[j])
				if passive[j] && x[j] <= tol*max(scale, 1) {
					passive[j] = false
					x[j] = 0
				}
			}
		}
	}
	copy(b, x)
	return nil
}

// nnlsWork is the scratch of nnls.
type nnlsWork struct {
	f       []float64
	passive []bool
	idx     []int
}

// sideError names the entity whose system failed.
func sideError(side string, id int32, err error) error {
	return fmt.Errorf("the normal equations of %s %d: %w (regParam 0 with fewer ratings than the rank? set regParam > 0)", side, id, err)
}
