package tensor

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/internal/kernel"
)

func BenchmarkScratchGemm(b *testing.B) {
	for _, s := range []struct {
		m, n, k int
		ta, tb  bool
	}{
		{64, 196, 288, false, false},
		{64, 196 * 16, 288, false, false},
		{64, 196 * 64, 288, false, false},
		{288, 196, 64, true, false},
		{288, 196 * 16, 64, true, false},
		{64, 288, 196, false, true},
		{64, 288, 196 * 16, false, true},
		{32, 784, 9, false, false},
		{32, 784 * 16, 9, false, false},
		{32, 9, 784 * 16, false, true},
	} {
		b.Run(fmt.Sprintf("%dx%dx%d_%v%v", s.m, s.n, s.k, s.ta, s.tb), func(b *testing.B) {
			a := make([]float32, s.m*s.k)
			bb := make([]float32, s.k*s.n)
			c := make([]float32, s.m*s.n)
			lda, ldb := s.k, s.n
			if s.ta {
				lda = s.m
			}
			if s.tb {
				ldb = s.k
			}
			for b.Loop() {
				kernel.Sgemm(s.ta, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
