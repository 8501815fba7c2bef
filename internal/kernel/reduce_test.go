package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// softmaxRef64 computes softmax and log-softmax of one row in float64.
func softmaxRef64(x []float32) (sm, lsm []float64) {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	sm, lsm = make([]float64, len(x)), make([]float64, len(x))
	for i, v := range x {
		sm[i] = math.Exp(float64(v)-m) / s
		lsm[i] = float64(v) - m - math.Log(s)
	}
	return sm, lsm
}

func TestSoftmaxRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct{ rows, cols int }{
		{0, 5}, {3, 0}, {1, 1}, {2, 7}, {100, 10}, {33, 15}, {5, 16}, {3, 17}, {4, 33}, {7, 1000}, {300, 100}, {64, 4097},
	} {
		n := tc.rows * tc.cols
		x := randF32(rng, n, -30, 30)
		if n > 10 {
			x[3] = 1000                    // would overflow exp without the max shift
			x[n-1] = -1e30                 // exp underflows to 0
			x[n/2] = float32(math.Inf(-1)) // exp(−Inf) = 0 is a valid softmax input
		}
		sm, lsm := make([]float32, n), make([]float32, n)
		SoftmaxRowsF32(sm, x, tc.rows, tc.cols)
		LogSoftmaxRowsF32(lsm, x, tc.rows, tc.cols)
		for r := range tc.rows {
			xr := x[r*tc.cols : (r+1)*tc.cols]
			wsm, wlsm := softmaxRef64(xr)
			var total float64
			for j := range tc.cols {
				g, w := float64(sm[r*tc.cols+j]), wsm[j]
				// x−max is rounded to float32 first, so the relative error
				// grows with |x−max| = |ln w| (as in any float32 softmax).
				if math.Abs(g-w) > 1.2e-7*(8+math.Abs(math.Log(w)))*w+1e-37 {
					t.Fatalf("%dx%d softmax[%d,%d] = %v, want %v", tc.rows, tc.cols, r, j, g, w)
				}
				total += g
				gl, wl := float64(lsm[r*tc.cols+j]), wlsm[j]
				if !(math.IsInf(wl, -1) && math.IsInf(gl, -1)) && math.Abs(gl-wl) > 2e-6*math.Max(1, math.Abs(wl)) {
					t.Fatalf("%dx%d logsoftmax[%d,%d] = %v, want %v", tc.rows, tc.cols, r, j, gl, wl)
				}
			}
			if tc.cols > 0 && math.Abs(total-1) > 1e-5 {
				t.Fatalf("%dx%d row %d sums to %v", tc.rows, tc.cols, r, total)
			}
		}
		// in place gives the same results
		y := slices.Clone(x)
		SoftmaxRowsF32(y, y, tc.rows, tc.cols)
		if !slices.Equal(y, sm) {
			t.Fatalf("%dx%d in-place softmax differs", tc.rows, tc.cols)
		}
		y = slices.Clone(x)
		LogSoftmaxRowsF32(y, y, tc.rows, tc.cols)
		if !slices.Equal(y, lsm) {
			t.Fatalf("%dx%d in-place log-softmax differs", tc.rows, tc.cols)
		}
	}
}

func TestSoftmaxNaNRow(t *testing.T) {
	inf := float32(math.Inf(-1))
	for _, cols := range []int{3, 20} { // short rows and long ones
		x := make([]float32, 3*cols)
		x[0], x[1], x[2] = 1, float32(math.NaN()), 2
		for j := range cols {
			x[2*cols+j] = inf
		}
		dst := make([]float32, 3*cols)
		SoftmaxRowsF32(dst, x, 3, cols)
		for j := range cols {
			if dst[j] == dst[j] {
				t.Fatalf("%d columns: row with NaN: dst[%d] = %v, want NaN", cols, j, dst[j])
			}
			if math.Abs(float64(dst[cols+j])-1/float64(cols)) > 1e-7 {
				t.Fatalf("%d columns: uniform row: %v", cols, dst[cols:2*cols])
			}
			if v := dst[2*cols+j]; v == v {
				t.Fatalf("%d columns: row of -Inf: dst[%d] = %v, want NaN", cols, j, v)
			}
		}
	}
}

// TestFiniteF32: one NaN or infinity anywhere makes the slice non-finite;
// the largest finite values, which overflow a float32 sum, do not.
func TestFiniteF32(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 17, 1000, 100003} {
		x := make([]float32, n)
		for i := range x {
			x[i] = math.MaxFloat32
		}
		if !FiniteF32(x) {
			t.Fatalf("n=%d: MaxFloat32 everywhere called non-finite", n)
		}
		for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			for _, at := range []int{0, n / 2, n - 1} {
				if n == 0 {
					continue
				}
				y := append([]float32(nil), x...)
				y[at] = bad
				if FiniteF32(y) {
					t.Errorf("n=%d: %v at %d called finite", n, bad, at)
				}
			}
		}
	}
}
