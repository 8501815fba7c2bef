package glm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// poissonFrame is a seeded Poisson regression problem of rows × d.
func poissonFrame(b *testing.B, rows, d int) *data.Frame {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, rows*d)
	y := make([]float64, rows)
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = 0.3 * r.NormFloat64() / math.Sqrt(float64(d))
	}
	for i := range rows {
		eta := 0.5
		for j := range d {
			v := r.NormFloat64()
			x[i*d+j] = v
			eta += v * beta[j]
		}
		// A Poisson draw by inversion (small means).
		mu, k, p := math.Exp(eta), 0.0, 0.0
		u := r.Float64()
		term := math.Exp(-mu)
		for p += term; u > p && k < 1000; p += term {
			k++
			term *= mu / k
		}
		y[i] = k
	}
	f, err := data.NewFrame(data.NewVectorColumn("features", d, x, nil, nil), data.NewColumn("label", y, nil))
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkPoissonIRLS fits a Poisson GLM (log link) on 200k × 50 rows:
//
//	go test -run '^$' -bench PoissonIRLS -benchtime 3x ./ml/glm/
func BenchmarkPoissonIRLS(b *testing.B) {
	f := poissonFrame(b, 200_000, 50)
	g := NewGeneralizedLinearRegression()
	g.Family = Poisson
	var m ml.Model
	for b.Loop() {
		var err error
		if m, err = g.Fit(ml.Local(f)); err != nil {
			b.Fatal(err)
		}
	}
	s := m.(*GeneralizedLinearRegressionModel).Summary
	b.ReportMetric(float64(s.NumIterations), "iterations")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "fit_seconds")
}
