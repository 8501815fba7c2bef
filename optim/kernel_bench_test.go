package optim

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
			a := adamArgs{beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 1, stepSize: 1e-3, bc2Sqrt: 0.5}
			c := a.consts()
			b.SetBytes(int64(28 * n))
			for range b.N {
				adamF32(p, g, m, v, nil, a, &c)
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
			a := sgdArgs{lr: 0.01, momentum: 0.9}
			c := a.consts()
			b.SetBytes(int64(20 * n))
			for range b.N {
				sgdF32(p, g, buf, a, &c)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		})
	}
}
