package linear

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-ml/fathom/data"
)

func benchFashion(b *testing.B, algo string) {
	if _, err := os.Stat(filepath.Join(data.FashionMNISTDir())); err != nil {
		b.Skip("Fashion-MNIST not installed:", err)
	}
	train, err := data.LoadFashionMNIST("train")
	if err != nil {
		b.Skip("Fashion-MNIST:", err)
	}
	test, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		b.Skip("Fashion-MNIST:", err)
	}
	b.ResetTimer()
	for range b.N {
		r, err := BenchTables(algo, train, test)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.FitSeconds, "fit_s")
		b.ReportMetric(r.TestAccuracy, "test_acc")
		b.ReportMetric(float64(r.Iterations), "iters")
		b.ReportMetric(float64(r.Evaluations), "evals")
		b.ReportMetric(r.Objective, "objective")
	}
}

// BenchmarkFashionMNISTLogReg: multinomial logistic regression, L-BFGS,
// 100 iterations, sklearn's C=1 (target ≤ 8.5 s, accuracy ≥ 0.8438).
func BenchmarkFashionMNISTLogReg(b *testing.B) { benchFashion(b, "logreg") }

// BenchmarkFashionMNISTLinearSVC: squared-hinge LinearSVC one-vs-rest,
// sklearn's C=1 (target ≤ 43 s, accuracy within 0.5 point of 0.8394).
func BenchmarkFashionMNISTLinearSVC(b *testing.B) { benchFashion(b, "linsvc") }
