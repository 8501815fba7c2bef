package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks report GB/s counting the bytes each kernel must move.

var benchSizes = []int{1 << 10, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 24}

func BenchmarkAddF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range benchSizes {
		x, y, z := randF32(rng, n, 0, 1), randF32(rng, n, 0, 1), make([]float32, n)
		for _, k := range elemVariants {
			b.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(12 * n))
				for b.Loop() {
					k.addF32(z, x, y)
				}
			})
		}
		b.Run(fmt.Sprintf("exported/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(12 * n))
			for b.Loop() {
				AddF32(z, x, y)
			}
		})
	}
}

var sinkF64 float64

func BenchmarkSumF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, n := range benchSizes {
		x := randF32(rng, n, 0, 1)
		for _, k := range elemVariants {
			b.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					sinkF64 += k.sumF32(x)
				}
			})
		}
		b.Run(fmt.Sprintf("exported/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				sinkF64 += float64(SumF32(x))
			}
		})
	}
}

func BenchmarkDotF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1 << 16, 1 << 24} {
		x, y := randF32(rng, n, -1, 1), randF32(rng, n, -1, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				sinkF64 += float64(DotF32(x, y))
			}
		})
	}
}

func BenchmarkMaxF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, n := range []int{1 << 16, 1 << 24} {
		x := randF32(rng, n, -1, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				sinkF64 += float64(MaxF32(x))
			}
		})
	}
}

func BenchmarkExpF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{1 << 10, 1 << 14, 1 << 16, 1 << 20} {
		x, z := randF32(rng, n, -10, 10), make([]float32, n)
		for _, k := range elemVariants {
			for _, f := range []struct {
				name string
				fn   func(dst, x []float32)
			}{{"exp", k.expF32}, {"tanh", k.tanhF32}, {"sigmoid", k.sigmoidF32}} {
				b.Run(fmt.Sprintf("%s/%s/n=%d", f.name, k.name, n), func(b *testing.B) {
					b.SetBytes(int64(8 * n))
					for b.Loop() {
						f.fn(z, x)
					}
				})
			}
		}
		b.Run(fmt.Sprintf("exp/exported/n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				ExpF32(z, x)
			}
		})
	}
}

func BenchmarkSoftmaxRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, shape := range [][2]int{{64, 10}, {256, 1000}, {4096, 1000}} {
		rows, cols := shape[0], shape[1]
		x, z := randF32(rng, rows*cols, -5, 5), make([]float32, rows*cols)
		b.Run(fmt.Sprintf("%dx%d", rows, cols), func(b *testing.B) {
			b.SetBytes(int64(8 * rows * cols))
			for b.Loop() {
				SoftmaxRowsF32(z, x, rows, cols)
			}
		})
	}
}

// Non-temporal stores against regular ones on large outputs, two cores
// (the reason for streamMin).
func BenchmarkAddF32Stream(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1 << 20, 1 << 22, 1 << 24} {
		x, y, z := randF32(rng, n, 0, 1), randF32(rng, n, 0, 1), make([]float32, n)
		for _, v := range []struct {
			name string
			f    func(dst, a, b []float32)
		}{{"regular", elem.addF32}, {"stream", elem.addF32Stream}} {
			b.Run(fmt.Sprintf("%s/n=%d", v.name, n), func(b *testing.B) {
				b.SetBytes(int64(12 * n))
				for b.Loop() {
					mapBinary(grainMem, v.f, z, x, y)
				}
			})
		}
	}
}

func BenchmarkSmallOverhead(b *testing.B) {
	x, y, z := make([]float32, 100), make([]float32, 100), make([]float32, 100)
	b.ReportAllocs()
	for b.Loop() {
		AddF32(z, x, y)
		ExpF32(z, x)
		AxpyF32(2, x, y)
		sinkF64 += float64(SumF32(x) + DotF32(x, y) + MaxF32(x))
	}
}

func BenchmarkReluF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1 << 14, 1 << 20} {
		x, g, z := randF32(rng, n, -1, 1), randF32(rng, n, -1, 1), make([]float32, n)
		for _, k := range elemVariants {
			b.Run(fmt.Sprintf("forward/%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					k.reluF32(z, x)
				}
			})
			b.Run(fmt.Sprintf("backward/%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(12 * n))
				for b.Loop() {
					k.reluBackwardF32(z, g, x)
				}
			})
		}
	}
}

func BenchmarkMinMaxVariantsF32(b *testing.B) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{1 << 14, 1 << 20} {
		x := randF32(rng, n, -1, 1)
		for _, k := range elemVariants {
			b.Run(fmt.Sprintf("max/%s/n=%d", k.name, n), func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					sinkF64 += float64(k.maxF32(x))
				}
			})
		}
	}
}
