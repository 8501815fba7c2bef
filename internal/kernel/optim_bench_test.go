package kernel

import (
	"fmt"
	"testing"
)

// BenchmarkAdamKernelF32 measures the float32 Adam loop alone, on one
// core, at sizes that fit in L1, L2 and beyond.
func BenchmarkAdamKernelF32(b *testing.B) {
	for _, n := range []int{4 << 10, 64 << 10, 235146, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range g {
				g[i] = float32(i%17) * 1e-3
			}
			a := AdamArgs{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decay: 1, StepSize: 1e-3, BC2Sqrt: 0.5}
			c := a.Consts()
			b.SetBytes(int64(28 * n))
			for range b.N {
				AdamF32(p, g, m, v, nil, a, &c)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		})
	}
}

// BenchmarkSGDMomentumKernelF32 is BenchmarkAdamKernelF32 for SGD with
// momentum.
func BenchmarkSGDMomentumKernelF32(b *testing.B) {
	for _, n := range []int{4 << 10, 64 << 10, 235146, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p, g, buf := make([]float32, n), make([]float32, n), make([]float32, n)
			a := SGDArgs{LR: 0.01, Momentum: 0.9}
			c := a.Consts()
			b.SetBytes(int64(20 * n))
			for range b.N {
				SGDF32(p, g, buf, a, &c)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		})
	}
}
