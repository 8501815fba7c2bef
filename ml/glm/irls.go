package glm

import (
	"errors"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// problem is one rank's rows: features, response, weights and offsets.
type problem struct {
	x   ml.Matrix
	y   []float64
	w   []float64 // never nil: 1 for every row without a weight column
	off []float64 // never nil: 0 without an offset column
}

// withoutFeatures is the same rows with no features (the null model).
func (p problem) withoutFeatures() problem {
	p.x = ml.Matrix{Rows: p.x.Rows}
	return p
}

// fit is the outcome of IRLS.
type fit struct {
	beta       []float64 // d coefficients, then the intercept if any
	inv        []float64 // (XᵀWX + ridge)⁻¹ of the last solve, q × q
	iterations int
	converged  bool
	change     float64 // the largest coefficient change of the last step
	// First-pass totals (from the starting means' pass): the number of
	// rows, Σw and Σw·y.
	n, weightSum, weightedY float64
}

// irls fits by iteratively reweighted least squares (McCullagh and Nelder,
// §2.5): from the family's starting means, each iteration forms the working
// response z = η − offset + (y − μ)·g′(μ) and weights W = w / (g′(μ)²·V(μ)),
// sums XᵀWX and XᵀWz over the rows (with the GEMM kernel; over the ranks
// with one all-reduce), and solves the weighted least-squares system by
// Cholesky. It stops when no coefficient moves by tol or more (Spark's
// criterion), or after maxIter iterations (converged false).
func irls(c ml.Comm, p problem, fam family, lnk link, intercept bool, maxIter int, tol, reg float64) (fit, error) {
	d := p.x.Cols
	q := d
	if intercept {
		q++
	}
	if q == 0 {
		return fit{}, errors.New("no coefficients to fit (no features and no intercept)")
	}
	// Each iteration writes the rows of [√W·x̃ | √W·z] (x̃: the features
	// and a 1 for the intercept) into buf and multiplies it by its own
	// transpose with the GEMM kernel: the top-left q × q block is XᵀWX,
	// the last column XᵀWz. The summed vector is that (q+1)² product,
	// then ΣW, n, Σw, Σw·y.
	wide := q + 1
	size := wide*wide + 4
	n := p.x.Rows
	buf := make([]float64, n*wide)
	exact := fam.name == Gaussian && lnk.name == Identity
	var out fit
	var beta []float64
	for it := 1; it <= maxIter; it++ {
		scalars := parallel.MapReduce(n, 1024, [4]float64{},
			func(lo, hi int) [4]float64 {
				var acc [4]float64
				for i := lo; i < hi; i++ {
					row := buf[i*wide : (i+1)*wide]
					copy(row, p.x.Row(i))
					if intercept {
						row[d] = 1
					}
					xt := row[:q]
					y, w, off := p.y[i], p.w[i], p.off[i]
					var eta, mu float64
					if beta == nil {
						mu = fam.initialize(y, w, lnk)
						eta = lnk.link(mu) // the offset is already in the starting mean
					} else {
						eta = off
						for j, v := range xt {
							eta += v * beta[j]
						}
						mu = fam.project(lnk.unlink(eta))
					}
					g := lnk.deriv(mu)
					z := eta - off + (y-mu)*g
					wt := w / (g * g * fam.variance(mu))
					sw := math.Sqrt(wt)
					for j := range xt {
						xt[j] *= sw
					}
					row[q] = sw * z
					acc[0] += wt
					acc[1]++
					acc[2] += w
					acc[3] += w * y
				}
				return acc
			},
			func(acc, part [4]float64) [4]float64 {
				for i, v := range part {
					acc[i] += v
				}
				return acc
			})
		sums := make([]float64, size)
		if n > 0 {
			kernel.Dgemm(true, false, wide, wide, n, 1, buf, wide, buf, wide, 0, sums[:wide*wide], wide)
		}
		copy(sums[wide*wide:], scalars[:])
		if err := c.AllReduce(sums, ml.OpSum); err != nil {
			return fit{}, err
		}
		for _, v := range sums {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fit{}, fmt.Errorf("IRLS diverged at iteration %d: the working weights or responses are not finite (the %s link may leave the %s family's domain; try another link)", it, lnk.name, fam.name)
			}
		}
		if it == 1 {
			out.n, out.weightSum, out.weightedY = sums[wide*wide+1], sums[wide*wide+2], sums[wide*wide+3]
			if out.n == 0 {
				return fit{}, errors.New("no rows to fit on")
			}
			if !(out.weightSum > 0) {
				return fit{}, errors.New("the total weight of the rows is 0")
			}
		}
		a, b := make([]float64, q*q), make([]float64, q)
		for j := range q {
			copy(a[j*q:(j+1)*q], sums[j*wide:j*wide+q])
			b[j] = sums[j*wide+q]
		}
		if reg > 0 {
			// Spark's WLS: minimize Σ W(z − x·β)² / (2ΣW) + reg/2 · ‖β‖²
			// (the intercept is not penalized).
			for j := range d {
				a[j*q+j] += reg * sums[wide*wide]
			}
		}
		next, inv, err := ml.CholeskySolve(a, q, b)
		if err != nil {
			return fit{}, fmt.Errorf("singular design (a duplicate or collinear feature column, a constant one beside the intercept, or fewer rows than coefficients?) at IRLS iteration %d: %w", it, err)
		}
		out.iterations, out.inv = it, inv
		if beta != nil {
			out.change = 0
			for j := range next {
				out.change = max(out.change, math.Abs(next[j]-beta[j]))
			}
		}
		beta = next
		out.beta = beta
		if exact || (it > 1 && out.change < tol) {
			out.converged = true
			break
		}
	}
	return out, nil
}
