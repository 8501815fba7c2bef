// Package optim generates internal/kernel/optim_amd64.s and its Go
// declarations with avo (`go run . -gen optim` in internal/kernel/_asm):
// AVX-512 and AVX2+FMA bodies of the float32 Adam, SGD, RMSprop and Adagrad
// update loops (see internal/kernel/optim.go for the formulas and the Go
// reference each kernel must match).
//
// Every kernel processes the longest prefix of p whose length is a multiple
// of the vector width (16 lanes for AVX-512, 8 for AVX2) and leaves the rest
// to the Go wrapper. Scalars arrive in a small float32 array, broadcast once.
//
// Run `go generate` in internal/kernel (see optim_amd64.go) to regenerate.
package optim

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/fathom-ml/fathom/internal/kernel/_asm/asmlib"
)

type isa struct {
	name   string
	bytes  int
	vec    func() reg.VecVirtual
	unroll int
}

var (
	avx512 = isa{"AVX512", 64, ZMM, 4}
	avx2   = isa{"AVX2", 32, YMM, 1}
)

func (s isa) lanes() int { return s.bytes / 4 }

// at returns the memory operand of vector j past float32 index i.
func at(base, i reg.GPVirtual, s isa, j int) Mem {
	return Mem{Base: base, Index: i, Scale: 4, Disp: j * s.bytes}
}

// loop emits blocks of u vectors while enough are left, then single vectors.
func loop(label string, i, n reg.GPVirtual, s isa, body func(u int)) {
	asmlib.Loop(label, i, n, s.lanes(), s.unroll, body)
}

func text(name, signature, doc string) {
	asmlib.Text(name, signature)
	Doc(doc)
}

// broadcast loads c[k] into every lane of a new vector register.
func broadcast(s isa, c reg.GPVirtual, k int) reg.VecVirtual {
	v := s.vec()
	VBROADCASTSS(Mem{Base: c, Disp: 4 * k}, v)
	return v
}

// flushConsts returns the vectors flushSubnormal needs: the mask of
// everything but the sign bit, and the smallest normal float32.
func flushConsts(s isa) (abs, minNormal reg.VecVirtual) {
	return splat(s, 0x7fffffff), splat(s, 0x00800000)
}

// splat returns a new vector with bits in every lane.
func splat(s isa, bits uint32) reg.VecVirtual {
	r := GP32()
	MOVL(U32(bits), r)
	x := XMM()
	MOVD(r, x)
	v := s.vec()
	VBROADCASTSS(x, v)
	return v
}

// flushSubnormal sets the lanes of x whose magnitude is below the
// smallest normal float32 to +0 (NaN lanes are kept): optimizer state
// that decays geometrically would otherwise spend hundreds of steps as
// subnormal numbers, on which every instruction takes a slow microcode
// assist. t is a scratch vector.
func flushSubnormal(s isa, x, t, abs, minNormal reg.VecVirtual) {
	VANDPS(abs, x, t)
	if s.bytes == 64 {
		k := K()
		VCMPPS(U8(cmpNLTUQ), minNormal, t, k) // k = !(|x| < min), NaN included
		VMOVAPS_Z(x, k, x)
		return
	}
	VCMPPS(U8(cmpNLTUQ), minNormal, t, t)
	VANDPS(t, x, x)
}

// cmpNLTUQ is the VCMPPS predicate "not less than, unordered true".
const cmpNLTUQ = 5

func loadSlice(name string) reg.GPVirtual {
	return Load(Param(name).Base(), GP64()).(reg.GPVirtual)
}

// Adam scalars, in the order of optim.adamConstsF32.
const (
	cBeta1 = iota
	cOneMinusBeta1
	cBeta2
	cOneMinusBeta2
	cStep      // −lr·√(1−β2^t)/(1−β1^t)
	cEpsScaled // ε·√(1−β2^t)
	cDecay     // AdamW's 1−lr·λ
	cWD        // Adam's L2 coefficient λ
	cSign      // −1 to maximize
	nAdamConsts
)

// genAdam: with decay set, x ← p·decay and g ← sign·g + λ·x first (AdamW,
// L2 decay, maximize); otherwise x = p and g as given.
//
//	m ← β1·m + (1−β1)·g;  v ← β2·v + ((1−β2)·g)·g
//	p ← x + (step·m) / (√v + ε′)
func genAdam(s isa, decay bool) {
	fn := "adamF32" + s.name
	doc := fmt.Sprintf("%s is the plain Adam update (no weight decay, minimizing) over the whole vectors of p.", fn)
	if decay {
		fn = "adamDecayF32" + s.name
		doc = fmt.Sprintf("%s is the Adam/AdamW update with weight decay and sign over the whole vectors of p.", fn)
	}
	text(fn, fmt.Sprintf("func(p, g, m, v []float32, c *[%d]float32)", nAdamConsts), doc)
	p, g, m, v := loadSlice("p"), loadSlice("g"), loadSlice("m"), loadSlice("v")
	n := Load(Param("p").Len(), GP64()).(reg.GPVirtual)
	c := Load(Param("c"), GP64()).(reg.GPVirtual)
	b1, omb1 := broadcast(s, c, cBeta1), broadcast(s, c, cOneMinusBeta1)
	b2, omb2 := broadcast(s, c, cBeta2), broadcast(s, c, cOneMinusBeta2)
	step, eps := broadcast(s, c, cStep), broadcast(s, c, cEpsScaled)
	var dec, wd, sign reg.VecVirtual
	if decay {
		dec, wd, sign = broadcast(s, c, cDecay), broadcast(s, c, cWD), broadcast(s, c, cSign)
	}
	abs, minNormal := flushConsts(s)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s, func(u int) {
		for j := range u {
			x := s.vec()
			gv := s.vec()
			if decay {
				VMULPS(at(p, i, s, j), dec, x)
				VMULPS(at(g, i, s, j), sign, gv)
				VFMADD231PS(x, wd, gv) // g += λ·x
			} else {
				VMOVUPS(at(g, i, s, j), gv)
			}
			mv := s.vec()
			VMULPS(at(m, i, s, j), b1, mv)
			VFMADD231PS(gv, omb1, mv) // m = β1·m + (1−β1)·g
			t := s.vec()
			flushSubnormal(s, mv, t, abs, minNormal)
			VMOVUPS(mv, at(m, i, s, j))
			vv := s.vec()
			VMULPS(at(v, i, s, j), b2, vv)
			VMULPS(gv, omb2, t)
			VFMADD231PS(gv, t, vv) // v = β2·v + ((1−β2)·g)·g
			flushSubnormal(s, vv, t, abs, minNormal)
			VMOVUPS(vv, at(v, i, s, j))
			d := s.vec()
			VSQRTPS(vv, d)
			VADDPS(eps, d, d)
			VMULPS(mv, step, t)
			VDIVPS(d, t, t) // t = step·m / d
			if decay {
				VADDPS(x, t, t)
			} else {
				VADDPS(at(p, i, s, j), t, t)
			}
			VMOVUPS(t, at(p, i, s, j))
		}
	})
	VZEROUPPER()
	RET()
}

// SGD scalars, in the order of optim.sgdConstsF32.
const (
	cMomentum = iota
	cOneMinusDampening
	cNegLR
	nSGDConsts
)

// genSGDMomentum: b ← μ·b + (1−τ)·g;  p ← p − lr·b.
func genSGDMomentum(s isa) {
	fn := "sgdMomentumF32" + s.name
	text(fn, fmt.Sprintf("func(p, g, buf []float32, c *[%d]float32)", nSGDConsts),
		fn+" is the heavy-ball momentum update (no weight decay, minimizing) over the whole vectors of p.")
	p, g, buf := loadSlice("p"), loadSlice("g"), loadSlice("buf")
	n := Load(Param("p").Len(), GP64()).(reg.GPVirtual)
	c := Load(Param("c"), GP64()).(reg.GPVirtual)
	mu, damp, lr := broadcast(s, c, cMomentum), broadcast(s, c, cOneMinusDampening), broadcast(s, c, cNegLR)
	abs, minNormal := flushConsts(s)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s, func(u int) {
		for j := range u {
			b := s.vec()
			VMULPS(at(buf, i, s, j), mu, b)
			VFMADD231PS(at(g, i, s, j), damp, b)
			x := s.vec()
			flushSubnormal(s, b, x, abs, minNormal)
			VMOVUPS(b, at(buf, i, s, j))
			VMOVUPS(at(p, i, s, j), x)
			VFMADD231PS(b, lr, x)
			VMOVUPS(x, at(p, i, s, j))
		}
	})
	VZEROUPPER()
	RET()
}

// genSGD: p ← p − lr·g.
func genSGD(s isa) {
	fn := "sgdF32" + s.name
	text(fn, fmt.Sprintf("func(p, g []float32, c *[%d]float32)", nSGDConsts),
		fn+" is the plain SGD update over the whole vectors of p.")
	p, g := loadSlice("p"), loadSlice("g")
	n := Load(Param("p").Len(), GP64()).(reg.GPVirtual)
	c := Load(Param("c"), GP64()).(reg.GPVirtual)
	lr := broadcast(s, c, cNegLR)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s, func(u int) {
		for j := range u {
			x := s.vec()
			VMOVUPS(at(p, i, s, j), x)
			VFMADD231PS(at(g, i, s, j), lr, x)
			VMOVUPS(x, at(p, i, s, j))
		}
	})
	VZEROUPPER()
	RET()
}

// Scalars of the RMSprop/Adagrad kernel, in the order of
// optim.adaptiveConsts.
const (
	cDecaySq      = iota // α (RMSprop) or 1 (Adagrad)
	cGainSq              // 1−α (RMSprop) or 1 (Adagrad)
	cStepAdaptive        // −lr
	cEpsAdaptive         // ε
	nAdaptiveConsts
)

// genAdaptive: s ← a·s + (b·g)·g;  p ← p + (step·g) / (√s + ε): RMSprop
// (a = α, b = 1−α) and Adagrad (a = b = 1) without decay, centering or
// momentum.
func genAdaptive(s isa) {
	fn := "adaptiveF32" + s.name
	text(fn, fmt.Sprintf("func(p, g, sq []float32, c *[%d]float32)", nAdaptiveConsts),
		fn+" is the plain RMSprop/Adagrad update over the whole vectors of p.")
	p, g, sq := loadSlice("p"), loadSlice("g"), loadSlice("sq")
	n := Load(Param("p").Len(), GP64()).(reg.GPVirtual)
	c := Load(Param("c"), GP64()).(reg.GPVirtual)
	a, b := broadcast(s, c, cDecaySq), broadcast(s, c, cGainSq)
	step, eps := broadcast(s, c, cStepAdaptive), broadcast(s, c, cEpsAdaptive)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s, func(u int) {
		for j := range u {
			gv := s.vec()
			VMOVUPS(at(g, i, s, j), gv)
			sv := s.vec()
			VMULPS(at(sq, i, s, j), a, sv)
			t := s.vec()
			VMULPS(gv, b, t)
			VFMADD231PS(gv, t, sv) // s = a·s + (b·g)·g
			VMOVUPS(sv, at(sq, i, s, j))
			d := s.vec()
			VSQRTPS(sv, d)
			VADDPS(eps, d, d)
			VMULPS(gv, step, t)
			VDIVPS(d, t, t)
			VADDPS(at(p, i, s, j), t, t)
			VMOVUPS(t, at(p, i, s, j))
		}
	})
	VZEROUPPER()
	RET()
}

// Build adds the fused optimizer updates (optim_amd64.s) to avo's global context;
// the caller sets the build constraint and calls Generate.
func Build() {
	for _, s := range []isa{avx512, avx2} {
		genAdam(s, false)
		genAdam(s, true)
		genSGDMomentum(s)
		genSGD(s)
		genAdaptive(s)
	}
}
