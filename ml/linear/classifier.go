package linear

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// margins returns X·Cᵀ + b for the k × d coefficients C and intercepts b:
// n × k, row-major.
func margins(x ml.Matrix, coef, icpt []float64, k int) []float64 {
	out := make([]float64, x.Rows*k)
	if x.Rows > 0 && x.Cols > 0 {
		kernel.Dgemm(false, true, x.Rows, k, x.Cols, 1, x.Data, x.Cols, coef, x.Cols, 0, out, k)
	}
	parallel.For(x.Rows, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			for c, b := range icpt {
				out[i*k+c] += b
			}
		}
	})
	return out
}

// classWeights returns the weighted count of each of k classes over every
// rank.
func classWeights(fd *fitData, k int) ([]float64, error) {
	h := make([]float64, k)
	for i, y := range fd.y {
		wi := 1.0
		if fd.w != nil {
			wi = fd.w[i]
		}
		h[int(y)] += wi
	}
	if err := fd.comm.AllReduce(h, ml.OpSum); err != nil {
		return nil, err
	}
	return h, nil
}

// checkThresholds validates Spark's thresholds: one per class, ≥ 0, at
// most one of them 0.
func checkThresholds(name string, t []float64, k int) error {
	if len(t) == 0 {
		return nil
	}
	if len(t) != k {
		return fmt.Errorf("%s: thresholds has %d values for %d classes", name, len(t), k)
	}
	zeros := 0
	for i, v := range t {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: thresholds[%d] must be a finite value ≥ 0, got %g", name, i, v)
		}
		if v == 0 {
			zeros++
		}
	}
	if zeros > 1 {
		return fmt.Errorf("%s: thresholds has %d zeros; at most one may be 0", name, zeros)
	}
	return nil
}

// argmaxScaled returns argmax_c p_c/t_c (Spark's prediction with
// thresholds; t_c = 0 wins whenever p_c > 0), or argmax_c p_c when t is
// empty. Ties go to the lowest class.
func argmaxScaled(p, t []float64) int {
	best, bv := 0, math.Inf(-1)
	for c, v := range p {
		if len(t) > 0 {
			switch {
			case t[c] == 0 && v > 0:
				v = math.Inf(1)
			case t[c] == 0:
				v = 0
			default:
				v /= t[c]
			}
		}
		if v > bv {
			best, bv = c, v
		}
	}
	return best
}

// softmaxInto writes the softmax of m into p; an infinite margin takes all
// the probability (the constant-label models have them).
func softmaxInto(p, m []float64) {
	top := math.Inf(-1)
	for _, v := range m {
		top = max(top, v)
	}
	if math.IsInf(top, 1) {
		done := false
		for c, v := range m {
			if v == top && !done {
				p[c], done = 1, true
			} else {
				p[c] = 0
			}
		}
		return
	}
	s := 0.0
	for c, v := range m {
		p[c] = math.Exp(v - top)
		s += p[c]
	}
	for c := range p {
		p[c] /= s
	}
}
