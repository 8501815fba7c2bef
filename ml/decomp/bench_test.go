package decomp

import (
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkPCAFashionMNIST fits PCA k = 50 on the 60k × 784 Fashion-MNIST
// training split with each solver, reporting wall and CPU seconds per fit,
// the explained variance ratio sum and the subspace iterations:
//
//	go test -run '^$' -bench PCAFashionMNIST -benchtime 3x ./ml/decomp/
func BenchmarkPCAFashionMNIST(b *testing.B) {
	t, err := data.LoadFashionMNIST("train")
	if err != nil {
		b.Skipf("Fashion-MNIST: %v", err)
	}
	f, err := ml.TableFrame(t)
	if err != nil {
		b.Fatal(err)
	}
	for _, solver := range []string{SolverGramian, SolverRandomized} {
		b.Run(solver, func(b *testing.B) {
			p := NewPCA()
			p.K, p.Solver = 50, solver
			var m ml.Model
			cpu := cpuSeconds()
			for b.Loop() {
				if m, err = p.Fit(ml.Local(f)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "fit_seconds")
			b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu_seconds")
			s := 0.0
			for _, v := range m.(*PCAModel).ExplainedVariance {
				s += v
			}
			b.ReportMetric(s, "explained_variance_ratio_sum")
			r, err := readRows(ml.Local(f), ml.FeaturesCol, "PCA")
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := r.center(); err != nil {
				b.Fatal(err)
			}
			e, err := topEigen(r, 50, solver)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(e.iters), "subspace_iterations")
		})
	}
}
