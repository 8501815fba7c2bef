package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// MatmulResult is one `fathom bench matmul` measurement (a JSON line with --json).
type MatmulResult struct {
	M       int     `json:"m"`
	N       int     `json:"n"`
	K       int     `json:"k"`
	TransA  bool    `json:"trans_a,omitempty"`
	TransB  bool    `json:"trans_b,omitempty"`
	Dtype   string  `json:"dtype"`
	Threads int     `json:"threads"`
	Sec     float64 `json:"sec"`
	GFlops  float64 `json:"gflops"`
	Samples int     `json:"samples"`
	// Kernel and PeakGFlops (int8 only): the variant that ran and the
	// throughput of its core instruction on registers alone (VPDPBUSD),
	// on --threads cores: the ceiling GFlops is measured against.
	Kernel     string  `json:"kernel,omitempty"`
	PeakGFlops float64 `json:"peak_gflops,omitempty"`
}

// MatmulOptions configure Matmul: C = A·B for row-major M×K by K×N
// matrices (A, B stored transposed with TransA, TransB).
type MatmulOptions struct {
	M, N, K        int
	Dtype          string // f32 (float32), f64 (float64), int8 or bf16
	TransA, TransB bool
	Iters          int           // timed samples (the median is reported)
	MinTime        time.Duration // minimum duration of one sample
}

// Matmul times the product on the current GOMAXPROCS: after one warm-up
// call, each of Iters samples repeats the multiply until it lasts at
// least MinTime; the median time per multiply gives GFLOP/s = 2·m·n·k / t.
func Matmul(o MatmulOptions) (MatmulResult, error) {
	m, n, k, transA, transB := o.M, o.N, o.K, o.TransA, o.TransB
	if m <= 0 || n <= 0 || k <= 0 {
		return MatmulResult{}, fmt.Errorf("bench matmul: sizes must be positive, got m=%d n=%d k=%d", m, n, k)
	}
	if o.Iters < 1 {
		return MatmulResult{}, fmt.Errorf("bench matmul: --iters must be at least 1, got %d", o.Iters)
	}
	// Leading dimensions of A and B as stored (transposed or not).
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	var call func()
	var peak float64
	dtype := o.Dtype
	switch dtype {
	case "f32", "float32":
		dtype = "f32"
		a, b, c := randF32(m*k), randF32(k*n), make([]float32, m*n)
		call = func() { kernel.Sgemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, n) }
	case "f64", "float64":
		dtype = "f64"
		a, b, c := randF64(m*k), randF64(k*n), make([]float64, m*n)
		call = func() { kernel.Dgemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, n) }
	case "int8":
		if transA || transB {
			return MatmulResult{}, fmt.Errorf("bench matmul: --trans-a/--trans-b do not apply to --dtype int8")
		}
		if k > kernel.MaxI8K {
			return MatmulResult{}, fmt.Errorf("bench matmul: --k %d is more than the int8 GEMM's %d", k, kernel.MaxI8K)
		}
		call = int8MatmulCall(m, n, k)
		peak = int8PeakGFlops(runtime.GOMAXPROCS(0))
	case "bf16", "bfloat16":
		// float32 in and out, bfloat16 products (kernel.SgemmBF16);
		// the time includes rounding A and B to bfloat16.
		dtype = "bf16"
		a, b, c := randF32(m*k), randF32(k*n), make([]float32, m*n)
		call = func() { kernel.SgemmBF16(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, c, n) }
	default:
		return MatmulResult{}, fmt.Errorf("bench matmul: unknown --dtype %q (want float32, float64, int8 or bf16)", dtype)
	}
	sec, samples := MedianTime(call, o.Iters, o.MinTime)
	res := MatmulResult{
		M: m, N: n, K: k, TransA: transA, TransB: transB, Dtype: dtype, Threads: runtime.GOMAXPROCS(0),
		Sec: sec, GFlops: 2 * float64(m) * float64(n) * float64(k) / sec / 1e9, Samples: samples,
	}
	if dtype == "int8" {
		res.Kernel, res.PeakGFlops = kernel.Int8Variant(), peak
	}
	return res, nil
}

// MedianTime calls fn once to warm up, then takes iters samples, each
// repeating fn until it lasts at least minTime, and returns the median
// seconds per call.
func MedianTime(fn func(), iters int, minTime time.Duration) (float64, int) {
	t0 := time.Now()
	fn()
	single := time.Since(t0)
	reps := 1
	if single > 0 && single < minTime {
		reps = int(minTime/single) + 1
	}
	samples := make([]float64, iters)
	for s := range samples {
		t0 := time.Now()
		for range reps {
			fn()
		}
		samples[s] = time.Since(t0).Seconds() / float64(reps)
	}
	slices.Sort(samples)
	mid := len(samples) / 2
	if len(samples)%2 == 0 {
		return (samples[mid-1] + samples[mid]) / 2, iters
	}
	return samples[mid], iters
}

func randF32(n int) []float32 {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func randF64(n int) []float64 {
	r := rand.New(rand.NewPCG(2, uint64(n)))
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// int8MatmulCall returns one int8 product: uint8 activations (m×k) times
// int8 weights (n×k, packed once here) into int32.
func int8MatmulCall(m, n, k int) func() {
	r := rand.New(rand.NewPCG(3, uint64(m*n+k)))
	a := make([]uint8, m*k)
	for i := range a {
		a[i] = uint8(r.IntN(256))
	}
	w := make([]int8, n*k)
	for i := range w {
		w[i] = int8(r.IntN(256) - 128)
	}
	packed := kernel.PackI8(n, k, w, k)
	c := make([]int32, m*n)
	return func() { kernel.GemmU8I8(m, a, k, packed, c, n) }
}

// int8PeakGFlops runs the VPDPBUSD register loop on threads goroutines at
// once and returns their total int8 GOP/s (0 without VNNI).
func int8PeakGFlops(threads int) float64 {
	const iters = 2_000_000
	if kernel.Int8PeakOps(1) == 0 {
		return 0
	}
	best := 0.0
	for range 3 {
		var wg sync.WaitGroup
		ops := make([]float64, threads)
		t0 := time.Now()
		for t := range threads {
			wg.Go(func() { ops[t] = kernel.Int8PeakOps(iters) })
		}
		wg.Wait()
		sec := time.Since(t0).Seconds()
		total := 0.0
		for _, o := range ops {
			total += o
		}
		best = max(best, total/sec/1e9)
	}
	return best
}
