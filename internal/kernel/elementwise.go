package kernel

import "math"

// The elementwise kernels below take slices of equal length; dst may alias
// an input.

// AddF32 sets dst[i] = a[i] + b[i].
func AddF32(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

// MulF32 sets dst[i] = a[i] * b[i].
func MulF32(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// AxpyF32 sets y[i] += alpha * x[i].
func AxpyF32(alpha float32, x, y []float32) {
	for i := range y {
		y[i] += alpha * x[i]
	}
}

// ReluF32 sets dst[i] = max(x[i], 0).
func ReluF32(dst, x []float32) {
	for i := range dst {
		if x[i] > 0 {
			dst[i] = x[i]
		} else {
			dst[i] = 0
		}
	}
}

// ExpF32 sets dst[i] = exp(x[i]).
func ExpF32(dst, x []float32) {
	for i := range dst {
		dst[i] = float32(math.Exp(float64(x[i])))
	}
}

// SumF32 returns the sum of x, accumulated in float64.
func SumF32(x []float32) float32 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return float32(s)
}

// MaxF32 returns the largest element of x (NaN if any element is NaN,
// -Inf for an empty slice).
func MaxF32(x []float32) float32 {
	m := float32(math.Inf(-1))
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
