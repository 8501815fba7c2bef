package tune

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/ml"
)

// BenchmarkCrossValidator times a 5-fold search over 8 points of the
// stand-in ridge on 20 000 rows, at parallelism 1, 2 and 4.
func BenchmarkCrossValidator(b *testing.B) {
	f := regression(20000)
	g := NewParamGridBuilder().AddGrid(Axis("regParam", setReg, 1, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 0)).Build()
	for _, par := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("parallelism=%d", par), func(b *testing.B) {
			for b.Loop() {
				cv := NewCrossValidator(&ridge{}, g, rmse{})
				cv.NumFolds, cv.Parallelism = 5, par
				if _, err := cv.Fit(ml.Local(f)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(5*len(g)+1)*float64(b.N)/b.Elapsed().Seconds(), "fits/s")
		})
	}
}
