package kernel

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// Elementwise maps over flat slices.
//
// Every map works on len(dst) elements (len(y) for Axpy); the inputs must
// be at least that long (extra elements are ignored) or the function panics
// with a message naming the kernel. dst may be the very same slice as an
// input (in-place update), but must not partially overlap one.
//
// Work of fewer than about 2·grain elements (see grainMem, grainCompute)
// runs on the calling goroutine; larger work is split over the cores with
// package parallel in chunks that are multiples of 64 elements.

const (
	// grainMem is the smallest chunk worth a core for memory-bound maps
	// (add, mul, axpy, relu, sum, ...): below 2·grainMem = 128 Ki elements
	// the hand-off to a second core costs more than it saves.
	grainMem = 1 << 16
	// grainCompute is the same for maps that cost tens of cycles per
	// vector (exp, tanh, sigmoid, log, div).
	grainCompute = 1 << 13
	// streamMin is the output length from which binary maps use
	// non-temporal stores: the result (≥ 16 MiB of float32) will not stay
	// in the private caches anyway, and streaming saves the read of dst
	// before each write (measured: add of 16 Mi float32 goes from about 15
	// to about 17-24 GB/s on two cores of the shared development machine).
	streamMin = 1 << 22
	// block keeps chunk boundaries on 64-element (256-byte) multiples, so
	// only the last chunk has a scalar tail.
	block = 64
)

// split runs fn over [0, n) on one goroutine if n is small, else in
// parallel over block-aligned chunks of at least grain elements.
func split(n, grain int, fn func(lo, hi int)) {
	if n < 2*grain {
		fn(0, n)
		return
	}
	nb := (n + block - 1) / block
	parallel.For(nb, grain/block, func(lo, hi int) {
		fn(lo*block, min(hi*block, n))
	})
}

// mapBinary applies f to dst, a, b (already length-checked) with split;
// small inputs call f directly, without allocating a closure.
func mapBinary[T float](grain int, f func(dst, a, b []T), dst, a, b []T) {
	n := len(dst)
	if n < 2*grain {
		f(dst, a[:n], b[:n])
		return
	}
	split(n, grain, func(lo, hi int) { f(dst[lo:hi], a[lo:hi], b[lo:hi]) })
}

// mapUnary is mapBinary for one input.
func mapUnary[T float](grain int, f func(dst, x []T), dst, x []T) {
	n := len(dst)
	if n < 2*grain {
		f(dst, x[:n])
		return
	}
	split(n, grain, func(lo, hi int) { f(dst[lo:hi], x[lo:hi]) })
}

// mapScalar is mapUnary with a scalar operand.
func mapScalar[T float](grain int, f func(dst, x []T, s T), dst, x []T, s T) {
	n := len(dst)
	if n < 2*grain {
		f(dst, x[:n], s)
		return
	}
	split(n, grain, func(lo, hi int) { f(dst[lo:hi], x[lo:hi], s) })
}

// splitReduce is split for reductions: the partial results of the chunks
// are added in chunk order (deterministic for a fixed GOMAXPROCS).
func splitReduce(n, grain int, fn func(lo, hi int) float64) float64 {
	if n < 2*grain {
		return fn(0, n)
	}
	nb := (n + block - 1) / block
	return parallel.MapReduce(nb, grain/block, 0.0,
		func(lo, hi int) float64 { return fn(lo*block, min(hi*block, n)) },
		func(a, b float64) float64 { return a + b })
}

func checkLen(op, name string, got, want int) {
	if got < want {
		panic(fmt.Sprintf("kernel.%s: len(%s) = %d, shorter than %d", op, name, got, want))
	}
}

func nanF64() float64 { return math.NaN() }

// ----------------------------------------------------------- float32 maps

// AddF32 sets dst[i] = a[i] + b[i].
func AddF32(dst, a, b []float32) {
	n := len(dst)
	checkLen("AddF32", "a", len(a), n)
	checkLen("AddF32", "b", len(b), n)
	f := elem.addF32
	if n >= streamMin {
		f = elem.addF32Stream
	}
	mapBinary(grainMem, f, dst, a, b)
}

// SubF32 sets dst[i] = a[i] − b[i].
func SubF32(dst, a, b []float32) {
	n := len(dst)
	checkLen("SubF32", "a", len(a), n)
	checkLen("SubF32", "b", len(b), n)
	f := elem.subF32
	if n >= streamMin {
		f = elem.subF32Stream
	}
	mapBinary(grainMem, f, dst, a, b)
}

// MulF32 sets dst[i] = a[i] * b[i].
func MulF32(dst, a, b []float32) {
	n := len(dst)
	checkLen("MulF32", "a", len(a), n)
	checkLen("MulF32", "b", len(b), n)
	f := elem.mulF32
	if n >= streamMin {
		f = elem.mulF32Stream
	}
	mapBinary(grainMem, f, dst, a, b)
}

// DivF32 sets dst[i] = a[i] / b[i] (IEEE division: x/0 is ±Inf or NaN).
func DivF32(dst, a, b []float32) {
	n := len(dst)
	checkLen("DivF32", "a", len(a), n)
	checkLen("DivF32", "b", len(b), n)
	f := elem.divF32
	if n >= streamMin {
		f = elem.divF32Stream
	}
	mapBinary(grainCompute, f, dst, a, b)
}

// AddScalarF32 sets dst[i] = x[i] + s.
func AddScalarF32(dst, x []float32, s float32) {
	n := len(dst)
	checkLen("AddScalarF32", "x", len(x), n)
	mapScalar(grainMem, elem.addScalarF32, dst, x, s)
}

// MulScalarF32 sets dst[i] = x[i] * s.
func MulScalarF32(dst, x []float32, s float32) {
	n := len(dst)
	checkLen("MulScalarF32", "x", len(x), n)
	mapScalar(grainMem, elem.mulScalarF32, dst, x, s)
}

// ScaleF32 sets x[i] *= alpha in place.
func ScaleF32(alpha float32, x []float32) { MulScalarF32(x, x, alpha) }

// AxpyF32 sets y[i] += alpha * x[i] (one fused multiply-add per element in
// the vector variants, so results may differ from the reference in the last
// bit).
func AxpyF32(alpha float32, x, y []float32) {
	n := len(y)
	checkLen("AxpyF32", "x", len(x), n)
	if n < 2*grainMem {
		elem.axpyF32(alpha, x[:n], y)
		return
	}
	split(n, grainMem, func(lo, hi int) { elem.axpyF32(alpha, x[lo:hi], y[lo:hi]) })
}

// ReluF32 sets dst[i] = 0 where x[i] < 0 and x[i] elsewhere, so NaN stays
// NaN and −0 stays −0 (as torch.relu).
func ReluF32(dst, x []float32) {
	n := len(dst)
	checkLen("ReluF32", "x", len(x), n)
	mapUnary(grainMem, elem.reluF32, dst, x)
}

// ReluBackwardF32 sets dst[i] = 0 where x[i] ≤ 0 and grad[i] elsewhere,
// NaN included (PyTorch's threshold_backward): the gradient of ReluF32 with
// respect to its input x, or equally its output. dst may alias grad.
func ReluBackwardF32(dst, grad, x []float32) {
	n := len(dst)
	checkLen("ReluBackwardF32", "grad", len(grad), n)
	checkLen("ReluBackwardF32", "x", len(x), n)
	mapBinary(grainMem, elem.reluBackwardF32, dst, grad, x)
}

// ExpF32 sets dst[i] = e^x[i]. The vector variants are within 2 ulp of the
// correctly rounded result over the whole float32 range (including
// subnormal results), overflow to +Inf above about 88.72, return 0 below
// about −103.97, and propagate NaN.
func ExpF32(dst, x []float32) {
	n := len(dst)
	checkLen("ExpF32", "x", len(x), n)
	mapUnary(grainCompute, elem.expF32, dst, x)
}

// SigmoidF32 sets dst[i] = 1/(1+e^−x[i]).
func SigmoidF32(dst, x []float32) {
	n := len(dst)
	checkLen("SigmoidF32", "x", len(x), n)
	mapUnary(grainCompute, elem.sigmoidF32, dst, x)
}

// TanhF32 sets dst[i] = tanh(x[i]).
func TanhF32(dst, x []float32) {
	n := len(dst)
	checkLen("TanhF32", "x", len(x), n)
	mapUnary(grainCompute, elem.tanhF32, dst, x)
}

// LogF32 sets dst[i] = ln x[i]: −Inf for ±0, NaN for negative x and NaN,
// +Inf for +Inf. The vector variants are within 2 ulp, subnormal inputs
// included.
func LogF32(dst, x []float32) {
	n := len(dst)
	checkLen("LogF32", "x", len(x), n)
	mapUnary(grainCompute, elem.logF32, dst, x)
}

// ----------------------------------------------------------- float64 maps

// AddF64 sets dst[i] = a[i] + b[i].
func AddF64(dst, a, b []float64) {
	n := len(dst)
	checkLen("AddF64", "a", len(a), n)
	checkLen("AddF64", "b", len(b), n)
	f := elem.addF64
	if n >= streamMin {
		f = elem.addF64Stream
	}
	mapBinary(grainMem, f, dst, a, b)
}

// SubF64 sets dst[i] = a[i] − b[i].
func SubF64(dst, a, b []float64) {
	n := len(dst)
	checkLen("SubF64", "a", len(a), n)
	checkLen("SubF64", "b", len(b), n)
	f := elem.subF64
	if n >= streamMin {
		f = elem.subF64Stream
	}
	mapBinary(grainMem, f, dst, a, b)
}

// MulF64 sets dst[i] = a[i] * b[i].
func MulF64(dst, a, b []float64) {
	n := len(dst)
	checkLen("MulF64", "a", len(a), n)
	checkLen("MulF64", "b", len(b), n)
	f := elem.mulF64
	if n >= streamMin {
		f = elem.mulF64Stream
	}
	mapBinary(grainMem, f, dst, a, b)
}

// DivF64 sets dst[i] = a[i] / b[i].
func DivF64(dst, a, b []float64) {
	n := len(dst)
	checkLen("DivF64", "a", len(a), n)
	checkLen("DivF64", "b", len(b), n)
	f := elem.divF64
	if n >= streamMin {
		f = elem.divF64Stream
	}
	mapBinary(grainCompute, f, dst, a, b)
}

// AddScalarF64 sets dst[i] = x[i] + s.
func AddScalarF64(dst, x []float64, s float64) {
	n := len(dst)
	checkLen("AddScalarF64", "x", len(x), n)
	mapScalar(grainMem, elem.addScalarF64, dst, x, s)
}

// MulScalarF64 sets dst[i] = x[i] * s.
func MulScalarF64(dst, x []float64, s float64) {
	n := len(dst)
	checkLen("MulScalarF64", "x", len(x), n)
	mapScalar(grainMem, elem.mulScalarF64, dst, x, s)
}

// ScaleF64 sets x[i] *= alpha in place.
func ScaleF64(alpha float64, x []float64) { MulScalarF64(x, x, alpha) }

// AxpyF64 sets y[i] += alpha * x[i].
func AxpyF64(alpha float64, x, y []float64) {
	n := len(y)
	checkLen("AxpyF64", "x", len(x), n)
	if n < 2*grainMem {
		elem.axpyF64(alpha, x[:n], y)
		return
	}
	split(n, grainMem, func(lo, hi int) { elem.axpyF64(alpha, x[lo:hi], y[lo:hi]) })
}
