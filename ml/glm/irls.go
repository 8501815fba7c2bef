package glm

import (
	"errors"
	"fmt"
	"math"

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
// sums XᵀWX and XᵀWz over the rows (one all-reduce), and solves the
// weighted least-squares system with Cholesky. It stops when no
// coefficient moves by tol or more (Spark's criterion), or after maxIter
// iterations (converged false).
func irls(c ml.Comm, p problem, fam family, lnk link, intercept bool, maxIter int, tol, reg float64) (fit, error) {
	d := p.x.Cols
	q := d
	if intercept {
		q++
	}
	if q == 0 {
		return fit{}, errors.New("no coefficients to fit (no features and no intercept)")
	}
	// The layout of the summed vector: q×q XᵀWX (lower triangle filled),
	// q XᵀWz, then ΣW, n, Σw, Σw·y.
	size := q*q + q + 4
	exact := fam.name == Gaussian && lnk.name == Identity
	var out fit
	var beta []float64
	for it := 1; it <= maxIter; it++ {
		sums := parallel.MapReduce(p.x.Rows, max(16, 8192/(q*q)), make([]float64, size),
			func(lo, hi int) []float64 {
				acc := make([]float64, size)
				xt := make([]float64, q)
				for i := lo; i < hi; i++ {
					copy(xt, p.x.Row(i))
					if intercept {
						xt[d] = 1
					}
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
					for j := range q {
						wx := wt * xt[j]
						row := acc[j*q : j*q+j+1]
						for k := range row {
							row[k] += wx * xt[k]
						}
						acc[q*q+j] += wx * z
					}
					acc[q*q+q] += wt
					acc[q*q+q+1]++
					acc[q*q+q+2] += w
					acc[q*q+q+3] += w * y
				}
				return acc
			},
			func(acc, part []float64) []float64 {
				for i, v := range part {
					acc[i] += v
				}
				return acc
			})
		if err := c.AllReduce(sums, ml.OpSum); err != nil {
			return fit{}, err
		}
		for _, v := range sums {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fit{}, fmt.Errorf("IRLS diverged at iteration %d: the working weights or responses are not finite (the %s link may leave the %s family's domain; try another link)", it, lnk.name, fam.name)
			}
		}
		if it == 1 {
			out.n, out.weightSum, out.weightedY = sums[q*q+q+1], sums[q*q+q+2], sums[q*q+q+3]
			if out.n == 0 {
				return fit{}, errors.New("no rows to fit on")
			}
			if !(out.weightSum > 0) {
				return fit{}, errors.New("the total weight of the rows is 0")
			}
		}
		a, b := sums[:q*q], sums[q*q:q*q+q]
		if reg > 0 {
			// Spark's WLS: minimize Σ W(z − x·β)² / (2ΣW) + reg/2 · ‖β‖²
			// (the intercept is not penalized).
			for j := range d {
				a[j*q+j] += reg * sums[q*q+q]
			}
		}
		next, inv, err := ml.CholeskySolve(a, q, b)
		if err != nil {
			return fit{}, fmt.Errorf("iteration %d: %w: the design matrix is singular (a duplicate or collinear feature column, a constant one beside the intercept, or fewer rows than coefficients?)", it, err)
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
