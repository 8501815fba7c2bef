//go:build !purego

package kernel

import "github.com/fathom-ml/fathom/internal/cpufeat"

func init() {
	switch {
	case cpufeat.Has(cpufeat.AVX512):
		gemvF32 = gemvAVX512
	case cpufeat.Has(cpufeat.AVX2FMA):
		gemvF32 = gemvAVX2
	}
}

func gemvAVX512(y, w, x, bias []float32) { gemvBlocked(y, w, x, bias, true) }
func gemvAVX2(y, w, x, bias []float32)   { gemvBlocked(y, w, x, bias, false) }

// gemvVariants lists the assembly drivers this CPU can run, for tests.
func gemvVariants() map[string]func(y, w, x, bias []float32) {
	vs := map[string]func(y, w, x, bias []float32){}
	if cpufeat.Has(cpufeat.AVX2FMA) {
		vs["avx2"] = gemvAVX2
	}
	if cpufeat.Has(cpufeat.AVX512) {
		vs["avx512"] = gemvAVX512
	}
	return vs
}

// gemvBlocked drives the four-row kernel gemv4F32AVX512 (or the AVX2 one)
// over the first multiple-of-the-vector-width columns; the remaining
// columns are finished here. Rows left over after the blocks of four are
// recomputed as part of the last four rows (only the new ones are stored),
// so one kernel serves every height of at least four. The kernels are
// called directly (not through a func value) so the scratch s stays on the
// stack.
func gemvBlocked(y, w, x, bias []float32, wide bool) {
	m, n := len(y), len(x)
	lanes := 8
	if wide {
		lanes = 16
	}
	k := n &^ (lanes - 1)
	if m < 4 || k == 0 {
		gemvRef(y, w, x, bias)
		return
	}
	var s [4]float32
	for r := 0; r < m; r += 4 {
		from := 0
		if r+4 > m {
			from = r + 4 - m
			r = m - 4
		}
		if wide {
			gemv4F32AVX512(w[r*n:], n, x[:k], s[:])
		} else {
			gemv4F32AVX2(w[r*n:], n, x[:k], s[:])
		}
		for q := from; q < 4; q++ {
			i := r + q
			y[i] = dotRowF32(w[i*n+k:(i+1)*n], x[k:], s[q]+biasAt(bias, i))
		}
	}
}
