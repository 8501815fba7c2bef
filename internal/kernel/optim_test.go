package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-ml/fathom/internal/cpufeat"
)

// awkwardSizes cross every vector width and unroll boundary.
var awkwardSizes = []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 100, 1000, 4099}

// randNormF32 returns n normal values of standard deviation scale.
func randNormF32(r *rand.Rand, n int, scale float64) []float32 {
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
	saved := optimSIMD
	optimSIMD = cpufeat.Generic
	defer func() { optimSIMD = saved }()
	fn()
}

func clone32(s []float32) []float32 { return append([]float32(nil), s...) }

// withSIMD runs fn once per kernel variant the CPU supports.
func withSIMD(t *testing.T, fn func(t *testing.T)) {
	saved := optimSIMD
	defer func() { optimSIMD = saved }()
	for _, v := range optimVariants() {
		optimSIMD = v
		t.Run(fmt.Sprintf("optimSIMD%d", v), fn)
	}
}

// TestAdamKernelVariants compares every float32 Adam variant (assembly and
// Go) with the Go loop in float64 on awkward sizes.
func TestAdamKernelVariants(t *testing.T) {
	withSIMD(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range awkwardSizes {
			for _, a := range []AdamArgs{
				{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decay: 1, StepSize: 0.01 / 0.1, BC2Sqrt: math.Sqrt(0.001)},
				{Beta1: 0.8, Beta2: 0.99, Eps: 1e-6, Decay: 1, WeightDecay: 0.1, StepSize: 0.03, BC2Sqrt: 0.4, Maximize: true},
				{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decay: 1 - 0.01*0.1, StepSize: 0.02, BC2Sqrt: 0.7},
				{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decay: 0.999, StepSize: 0.02, BC2Sqrt: 0.7, AMSGrad: true},
			} {
				p, g := randNormF32(r, n, 1), randNormF32(r, n, 0.1)
				m, v, vm := randNormF32(r, n, 0.05), absF32(randNormF32(r, n, 0.01)), absF32(randNormF32(r, n, 0.01))
				if n > 3 {
					g[3], v[3] = 0, 0 // a coordinate that never had a gradient
				}
				p64, g64, m64, v64, vm64 := widen(p), widen(g), widen(m), widen(v), widen(vm)
				c := a.Consts()
				sp, sm, sv, svm := clone32(p), clone32(m), clone32(v), clone32(vm)
				scalarOnly(func() { AdamF32(sp, g, sm, sv, svm, a, &c) })
				AdamF32(p, g, m, v, vm, a, &c)
				for name, pair := range map[string][2][]float32{"p": {p, sp}, "m": {m, sm}, "v": {v, sv}} {
					if i, ok := sameBits(pair[0], pair[1]); !ok {
						t.Fatalf("n=%d %+v: %s[%d] = %g, scalar loop %g", n, a, name, i, pair[0][i], pair[1][i])
					}
				}
				AdamUpdate(p64, g64, m64, v64, vm64, a)
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
			for _, a := range []SGDArgs{
				{LR: 0.1},
				{LR: 0.1, Momentum: 0.9},
				{LR: 0.1, Momentum: 0.9, Dampening: 0.2},
				{LR: 0.1, Momentum: 0.9, First: true},
				{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 0.01},
				{LR: 0.1, Momentum: 0.5, Maximize: true},
				{LR: 0.1, WeightDecay: 0.1, Maximize: true},
			} {
				p, g, b := randNormF32(r, n, 1), randNormF32(r, n, 0.1), randNormF32(r, n, 0.1)
				p64, g64, b64 := widen(p), widen(g), widen(b)
				c := a.Consts()
				sp, sb := clone32(p), clone32(b)
				scalarOnly(func() { SGDF32(sp, g, sb, a, &c) })
				SGDF32(p, g, b, a, &c)
				if i, ok := sameBits(p, sp); !ok {
					t.Fatalf("n=%d %+v: p[%d] = %g, scalar loop %g", n, a, i, p[i], sp[i])
				}
				if i, ok := sameBits(b, sb); !ok {
					t.Fatalf("n=%d %+v: buf[%d] = %g, scalar loop %g", n, a, i, b[i], sb[i])
				}
				SGDUpdate(p64, g64, b64, a)
				if i, ok := closeF32(p, narrow(p64), 1e-5); !ok {
					t.Fatalf("n=%d %+v: p[%d] = %g, float64 reference %g", n, a, i, p[i], p64[i])
				}
				if a.Momentum != 0 {
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
			for _, a := range []RMSpropArgs{
				{LR: 0.01, Alpha: 0.99, Eps: 1e-8},
				{LR: 0.01, Alpha: 0.9, Eps: 1e-6, WeightDecay: 0.1},
				{LR: 0.01, Alpha: 0.9, Eps: 1e-8, Centered: true, Momentum: 0.9, Maximize: true},
			} {
				p, g, sq := randNormF32(r, n, 1), randNormF32(r, n, 0.1), absF32(randNormF32(r, n, 0.01))
				ga, b := randNormF32(r, n, 0.01), randNormF32(r, n, 0.01)
				p64, g64, sq64, ga64, b64 := widen(p), widen(g), widen(sq), widen(ga), widen(b)
				sp, ssq, sga, sb := clone32(p), clone32(sq), clone32(ga), clone32(b)
				scalarOnly(func() { RMSpropF32(sp, g, ssq, sga, sb, a) })
				RMSpropF32(p, g, sq, ga, b, a)
				if i, ok := sameBits(p, sp); !ok {
					t.Fatalf("RMSprop n=%d %+v: p[%d] = %g, scalar loop %g", n, a, i, p[i], sp[i])
				}
				RMSpropUpdate(p64, g64, sq64, ga64, b64, a)
				if i, ok := closeF32(p, narrow(p64), 1e-5); !ok {
					t.Fatalf("RMSprop n=%d %+v: p[%d] = %g, float64 reference %g", n, a, i, p[i], p64[i])
				}
				if i, ok := closeF32(sq, narrow(sq64), 1e-5); !ok {
					t.Fatalf("RMSprop n=%d %+v: sq[%d] = %g, float64 reference %g", n, a, i, sq[i], sq64[i])
				}
			}
			for _, wd := range []float64{0, 0.1} {
				p, g, s := randNormF32(r, n, 1), randNormF32(r, n, 0.1), absF32(randNormF32(r, n, 0.01))
				p64, g64, s64 := widen(p), widen(g), widen(s)
				sp, ss := clone32(p), clone32(s)
				scalarOnly(func() { AdagradF32(sp, g, ss, 0.1, 1e-10, wd, false) })
				AdagradF32(p, g, s, 0.1, 1e-10, wd, false)
				if i, ok := sameBits(p, sp); !ok {
					t.Fatalf("Adagrad n=%d: p[%d] = %g, scalar loop %g", n, i, p[i], sp[i])
				}
				AdagradUpdate(p64, g64, s64, 0.1, 1e-10, wd, false)
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

// TestSubnormalStateFlushed: Adam's moments and SGD's momentum buffer that
// decay below the smallest normal float32 become +0 in every variant (NaN
// stays NaN), the assembly agrees with the Go loop bit for bit, and the
// weights move exactly as without the flush.
func TestSubnormalStateFlushed(t *testing.T) {
	const n = 67
	tiny := []float32{0x1p-126, -0x1p-126, 0x1.2p-126, 0x1p-127, -0x1p-130, 0x1p-149, 0, float32(math.NaN()), 1e-3, -1e-30}
	withSIMD(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		p, g := randNormF32(r, n, 1), make([]float32, n)
		m, v := make([]float32, n), make([]float32, n)
		for i := range m {
			m[i], v[i] = tiny[i%len(tiny)], absF32([]float32{tiny[(i+3)%len(tiny)]})[0]
		}
		a := AdamArgs{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Decay: 1, StepSize: 1e-3, BC2Sqrt: 0.5}
		c := a.Consts()
		p0, sp, sm, sv := clone32(p), clone32(p), clone32(m), clone32(v)
		scalarOnly(func() { AdamF32(sp, g, sm, sv, nil, a, &c) })
		AdamF32(p, g, m, v, nil, a, &c)
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
		s := SGDArgs{LR: 0.1, Momentum: 0.9}
		sc := s.Consts()
		q, sq, buf := clone32(p0), clone32(p0), clone32(sm)
		sbuf := clone32(buf)
		scalarOnly(func() { SGDF32(sq, g, sbuf, s, &sc) })
		SGDF32(q, g, buf, s, &sc)
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
