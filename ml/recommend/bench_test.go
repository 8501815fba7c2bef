package recommend

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fathom-ml/fathom/ml"
)

// BenchmarkFit times one explicit ALS iteration (rank 10) on 200 000
// random ratings of 5 000 users and 1 000 items. The large runs are
// `fathom bench als` (see docs/ml.md).
func BenchmarkFit(b *testing.B) {
	r := tinyRatings(9, 5000, 1000, 0.04, 1)
	e := NewALS()
	e.MaxIter = 1
	for b.Loop() {
		if _, err := e.FitRatings(r, ml.Single); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Len()*b.N)/b.Elapsed().Seconds()/1e6, "Mratings/s")
}

// BenchmarkCholesky compares the hand-written rank-10 solve with gonum's
// (mat.Cholesky on a SymDense), the choice the package documentation
// explains.
func BenchmarkCholesky(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const k = 10
	a, full := randSPD(rng, k)
	rhs := make([]float64, k)
	for i := range rhs {
		rhs[i] = rng.NormFloat64()
	}
	b.Run("hand", func(b *testing.B) {
		w, x := make([]float64, k*k), make([]float64, k)
		for b.Loop() {
			copy(w, a)
			copy(x, rhs)
			if err := cholSolve(w, x, k); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gonum", func(b *testing.B) {
		s := mat.NewSymDense(k, nil)
		var ch mat.Cholesky
		var x mat.VecDense
		bv := mat.NewVecDense(k, rhs)
		for b.Loop() {
			for p := range k {
				for c := p; c < k; c++ {
					s.SetSym(p, c, full[p][c])
				}
			}
			if !ch.Factorize(s) {
				b.Fatal("not positive definite")
			}
			if err := ch.SolveVecTo(&x, bv); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGramScattered builds systems from factor rows scattered over
// 64 MB (the item step at Netflix scale): the fetches, not the FMAs, are
// the cost.
func BenchmarkGramScattered(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	k, nsrc, n := 10, 500000, 1<<18
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
	slices.Sort(idx)
	var g gram
	a, bb := make([]float64, k*k), make([]float64, k)
	for b.Loop() {
		g.explicit(a, bb, y, ld, k, idx, val)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds()/1e6, "Mratings/s")
}
