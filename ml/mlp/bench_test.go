package mlp

import (
	"math"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
)

// fashionFrame loads a Fashion-MNIST split as a frame of a float32
// "features" vector column (pixels/255) and a float64 "label" column, or
// skips the benchmark when the data is missing.
func fashionFrame(tb testing.TB, split string) *data.Frame {
	tb.Helper()
	t, err := data.LoadFashionMNIST(split)
	if err != nil {
		tb.Skipf("Fashion-MNIST not available: %v", err)
	}
	f, err := ml.TableFrame(t)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// accuracy is the share of rows whose prediction equals the label.
func accuracy(tb testing.TB, m ml.Model, f *data.Frame) float64 {
	tb.Helper()
	out, err := m.Transform(f)
	if err != nil {
		tb.Fatal(err)
	}
	pred, _ := ml.Numbers(out, ml.PredictionCol)
	label, _ := ml.Numbers(out, ml.LabelCol)
	hit := 0
	for i := range pred {
		if pred[i] == label[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(pred))
}

// BenchmarkFashionMNIST fits the speed case: Fashion-MNIST's
// 60,000 training images (784 pixels/255), one hidden layer of 100
// sigmoid units, L-BFGS, 100 iterations (the peer: scikit-learn's
// MLPClassifier((100,), solver='lbfgs', max_iter=100)), in each
// precision, and reports the fit's seconds, iterations and test accuracy.
//
//	go test -run '^$' -bench FashionMNIST -benchtime 1x ./ml/mlp/
func BenchmarkFashionMNIST(b *testing.B) {
	train := fashionFrame(b, "train")
	test := fashionFrame(b, "t10k")
	for _, prec := range []string{Float32, Float64} {
		b.Run(prec, func(b *testing.B) {
			e := FashionMNISTEstimator()
			e.Precision = prec
			var m *MultilayerPerceptronClassificationModel
			var secs float64
			for range b.N {
				start := time.Now()
				fitted, err := e.Fit(ml.Local(train))
				if err != nil {
					b.Fatal(err)
				}
				secs = time.Since(start).Seconds()
				m = fitted.(*MultilayerPerceptronClassificationModel)
			}
			b.ReportMetric(secs, "fit_seconds")
			b.ReportMetric(float64(m.Iterations), "iterations")
			b.ReportMetric(float64(m.Evaluations), "evaluations")
			b.ReportMetric(accuracy(b, m, test), "test_accuracy")
			b.ReportMetric(m.Loss, "train_loss")
			if math.IsNaN(m.Loss) {
				b.Fatal("NaN loss")
			}
		})
	}
}

// BenchmarkLossGrad times one full-batch loss and gradient evaluation of
// the 784-100-10 network on synthetic data (no files needed), in each
// precision, with the rate of the GEMMs' floating-point work.
func BenchmarkLossGrad(b *testing.B) {
	const n = 16384
	top := newTopology([]int{784, 100, 10})
	rng := splitmix64(1)
	x := make([]float64, n*784)
	for i := range x {
		x[i] = rng.float64()
	}
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(rng.next() % 10)
	}
	w := top.initWeights(1)
	g := make([]float64, top.size)
	// Per sample: the forward product and the weight gradient of each
	// layer, and the delta back through the second: 2·in·out flops each.
	flops := 2.0 * n * float64(2*784*100+3*100*10)
	for _, prec := range []string{Float32, Float64} {
		b.Run(prec, func(b *testing.B) {
			var eval func(w, g []float64) float64
			if prec == Float32 {
				eval = newNetwork(top, transpose[float32](x, n, 784), y, n, kernel.Sgemm).lossGrad
			} else {
				eval = newNetwork(top, transpose[float64](x, n, 784), y, n, kernel.Dgemm).lossGrad
			}
			b.ResetTimer()
			for range b.N {
				eval(w, g)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// FashionMNISTEstimator returns the classifier of the speed case,
// the settings `fathom bench ml mlp` (cmd/fathom) fits Fashion-MNIST
// with: layers [0, 100, 0] (784 inputs and 10 classes from the data), 100
// L-BFGS iterations, float32 passes.
func FashionMNISTEstimator() *MultilayerPerceptronClassifier {
	e := NewMultilayerPerceptronClassifier()
	e.Layers = []int{0, 100, 0}
	e.MaxIter = 100
	e.Precision = Float32
	return e
}
