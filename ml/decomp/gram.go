package decomp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
	"gonum.org/v1/gonum/mat"
)

// Solvers.
const (
	SolverAuto       = "auto"
	SolverGramian    = "gramian"
	SolverRandomized = "randomized"
)

// maxGramianWidth is the widest matrix "auto" solves through its d × d
// Gramian (8·d² bytes, 128 MiB at 4096).
const maxGramianWidth = 4096

// Randomized solver settings (Halko et al.; scikit-learn's defaults).
const (
	oversample = 10
	powerIters = 7
)

// rows is one rank's rows with the facts every rank agrees on. A plain
// dense vector column is kept as the frame's own float32 or float64 values
// (src32, src64) until a solver needs a float64 copy it may modify (x,
// made by dense).
type rows struct {
	c     ml.Comm
	x     []float64 // n × d, this rank's rows, once dense has run
	src32 []float32
	src64 []float64
	sums  []float64 // column sums of src32/src64, when read from them
	n, d  int
	total int // rows over every rank
}

// readRows reads column col of this rank's frame and agrees with the other
// ranks on the width and the total row count (a rank that failed still
// joins the collective, so that none waits for it).
func readRows(d ml.Data, col, who string) (*rows, error) {
	c := d.C()
	r := &rows{c: c}
	var localErr error
	width := 0
	if vc, ok := d.Frame.Col(col).(*data.VectorColumn); ok && vc.NullCount() == 0 && vc.ElemValid() == nil {
		r.src32, r.src64, r.n, width = vc.Float32s(), vc.Float64s(), vc.Len(), vc.Width()
		// the column sums (the means need them) are finite exactly when
		// every value is, barring overflow: scan for the culprit only then
		if r.src64 != nil {
			r.sums = colSums(r.src64, r.n, width)
		} else {
			r.sums = colSums(r.src32, r.n, width)
		}
		if !allFinite(r.sums) {
			if i := firstNonFinite(r.src32, r.src64); i >= 0 {
				localErr = fmt.Errorf("column %q, row %d, element %d: %g is not a finite number", col, i/width+1, i%width+1, r.at(i))
			} else {
				localErr = fmt.Errorf("column %q: the column sums overflow", col)
			}
		}
	} else {
		var m ml.Matrix
		m, localErr = ml.Features(d.Frame, col)
		r.x, r.n, width = m.Data, m.Rows, m.Cols
	}
	meta := []float64{float64(width), -float64(width), 0}
	if localErr != nil {
		meta = []float64{math.Inf(-1), math.Inf(-1), 1}
	}
	sum := []float64{float64(r.n)}
	if err := c.AllReduce(meta, ml.OpMax); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if err := c.AllReduce(sum, ml.OpSum); err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if localErr != nil {
		return nil, fmt.Errorf("%s: %w", who, localErr)
	}
	if meta[2] != 0 {
		return nil, fmt.Errorf("%s: %w", who, ml.ErrOtherRank)
	}
	if r.n > 0 && meta[0] != -meta[1] {
		return nil, fmt.Errorf("%s: column %q has %d elements on rank %d and %g on another", who, col, width, c.Rank(), math.Max(meta[0], -meta[1]))
	}
	r.d, r.total = int(meta[0]), int(sum[0])
	if r.d <= 0 {
		return nil, fmt.Errorf("%s: column %q has vectors of 0 elements", who, col)
	}
	return r, nil
}

// at returns value i of the source column.
func (r *rows) at(i int) float64 {
	if r.src64 != nil {
		return r.src64[i]
	}
	return float64(r.src32[i])
}

// firstNonFinite returns the index of the first NaN or ±Inf in whichever
// slice is set, or −1; the scan runs in parallel chunks.
func firstNonFinite(a []float32, b []float64) int {
	if b != nil {
		return firstBad(b)
	}
	return firstBad(a)
}

func firstBad[T float32 | float64](v []T) int {
	return parallel.MapReduce(len(v), 1<<16, -1, func(lo, hi int) int {
		for i, x := range v[lo:hi] {
			if x-x != 0 {
				return lo + i
			}
		}
		return -1
	}, func(acc, x int) int {
		if acc >= 0 {
			return acc
		}
		return x
	})
}

// dense makes r.x, a float64 copy of the rows the solver may modify.
func (r *rows) dense() {
	if r.x != nil || (r.src32 == nil && r.src64 == nil) {
		return
	}
	r.x = make([]float64, r.n*r.d)
	parallel.For(len(r.x), 1<<16, func(lo, hi int) {
		if r.src64 != nil {
			copy(r.x[lo:hi], r.src64[lo:hi])
			return
		}
		for i, v := range r.src32[lo:hi] {
			r.x[lo+i] = float64(v)
		}
	})
}

// centeredGramian returns (X − 1·meanᵀ)ᵀ(X − 1·meanᵀ) (d × d) over every
// rank's rows and its trace (the total sum of squares about the mean),
// both all-reduced, without modifying X. Each rank centers its rows
// gramChunk at a time into a transposed float64 buffer (d × m) that stays
// in cache and adds the chunk's product to the lower triangle in row
// panels, G[i:i+w, 0:i+w] += Cᵀ[i:i+w]·Cᵀ[0:i+w]ᵀ, one GEMM each (BLAS's dsyrk,
// blocked: 5/8 of a full product's work); the upper triangle is mirrored.
// The rows are never copied whole.
func (r *rows) centeredGramian() (g []float64, trace float64, err error) {
	n, d := r.n, r.d
	var mean []float64
	switch {
	case r.sums != nil && r.x == nil:
		mean = slices.Clone(r.sums)
	case r.x != nil:
		mean = colSums(r.x, n, d)
	case r.src64 != nil:
		mean = colSums(r.src64, n, d)
	default:
		mean = colSums(r.src32, n, d)
	}
	if err := r.c.AllReduce(mean, ml.OpSum); err != nil {
		return nil, 0, err
	}
	for j := range mean {
		mean[j] /= float64(r.total)
	}
	g = make([]float64, d*d+1)
	var ss float64
	if n > 0 {
		buf := make([]float64, min(n, gramChunk)*d)
		bw := (d + gramPanels - 1) / gramPanels
		for r0 := 0; r0 < n; r0 += gramChunk {
			m := min(gramChunk, n-r0)
			c := buf[:m*d]
			switch {
			case r.x != nil:
				ss += centerChunk(r.x[r0*d:(r0+m)*d], d, mean, c)
			case r.src64 != nil:
				ss += centerChunk(r.src64[r0*d:(r0+m)*d], d, mean, c)
			default:
				ss += centerChunk(r.src32[r0*d:(r0+m)*d], d, mean, c)
			}
			for bi := 0; bi < d; bi += bw {
				w := min(bw, d-bi)
				kernel.Dgemm(false, true, w, bi+w, m, 1, c[bi*m:], m, c, m, 1, g[bi*d:], d)
			}
		}
	}
	for i := range d {
		for j := i + 1; j < d; j++ {
			g[i*d+j] = g[j*d+i]
		}
	}
	g[d*d] = ss
	if err := r.c.AllReduce(g, ml.OpSum); err != nil {
		return nil, 0, err
	}
	return g[:d*d], g[d*d], nil
}

// gramChunk is the number of rows centeredGramian centers and multiplies
// at a time (784 columns: 6 MiB of float64).
const gramChunk = 1024

// centerChunk writes the rows x (row-major, d columns) minus mean into
// dst as float64, transposed (d × m: a column's values contiguous, the
// layout the GEMM reads fastest), and returns their sum of squares, in
// parallel blocks of 32 rows folded in order.
func centerChunk[T float32 | float64](x []T, d int, mean []float64, dst []float64) float64 {
	const tile = 32
	m := len(x) / d
	return parallel.MapReduce((m+tile-1)/tile, 1, 0.0, func(lo, hi int) float64 {
		s := 0.0
		for i0 := lo * tile; i0 < min(hi*tile, m); i0 += tile {
			ie := min(i0+tile, m)
			for j := range d {
				mj, col := mean[j], dst[j*m:(j+1)*m]
				for i := i0; i < ie; i++ {
					c := float64(x[i*d+j]) - mj
					col[i] = c
					s += c * c
				}
			}
		}
		return s
	}, func(a, b float64) float64 { return a + b })
}

// colSums returns the column sums of x (n × d), in parallel chunks folded
// in order.
func colSums[T float32 | float64](x []T, n, d int) []float64 {
	return parallel.MapReduce(n, max(1, (1<<15)/d), make([]float64, d), func(lo, hi int) []float64 {
		acc := make([]float64, d)
		for i := lo; i < hi; i++ {
			for j, v := range x[i*d : (i+1)*d] {
				acc[j] += float64(v)
			}
		}
		return acc
	}, func(acc, part []float64) []float64 {
		kernel.AxpyF64(1, part, acc)
		return acc
	})
}

// gramPanels is the number of row panels of centeredGramian's triangle.
const gramPanels = 4

// center subtracts the column means over every rank from this rank's
// rows (in place) and returns the means and this rank's sum of squares of
// the centered values (its share of the total variance). Both passes run
// in parallel chunks, folded in order.
func (r *rows) center() (mean []float64, ss float64, err error) {
	r.dense()
	d := r.d
	grain := max(1, (1<<15)/d)
	mean = colSums(r.x, r.n, d)
	if err := r.c.AllReduce(mean, ml.OpSum); err != nil {
		return nil, 0, err
	}
	for j := range mean {
		mean[j] /= float64(r.total)
	}
	ss = parallel.MapReduce(r.n, grain, 0.0, func(lo, hi int) float64 {
		s := 0.0
		for i := lo; i < hi; i++ {
			row := r.x[i*d : (i+1)*d]
			kernel.AxpyF64(-1, mean, row)
			s += kernel.DotF64(row, row)
		}
		return s
	}, func(a, b float64) float64 { return a + b })
	return mean, ss, nil
}

// gramian returns XᵀX (d × d) over every rank's rows: one GEMM per rank,
// all-reduced.
func (r *rows) gramian() ([]float64, error) {
	r.dense()
	g := make([]float64, r.d*r.d)
	if r.n > 0 {
		kernel.Dgemm(true, false, r.d, r.d, r.n, 1, r.x, r.d, r.x, r.d, 0, g, r.d)
	}
	// exact symmetry (the GEMM's blocks may round the two triangles
	// differently)
	for i := range r.d {
		for j := range i {
			g[j*r.d+i] = g[i*r.d+j]
		}
	}
	if err := r.c.AllReduce(g, ml.OpSum); err != nil {
		return nil, err
	}
	return g, nil
}

// gramTimes returns XᵀX·Q (d × p) over every rank's rows without forming
// XᵀX: Xᵀ(XQ), two GEMMs per rank, all-reduced; and (XQ)ᵀ(XQ) = QᵀXᵀXQ
// (p × p), all-reduced, when ritz is set.
func (r *rows) gramTimes(q []float64, p int, ritz bool) (z, t []float64, err error) {
	r.dense()
	y := make([]float64, r.n*p)
	z = make([]float64, r.d*p)
	if r.n > 0 {
		kernel.Dgemm(false, false, r.n, p, r.d, 1, r.x, r.d, q, p, 0, y, p)
		kernel.Dgemm(true, false, r.d, p, r.n, 1, r.x, r.d, y, p, 0, z, p)
	}
	buf := z
	if ritz {
		t = make([]float64, p*p)
		if r.n > 0 {
			kernel.Dgemm(true, false, p, p, r.n, 1, y, p, y, p, 0, t, p)
		}
		buf = append(z, t...)
	}
	if err := r.c.AllReduce(buf, ml.OpSum); err != nil {
		return nil, nil, err
	}
	if ritz {
		copy(t, buf[r.d*p:])
		z = buf[:r.d*p]
	}
	return z, t, nil
}

// eigen is the top k eigenpairs of a symmetric positive semi-definite
// matrix: values in decreasing order and vectors as the columns of a d ×
// k row-major matrix.
type eigen struct {
	values  []float64
	vectors []float64
	d, k    int
	iters   int // subspace iterations run (0: a direct solve)
}

// symEigen returns the top k eigenpairs of the symmetric d × d matrix a
// with gonum's EigenSym (LAPACK's dsyev algorithm).
func symEigen(a []float64, d, k int) (eigen, error) {
	s := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			s.SetSym(i, j, a[i*d+j])
		}
	}
	var es mat.EigenSym
	if !es.Factorize(s, true) {
		return eigen{}, errors.New("the symmetric eigensolver did not converge")
	}
	vals := es.Values(nil) // ascending
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	e := eigen{values: make([]float64, k), vectors: make([]float64, d*k), d: d, k: k}
	for c := range k {
		src := d - 1 - c
		e.values[c] = vals[src]
		for i := range d {
			e.vectors[i*k+c] = vecs.At(i, src)
		}
	}
	return e, nil
}

// subspaceEigen returns the top k eigenpairs of the symmetric positive
// semi-definite operator apply (d × d, applied to a d × p block; t is
// QᵀAQ when asked) by block subspace iteration with Rayleigh–Ritz
// (Halko, Martinsson and Tropp, Algorithms 4.4 and 5.3): a block of p > k
// random vectors is multiplied by A and re-orthonormalized iters times,
// or, with iters 0, until the top k Ritz pairs' residuals are below
// 1e-12 of the largest eigenvalue. The start is seeded: every rank and
// every run gets the same vectors.
func subspaceEigen(apply func(q []float64, p int, ritz bool) (z, t []float64, err error), d, k, p, iters int) (eigen, error) {
	rng := rand.New(rand.NewPCG(0x70636121, uint64(d)<<20|uint64(k)))
	q := make([]float64, d*p)
	for i := range q {
		q[i] = rng.NormFloat64()
	}
	orthonormalize(q, d, p)
	maxIter := iters
	if iters == 0 {
		maxIter = 500
	}
	for it := 1; ; it++ {
		check := iters == 0 && it%4 == 0 || it == maxIter
		z, t, err := apply(q, p, check)
		if err != nil {
			return eigen{}, err
		}
		if check {
			e, res, err := ritz(q, z, t, d, p, k)
			if err != nil {
				return eigen{}, err
			}
			ok := res <= residualTol*e.values[0]
			if iters != 0 || ok {
				e.iters = it
				return e, nil
			}
			if it == maxIter {
				return eigen{}, fmt.Errorf("the subspace iteration did not converge in %d steps (residual %.3g of the largest eigenvalue)", maxIter, res/e.values[0])
			}
		}
		copy(q, z)
		// Between checks one Cholesky QR pass keeps the block well
		// conditioned; before the Ritz step of a check, two make it
		// orthonormal to rounding (CholeskyQR2).
		next := it + 1
		if iters == 0 && next%4 != 0 && next != maxIter {
			if !cholQR(q, d, p) {
				householderQR(q, d, p)
			}
			continue
		}
		orthonormalize(q, d, p)
	}
}

// residualTol ends the subspace iteration: every one of the top k Ritz
// pairs (θ, v) has ‖Av − θv‖ ≤ residualTol·θ₁, which bounds the error of
// v by about residualTol·θ₁/gap (Saad, Theorem 3.9).
const residualTol = 1e-13

// ritz is the Rayleigh–Ritz step: with Q orthonormal (d × p), z = AQ and
// t = QᵀAQ, the eigenpairs (θ, w) of t give the Ritz pairs (θ, Qw). It
// returns the top k and the largest of their residuals ‖AQw − θQw‖ =
// ‖zw − θQw‖.
func ritz(q, z, t []float64, d, p, k int) (eigen, float64, error) {
	for i := range p { // symmetrize the rounding
		for j := range i {
			v := (t[i*p+j] + t[j*p+i]) / 2
			t[i*p+j], t[j*p+i] = v, v
		}
	}
	small, err := symEigen(t, p, k)
	if err != nil {
		return eigen{}, 0, err
	}
	vec := make([]float64, d*k)
	kernel.Dgemm(false, false, d, k, p, 1, q, p, small.vectors, k, 0, vec, k)
	av := make([]float64, d*k)
	kernel.Dgemm(false, false, d, k, p, 1, z, p, small.vectors, k, 0, av, k)
	res := make([]float64, k)
	for i := range d {
		for c := range k {
			e := av[i*k+c] - small.values[c]*vec[i*k+c]
			res[c] += e * e
		}
	}
	worst := 0.0
	for _, r := range res {
		worst = max(worst, math.Sqrt(r))
	}
	return eigen{values: small.values, vectors: vec, d: d, k: k}, worst, nil
}

// orthonormalize replaces the columns of q (d × p, row-major) by an
// orthonormal basis of their span: Cholesky QR twice (CholeskyQR2), all
// in GEMMs; a rank-deficient block falls back to Householder QR.
func orthonormalize(q []float64, d, p int) {
	for range 2 {
		if !cholQR(q, d, p) {
			householderQR(q, d, p)
			return
		}
	}
}

// cholQR is one Cholesky QR step: G = QᵀQ = RᵀR, Q ← QR⁻¹. It reports
// false when G is not numerically positive definite.
func cholQR(q []float64, d, p int) bool {
	g := make([]float64, p*p)
	kernel.Dgemm(true, false, p, p, d, 1, q, p, q, p, 0, g, p)
	s := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			s.SetSym(i, j, g[i*p+j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) || ch.Cond() > 1e12 {
		return false
	}
	var r mat.TriDense
	ch.UTo(&r)
	var inv mat.TriDense
	if err := inv.InverseTri(&r); err != nil {
		return false
	}
	ri := make([]float64, p*p)
	for i := range p {
		for j := i; j < p; j++ {
			ri[i*p+j] = inv.At(i, j)
		}
	}
	out := make([]float64, d*p)
	kernel.Dgemm(false, false, d, p, p, 1, q, p, ri, p, 0, out, p)
	copy(q, out)
	return true
}

// householderQR replaces q by the Q of its Householder QR (gonum).
func householderQR(q []float64, d, p int) {
	var qr mat.QR
	qr.Factorize(mat.NewDense(d, p, q))
	var full mat.Dense
	qr.QTo(&full)
	for i := range d {
		for j := range p {
			q[i*p+j] = full.At(i, j)
		}
	}
}

// fixSigns makes the largest-magnitude entry of each column of v (d × k)
// positive (the first of equal magnitudes), negating the column
// otherwise.
func fixSigns(v []float64, d, k int) {
	for c := range k {
		best, at := -1.0, 0
		for i := range d {
			if a := math.Abs(v[i*k+c]); a > best {
				best, at = a, i
			}
		}
		if v[at*k+c] < 0 {
			for i := range d {
				v[i*k+c] = -v[i*k+c]
			}
		}
	}
}

// topEigen returns the top k eigenpairs of XᵀX over every rank's rows
// with the given solver, signs fixed (fixSigns). "gramian" forms XᵀX and
// solves it exactly: gonum's EigenSym when d is small or k is not small
// beside d, otherwise subspace iteration on the formed matrix to
// convergence (cheaper than a full eigendecomposition of a wide matrix,
// and as exact). "randomized" never forms XᵀX: Halko et al.'s randomized
// range finder with 7 power iterations and 10 oversampling columns, two
// GEMMs over the rows per iteration.
func topEigen(r *rows, k int, solver string) (eigen, error) {
	d := r.d
	solver = resolveSolver(solver, d)
	var e eigen
	var err error
	switch solver {
	case SolverGramian:
		var g []float64
		if g, err = r.gramian(); err != nil {
			return eigen{}, err
		}
		return gramEigen(g, d, k)
	case SolverRandomized:
		e, err = subspaceEigen(r.gramTimes, d, k, min(d, k+oversample), powerIters+1)
	default:
		return eigen{}, fmt.Errorf("solver must be auto, gramian or randomized, got %q", solver)
	}
	if err != nil {
		return eigen{}, err
	}
	return finish(e), nil
}

// resolveSolver turns "auto" into "gramian" up to maxGramianWidth
// columns, "randomized" above.
func resolveSolver(solver string, d int) string {
	if solver != SolverAuto {
		return solver
	}
	if d > maxGramianWidth {
		return SolverRandomized
	}
	return SolverGramian
}

// gramEigen returns the top k eigenpairs of the formed d × d Gramian g:
// gonum's EigenSym when d ≤ 256 or k > d/4, otherwise subspace iteration
// to convergence (see topEigen).
func gramEigen(g []float64, d, k int) (eigen, error) {
	var e eigen
	var err error
	if d <= 256 || 4*k > d {
		e, err = symEigen(g, d, k)
	} else {
		apply := func(q []float64, p int, want bool) ([]float64, []float64, error) {
			z := make([]float64, d*p)
			kernel.Dgemm(false, false, d, p, d, 1, g, d, q, p, 0, z, p)
			var t []float64
			if want {
				t = make([]float64, p*p)
				kernel.Dgemm(true, false, p, p, d, 1, q, p, z, p, 0, t, p)
			}
			return z, t, nil
		}
		e, err = subspaceEigen(apply, d, k, min(d, 2*k+16), 0)
	}
	if err != nil {
		return eigen{}, err
	}
	return finish(e), nil
}

// finish clamps rounding-negative eigenvalues to 0 and fixes the signs.
func finish(e eigen) eigen {
	for i, v := range e.values {
		e.values[i] = max(v, 0)
	}
	fixSigns(e.vectors, e.d, e.k)
	return e
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if x-x != 0 {
			return false
		}
	}
	return true
}
