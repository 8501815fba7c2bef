package kernel

import (
	"fmt"
	"testing"
)

// benchShapes are square sizes plus the shapes of a Linear layer 784→256
// with a mini-batch of 64: forward x·W (W stored in×out) and x·Wᵀ (W stored
// out×in, as PyTorch does), the weight gradient gᵀ·x, the input gradient
// g·W, and batch-1 inference.
var benchShapes = []struct {
	name           string
	m, n, k        int
	transA, transB bool
}{
	{"n=64", 64, 64, 64, false, false},
	{"n=128", 128, 128, 128, false, false},
	{"n=256", 256, 256, 256, false, false},
	{"n=512", 512, 512, 512, false, false},
	{"n=1024", 1024, 1024, 1024, false, false},
	{"n=2048", 2048, 2048, 2048, false, false},
	{"mlp/fwd_64x784x256", 64, 256, 784, false, false},
	{"mlp/fwdT_64x784x256", 64, 256, 784, false, true},
	{"mlp/dW_784x64x256", 784, 256, 64, true, false},
	{"mlp/dx_64x256x784", 64, 784, 256, false, false},
	{"mlp/m1_1x784x256", 1, 256, 784, false, false},
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			benchSgemm(b, sgemmActive.pick(s.m, s.n, s.k), s.m, s.n, s.k, s.transA, s.transB)
		})
	}
}

func BenchmarkDgemm(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			benchDgemm(b, dgemmActive.pick(s.m, s.n, s.k), s.m, s.n, s.k, s.transA, s.transB)
		})
	}
}

// BenchmarkSgemmVariants and BenchmarkDgemmVariants run every registered
// variant at n = 512 and 2048 (the wide tiles against the 14-row ones).
func BenchmarkSgemmVariants(b *testing.B) {
	for _, n := range []int{512, 2048} {
		for _, v := range sgemmVariants {
			b.Run(fmt.Sprintf("n=%d/%s", n, v.name), func(b *testing.B) { benchSgemm(b, v, n, n, n, false, false) })
		}
	}
}

func BenchmarkDgemmVariants(b *testing.B) {
	for _, n := range []int{512, 2048} {
		for _, v := range dgemmVariants {
			b.Run(fmt.Sprintf("n=%d/%s", n, v.name), func(b *testing.B) { benchDgemm(b, v, n, n, n, false, false) })
		}
	}
}

func benchSgemm(b *testing.B, v *gemmVariant[float32], m, n, k int, ta, tb bool) {
	a := make([]float32, m*k)
	bb := make([]float32, k*n)
	c := make([]float32, m*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range bb {
		bb[i] = float32(i%5) - 2
	}
	lda, ldb := k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	gemm(v, ta, tb, m, n, k, 1, a, lda, bb, ldb, 0, c, n) // size the buffers
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		gemm(v, ta, tb, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
	}
	reportGflops(b, m, n, k)
}

func benchDgemm(b *testing.B, v *gemmVariant[float64], m, n, k int, ta, tb bool) {
	a := make([]float64, m*k)
	bb := make([]float64, k*n)
	c := make([]float64, m*n)
	for i := range a {
		a[i] = float64(i%7) - 3
	}
	for i := range bb {
		bb[i] = float64(i%5) - 2
	}
	lda, ldb := k, n
	if ta {
		lda = m
	}
	if tb {
		ldb = k
	}
	gemm(v, ta, tb, m, n, k, 1, a, lda, bb, ldb, 0, c, n) // size the buffers
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		gemm(v, ta, tb, m, n, k, 1, a, lda, bb, ldb, 0, c, n)
	}
	reportGflops(b, m, n, k)
}

func reportGflops(b *testing.B, m, n, k int) {
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(2*float64(m)*float64(n)*float64(k)/sec/1e9, "GFLOP/s")
	b.ReportMetric(0, "ns/op")
}
