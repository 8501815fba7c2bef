package eval

import (
	"math"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// BenchmarkAreaUnderROC: 1M rows, exact (numBins 0).
func BenchmarkAreaUnderROC(b *testing.B) {
	n := 1_000_000
	s := make([]float64, n)
	l := make([]float64, n)
	for i := range n {
		s[i] = math.Sin(float64(i) * 0.7)
		if math.Cos(float64(i)*1.3)+s[i] > 0.2 {
			l[i] = 1
		}
	}
	f, err := data.NewFrame(data.NewColumn("score", s, nil), data.NewColumn(ml.LabelCol, l, nil))
	if err != nil {
		b.Fatal(err)
	}
	e := NewBinaryClassificationEvaluator()
	e.RawPredictionCol, e.NumBins = "score", 0
	b.ResetTimer()
	for range b.N {
		if _, err := e.Evaluate(f, nil); err != nil {
			b.Fatal(err)
		}
	}
}
