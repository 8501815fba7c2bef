package cluster

import (
	"syscall"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

func fashionTrain(b *testing.B) *data.Frame {
	b.Helper()
	t, err := data.LoadFashionMNIST("train")
	if err != nil {
		b.Skipf("Fashion-MNIST: %v", err)
	}
	f, err := ml.TableFrame(t)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkKMeansFashionMNIST fits KMeans k = 10 (maxIter 100, k-means||)
// on the 60k × 784 training split with Lloyd's and Hamerly's algorithms,
// reporting wall and CPU seconds per fit (CPU time is the steadier figure
// on a shared machine), the iterations and the inertia:
//
//	go test -run '^$' -bench KMeansFashionMNIST -benchtime 3x ./ml/cluster/
func BenchmarkKMeansFashionMNIST(b *testing.B) {
	f := fashionTrain(b)
	for _, alg := range []string{AlgorithmLloyd, AlgorithmHamerly} {
		b.Run(alg, func(b *testing.B) {
			km := NewKMeans()
			km.K, km.MaxIter, km.Algorithm = 10, 100, alg
			var m ml.Model
			cpu := cpuSeconds()
			for b.Loop() {
				var err error
				if m, err = km.Fit(ml.Local(f)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "fit_seconds")
			b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu_seconds")
			b.ReportMetric(float64(m.(*KMeansModel).NumIter), "iterations")
			b.ReportMetric(m.(*KMeansModel).TrainingCost, "inertia")
		})
	}
}
