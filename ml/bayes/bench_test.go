package bayes

import (
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// fashionFrame returns a split of Fashion-MNIST as a frame: a float32
// "features" vector column over the table's pixels (no copy) and a float64
// "label" column. It skips the benchmark when the data set is missing.
func fashionFrame(b *testing.B, split string) *data.Frame {
	b.Helper()
	t, err := data.LoadFashionMNIST(split)
	if err != nil {
		b.Skipf("Fashion-MNIST: %v", err)
	}
	y := make([]float64, t.Rows)
	for i, l := range t.Labels {
		y[i] = float64(l)
	}
	f, err := data.NewFrame(data.NewVectorColumn32("features", t.Cols, t.X, nil, nil), data.NewColumn("label", y, nil))
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkGaussianNBFashionMNIST fits GaussianNB on the 60k × 784
// training split (scikit-learn's GaussianNB(): 0.53 s, test accuracy
// 0.5856 in ../shared/anchors) and reports the fit time and the test
// accuracy:
//
//	go test -run '^$' -bench GaussianNBFashionMNIST -benchtime 5x ./ml/bayes/
func BenchmarkGaussianNBFashionMNIST(b *testing.B) {
	train, test := fashionFrame(b, "train"), fashionFrame(b, "test")
	nb := NewNaiveBayes()
	nb.ModelType = Gaussian
	var m ml.Model
	b.ResetTimer()
	for b.Loop() {
		var err error
		if m, err = nb.Fit(ml.Local(train)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "fit_seconds")
	out, err := m.Transform(test)
	if err != nil {
		b.Fatal(err)
	}
	pred, _ := out.Float64s("prediction")
	want, _ := test.Float64s("label")
	right := 0
	for i, p := range pred {
		if p == want[i] {
			right++
		}
	}
	b.ReportMetric(float64(right)/float64(len(pred)), "test_accuracy")
}
