package recommend

import (
	"testing"

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
