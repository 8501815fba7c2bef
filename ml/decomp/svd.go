package decomp

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
)

// DefaultRCond is Spark's rCond: singular values below RCond·σ₁ are
// treated as zero and dropped.
const DefaultRCond = 1e-9

// SVDOptions configure ComputeSVD.
type SVDOptions struct {
	// ComputeU asks for this rank's rows of U.
	ComputeU bool
	// Solver is "auto" (default), "gramian" or "randomized" (see PCA).
	Solver string
	// RCond drops singular values below RCond·σ₁ [DefaultRCond].
	RCond float64
}

// SVD is the truncated singular value decomposition X ≈ U·diag(S)·Vᵀ of
// a distributed row matrix (Spark's RowMatrix.computeSVD).
type SVD struct {
	// S holds the singular values, decreasing; there are k of them, or
	// fewer when some fell below RCond·σ₁.
	S []float64
	// V is d × len(S), row-major: the right singular vectors as columns,
	// each with its largest-magnitude entry positive.
	V []float64
	// U is this rank's rows of U (n × len(S), row-major) when asked:
	// U = X·V·diag(1/S), so that each column's sign follows V's.
	U []float64
	// Cols is the number of columns of X (the rows of V).
	Cols int
}

// ComputeSVD returns the top k singular values and vectors of the matrix
// whose rows are column col of every rank's frame (in rank order). The
// exact solver computes the Gramian XᵀX (all-reduced) and its top k
// eigenpairs (σ = √λ): fine for well-conditioned tall matrices, its
// relative accuracy on σᵢ being about ε·(σ₁/σᵢ)² (Spark's "local" mode);
// the randomized one follows Halko et al.
func ComputeSVD(d ml.Data, col string, k int, o SVDOptions) (*SVD, error) {
	if o.Solver == "" {
		o.Solver = SolverAuto
	}
	if o.RCond == 0 {
		o.RCond = DefaultRCond
	}
	if !(o.RCond > 0 && o.RCond < 1) {
		return nil, fmt.Errorf("SVD: rCond must be in (0, 1), got %g", o.RCond)
	}
	r, err := readRows(d, col, "SVD")
	if err != nil {
		return nil, err
	}
	if k < 1 || k > r.d {
		return nil, fmt.Errorf("SVD: k = %d; it must be in [1, %d], the number of columns", k, r.d)
	}
	if r.total == 0 {
		return nil, fmt.Errorf("SVD: no rows")
	}
	e, err := topEigen(r, k, o.Solver)
	if err != nil {
		return nil, fmt.Errorf("SVD: %w", err)
	}
	s := make([]float64, 0, k)
	for i, v := range e.values {
		sv := math.Sqrt(v)
		if i > 0 && sv < o.RCond*s[0] || sv == 0 {
			break
		}
		s = append(s, sv)
	}
	kk := len(s)
	v := make([]float64, r.d*kk)
	for i := range r.d {
		copy(v[i*kk:(i+1)*kk], e.vectors[i*k:i*k+kk])
	}
	out := &SVD{S: s, V: v, Cols: r.d}
	if o.ComputeU && kk > 0 {
		r.dense()
		out.U = make([]float64, r.n*kk)
		if r.n > 0 {
			kernel.Dgemm(false, false, r.n, kk, r.d, 1, r.x, r.d, v, kk, 0, out.U, kk)
		}
		for i := range r.n {
			for j := range kk {
				out.U[i*kk+j] /= s[j]
			}
		}
	}
	return out, nil
}
