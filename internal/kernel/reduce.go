package kernel

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// Reductions over flat slices, and row-wise softmax.
//
// Sums and dot products accumulate in float64 (the vector variants with
// eight independent vector accumulators, then the chunks of a parallel
// reduction are added in order), so a float32 sum of 16 Mi elements is
// accurate to about 1e-7 relative to the exact sum of its float32 inputs.
// Parallel results depend only on the input and GOMAXPROCS.

// reduce1 runs a float64-valued reduction over x with splitReduce; small
// inputs call f directly, without allocating a closure.
func reduce1[T float](f func(x []T) float64, x []T) float64 {
	if len(x) < 2*grainMem {
		return f(x)
	}
	return splitReduce(len(x), grainMem, func(lo, hi int) float64 { return f(x[lo:hi]) })
}

// reduce2 is reduce1 for two inputs of which the first sets the length.
func reduce2[T float](f func(x, y []T) float64, x, y []T) float64 {
	if len(x) < 2*grainMem {
		return f(x, y[:len(x)])
	}
	return splitReduce(len(x), grainMem, func(lo, hi int) float64 { return f(x[lo:hi], y[lo:hi]) })
}

// SumF32 returns the sum of x, accumulated in float64 and rounded once.
func SumF32(x []float32) float32 {
	return float32(reduce1(elem.sumF32, x))
}

// SumF32Wide returns the sum of x accumulated and returned in float64.
func SumF32Wide(x []float32) float64 {
	return reduce1(elem.sumF32, x)
}

// FiniteF32 reports whether every element of x is finite (neither NaN nor
// infinite), in one vectorized pass: the float64 sum of float32 values
// cannot overflow, so it is finite exactly when they all are.
func FiniteF32(x []float32) bool {
	s := SumF32Wide(x)
	return !math.IsNaN(s) && !math.IsInf(s, 0)
}

// GatherF32U8 sets dst[i] = tab[idx[i]] for every index of idx (the
// values of a dictionary-encoded column from its byte indices); dst must
// be at least as long as idx.
func GatherF32U8(dst []float32, tab *[256]float32, idx []uint8) {
	checkLen("GatherF32U8", "dst", len(dst), len(idx))
	elem.gatherF32U8(dst, tab, idx)
}

// GatherRows16 sets x[i*ldx+k] = tab[k][idx[k][i]] for i < n and the
// sixteen columns k: sixteen dictionary-encoded columns looked up and
// transposed into rows in one pass. Every idx[k] must hold n indices and
// x (n-1)·ldx+16 values.
func GatherRows16(x []float32, ldx, n int, idx *[16][]uint8, tab *[16][256]float32) {
	if n <= 0 {
		return
	}
	for k := range idx {
		if len(idx[k]) < n {
			panic(fmt.Sprintf("kernel.GatherRows16: len(idx[%d]) = %d, shorter than %d", k, len(idx[k]), n))
		}
	}
	if ldx < 16 {
		panic(fmt.Sprintf("kernel.GatherRows16: ldx = %d, less than 16", ldx))
	}
	checkLen("GatherRows16", "x", len(x), (n-1)*ldx+16)
	elem.gatherRows16(x, ldx, n, idx, tab)
}

// SumF64 returns the sum of x.
func SumF64(x []float64) float64 {
	return reduce1(elem.sumF64, x)
}

// DotF32 returns Σ a[i]·b[i] over len(a) elements, accumulated in float64
// and rounded once. b must be at least as long as a.
func DotF32(a, b []float32) float32 {
	checkLen("DotF32", "b", len(b), len(a))
	return float32(reduce2(elem.dotF32, a, b))
}

// DotF64 returns Σ a[i]·b[i] over len(a) elements. b must be at least as
// long as a.
func DotF64(a, b []float64) float64 {
	checkLen("DotF64", "b", len(b), len(a))
	return reduce2(elem.dotF64, a, b)
}

// extreme runs a max or min kernel over x in parallel chunks; NaN wins.
func extreme[T float](x []T, empty T, kern func([]T) T, pick func(a, b T) T) T {
	n := len(x)
	if n < 2*grainMem {
		return kern(x)
	}
	nb := (n + block - 1) / block
	return parallel.MapReduce(nb, grainMem/block, empty,
		func(lo, hi int) T { return kern(x[lo*block : min(hi*block, n)]) },
		func(a, b T) T {
			if a != a {
				return a
			}
			if b != b {
				return b
			}
			return pick(a, b)
		})
}

// MaxF32 returns the largest element of x (NaN if any element is NaN,
// −Inf for an empty slice).
func MaxF32(x []float32) float32 {
	return extreme(x, float32(math.Inf(-1)), elem.maxF32, func(a, b float32) float32 { return max(a, b) })
}

// MinF32 returns the smallest element of x (NaN if any element is NaN,
// +Inf for an empty slice).
func MinF32(x []float32) float32 {
	return extreme(x, float32(math.Inf(1)), elem.minF32, func(a, b float32) float32 { return min(a, b) })
}

// MaxF64 returns the largest element of x (NaN if any element is NaN,
// −Inf for an empty slice).
func MaxF64(x []float64) float64 {
	return extreme(x, math.Inf(-1), elem.maxF64, func(a, b float64) float64 { return max(a, b) })
}

// MinF64 returns the smallest element of x (NaN if any element is NaN,
// +Inf for an empty slice).
func MinF64(x []float64) float64 {
	return extreme(x, math.Inf(1), elem.minF64, func(a, b float64) float64 { return min(a, b) })
}

// firstIndex returns the index of the first element equal to m, or of the
// first NaN when m is NaN.
func firstIndex[T float](x []T, m T) int {
	if m != m {
		for i, v := range x {
			if v != v {
				return i
			}
		}
	}
	for i, v := range x {
		if v == m {
			return i
		}
	}
	return -1 // unreachable when m came from x
}

// ArgMaxF32 returns the index of the first largest element of x; a NaN
// counts as larger than everything (as in PyTorch), so the first NaN wins.
// It panics on an empty slice.
func ArgMaxF32(x []float32) int {
	if len(x) == 0 {
		panic("kernel.ArgMaxF32: empty slice")
	}
	return firstIndex(x, MaxF32(x))
}

// ArgMinF32 is ArgMaxF32 for the smallest element (the first NaN wins too).
func ArgMinF32(x []float32) int {
	if len(x) == 0 {
		panic("kernel.ArgMinF32: empty slice")
	}
	return firstIndex(x, MinF32(x))
}

// ArgMaxF64 is ArgMaxF32 for float64.
func ArgMaxF64(x []float64) int {
	if len(x) == 0 {
		panic("kernel.ArgMaxF64: empty slice")
	}
	return firstIndex(x, MaxF64(x))
}

// ArgMinF64 is ArgMinF32 for float64.
func ArgMinF64(x []float64) int {
	if len(x) == 0 {
		panic("kernel.ArgMinF64: empty slice")
	}
	return firstIndex(x, MinF64(x))
}

func checkRows(op string, dst, x []float32, rows, cols int) {
	if rows < 0 || cols < 0 {
		panic(fmt.Sprintf("kernel.%s: negative shape %d×%d", op, rows, cols))
	}
	checkLen(op, "x", len(x), rows*cols)
	checkLen(op, "dst", len(dst), rows*cols)
}

// rowGrain is how many rows of cols elements make a chunk worth a core.
func rowGrain(cols int) int { return max(1, grainCompute/max(cols, 1)) }

// SoftmaxRowsF32 sets each row of dst (rows×cols, row-major, contiguous) to
// the softmax of the same row of x: dst[r,j] = e^(x[r,j]−m_r) / Σ_k
// e^(x[r,k]−m_r), with m_r the row maximum so no exponent overflows
// (the standard max-subtraction trick). A row holding a NaN, or only
// −Inf, becomes NaN. dst may be x itself.
func SoftmaxRowsF32(dst, x []float32, rows, cols int) {
	checkRows("SoftmaxRowsF32", dst, x, rows, cols)
	if cols == 0 {
		return
	}
	if cols < softmaxNarrow {
		parallel.For(rows, rowGrain(cols), func(lo, hi int) { softmaxNarrowRows(dst, x, lo, hi, cols) })
		return
	}
	parallel.For(rows, rowGrain(cols), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dr := x[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols]
			m := elem.maxF32(xr)
			s := elem.expShiftSumF32(dr, xr, m)
			elem.mulScalarF32(dr, dr, float32(1/s))
		}
	})
}

// softmaxNarrow is the row length below which SoftmaxRowsF32 takes rows
// a block at a time (softmaxNarrowRows): a row shorter than a vector
// would otherwise cost three kernel calls for a few values (a 10-class
// classifier's outputs: about 140 ns a row).
const softmaxNarrow = 16

// softmaxNarrowRows is SoftmaxRowsF32 of rows lo to hi of short rows:
// each row shifted by its maximum, the exponentials of the whole block in
// one vector pass (the same exp as the wide rows'), then each row's sum
// in float64, in order, and its scaling.
func softmaxNarrowRows(dst, x []float32, lo, hi, cols int) {
	for r := lo; r < hi; r++ {
		xr, dr := x[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols:(r+1)*cols]
		m := maxRef(xr)
		for j, v := range xr {
			dr[j] = v - m
		}
	}
	block := dst[lo*cols : hi*cols]
	elem.expF32(block, block)
	for r := lo; r < hi; r++ {
		dr := dst[r*cols : (r+1)*cols : (r+1)*cols]
		var s float64
		for _, v := range dr {
			s += float64(v)
		}
		inv := float32(1 / s)
		for j := range dr {
			dr[j] *= inv
		}
	}
}

// LogSoftmaxRowsF32 sets each row of dst to the log-softmax of the same row
// of x: dst[r,j] = x[r,j] − m_r − ln Σ_k e^(x[r,k]−m_r), with m_r the row
// maximum. dst may be x itself.
func LogSoftmaxRowsF32(dst, x []float32, rows, cols int) {
	checkRows("LogSoftmaxRowsF32", dst, x, rows, cols)
	if cols == 0 {
		return
	}
	inPlace := rows > 0 && &dst[0] == &x[0]
	parallel.For(rows, rowGrain(cols), func(lo, hi int) {
		var scratch []float32
		if inPlace {
			scratch = make([]float32, cols)
		}
		for r := lo; r < hi; r++ {
			xr, dr := x[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols]
			tmp := dr
			if inPlace {
				tmp = scratch
			}
			m := elem.maxF32(xr)
			s := elem.expShiftSumF32(tmp, xr, m)
			lse := m + float32(math.Log(s))
			elem.addScalarF32(dr, xr, -lse)
		}
	})
}
