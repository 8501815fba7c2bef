package ml

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// ErrSingular is returned when a system that must be positive definite is
// not (a singular or rank-deficient design matrix, a constant column, ...).
var ErrSingular = errors.New("matrix is singular or not positive definite")

// CholeskySolve solves A·x = b for a symmetric positive definite n × n
// matrix A (row-major; only its lower triangle is read) and returns x and
// A⁻¹ (needed for standard errors). It fails with ErrSingular, with the
// matrix's reciprocal condition estimate, when A is not numerically
// positive definite.
func CholeskySolve(a []float64, n int, b []float64) (x, inv []float64, err error) {
	if len(a) != n*n || len(b) != n {
		return nil, nil, fmt.Errorf("CholeskySolve: %d values for a %d × %d matrix and %d for b", len(a), n, n, len(b))
	}
	sym := mat.NewSymDense(n, nil)
	for i := range n {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, a[i*n+j])
		}
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(sym); !ok {
		return nil, nil, ErrSingular
	}
	if c := ch.Cond(); c > 1e15 {
		return nil, nil, fmt.Errorf("%w (condition number %.3g)", ErrSingular, c)
	}
	xv := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(xv, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrSingular, err)
	}
	var iv mat.SymDense
	if err := ch.InverseTo(&iv); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrSingular, err)
	}
	inv = make([]float64, n*n)
	for i := range n {
		for j := range n {
			inv[i*n+j] = iv.At(i, j)
		}
	}
	return xv.RawVector().Data, inv, nil
}
