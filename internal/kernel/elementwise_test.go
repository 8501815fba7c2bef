package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sizes covers empty, sub-vector, around one and two vector widths of both
// ISAs, and large inputs with odd tails.
var sizes = []int{0, 1, 7, 15, 16, 17, 31, 33, 1000, 4097, 1_000_000}

// testSizes returns sizes without the million-element input unless the
// exhaustive set was asked for (4097 stands for the large sizes with odd
// tails), or with -short.
func testSizes() []int {
	if testing.Short() || !exhaustive() {
		return sizes[:len(sizes)-1]
	}
	return sizes
}

func randF32(rng *rand.Rand, n int, lo, hi float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = lo + (hi-lo)*rng.Float32()
	}
	return x
}

func randF64(rng *rand.Rand, n int, lo, hi float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = lo + (hi-lo)*rng.Float64()
	}
	return x
}

// ulpDiff is the number of representable float32 values between a and b
// (0 when both are NaN, or equal).
func ulpDiff(a, b float32) int64 {
	if a != a && b != b {
		return 0
	}
	if a != a || b != b {
		return math.MaxInt64
	}
	if a == b {
		return 0
	}
	ord := func(f float32) int64 {
		u := int64(math.Float32bits(f))
		if u&(1<<31) != 0 {
			return -(u &^ (1 << 31))
		}
		return u
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return d
}

func sameF32(a, b float32) bool { return a == b || (a != a && b != b) }
func sameF64(a, b float64) bool { return a == b || (a != a && b != b) }

// forVariants runs f on every registered implementation except the reference.
func forVariants(t *testing.T, f func(t *testing.T, k *elemKernels)) {
	t.Helper()
	for _, k := range elemVariants {
		t.Run(k.name, func(t *testing.T) { f(t, k) })
	}
}

func TestVariantsRegistered(t *testing.T) {
	if elemVariants[0] != elemRef {
		t.Fatal("reference must be the first variant")
	}
	names := []string{}
	for _, k := range elemVariants {
		names = append(names, k.name)
	}
	t.Logf("elementwise variants: %v (using %s); exhaustive sizes: %v", names, elem.name, exhaustive())
}

func TestBinaryF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, op := range []struct {
			name     string
			got, ref func(dst, a, b []float32)
		}{
			{"add", k.addF32, addRef[float32]}, {"sub", k.subF32, subRef[float32]},
			{"mul", k.mulF32, mulRef[float32]}, {"div", k.divF32, divRef[float32]},
			{"addStream", k.addF32Stream, addRef[float32]}, {"subStream", k.subF32Stream, subRef[float32]},
			{"mulStream", k.mulF32Stream, mulRef[float32]}, {"divStream", k.divF32Stream, divRef[float32]},
		} {
			for _, n := range testSizes() {
				a, b := randF32(rng, n, -10, 10), randF32(rng, n, -10, 10)
				if n > 3 {
					a[1], b[2], b[3] = float32(math.NaN()), 0, float32(math.Inf(-1))
				}
				want := make([]float32, n)
				op.ref(want, a, b)
				got := make([]float32, n+1)
				got[n] = 42 // sentinel: must not be written
				op.got(got[:n], a, b)
				for i := range n {
					if !sameF32(got[i], want[i]) {
						t.Fatalf("%s n=%d: [%d] = %v, want %v", op.name, n, i, got[i], want[i])
					}
				}
				if got[n] != 42 {
					t.Fatalf("%s n=%d wrote past the end", op.name, n)
				}
				// misaligned dst (one element in): the streaming variants
				// peel to the next vector boundary
				if n > 0 {
					buf := make([]float32, n+1)
					op.got(buf[1:], a, b)
					if !slices.EqualFunc(buf[1:], want, sameF32) {
						t.Fatalf("%s n=%d misaligned dst differs", op.name, n)
					}
				}
				// in place: dst is a
				c := slices.Clone(a)
				op.got(c, c, b)
				if !slices.EqualFunc(c, want, sameF32) {
					t.Fatalf("%s n=%d in place differs", op.name, n)
				}
			}
		}
	})
}

func TestBinaryF64(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, op := range []struct {
			name     string
			got, ref func(dst, a, b []float64)
		}{
			{"add", k.addF64, addRef[float64]}, {"sub", k.subF64, subRef[float64]},
			{"mul", k.mulF64, mulRef[float64]}, {"div", k.divF64, divRef[float64]},
			{"addStream", k.addF64Stream, addRef[float64]}, {"subStream", k.subF64Stream, subRef[float64]},
			{"mulStream", k.mulF64Stream, mulRef[float64]}, {"divStream", k.divF64Stream, divRef[float64]},
		} {
			for _, n := range testSizes() {
				a, b := randF64(rng, n, -10, 10), randF64(rng, n, -10, 10)
				want := make([]float64, n)
				op.ref(want, a, b)
				got := make([]float64, n+1)
				got[n] = 42
				op.got(got[:n], a, b)
				if !slices.EqualFunc(got[:n], want, sameF64) || got[n] != 42 {
					t.Fatalf("%s n=%d differs from reference", op.name, n)
				}
			}
		}
	})
}

func TestScalarAndAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, n := range testSizes() {
			x, y := randF32(rng, n, -3, 3), randF32(rng, n, -3, 3)
			got, want := make([]float32, n), make([]float32, n)
			k.addScalarF32(got, x, 1.25)
			addScalarRef(want, x, 1.25)
			if !slices.Equal(got, want) {
				t.Fatalf("addScalarF32 n=%d", n)
			}
			k.mulScalarF32(got, x, -0.75)
			mulScalarRef(want, x, -0.75)
			if !slices.Equal(got, want) {
				t.Fatalf("mulScalarF32 n=%d", n)
			}
			// axpy: FMA in the vector variants, so compare to the exact
			// result within one float32 rounding of the operands.
			yy := slices.Clone(y)
			k.axpyF32(0.3, x, yy)
			for i := range n {
				exact := float64(y[i]) + float64(float32(0.3))*float64(x[i])
				tol := 1.2e-7 * (math.Abs(float64(y[i])) + math.Abs(0.3*float64(x[i])))
				if math.Abs(float64(yy[i])-exact) > tol {
					t.Fatalf("axpyF32 n=%d [%d] = %v, exact %v", n, i, yy[i], exact)
				}
			}

			xd, yd := randF64(rng, n, -3, 3), randF64(rng, n, -3, 3)
			gd, wd := make([]float64, n), make([]float64, n)
			k.addScalarF64(gd, xd, 1.25)
			addScalarRef(wd, xd, 1.25)
			if !slices.Equal(gd, wd) {
				t.Fatalf("addScalarF64 n=%d", n)
			}
			k.mulScalarF64(gd, xd, -0.75)
			mulScalarRef(wd, xd, -0.75)
			if !slices.Equal(gd, wd) {
				t.Fatalf("mulScalarF64 n=%d", n)
			}
			yyd := slices.Clone(yd)
			k.axpyF64(0.3, xd, yyd)
			for i := range n {
				exact := yd[i] + 0.3*xd[i]
				if math.Abs(yyd[i]-exact) > 2.3e-16*(math.Abs(yd[i])+math.Abs(0.3*xd[i])) {
					t.Fatalf("axpyF64 n=%d [%d] = %v, exact %v", n, i, yyd[i], exact)
				}
			}
		}
	})
}

func TestReductions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, n := range testSizes() {
			x, y := randF32(rng, n, -1, 1), randF32(rng, n, -1, 1)
			var abs, absDot float64
			for i := range n {
				abs += math.Abs(float64(x[i]))
				absDot += math.Abs(float64(x[i]) * float64(y[i]))
			}
			// Both accumulate in float64; only the order differs.
			if got, want := k.sumF32(x), sumRef(x); math.Abs(got-want) > 1e-13*abs {
				t.Fatalf("sumF32 n=%d: %v, want %v", n, got, want)
			}
			if got, want := k.dotF32(x, y), dotRef(x, y); math.Abs(got-want) > 1e-13*absDot {
				t.Fatalf("dotF32 n=%d: %v, want %v", n, got, want)
			}
			xd, yd := randF64(rng, n, -1, 1), randF64(rng, n, -1, 1)
			if got, want := k.sumF64(xd), sumRef(xd); math.Abs(got-want) > 1e-13*float64(n+1) {
				t.Fatalf("sumF64 n=%d: %v, want %v", n, got, want)
			}
			if got, want := k.dotF64(xd, yd), dotRef(xd, yd); math.Abs(got-want) > 1e-13*float64(n+1) {
				t.Fatalf("dotF64 n=%d: %v, want %v", n, got, want)
			}
			for _, c := range []struct {
				name     string
				got, ref func([]float32) float32
			}{{"maxF32", k.maxF32, maxRef[float32]}, {"minF32", k.minF32, minRef[float32]}} {
				if g, w := c.got(x), c.ref(x); !sameF32(g, w) {
					t.Fatalf("%s n=%d: %v, want %v", c.name, n, g, w)
				}
				// a NaN anywhere, including the tail, wins
				for _, at := range []int{0, n / 2, n - 1} {
					if n == 0 {
						break
					}
					z := slices.Clone(x)
					z[at] = float32(math.NaN())
					if g := c.got(z); g == g {
						t.Fatalf("%s n=%d NaN at %d: got %v", c.name, n, at, g)
					}
				}
				// an extreme value at the very end (tail) is found
				if n > 0 {
					z := slices.Clone(x)
					z[n-1] = 7 * float32(map[bool]int{true: 1, false: -1}[c.name == "maxF32"])
					if g, w := c.got(z), c.ref(z); g != w {
						t.Fatalf("%s n=%d extreme at end: %v, want %v", c.name, n, g, w)
					}
				}
			}
			for _, c := range []struct {
				name     string
				got, ref func([]float64) float64
			}{{"maxF64", k.maxF64, maxRef[float64]}, {"minF64", k.minF64, minRef[float64]}} {
				if g, w := c.got(xd), c.ref(xd); !sameF64(g, w) {
					t.Fatalf("%s n=%d: %v, want %v", c.name, n, g, w)
				}
				if n > 0 {
					z := slices.Clone(xd)
					z[n/3] = math.NaN()
					if g := c.got(z); g == g {
						t.Fatalf("%s n=%d: NaN lost", c.name, n)
					}
				}
			}
		}
	})
}

func TestReluAndBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, n := range testSizes() {
			x, g := randF32(rng, n, -1, 1), randF32(rng, n, -5, 5)
			if n > 4 {
				x[0], x[1], x[2], x[3] = float32(math.NaN()), 0, float32(math.Copysign(0, -1)), float32(math.Inf(1))
			}
			got, want := make([]float32, n), make([]float32, n)
			k.reluF32(got, x)
			reluRef(want, x)
			if !slices.EqualFunc(got, want, sameF32) {
				t.Fatalf("relu n=%d: %v want %v", n, head(got), head(want))
			}
			k.reluBackwardF32(got, g, x)
			reluBackwardRef(want, g, x)
			if !slices.EqualFunc(got, want, sameF32) {
				t.Fatalf("reluBackward n=%d: %v want %v", n, head(got), head(want))
			}
			gg := slices.Clone(g) // dst aliases grad
			k.reluBackwardF32(gg, gg, x)
			if !slices.EqualFunc(gg, want, sameF32) {
				t.Fatalf("reluBackward in place n=%d", n)
			}
		}
	})
}

// specialPositions returns where TestReluSpecials and TestExtremeSpecials
// put a special value in a slice of n: first, middle, last, and either side
// of the end of every variant's vector body (the tail starts at a multiple
// of 4, 8 or 16).
func specialPositions(n int) []int {
	var at []int
	for _, i := range []int{0, n / 2, n - 1, n&^15 - 1, n &^ 15, n&^7 - 1, n &^ 7, n&^3 - 1, n &^ 3} {
		if i >= 0 && i < n && !slices.Contains(at, i) {
			at = append(at, i)
		}
	}
	return at
}

// TestReluSpecials pins ReLU and its gradient at NaN, ±Inf and ±0 to
// PyTorch 1.13 (torch.relu, threshold_backward):
//
//	x      relu(x)  grad (upstream 3)
//	NaN    NaN      3
//	+Inf   +Inf     3
//	−Inf   0        0
//	+0     +0       0
//	−0     −0       0
func TestReluSpecials(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		x, y, dx float32
	}{{nan, nan, 3}, {inf, inf, 3}, {-inf, 0, 0}, {0, 0, 0}, {negZero, negZero, 0}} {
		forVariants(t, func(t *testing.T, k *elemKernels) {
			for _, n := range []int{1, 3, 8, 15, 16, 17, 33, 64, 100} {
				for _, at := range specialPositions(n) {
					x := make([]float32, n)
					g := make([]float32, n)
					for i := range x {
						x[i], g[i] = float32(i%5)-2, 3 // −2…2: both sides of the kink
					}
					x[at] = c.x
					y, dx := make([]float32, n), make([]float32, n)
					k.reluF32(y, x)
					k.reluBackwardF32(dx, g, x)
					if got := y[at]; math.Float32bits(got) != math.Float32bits(c.y) && !(got != got && c.y != c.y) {
						t.Fatalf("relu n=%d x[%d]=%v: %v, want %v", n, at, c.x, got, c.y)
					}
					if got := dx[at]; got != c.dx {
						t.Fatalf("reluBackward n=%d x[%d]=%v: %v, want %v", n, at, c.x, got, c.dx)
					}
					for i := range x {
						if i == at {
							continue
						}
						if want := max(x[i], 0); y[i] != want {
							t.Fatalf("relu n=%d special at %d: y[%d] = %v, want %v", n, at, i, y[i], want)
						}
					}
				}
			}
		})
	}
}

// TestExtremeSpecials puts NaN and ±Inf at every special position: a NaN
// anywhere makes max and min NaN (and ArgMax/ArgMin return the first NaN,
// as torch.argmax does); an infinity is found wherever it is.
func TestExtremeSpecials(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, n := range []int{1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000} {
			for _, at := range specialPositions(n) {
				x := make([]float64, n)
				for i := range x {
					x[i] = float64(i%7) - 3
				}
				for _, v := range []float64{nan, inf, -inf} {
					z := slices.Clone(x)
					z[at] = v
					z32 := make([]float32, n)
					for i := range z {
						z32[i] = float32(z[i])
					}
					wantMax, wantMin := z[0], z[0]
					for _, e := range z { // Go's max and min propagate NaN
						wantMax, wantMin = max(wantMax, e), min(wantMin, e)
					}
					for _, c := range []struct {
						name      string
						got, want float64
					}{
						{"maxF64", k.maxF64(z), wantMax}, {"minF64", k.minF64(z), wantMin},
						{"maxF32", float64(k.maxF32(z32)), wantMax}, {"minF32", float64(k.minF32(z32)), wantMin},
					} {
						if !sameF64(c.got, c.want) {
							t.Fatalf("%s n=%d x[%d]=%v: %v, want %v", c.name, n, at, v, c.got, c.want)
						}
					}
				}
			}
		}
	})
}

func head(x []float32) []float32 { return x[:min(len(x), 8)] }

// expInputs spans the whole float32 domain of exp: underflow to 0 through
// subnormal results, around 0, to overflow, plus NaN and ±Inf.
func expInputs() []float32 {
	var x []float32
	for v := -110.0; v <= 95; v += 0.0137 {
		x = append(x, float32(v))
	}
	for v := -1e-3; v <= 1e-3; v += 1.3e-6 {
		x = append(x, float32(v))
	}
	x = append(x, 0, float32(math.Copysign(0, -1)), 88.72, 88.7228, 88.7229, 88.73, -87.33, -87.34,
		-103.9, -103.97, -104, -104.1, 1e-30, -1e-30, 1e30, -1e30,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32)
	return x
}

// logInputs spans the domain of log: subnormals, tiny and huge values, the
// neighbourhood of 1 (where ln x is near 0), and the special values.
func logInputs() []float32 {
	var x []float32
	for v := 0x1p-149; v < math.MaxFloat32/1.02; v *= 1.013 { // float64 steps: float32 would stall in the subnormals
		x = append(x, float32(v))
	}
	for v := 0.99; v <= 1.01; v += 1.7e-6 {
		x = append(x, float32(v))
	}
	for v := 0.5; v <= 2; v += 1e-4 {
		x = append(x, float32(v))
	}
	x = append(x, 0, float32(math.Copysign(0, -1)), -1, -1e-30, math.MaxFloat32, 0x1p-126, 0x1p-127, 1.4142135, 1.4142137,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)))
	return x
}

func TestLog(t *testing.T) {
	x := logInputs()
	want := make([]float32, len(x))
	logRef(want, x)
	forVariants(t, func(t *testing.T, k *elemKernels) {
		got := make([]float32, len(x))
		k.logF32(got, x)
		var worst int64
		worstAt := 0
		for i := range x {
			if d := ulpDiff(got[i], want[i]); d > worst {
				worst, worstAt = d, i
			}
		}
		if worst > 2 {
			t.Fatalf("log: %d ulp at x=%v: got %v, want %v", worst, x[worstAt], got[worstAt], want[worstAt])
		}
		t.Logf("log/%s: max error %d ulp over %d inputs", k.name, worst, len(x))
		for _, n := range []int{1, 7, 17, 33, 4097} {
			xs := logInputs()[:n]
			g, w := make([]float32, n), make([]float32, n)
			k.logF32(g, xs)
			logRef(w, xs)
			for i := range n {
				if ulpDiff(g[i], w[i]) > 2 {
					t.Fatalf("log n=%d [%d] x=%v: %v want %v", n, i, xs[i], g[i], w[i])
				}
			}
		}
	})
}

func TestTranscendentals(t *testing.T) {
	x := expInputs()
	rng := rand.New(rand.NewPCG(11, 12))
	x = append(x, randF32(rng, 4097, -20, 20)...)
	for _, c := range []struct {
		name   string
		pick   func(k *elemKernels) func(dst, x []float32)
		ref    func(dst, x []float32)
		maxULP int64
	}{
		{"exp", func(k *elemKernels) func(dst, x []float32) { return k.expF32 }, expRef, 2},
		{"sigmoid", func(k *elemKernels) func(dst, x []float32) { return k.sigmoidF32 }, sigmoidRef, 3},
		{"tanh", func(k *elemKernels) func(dst, x []float32) { return k.tanhF32 }, tanhRef, 3},
	} {
		want := make([]float32, len(x))
		c.ref(want, x)
		forVariants(t, func(t *testing.T, k *elemKernels) {
			got := make([]float32, len(x))
			c.pick(k)(got, x)
			var worst int64
			worstAt := 0
			for i := range x {
				// Subnormal results: judge by absolute error in units of the
				// smallest normal's ulp (the polynomial is accurate in
				// relative terms only down to the normal range).
				d := ulpDiff(got[i], want[i])
				if math.Abs(float64(want[i])) < 0x1p-126 && math.Abs(float64(got[i])-float64(want[i])) <= 2*0x1p-149 {
					d = 0
				}
				if d > worst {
					worst, worstAt = d, i
				}
			}
			if worst > c.maxULP {
				t.Fatalf("%s: %d ulp at x=%v: got %v, want %v", c.name, worst, x[worstAt], got[worstAt], want[worstAt])
			}
			t.Logf("%s/%s: max error %d ulp over %d inputs", c.name, k.name, worst, len(x))
			// every size, including tails
			for _, n := range testSizes() {
				xs := randF32(rng, n, -30, 30)
				g, w := make([]float32, n), make([]float32, n)
				c.pick(k)(g, xs)
				c.ref(w, xs)
				for i := range n {
					if ulpDiff(g[i], w[i]) > c.maxULP {
						t.Fatalf("%s n=%d [%d] x=%v: %v want %v", c.name, n, i, xs[i], g[i], w[i])
					}
				}
			}
		})
	}
}

func TestExpShiftSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	forVariants(t, func(t *testing.T, k *elemKernels) {
		for _, n := range testSizes() {
			x := randF32(rng, n, -20, 5)
			got, want := make([]float32, n), make([]float32, n)
			gs := k.expShiftSumF32(got, x, 3)
			ws := expShiftSumRef(want, x, 3)
			var exact float64
			for i := range n {
				if ulpDiff(got[i], want[i]) > 2 {
					t.Fatalf("n=%d [%d]: %v want %v", n, i, got[i], want[i])
				}
				exact += float64(want[i])
			}
			// float64 accumulation in both; compare each to the exact sum.
			tol := 1e-6*exact + 1e-30
			if math.Abs(gs-exact) > tol || math.Abs(ws-exact) > tol {
				t.Fatalf("n=%d sum %v (ref %v), exact %v", n, gs, ws, exact)
			}
		}
	})
}

// The exported functions (with their parallel split) against the reference,
// on sizes above the parallel threshold and with aliasing.
func TestExportedParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 5, 2*grainMem - 1, 2*grainMem + 77, 5*grainMem + 3, streamMin + 5} {
		a, b := randF32(rng, n, -2, 2), randF32(rng, n, -2, 2)
		got, want := make([]float32, n), make([]float32, n)
		check := func(name string) {
			t.Helper()
			for i := range n {
				if ulpDiff(got[i], want[i]) > 2 {
					t.Fatalf("%s n=%d [%d]: %v want %v", name, n, i, got[i], want[i])
				}
			}
		}
		AddF32(got, a, b)
		addRef(want, a, b)
		check("AddF32")
		SubF32(got, a, b)
		subRef(want, a, b)
		check("SubF32")
		MulF32(got, a, b)
		mulRef(want, a, b)
		check("MulF32")
		DivF32(got, a, b)
		divRef(want, a, b)
		check("DivF32")
		ExpF32(got, a)
		expRef(want, a)
		check("ExpF32")
		TanhF32(got, a)
		tanhRef(want, a)
		check("TanhF32")
		SigmoidF32(got, a)
		sigmoidRef(want, a)
		check("SigmoidF32")
		ReluF32(got, a)
		reluRef(want, a)
		check("ReluF32")
		ReluBackwardF32(got, b, a)
		reluBackwardRef(want, b, a)
		check("ReluBackwardF32")
		LogF32(got, b)
		for i := range n {
			want[i] = float32(math.Log(float64(b[i])))
		}
		check("LogF32")
		copy(got, b)
		AxpyF32(2, a, got)
		copy(want, b)
		axpyRef(2, a, want)
		check("AxpyF32")
		copy(got, a)
		ScaleF32(3, got)
		mulScalarRef(want, a, 3)
		check("ScaleF32")
		AddScalarF32(got, a, 1)
		addScalarRef(want, a, 1)
		check("AddScalarF32")

		if s, w := SumF32(a), float32(sumRef(a)); ulpDiff(s, w) > 1 && math.Abs(float64(s-w)) > 1e-9 {
			t.Fatalf("SumF32 n=%d: %v want %v", n, s, w)
		}
		if s, w := DotF32(a, b), float32(dotRef(a, b)); ulpDiff(s, w) > 1 && math.Abs(float64(s-w)) > 1e-9 {
			t.Fatalf("DotF32 n=%d: %v want %v", n, s, w)
		}
		if n > 0 {
			a[n-1] = 9
			if m := MaxF32(a); m != 9 {
				t.Fatalf("MaxF32 n=%d = %v", n, m)
			}
			if i := ArgMaxF32(a); i != n-1 {
				t.Fatalf("ArgMaxF32 n=%d = %d", n, i)
			}
			a[n/2] = -9
			if m, i := MinF32(a), ArgMinF32(a); m != -9 || i != n/2 {
				t.Fatalf("MinF32/ArgMinF32 n=%d = %v, %d", n, m, i)
			}
			a[n/3] = float32(math.NaN())
			if m, i := MaxF32(a), ArgMaxF32(a); m == m || i != n/3 {
				t.Fatalf("MaxF32/ArgMaxF32 with NaN n=%d = %v, %d", n, m, i)
			}
		}

		ad, bd := randF64(rng, n, -2, 2), randF64(rng, n, -2, 2)
		gd, wd := make([]float64, n), make([]float64, n)
		for _, c := range []struct {
			name string
			f    func(dst, a, b []float64)
			r    func(dst, a, b []float64)
		}{{"AddF64", AddF64, addRef[float64]}, {"SubF64", SubF64, subRef[float64]}, {"MulF64", MulF64, mulRef[float64]}, {"DivF64", DivF64, divRef[float64]}} {
			c.f(gd, ad, bd)
			c.r(wd, ad, bd)
			if !slices.Equal(gd, wd) {
				t.Fatalf("%s n=%d", c.name, n)
			}
		}
		if s, w := SumF64(ad), sumRef(ad); math.Abs(s-w) > 1e-12*float64(n+1) {
			t.Fatalf("SumF64 n=%d", n)
		}
		if s, w := DotF64(ad, bd), dotRef(ad, bd); math.Abs(s-w) > 1e-12*float64(n+1) {
			t.Fatalf("DotF64 n=%d", n)
		}
		if m, w := MaxF64(ad), maxRef(ad); m != w {
			t.Fatalf("MaxF64 n=%d", n)
		}
		if m, w := MinF64(ad), minRef(ad); m != w {
			t.Fatalf("MinF64 n=%d", n)
		}
		if n > 0 {
			if i := ArgMaxF64(ad); ad[i] != maxRef(ad) {
				t.Fatalf("ArgMaxF64 n=%d", n)
			}
			if i := ArgMinF64(ad); ad[i] != minRef(ad) {
				t.Fatalf("ArgMinF64 n=%d", n)
			}
		}
		copy(gd, bd)
		AxpyF64(0.5, ad, gd)
		ScaleF64(2, gd)
		MulScalarF64(gd, gd, 0.5)
		AddScalarF64(gd, gd, -1)
		for i := range n {
			if w := bd[i] + 0.5*ad[i] - 1; math.Abs(gd[i]-w) > 1e-15*4 {
				t.Fatalf("F64 scalar chain n=%d [%d]: %v want %v", n, i, gd[i], w)
			}
		}
	}
}

// Sum of 16 Mi float32 values must match the float64 sum closely.
func TestSumAccuracyLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("16 Mi elements")
	}
	const n = 1 << 24
	rng := rand.New(rand.NewPCG(17, 18))
	x := randF32(rng, n, 0, 1)
	x[12345] = 1e6 // a large value that naive float32 running sums would swamp
	var exact float64
	for _, v := range x {
		exact += float64(v)
	}
	got := SumF32(x)
	if d := ulpDiff(got, float32(exact)); d > 1 {
		t.Fatalf("SumF32 of 16Mi = %v, float64 sum %v (%d ulp)", got, exact, d)
	}
	if w := SumF32Wide(x); math.Abs(w-exact) > 1e-9*exact {
		t.Fatalf("SumF32Wide = %v, float64 sum %v", w, exact)
	}
	// A plain float32 running sum is far off, which is why we accumulate wide.
	var naive float32
	for _, v := range x {
		naive += v
	}
	t.Logf("16Mi sum: kernel %v, float64 %v, naive float32 %v", got, exact, naive)
}

func TestLengthPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"AddF32":   func() { AddF32(make([]float32, 3), make([]float32, 2), make([]float32, 3)) },
		"AxpyF32":  func() { AxpyF32(1, make([]float32, 2), make([]float32, 3)) },
		"DotF64":   func() { DotF64(make([]float64, 3), make([]float64, 2)) },
		"ArgMax":   func() { ArgMaxF32(nil) },
		"Softmax":  func() { SoftmaxRowsF32(make([]float32, 5), make([]float32, 6), 2, 3) },
		"ExpShort": func() { ExpF32(make([]float32, 3), nil) },
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil {
					t.Errorf("%s: no panic", name)
					return
				}
				if s := fmt.Sprint(r); len(s) < 10 {
					t.Errorf("%s: uninformative panic %q", name, s)
				}
			}()
			f()
		}()
	}
}

func ExampleAddF32() {
	a := []float32{1, 2, 3}
	b := []float32{10, 20, 30}
	c := make([]float32, 3)
	AddF32(c, a, b)
	fmt.Println(c, SumF32(c), MaxF32(c), ArgMaxF32(c))
	// Output: [11 22 33] 66 33 2
}
