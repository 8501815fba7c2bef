package kernel

// GemvF32 computes the matrix-vector product y[i] = Σ_j w[i·n+j]·x[j]
// (+ bias[i]) for the len(y)×n row-major matrix w, n = len(x), accumulating
// in float32 (unlike DotF32, which accumulates in float64: here every
// product is a float32 FMA, twice as many lanes per instruction). bias may
// be nil, and it may be y itself (y[i] += row i · x). w must hold at least
// len(y)·n elements.
//
// The assembly kernels compute four rows per pass so each vector of x is
// loaded once for four rows; see gemv4F32AVX512 in _asm_elem/gemv_asm.go.
func GemvF32(y, w, x, bias []float32) {
	m, n := len(y), len(x)
	checkLen("GemvF32", "w", len(w), m*n)
	if bias != nil {
		checkLen("GemvF32", "bias", len(bias), m)
	}
	gemvF32(y, w, x, bias)
}

// gemvF32 is the implementation GemvF32 runs: the assembly driver where the
// CPU supports one, else gemvRef.
var gemvF32 = gemvRef

// gemvRef is the reference GemvF32: one float32 dot product per row,
// accumulated left to right.
func gemvRef(y, w, x, bias []float32) {
	n := len(x)
	for i := range y {
		y[i] = dotRowF32(w[i*n:(i+1)*n], x, biasAt(bias, i))
	}
}

// biasAt returns bias[i], or 0 when there is no bias.
func biasAt(bias []float32, i int) float32 {
	if bias == nil {
		return 0
	}
	return bias[i]
}

// dotRowF32 returns s + Σ a[j]·b[j] in float32.
func dotRowF32(a, b []float32, s float32) float32 {
	b = b[:len(a)]
	for j, v := range a {
		s += v * b[j]
	}
	return s
}
