package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// awkwardSizes cross every vector width and unroll boundary.
var awkwardSizes = []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 100, 1000, 4099}

func randF32(r *rand.Rand, n int, scale float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64() * scale)
	}
	return s
}

func absF32(s []float32) []float32 {
	for i := range s {
		s[i] = float32(math.Abs(float64(s[i])))
	}
	return s
}

// closeF32 reports whether a and b agree to a few float32 ulps, relative
// to scale.
func closeF32(a, b []float32, tol float64) (int, bool) {
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if d > tol*math.Max(1e-3, math.Abs(float64(b[i]))) || math.IsNaN(float64(a[i])) != math.IsNaN(float64(b[i])) {
			return i, false
		}
	}
	return 0, true
}

// sameBits reports the first index where a and b differ in their bits.
func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

// scalarOnly runs fn with the assembly switched off.
func scalarOnly(fn func()) {
	saved := simd
	simd = simdNone
	defer func() { simd = saved }()
	fn()
}

func clone32(s []float32) []float32 { return append([]float32(nil), s...) }

// withSIMD runs fn once per kernel variant the CPU supports.
func withSIMD(t *testing.T, fn func(t *testing.T)) {
	saved := simd
	defer func() { simd = saved }()
	for _, v := range simdVariants() {
		simd = v
		t.Run(fmt.Sprintf("simd%d", v), fn)
	}
}

// TestAdamKernelVariants compares every float32 Adam variant (assembly and
// Go) with the Go loop in float64 on awkward sizes.
func TestAdamKernelVariants(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range awkwardSizes {
			for _, a := range []adamArgs{
				{beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 1, stepSize: 0.01 / 0.1, bc2Sqrt: math.Sqrt(0.001)},
				{beta1: 0.8, beta2: 0.99, eps: 1e-6, decay: 1, weightDecay: 0.1, stepSize: 0.03, bc2Sqrt: 0.4, maximize: true},
				{beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 1 - 0.01*0.1, stepSize: 0.02, bc2Sqrt: 0.7},
				{beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 0.999, stepSize: 0.02, bc2Sqrt: 0.7, amsgrad: true},
			} {
				p, g := randF32(r, n, 1), randF32(r, n, 0.1)
				m, v, vm := randF32(r, n, 0.05), absF32(randF32(r, n, 0.01)), absF32(randF32(r, n, 0.01))
				if n > 3 {
					g[3], v[3] = 0, 0 // a coordinate that never had a gradient
				}
				p64, g64, m64, v64, vm64 := widen(p), widen(g), widen(m), widen(v), widen(vm)
				c := a.consts()
				sp, sm, sv, svm := clone32(p), clone32(m), clone32(v), clone32(vm)
				scalarOnly(func() { adamF32(sp, g, sm, sv, svm, a, &c) })
				adamF32(p, g, m, v, vm, a, &c)
				for name, pair := range map[string][2][]float32{"p": {p, sp}, "m": {m, sm}, "v": {v, sv}} {
					if i, ok := sameBits(pair[0], pair[1]); !ok {
						t.Fatalf("n=%d %+v: %s[%d] = %g, scalar loop %g", n, a, name, i, pair[0][i], pair[1][i])
					}
				}
				adamUpdate(p64, g64, m64, v64, vm64, a)
				for name, pair := range map[string][2][]float32{"p": {p, narrow(p64)}, "m": {m, narrow(m64)}, "v": {v, narrow(v64)}} {
					if i, ok := closeF32(pair[0], pair[1], 1e-5); !ok {
						t.Fatalf("n=%d %+v: %s[%d] = %g, float64 reference %g", n, a, name, i, pair[0][i], pair[1][i])
					}
				}
			}
		}
	})
}

// TestSGDKernelVariants is TestAdamKernelVariants for SGD.
func TestSGDKernelVariants(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, n := range awkwardSizes {
			for _, a := range []sgdArgs{
				{lr: 0.1},
				{lr: 0.1, momentum: 0.9},
				{lr: 0.1, momentum: 0.9, dampening: 0.2},
				{lr: 0.1, momentum: 0.9, first: true},
				{lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.01},
				{lr: 0.1, momentum: 0.5, maximize: true},
				{lr: 0.1, weightDecay: 0.1, maximize: true},
			} {
				p, g, b := randF32(r, n, 1), randF32(r, n, 0.1), randF32(r, n, 0.1)
				p64, g64, b64 := widen(p), widen(g), widen(b)
				c := a.consts()
				sp, sb := clone32(p), clone32(b)
				scalarOnly(func() { sgdF32(sp, g, sb, a, &c) })
				sgdF32(p, g, b, a, &c)
				if i, ok := sameBits(p, sp); !ok {
					t.Fatalf("n=%d %+v: p[%d] = %g, scalar loop %g", n, a, i, p[i], sp[i])
				}
				if i, ok := sameBits(b, sb); !ok {
					t.Fatalf("n=%d %+v: buf[%d] = %g, scalar loop %g", n, a, i, b[i], sb[i])
				}
				sgdUpdate(p64, g64, b64, a)
				if i, ok := closeF32(p, narrow(p64), 1e-5); !ok {
					t.Fatalf("n=%d %+v: p[%d] = %g, float64 reference %g", n, a, i, p[i], p64[i])
				}
				if a.momentum != 0 {
					if i, ok := closeF32(b, narrow(b64), 1e-5); !ok {
						t.Fatalf("n=%d %+v: buf[%d] = %g, float64 reference %g", n, a, i, b[i], b64[i])
					}
				}
			}
		}
	})
}

func widen(s []float32) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

func narrow(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

// TestAdaptiveKernelVariants is TestAdamKernelVariants for RMSprop and
// Adagrad.
func TestAdaptiveKernelVariants(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, n := range awkwardSizes {
			for _, a := range []rmspropArgs{
				{lr: 0.01, alpha: 0.99, eps: 1e-8},
				{lr: 0.01, alpha: 0.9, eps: 1e-6, weightDecay: 0.1},
				{lr: 0.01, alpha: 0.9, eps: 1e-8, centered: true, momentum: 0.9, maximize: true},
			} {
				p, g, sq := randF32(r, n, 1), randF32(r, n, 0.1), absF32(randF32(r, n, 0.01))
				ga, b := randF32(r, n, 0.01), randF32(r, n, 0.01)
				p64, g64, sq64, ga64, b64 := widen(p), widen(g), widen(sq), widen(ga), widen(b)
				sp, ssq, sga, sb := clone32(p), clone32(sq), clone32(ga), clone32(b)
				scalarOnly(func() { rmspropF32(sp, g, ssq, sga, sb, a) })
				rmspropF32(p, g, sq, ga, b, a)
				if i, ok := sameBits(p, sp); !ok {
					t.Fatalf("RMSprop n=%d %+v: p[%d] = %g, scalar loop %g", n, a, i, p[i], sp[i])
				}
				rmspropUpdate(p64, g64, sq64, ga64, b64, a)
				if i, ok := closeF32(p, narrow(p64), 1e-5); !ok {
					t.Fatalf("RMSprop n=%d %+v: p[%d] = %g, float64 reference %g", n, a, i, p[i], p64[i])
				}
				if i, ok := closeF32(sq, narrow(sq64), 1e-5); !ok {
					t.Fatalf("RMSprop n=%d %+v: sq[%d] = %g, float64 reference %g", n, a, i, sq[i], sq64[i])
				}
			}
			for _, wd := range []float64{0, 0.1} {
				p, g, s := randF32(r, n, 1), randF32(r, n, 0.1), absF32(randF32(r, n, 0.01))
				p64, g64, s64 := widen(p), widen(g), widen(s)
				sp, ss := clone32(p), clone32(s)
				scalarOnly(func() { adagradF32(sp, g, ss, 0.1, 1e-10, wd, false) })
				adagradF32(p, g, s, 0.1, 1e-10, wd, false)
				if i, ok := sameBits(p, sp); !ok {
					t.Fatalf("Adagrad n=%d: p[%d] = %g, scalar loop %g", n, i, p[i], sp[i])
				}
				adagradUpdate(p64, g64, s64, 0.1, 1e-10, wd, false)
				if i, ok := closeF32(p, narrow(p64), 1e-5); !ok {
					t.Fatalf("Adagrad n=%d wd=%g: p[%d] = %g, float64 reference %g", n, wd, i, p[i], p64[i])
				}
				if i, ok := closeF32(s, narrow(s64), 1e-5); !ok {
					t.Fatalf("Adagrad n=%d wd=%g: sum[%d] = %g, float64 reference %g", n, wd, i, s[i], s64[i])
				}
			}
		}
	})
}

// TestStepIndependentOfCores checks that a step gives the same bits
// whether it runs on one core or is split over several (the vector and
// scalar loops round alike, so chunk boundaries do not matter).
func TestStepIndependentOfCores(t *testing.T) {
	run := func(procs int) [][]float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		// Odd sizes, so that chunk boundaries fall inside vectors.
		rng := tensor.NewRNG(3)
		var ps []*tensor.Tensor
		for _, n := range []int{70001, 3, 65553, 33} {
			p := rng.Normal(tensor.Float32, 0, 1, n).SetRequiresGrad(true)
			p.SetGrad(rng.Normal(tensor.Float32, 0, 0.1, n))
			ps = append(ps, p)
		}
		o, err := NewAdamW(ps, AdamOptions{LR: 0.01, WeightDecay: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := o.Step(); err != nil {
				t.Fatal(err)
			}
		}
		var out [][]float32
		for _, p := range ps {
			out = append(out, clone32(p.Float32s()))
		}
		st := o.State() // the moments show differences the parameters round away
		for _, name := range st.TensorNames() {
			out = append(out, clone32(st.Tensors[name].Float32s()))
		}
		return out
	}
	one, four := run(1), run(4)
	for k := range one {
		if i, ok := sameBits(one[k], four[k]); !ok {
			t.Fatalf("tensor %d element %d: %v on one core, %v on four", k, i, one[k][i], four[k][i])
		}
	}
}

// TestSubnormalStateFlushed: Adam's moments and SGD's momentum buffer that
// decay below the smallest normal float32 become +0 in every variant (NaN
// stays NaN), the assembly agrees with the Go loop bit for bit, and the
// weights move exactly as without the flush.
func TestSubnormalStateFlushed(t *testing.T) {
	const n = 67
	tiny := []float32{0x1p-126, -0x1p-126, 0x1.2p-126, 0x1p-127, -0x1p-130, 0x1p-149, 0, float32(math.NaN()), 1e-3, -1e-30}
	withSIMD(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		p, g := randF32(r, n, 1), make([]float32, n)
		m, v := make([]float32, n), make([]float32, n)
		for i := range m {
			m[i], v[i] = tiny[i%len(tiny)], absF32([]float32{tiny[(i+3)%len(tiny)]})[0]
		}
		a := adamArgs{beta1: 0.9, beta2: 0.999, eps: 1e-8, decay: 1, stepSize: 1e-3, bc2Sqrt: 0.5}
		c := a.consts()
		p0, sp, sm, sv := clone32(p), clone32(p), clone32(m), clone32(v)
		scalarOnly(func() { adamF32(sp, g, sm, sv, nil, a, &c) })
		adamF32(p, g, m, v, nil, a, &c)
		for name, pair := range map[string][2][]float32{"p": {p, sp}, "m": {m, sm}, "v": {v, sv}} {
			if i, ok := sameBits(pair[0], pair[1]); !ok {
				t.Fatalf("%s[%d] = %g, scalar loop %g", name, i, pair[0][i], pair[1][i])
			}
		}
		for i := range m {
			for name, x := range map[string]float32{"m": m[i], "v": v[i]} {
				ax := math.Abs(float64(x))
				if math.IsNaN(ax) {
					continue
				}
				if ax != 0 && ax < 0x1p-126 || x == 0 && math.Signbit(float64(x)) {
					t.Errorf("%s[%d] = %g: a subnormal or -0 was kept", name, i, x)
				}
			}
			if want := float32(0.9) * tiny[i%len(tiny)]; want == want && math.Abs(float64(want)) >= 0x1p-126 && m[i] != want {
				t.Errorf("m[%d] = %g, want the normal %g kept", i, m[i], want)
			}
			if !math.IsNaN(float64(m[i])) && !math.IsNaN(float64(v[i])) && math.Abs(float64(m[i])) < 1e-20 && p[i] != p0[i] {
				t.Errorf("p[%d] moved from %g to %g on a vanishing moment", i, p0[i], p[i])
			}
		}
		// SGD with momentum, the assembly's case (no decay, minimizing).
		s := sgdArgs{lr: 0.1, momentum: 0.9}
		sc := s.consts()
		q, sq, buf := clone32(p0), clone32(p0), clone32(sm)
		sbuf := clone32(buf)
		scalarOnly(func() { sgdF32(sq, g, sbuf, s, &sc) })
		sgdF32(q, g, buf, s, &sc)
		for name, pair := range map[string][2][]float32{"p": {q, sq}, "buf": {buf, sbuf}} {
			if i, ok := sameBits(pair[0], pair[1]); !ok {
				t.Fatalf("sgd %s[%d] = %g, scalar loop %g", name, i, pair[0][i], pair[1][i])
			}
		}
		for i, b := range buf {
			if b != 0 && math.Abs(float64(b)) < 0x1p-126 {
				t.Errorf("sgd buf[%d] = %g: a subnormal was kept", i, b)
			}
		}
	})
}
