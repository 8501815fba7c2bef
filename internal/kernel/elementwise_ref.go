package kernel

import "math"

// Reference (pure Go) versions of every elementwise kernel and reduction.
// They define the semantics the vector variants must reproduce, always
// compile, and serve as the fallback with the purego tag or off amd64.

type float interface{ ~float32 | ~float64 }

func addRef[T float](dst, a, b []T) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func subRef[T float](dst, a, b []T) {
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

func mulRef[T float](dst, a, b []T) {
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func divRef[T float](dst, a, b []T) {
	for i := range dst {
		dst[i] = a[i] / b[i]
	}
}

func addScalarRef[T float](dst, x []T, s T) {
	for i := range dst {
		dst[i] = x[i] + s
	}
}

func mulScalarRef[T float](dst, x []T, s T) {
	for i := range dst {
		dst[i] = x[i] * s
	}
}

func axpyRef[T float](alpha T, x, y []T) {
	for i := range y {
		y[i] += alpha * x[i]
	}
}

// sumRef accumulates in float64.
func sumRef[T float](x []T) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// dotRef accumulates in float64.
func dotRef[T float](x, y []T) float64 {
	var s float64
	for i, v := range x {
		s += float64(v) * float64(y[i])
	}
	return s
}

// maxRef returns the largest element, NaN if any element is NaN, −Inf for
// an empty slice.
func maxRef[T float](x []T) T {
	m := T(math.Inf(-1))
	for _, v := range x {
		if v != v {
			return v
		}
		if v > m {
			m = v
		}
	}
	return m
}

// minRef returns the smallest element, NaN if any element is NaN, +Inf for
// an empty slice.
func minRef[T float](x []T) T {
	m := T(math.Inf(1))
	for _, v := range x {
		if v != v {
			return v
		}
		if v < m {
			m = v
		}
	}
	return m
}

// reluRef sets dst[i] = 0 where x[i] < 0 and x[i] elsewhere, so NaN stays
// NaN and −0 stays −0, as in PyTorch (and as VMAXPS with x as the second
// source gives).
func reluRef(dst, x []float32) {
	for i := range dst {
		if v := x[i]; v < 0 {
			dst[i] = 0
		} else {
			dst[i] = v
		}
	}
}

// reluBackwardRef sets dst[i] = 0 where x[i] ≤ 0 and grad[i] elsewhere,
// NaN included (PyTorch's threshold_backward).
func reluBackwardRef(dst, grad, x []float32) {
	for i := range dst {
		if x[i] <= 0 {
			dst[i] = 0
		} else {
			dst[i] = grad[i]
		}
	}
}

func expRef(dst, x []float32) {
	for i := range dst {
		dst[i] = float32(math.Exp(float64(x[i])))
	}
}

func logRef(dst, x []float32) {
	for i := range dst {
		dst[i] = float32(math.Log(float64(x[i])))
	}
}

func sigmoidRef(dst, x []float32) {
	for i := range dst {
		dst[i] = float32(1 / (1 + math.Exp(-float64(x[i]))))
	}
}

func tanhRef(dst, x []float32) {
	for i := range dst {
		dst[i] = float32(math.Tanh(float64(x[i])))
	}
}

// expShiftSumRef sets dst[i] = exp(x[i] − shift) and returns their sum,
// accumulated in float64.
func expShiftSumRef(dst, x []float32, shift float32) float64 {
	var s float64
	for i := range dst {
		e := float32(math.Exp(float64(x[i] - shift)))
		dst[i] = e
		s += float64(e)
	}
	return s
}

// elemKernels is one complete implementation of the elementwise kernels:
// the reference, or one instruction set's assembly with the reference for
// the tail. All functions work on len(dst) (or len(y), len(x) for
// reductions) elements; callers check lengths.
type elemKernels struct {
	name string

	addF32, subF32, mulF32, divF32 func(dst, a, b []float32)
	addF64, subF64, mulF64, divF64 func(dst, a, b []float64)
	// The same with non-temporal stores, for outputs too large to stay in
	// cache (the reference simply uses the regular loops).
	addF32Stream, subF32Stream, mulF32Stream, divF32Stream func(dst, a, b []float32)
	addF64Stream, subF64Stream, mulF64Stream, divF64Stream func(dst, a, b []float64)
	addScalarF32, mulScalarF32                             func(dst, x []float32, s float32)
	addScalarF64, mulScalarF64                             func(dst, x []float64, s float64)
	axpyF32                                                func(alpha float32, x, y []float32)
	axpyF64                                                func(alpha float64, x, y []float64)
	sumF32                                                 func(x []float32) float64
	sumF64                                                 func(x []float64) float64
	dotF32                                                 func(x, y []float32) float64
	dotF64                                                 func(x, y []float64) float64
	maxF32, minF32                                         func(x []float32) float32
	maxF64, minF64                                         func(x []float64) float64

	reluF32, expF32, logF32, sigmoidF32, tanhF32 func(dst, x []float32)
	reluBackwardF32                              func(dst, grad, x []float32)
	expShiftSumF32                               func(dst, x []float32, shift float32) float64
	gatherF32U8                                  func(dst []float32, tab *[256]float32, idx []uint8)
	gatherRows16                                 func(x []float32, ldx, n int, idx *[16][]uint8, tab *[16][256]float32)
}

var elemRef = &elemKernels{
	name:   "purego",
	addF32: addRef[float32], subF32: subRef[float32], mulF32: mulRef[float32], divF32: divRef[float32],
	addF64: addRef[float64], subF64: subRef[float64], mulF64: mulRef[float64], divF64: divRef[float64],
	addF32Stream: addRef[float32], subF32Stream: subRef[float32], mulF32Stream: mulRef[float32], divF32Stream: divRef[float32],
	addF64Stream: addRef[float64], subF64Stream: subRef[float64], mulF64Stream: mulRef[float64], divF64Stream: divRef[float64],
	addScalarF32: addScalarRef[float32], mulScalarF32: mulScalarRef[float32],
	addScalarF64: addScalarRef[float64], mulScalarF64: mulScalarRef[float64],
	axpyF32: axpyRef[float32], axpyF64: axpyRef[float64],
	sumF32: sumRef[float32], sumF64: sumRef[float64],
	dotF32: dotRef[float32], dotF64: dotRef[float64],
	maxF32: maxRef[float32], minF32: minRef[float32],
	maxF64: maxRef[float64], minF64: minRef[float64],
	reluF32: reluRef, expF32: expRef, logF32: logRef, sigmoidF32: sigmoidRef, tanhF32: tanhRef,
	reluBackwardF32: reluBackwardRef,
	expShiftSumF32:  expShiftSumRef,
	gatherF32U8:     gatherF32U8Ref,
	gatherRows16:    gatherRows16Ref,
}

// gatherNTSpan is the span of rows (bytes from the first to the last)
// from which the AVX-512 GatherRows16 writes them with non-temporal
// stores, when every row's sixteen values are one aligned cache line:
// rows spread that far are not read back from L2 anyway (2 MB a core
// here), and skipping the read for ownership and the cache made batch
// prediction's 784-column rows about 2.5% faster end to end. Tests lower
// it.
var gatherNTSpan = 4 << 20

// gatherRows16Ref sets x[i*ldx+k] = tab[k][idx[k][i]] for i < n and the
// sixteen columns k, each row's sixteen values written together.
func gatherRows16Ref(x []float32, ldx, n int, idx *[16][]uint8, tab *[16][256]float32) {
	i0, i1, i2, i3 := idx[0][:n], idx[1][:n], idx[2][:n], idx[3][:n]
	i4, i5, i6, i7 := idx[4][:n], idx[5][:n], idx[6][:n], idx[7][:n]
	i8, i9, i10, i11 := idx[8][:n], idx[9][:n], idx[10][:n], idx[11][:n]
	i12, i13, i14, i15 := idx[12][:n], idx[13][:n], idx[14][:n], idx[15][:n]
	for i := range n {
		o := i * ldx
		r := x[o : o+16 : o+16]
		r[0], r[1], r[2], r[3] = tab[0][i0[i]], tab[1][i1[i]], tab[2][i2[i]], tab[3][i3[i]]
		r[4], r[5], r[6], r[7] = tab[4][i4[i]], tab[5][i5[i]], tab[6][i6[i]], tab[7][i7[i]]
		r[8], r[9], r[10], r[11] = tab[8][i8[i]], tab[9][i9[i]], tab[10][i10[i]], tab[11][i11[i]]
		r[12], r[13], r[14], r[15] = tab[12][i12[i]], tab[13][i13[i]], tab[14][i14[i]], tab[15][i15[i]]
	}
}

// gatherF32U8Ref sets dst[i] = tab[idx[i]] for every i of idx.
func gatherF32U8Ref(dst []float32, tab *[256]float32, idx []uint8) {
	dst = dst[:len(idx)]
	for i, v := range idx {
		dst[i] = tab[v]
	}
}

// elemVariants lists every implementation usable on this CPU, the reference
// first and the preferred one last; tests run all of them. elem is the one
// the exported functions use. Both are set once, during package
// initialization, and never changed.
var (
	elemVariants = append([]*elemKernels{elemRef}, asmElemVariants()...)
	elem         = elemVariants[len(elemVariants)-1]
)
