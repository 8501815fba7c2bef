package linear

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/fathom-ml/fathom/ml"
)

// BenchmarkAggregatorSoftmax is one evaluation of the softmax loss and
// gradient on data of Fashion-MNIST's shape (60 000 × 784, 10 classes).
func BenchmarkAggregatorSoftmax(b *testing.B) {
	for _, bf := range []int{200_000, 400_000, 800_000} {
		aggBlockFlops = bf
		b.Run(strconv.Itoa(bf), benchAggregatorSoftmax)
	}
	aggBlockFlops = 400_000
}

func benchAggregatorSoftmax(b *testing.B) {
	n, d, k := 60000, 784, 10
	r := rand.New(rand.NewPCG(1, 1))
	x := ml.Matrix{Rows: n, Cols: d, Data: make([]float64, n*d)}
	for i := range x.Data {
		x.Data[i] = r.Float64()
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(r.IntN(k))
	}
	agg := NewAggregator(Softmax, x, y, nil, k, true, nil)
	coef, icpt := make([]float64, k*d), make([]float64, k)
	gw, gb := make([]float64, k*d), make([]float64, k)
	cpu0 := cpuSeconds()
	b.ResetTimer()
	for range b.N {
		if _, _, err := agg.Eval(coef, icpt, gw, gb); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
	b.ReportMetric(4*float64(n*d*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
