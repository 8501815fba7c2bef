// Package elem generates internal/kernel/elementwise_amd64.s and its Go
// declarations with avo (`go run . -gen elem` in internal/kernel/_asm): the AVX-512 and AVX2+FMA bodies of the
// elementwise maps and reductions of package kernel.
//
// Every generated function processes the longest prefix of its input whose
// length is a multiple of the vector width W (16 float32 / 8 float64 lanes
// for AVX-512, 8 / 4 for AVX2) and leaves the remainder to the Go wrapper,
// which finishes it with the reference code. Functions that return a
// reduction need at least one full vector.
//
// Run `go generate` in internal/kernel (see elementwise_amd64.go) to
// regenerate.
package elem

import (
	"fmt"
	"math"
	"math/bits"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/fathom-ml/fathom/internal/kernel/_asm/asmlib"
)

// isa describes one vector instruction set: its register constructor and
// width in bytes.
type isa struct {
	name  string // suffix of generated functions: "AVX512" or "AVX2"
	bytes int    // vector width in bytes
	vec   func() reg.VecVirtual
}

var (
	avx512 = isa{"AVX512", 64, ZMM}
	avx2   = isa{"AVX2", 32, YMM}
)

// dtype selects the packed instructions for float32 (PS) or float64 (PD).
type dtype struct {
	name             string // "F32" or "F64"
	gotype           string // "float32" or "float64"
	size             int
	add, sub, mul    func(...Op)
	div, max, min    func(...Op)
	fmadd231, cmp    func(...Op)
	broadcastFromMem func(...Op)
}

var (
	f32 = dtype{"F32", "float32", 4, VADDPS, VSUBPS, VMULPS, VDIVPS, VMAXPS, VMINPS, VFMADD231PS, VCMPPS, VBROADCASTSS}
	f64 = dtype{"F64", "float64", 8, VADDPD, VSUBPD, VMULPD, VDIVPD, VMAXPD, VMINPD, VFMADD231PD, VCMPPD, VBROADCASTSD}
)

func (s isa) lanes(t dtype) int { return s.bytes / t.size }

// Comparison predicates (Intel SDM vol. 2, CMPPS imm8 encoding).
const (
	cmpEQOQ   = 0x00
	cmpLTOS   = 0x01
	cmpUNORDQ = 0x03
	cmpNGEUQ  = 0x19
	cmpNLEUQ  = 0x16
	cmpGTOQ   = 0x1e
)

// ---------------------------------------------------------------- constants

// consts holds read-only 64-byte globals, each one float32 bit pattern
// repeated 16 times, so a full-width memory operand of either ISA reads it.
var consts = map[string]Mem{}

func defConst(name string, bits uint32) {
	m := GLOBL("elemconst_"+name, RODATA|NOPTR)
	for i := range 16 {
		DATA(4*i, U32(bits))
	}
	consts[name] = m
}

func c(name string) Mem {
	m, ok := consts[name]
	if !ok {
		panic("undefined constant " + name)
	}
	return m
}

// Polynomial and range-reduction constants for expf, logf and tanhf from the
// Cephes library: S. L. Moshier, "Methods and Programs for Mathematical
// Functions", Prentice-Hall, 1989 (cephes/single/expf.c, tanhf.c).
func defineConstants() {
	f := func(name string, v float32) { defConst(name, math.Float32bits(v)) }
	f("one", 1)
	f("two", 2)
	f("log2e", 1.44269504088896341)
	f("ln2hi", 0.693359375)
	f("ln2lo", -2.12194440e-4)
	f("explo", -104) // exp(x) rounds to 0 in float32 below about -103.97
	f("exphi", 89)   // exp(x) overflows float32 above about 88.72
	f("expc5", 1.9875691500e-4)
	f("expc4", 1.3981999507e-3)
	f("expc3", 8.3334519073e-3)
	f("expc2", 4.1665795894e-2)
	f("expc1", 1.6666665459e-1)
	f("expc0", 5.0000001201e-1)
	f("tanhc4", -5.70498872745e-3)
	f("tanhc3", 2.06390887954e-2)
	f("tanhc2", -5.37397155531e-2)
	f("tanhc1", 1.33314422036e-1)
	f("tanhc0", -3.33332819422e-1)
	f("tanhsmall", 0.625)
	f("half", 0.5)
	f("neghalf", -0.5)
	f("sqrt2", 1.41421356237309504880)
	f("fltmin", 0x1p-126)
	f("two23", 0x1p23)
	f("negtwentythree", -23)
	f("logc8", 7.0376836292e-2)
	f("logc7", -1.1514610310e-1)
	f("logc6", 1.1676998740e-1)
	f("logc5", -1.2420140846e-1)
	f("logc4", 1.4249322787e-1)
	f("logc3", -1.6668057665e-1)
	f("logc2", 2.0000714765e-1)
	f("logc1", -2.4999993993e-1)
	f("logc0", 3.3333331174e-1)
	defConst("posinf", 0x7f800000)
	defConst("neginf", 0xff800000)
	defConst("qnan", 0x7fc00000)
	defConst("mantmask", 0x007fffff)
	defConst("absmask", 0x7fffffff)
	defConst("signmask", 0x80000000)
	defConst("bias127", 127)
	defConst("byte32", 0xff)
	// 256·k in dword k: the offset of column k's table among sixteen.
	m := GLOBL("elemconst_col256", RODATA|NOPTR)
	for k := range 16 {
		DATA(4*k, U32(256*k))
	}
	consts["col256"] = m
	// 4 in every qword: four rows on for sixteen byte pointers.
	m = GLOBL("elemconst_four64", RODATA|NOPTR)
	for k := range 8 {
		DATA(8*k, U64(4))
	}
	consts["four64"] = m
}

// ------------------------------------------------------------------ helpers

// elem returns the memory operand of vector j past element index i.
func elem(base, i reg.GPVirtual, t dtype, s isa, j int) Mem {
	return Mem{Base: base, Index: i, Scale: uint8(t.size), Disp: j * s.bytes}
}

// loop emits a loop over vectors: first blocks of unroll vectors, then
// single vectors, while at least one whole vector is left. body(u) emits the
// work for u vectors at index i; the loop advances i.
func loop(label string, i, n reg.GPVirtual, lanes, unroll int, body func(u int)) {
	asmlib.Loop(label, i, n, lanes, unroll, body)
}

// hreduce folds the lanes of v with op (an add, max or min of type t) and
// leaves the result in lane 0 of the returned XMM register.
func hreduce(s isa, t dtype, v reg.VecVirtual, op func(...Op)) reg.VecVirtual {
	var y reg.VecVirtual
	if s.bytes == 64 {
		hi := YMM()
		if t.size == 4 {
			VEXTRACTF32X8(U8(1), v, hi)
		} else {
			VEXTRACTF64X4(U8(1), v, hi)
		}
		y = YMM()
		op(hi, v.AsY(), y)
	} else {
		y = v
	}
	hi := XMM()
	VEXTRACTF128(U8(1), y, hi)
	x := XMM()
	op(hi, y.AsX(), x)
	t2 := XMM()
	VMOVHLPS(x, x, t2) // upper 64 bits to the bottom
	op(t2, x, x)
	if t.size == 4 {
		t3 := XMM()
		VPERMILPS(U8(1), x, t3) // lane 1 to lane 0
		op(t3, x, x)
	}
	return x
}

func vzeroupper() { VZEROUPPER() }

// text starts a function. None of them keeps a pointer to its arguments, so
// all are marked noescape (callers' buffers may stay on the stack).
func text(name, signature string) { asmlib.Text(name, signature) }

// ------------------------------------------------------------- generators

// binary: dst[i] = a[i] op b[i]. With stream set, the stores are
// non-temporal (VMOVNTPS: no read-for-ownership of dst, no cache
// pollution), dst must be aligned to the vector width, and the function
// ends with SFENCE so the stores are ordered before any later store.
func genBinary(s isa, t dtype, name, sym string, op func(...Op), stream bool) {
	fn := fmt.Sprintf("%s%s%s", name, t.name, s.name)
	if stream {
		fn = fmt.Sprintf("%s%sStream%s", name, t.name, s.name)
	}
	text(fn, fmt.Sprintf("func(dst, a, b []%s)", t.gotype))
	Doc(fmt.Sprintf("%s sets dst[i] = a[i] %s b[i] over the whole vectors of dst.", fn, sym))
	dst := Load(Param("dst").Base(), GP64()).(reg.GPVirtual)
	a := Load(Param("a").Base(), GP64()).(reg.GPVirtual)
	b := Load(Param("b").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(t), 4, func(u int) {
		vs := make([]reg.VecVirtual, u)
		for j := range u {
			vs[j] = s.vec()
			VMOVUPS(elem(a, i, t, s, j), vs[j])
		}
		for j := range u {
			op(elem(b, i, t, s, j), vs[j], vs[j]) // Intel: v = v op b
		}
		for j := range u {
			if stream {
				VMOVNTPS(vs[j], elem(dst, i, t, s, j))
			} else {
				VMOVUPS(vs[j], elem(dst, i, t, s, j))
			}
		}
	})
	if stream {
		SFENCE()
	}
	vzeroupper()
	RET()
}

// scalar: dst[i] = x[i] op s.
func genScalar(s isa, t dtype, name string, op func(...Op)) {
	fn := fmt.Sprintf("%s%s%s", name, t.name, s.name)
	text(fn, fmt.Sprintf("func(dst, x []%s, s %s)", t.gotype, t.gotype))
	dst := Load(Param("dst").Base(), GP64()).(reg.GPVirtual)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	sc := s.vec()
	t.broadcastFromMem(NewParamAddr("s", 48), sc)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(t), 4, func(u int) {
		vs := make([]reg.VecVirtual, u)
		for j := range u {
			vs[j] = s.vec()
			op(elem(x, i, t, s, j), sc, vs[j])
		}
		for j := range u {
			VMOVUPS(vs[j], elem(dst, i, t, s, j))
		}
	})
	vzeroupper()
	RET()
}

// axpy: y[i] += alpha*x[i].
func genAxpy(s isa, t dtype) {
	fn := fmt.Sprintf("axpy%s%s", t.name, s.name)
	text(fn, fmt.Sprintf("func(alpha %s, x, y []%s)", t.gotype, t.gotype))
	al := s.vec()
	t.broadcastFromMem(NewParamAddr("alpha", 0), al)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	y := Load(Param("y").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("y").Len(), GP64()).(reg.GPVirtual)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(t), 4, func(u int) {
		vs := make([]reg.VecVirtual, u)
		for j := range u {
			vs[j] = s.vec()
			VMOVUPS(elem(y, i, t, s, j), vs[j])
		}
		for j := range u {
			t.fmadd231(elem(x, i, t, s, j), al, vs[j]) // v += alpha*x
		}
		for j := range u {
			VMOVUPS(vs[j], elem(y, i, t, s, j))
		}
	})
	vzeroupper()
	RET()
}

// sum and dot accumulate in float64 with eight independent vector
// accumulators (the FP add latency is hidden and rounding error grows with
// n/8/lanes rather than n). float32 inputs are widened with VCVTPS2PD.
// sumPrefetch is how far ahead (bytes) the sum kernels prefetch.
const sumPrefetch = 2048

// streamPhase emits the main phase of a long reduction: the first S·h
// elements of each input are read as S interleaved streams, x[0:h],
// x[h:2h], …, a vector of each per iteration, each with a software prefetch
// sumPrefetch bytes ahead; body(st, m) emits the work on the vector m[in]
// of stream st of every input. A reduction this long runs from L3 or
// memory, where one core is bound by how many lines it has in flight: four
// streams plus the prefetch take a sum on one core from about 22 to 29 GB/s
// on 64 MiB (one stream with the prefetch: 26, two: 28). On return the
// inputs and n describe the rest, x[S·h:], and i is 0.
func streamPhase(fn string, s isa, t dtype, inputs []reg.GPVirtual, streams int, n, i reg.GPVirtual, body func(st int, m []Mem)) {
	lanes := s.lanes(t)
	h := GP64()
	MOVQ(n, h)
	SHRQ(U8(bits.TrailingZeros(uint(streams))), h)
	ANDQ(I32(^(lanes - 1)), h)
	// bases[in][st] is stream st of input in.
	bases := make([][]reg.GPVirtual, len(inputs))
	for in, p := range inputs {
		bases[in] = []reg.GPVirtual{p}
		for range streams - 1 {
			b := GP64()
			LEAQ(Mem{Base: bases[in][len(bases[in])-1], Index: h, Scale: uint8(t.size)}, b)
			bases[in] = append(bases[in], b)
		}
	}
	Label(fn + "_streams")
	CMPQ(i, h)
	JAE(LabelRef(fn + "_streamsdone"))
	for st := range streams {
		m := make([]Mem, len(inputs))
		for in := range inputs {
			m[in] = elem(bases[in][st], i, t, s, 0)
			pf := m[in]
			pf.Disp += sumPrefetch
			PREFETCHT0(pf)
		}
		body(st, m)
	}
	ADDQ(U32(lanes), i)
	JMP(LabelRef(fn + "_streams"))
	Label(fn + "_streamsdone")
	// The rest starts at the last stream's base + h = input + S·h.
	for in, p := range inputs {
		LEAQ(Mem{Base: bases[in][streams-1], Index: h, Scale: uint8(t.size)}, p)
	}
	SHLQ(U8(bits.TrailingZeros(uint(streams))), h)
	SUBQ(h, n)
	XORQ(i, i)
}

// sumStreams is streamPhase for a sum (y nil: four streams) or a dot
// product (two streams of each input), accumulating in float64.
func sumStreams(fn string, s isa, t dtype, x, y, n, i reg.GPVirtual, acc []reg.VecVirtual) {
	inputs, streams := []reg.GPVirtual{x}, 4
	if y != nil {
		inputs, streams = append(inputs, y), 2
	}
	// A float32 vector widens to two float64 vectors (halves).
	halves := 1
	if t.size == 4 {
		halves = 2
	}
	streamPhase(fn, s, t, inputs, streams, n, i, func(st int, m []Mem) {
		for hf := range halves {
			a := acc[(st*halves+hf)%len(acc)]
			load := func(m Mem) Op {
				if t.size == 4 {
					m.Disp += hf * s.bytes / 2
					v := s.vec()
					VCVTPS2PD(m, v)
					return v
				}
				return m
			}
			if y == nil {
				VADDPD(load(m[0]), a, a)
				continue
			}
			vx := load(m[0])
			if mx, isMem := vx.(Mem); isMem {
				v := s.vec()
				VMOVUPD(mx, v)
				vx = v
			}
			VFMADD231PD(load(m[1]), vx, a)
		}
	})
}

func genSumDot(s isa, t dtype, dot bool) {
	name := "sum"
	sig := fmt.Sprintf("func(x []%s) float64", t.gotype)
	if dot {
		name = "dot"
		sig = fmt.Sprintf("func(x, y []%s) float64", t.gotype)
	}
	fn := name + t.name + s.name
	text(fn, sig)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	var y reg.GPVirtual
	if dot {
		y = Load(Param("y").Base(), GP64()).(reg.GPVirtual)
	}
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	const nacc = 8
	acc := make([]reg.VecVirtual, nacc)
	for k := range acc {
		acc[k] = s.vec()
		VXORPD(acc[k], acc[k], acc[k])
	}
	i := GP64()
	XORQ(i, i)
	half := s.bytes / 2 // bytes of float32 that widen to one float64 vector
	sumStreams(fn, s, t, x, y, n, i, acc)
	loop(fn, i, n, s.lanes(t), 4, func(u int) {
		k := 0
		for j := range u {
			if t.size == 4 {
				for h := range 2 {
					mx := elem(x, i, t, s, j)
					mx.Disp += h * half
					vx := s.vec()
					VCVTPS2PD(mx, vx)
					if dot {
						my := elem(y, i, t, s, j)
						my.Disp += h * half
						vy := s.vec()
						VCVTPS2PD(my, vy)
						VFMADD231PD(vy, vx, acc[k%nacc])
					} else {
						VADDPD(vx, acc[k%nacc], acc[k%nacc])
					}
					k++
				}
			} else {
				if dot {
					vx := s.vec()
					VMOVUPD(elem(x, i, t, s, j), vx)
					VFMADD231PD(elem(y, i, t, s, j), vx, acc[k%nacc])
				} else {
					VADDPD(elem(x, i, t, s, j), acc[k%nacc], acc[k%nacc])
				}
				k++
			}
		}
	})
	for w := nacc / 2; w >= 1; w /= 2 {
		for k := range w {
			VADDPD(acc[k+w], acc[k], acc[k])
		}
	}
	r := hreduce(s, f64, acc[0], VADDPD)
	Store(r, ReturnIndex(0))
	vzeroupper()
	RET()
}

// max/min: the largest (smallest) element and whether any element is NaN
// (VMAXPS drops NaNs, so they are tracked with an unordered compare).
// Needs len(x) >= one vector.
func genMaxMin(s isa, t dtype, isMax bool) {
	name, op := "min", t.min
	if isMax {
		name, op = "max", t.max
	}
	fn := name + t.name + s.name
	text(fn, fmt.Sprintf("func(x []%s) (m %s, nan bool)", t.gotype, t.gotype))
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	const nacc = 4
	acc := make([]reg.VecVirtual, nacc)
	for k := range acc {
		acc[k] = s.vec()
		VMOVUPS(Mem{Base: x}, acc[k])
	}
	var kacc reg.OpmaskVirtual
	var nanacc reg.VecVirtual
	if s.bytes == 64 {
		kacc = K()
		KXORW(kacc, kacc, kacc)
	} else {
		nanacc = s.vec()
		VXORPS(nanacc, nanacc, nanacc)
	}
	// one folds the vector at m into a and the NaN flags.
	one := func(m Mem, a reg.VecVirtual) {
		v := s.vec()
		VMOVUPS(m, v)
		if s.bytes == 64 {
			kt := K()
			t.cmp(U8(cmpUNORDQ), v, v, kt)
			KORW(kt, kacc, kacc)
		} else {
			nm := s.vec()
			t.cmp(U8(cmpUNORDQ), v, v, nm)
			VORPS(nm, nanacc, nanacc)
		}
		op(v, a, a)
	}
	i := GP64()
	XORQ(i, i)
	streamPhase(fn, s, t, []reg.GPVirtual{x}, nacc, n, i, func(st int, m []Mem) { one(m[0], acc[st]) })
	loop(fn, i, n, s.lanes(t), 4, func(u int) {
		for j := range u {
			one(elem(x, i, t, s, j), acc[j%nacc])
		}
	})
	op(acc[1], acc[0], acc[0])
	op(acc[3], acc[2], acc[2])
	op(acc[2], acc[0], acc[0])
	r := hreduce(s, t, acc[0], op)
	Store(r, Return("m"))
	flag := GP32()
	if s.bytes == 64 {
		KMOVW(kacc, flag)
	} else {
		VMOVMSKPS(nanacc, flag)
	}
	TESTL(flag, flag)
	b := GP8()
	SETNE(b)
	Store(b, Return("nan"))
	vzeroupper()
	RET()
}

// unary maps over float32: dst[i] = f(x[i]), with f given as a function
// that transforms a register in place.
func genUnary(s isa, fn string, unroll int, setup func() func(v reg.VecVirtual)) {
	text(fn, "func(dst, x []float32)")
	dst := Load(Param("dst").Base(), GP64()).(reg.GPVirtual)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	f := setup()
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(f32), unroll, func(u int) {
		vs := make([]reg.VecVirtual, u)
		for j := range u {
			vs[j] = s.vec()
			VMOVUPS(elem(x, i, f32, s, j), vs[j])
		}
		for j := range u {
			f(vs[j])
		}
		for j := range u {
			VMOVUPS(vs[j], elem(dst, i, f32, s, j))
		}
	})
	vzeroupper()
	RET()
}

// expSetup loads the clamp bounds into registers (they must be registers so
// that VMAXPS/VMINPS keep NaN inputs: the NaN must be the second source) and
// returns the in-place exp.
//
// Algorithm (Cephes expf): clamp x, n = round(x·log2 e),
// r = x − n·ln2 (ln2 split into hi and lo parts, exact in float32 for |n| ≤
// 2^15), e^r ≈ 1 + r + r²·P(r) with a degree-5 P on |r| ≤ ln2/2, and
// e^x = e^r·2^n. AVX-512 scales with VSCALEFPS (exact, with correct overflow
// to +Inf and gradual underflow); AVX2 builds 2^n from integer exponent bits
// in two halves so that n up to 128 and down to −150 stay in range.
func expSetup(s isa) func(v reg.VecVirtual) {
	lo, hi := s.vec(), s.vec()
	VMOVUPS(c("explo"), lo)
	VMOVUPS(c("exphi"), hi)
	return func(v reg.VecVirtual) {
		VMAXPS(v, lo, v) // Intel vmaxps v, lo, v: returns v when v is NaN
		VMINPS(v, hi, v)
		nf := s.vec()
		VMULPS(c("log2e"), v, nf)
		if s.bytes == 64 {
			VRNDSCALEPS(U8(0), nf, nf) // round to nearest even
		} else {
			VROUNDPS(U8(0), nf, nf)
		}
		VFNMADD231PS(c("ln2hi"), nf, v) // v = v − n·ln2hi
		VFNMADD231PS(c("ln2lo"), nf, v) // v = v − n·ln2lo: v is now r
		p := s.vec()
		VMOVUPS(c("expc5"), p)
		for _, k := range []string{"expc4", "expc3", "expc2", "expc1", "expc0"} {
			VFMADD213PS(c(k), v, p) // p = p·r + c
		}
		r2 := s.vec()
		VMULPS(v, v, r2)
		VFMADD213PS(v, r2, p) // p = p·r² + r
		VADDPS(c("one"), p, p)
		if s.bytes == 64 {
			VSCALEFPS(nf, p, v) // v = p·2^n
			return
		}
		ni := s.vec()
		VCVTPS2DQ(nf, ni)
		n1 := s.vec()
		VPSRAD(U8(1), ni, n1) // n1 = n>>1, n2 = n − n1
		VPSUBD(n1, ni, ni)
		VPADDD(c("bias127"), n1, n1)
		VPSLLD(U8(23), n1, n1)
		VPADDD(c("bias127"), ni, ni)
		VPSLLD(U8(23), ni, ni)
		VMULPS(n1, p, p)
		VMULPS(ni, p, v)
	}
}

// sigmoidSetup: σ(x) = 1/(1+e^−x) for x ≥ 0 and e^x/(1+e^x) for x < 0,
// both from e = e^−|x|, which never overflows (so σ of very negative x is a
// correct subnormal rather than 0).
func sigmoidSetup(s isa) func(v reg.VecVirtual) {
	exp := expSetup(s)
	one, zero := s.vec(), s.vec()
	VMOVUPS(c("one"), one)
	VXORPS(zero, zero, zero)
	return func(v reg.VecVirtual) {
		e := s.vec()
		VORPS(c("signmask"), v, e) // −|x|
		exp(e)
		d := s.vec()
		VADDPS(one, e, d)
		num := s.vec()
		if s.bytes == 64 {
			k := K()
			VCMPPS(U8(cmpLTOS), zero, v, k) // k = x < 0
			VBLENDMPS(e, one, k, num)       // num = k ? e : 1
		} else {
			VCMPPS(U8(cmpLTOS), zero, v, v) // v = x < 0 (all ones)
			VBLENDVPS(v, e, one, num)       // num = v ? e : 1
		}
		VDIVPS(d, num, v) // Intel vdivps v, num, d: num/d
	}
}

// tanhSetup: for |x| < 0.625 the Cephes tanhf odd polynomial
// x + x·z·P(z), z = x²; otherwise sign(x)·(1 − 2/(e^{2|x|} + 1)).
func tanhSetup(s isa) func(v reg.VecVirtual) {
	exp := expSetup(s)
	one, two := s.vec(), s.vec()
	VMOVUPS(c("one"), one)
	VMOVUPS(c("two"), two)
	return func(v reg.VecVirtual) {
		a := s.vec()
		VANDPS(c("absmask"), v, a)
		// small-|x| branch
		z := s.vec()
		VMULPS(v, v, z)
		q := s.vec()
		VMOVUPS(c("tanhc4"), q)
		for _, k := range []string{"tanhc3", "tanhc2", "tanhc1", "tanhc0"} {
			VFMADD213PS(c(k), z, q) // q = q·z + c
		}
		VMULPS(z, q, q)
		VFMADD213PS(v, v, q) // q = q·x + x
		// large-|x| branch, computed in a
		sign := s.vec()
		VANDPS(c("signmask"), v, sign)
		if s.bytes == 64 {
			k := K()
			VCMPPS(U8(cmpLTOS), c("tanhsmall"), a, k)
			VADDPS(a, a, a)
			exp(a)
			VADDPS(one, a, a)
			VDIVPS(a, two, a) // 2/(e+1)
			VSUBPS(a, one, a) // 1 − 2/(e+1)
			VORPS(sign, a, a)
			VBLENDMPS(q, a, k, v) // v = k ? q : a
			return
		}
		m := s.vec()
		VCMPPS(U8(cmpLTOS), c("tanhsmall"), a, m)
		VADDPS(a, a, a)
		exp(a)
		VADDPS(one, a, a)
		VDIVPS(a, two, a)
		VSUBPS(a, one, a)
		VORPS(sign, a, a)
		VBLENDVPS(m, q, a, v) // v = m ? q : a
	}
}

// logSetup: the natural logarithm (Cephes logf). x = m·2^e with m in
// [√½, √2), f = m − 1, ln x = f − f²/2 + f³·P(f) + e·ln2 (ln2 split in hi
// and lo parts as for exp). AVX-512 takes m and e from VGETMANTPS and
// VGETEXPPS (subnormals included); AVX2 takes them from the bits, scaling
// subnormals by 2^23 first. Zero gives −Inf, +Inf gives +Inf, negative
// numbers and NaN give NaN.
func logSetup(s isa) func(v reg.VecVirtual) {
	return func(v reg.VecVirtual) {
		m, e := s.vec(), s.vec()
		if s.bytes == 64 {
			// imm 0b1000: mantissa in [1, 2), NaN for negative inputs
			VGETMANTPS(U8(0x08), v, m)
			VGETEXPPS(v, e)
			k := K()
			VCMPPS(U8(cmpGTOQ), c("sqrt2"), m, k)
			VMULPS(c("half"), m, k, m) // m ≥ √2: halve m, increment e
			VADDPS(c("one"), e, k, e)
		} else {
			small := s.vec()
			VCMPPS(U8(cmpLTOS), c("fltmin"), v, small) // 0 ≤ |x| < 2^−126 (and negatives, fixed below)
			scaled := s.vec()
			VMULPS(c("two23"), v, scaled)
			VBLENDVPS(small, scaled, v, m) // m = small ? x·2^23 : x (as bits)
			ebits := s.vec()
			VPSRLD(U8(23), m, ebits)
			VPSUBD(c("bias127"), ebits, ebits)
			VCVTDQ2PS(ebits, e)
			adj := s.vec()
			VANDPS(c("negtwentythree"), small, adj)
			VADDPS(adj, e, e)
			VANDPS(c("mantmask"), m, m)
			VORPS(c("one"), m, m) // m in [1, 2)
			k := s.vec()
			VCMPPS(U8(cmpGTOQ), c("sqrt2"), m, k)
			mh := s.vec()
			VMULPS(c("half"), m, mh)
			VBLENDVPS(k, mh, m, m)
			VANDPS(c("one"), k, k)
			VADDPS(k, e, e)
		}
		VSUBPS(c("one"), m, m) // f
		z := s.vec()
		VMULPS(m, m, z)
		p := s.vec()
		VMOVUPS(c("logc8"), p)
		for _, k := range []string{"logc7", "logc6", "logc5", "logc4", "logc3", "logc2", "logc1", "logc0"} {
			VFMADD213PS(c(k), m, p) // p = p·f + c
		}
		VMULPS(m, p, p)
		VMULPS(z, p, p)                 // y = f³·P(f)
		VFMADD231PS(c("ln2lo"), e, p)   // y += e·ln2lo
		VFMADD231PS(c("neghalf"), z, p) // y −= f²/2
		VADDPS(p, m, m)                 // f + y
		VFMADD231PS(c("ln2hi"), e, m)   // + e·ln2hi
		if s.bytes == 64 {
			kz, ki := K(), K()
			VXORPS(e, e, e)
			VCMPPS(U8(cmpEQOQ), e, v, kz)
			VMOVUPS(c("neginf"), kz, m)
			VCMPPS(U8(cmpEQOQ), c("posinf"), v, ki)
			VMOVUPS(c("posinf"), ki, m)
			VMOVUPS(m, v)
			return
		}
		t := s.vec()
		VXORPS(t, t, t)
		VCMPPS(U8(cmpLTOS), t, v, p) // x < 0 → NaN
		VBLENDVPS(p, c("qnan"), m, m)
		VCMPPS(U8(cmpEQOQ), t, v, p) // x = ±0 → −Inf
		VBLENDVPS(p, c("neginf"), m, m)
		VCMPPS(U8(cmpEQOQ), c("posinf"), v, p)
		VBLENDVPS(p, c("posinf"), m, m)
		VCMPPS(U8(cmpUNORDQ), v, v, p) // NaN stays NaN
		VBLENDVPS(p, v, m, v)
	}
}

// reluSetup: max(0, x) with x as the second source, which VMAXPS returns
// when either source is NaN (and when both are zeros): NaN stays NaN and
// −0 stays −0, as in PyTorch.
func reluSetup(s isa) func(v reg.VecVirtual) {
	zero := s.vec()
	VXORPS(zero, zero, zero)
	return func(v reg.VecVirtual) {
		VMAXPS(v, zero, v) // Intel vmaxps v, zero, v
	}
}

// reluBackward: dst[i] = 0 if x[i] ≤ 0 else grad[i], so a NaN x passes the
// gradient (PyTorch's threshold_backward): the compares are the unordered
// negations, true for NaN.
func genReluBackward(s isa) {
	fn := "reluBackwardF32" + s.name
	text(fn, "func(dst, grad, x []float32)")
	dst := Load(Param("dst").Base(), GP64()).(reg.GPVirtual)
	g := Load(Param("grad").Base(), GP64()).(reg.GPVirtual)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	zero := s.vec()
	VXORPS(zero, zero, zero)
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(f32), 4, func(u int) {
		for j := range u {
			v := s.vec()
			if s.bytes == 64 {
				k := K()
				VCMPPS(U8(cmpNGEUQ), elem(x, i, f32, s, j), zero, k) // k = !(0 ≥ x)
				VMOVUPS_Z(elem(g, i, f32, s, j), k, v)
			} else {
				VMOVUPS(elem(x, i, f32, s, j), v)
				VCMPPS(U8(cmpNLEUQ), zero, v, v) // !(x ≤ 0)
				VANDPS(elem(g, i, f32, s, j), v, v)
			}
			VMOVUPS(v, elem(dst, i, f32, s, j))
		}
	})
	vzeroupper()
	RET()
}

// expShiftSum: dst[i] = exp(x[i] − shift); returns the sum of those dst
// values, accumulated in float64 (used for softmax rows).
func genExpShiftSum(s isa) {
	fn := "expShiftSumF32" + s.name
	text(fn, "func(dst, x []float32, shift float32) float64")
	dst := Load(Param("dst").Base(), GP64()).(reg.GPVirtual)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	sh := s.vec()
	VBROADCASTSS(NewParamAddr("shift", 48), sh)
	exp := expSetup(s)
	acc := []reg.VecVirtual{s.vec(), s.vec(), s.vec(), s.vec()}
	for _, a := range acc {
		VXORPD(a, a, a)
	}
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(f32), 2, func(u int) {
		vs := make([]reg.VecVirtual, u)
		for j := range u {
			vs[j] = s.vec()
			VMOVUPS(elem(x, i, f32, s, j), vs[j])
			VSUBPS(sh, vs[j], vs[j])
		}
		for j := range u {
			exp(vs[j])
		}
		for j := range u {
			VMOVUPS(vs[j], elem(dst, i, f32, s, j))
			// Widen both halves from the register and accumulate, rather
			// than reading back the store just made (0-2% faster).
			halves := [2]Op{vs[j].AsY(), s.vec().AsY()}
			if s.bytes == 64 {
				VEXTRACTF32X8(U8(1), vs[j], halves[1])
			} else {
				halves = [2]Op{vs[j].AsX(), s.vec().AsX()}
				VEXTRACTF128(U8(1), vs[j], halves[1])
			}
			for h, half := range halves {
				w := s.vec()
				VCVTPS2PD(half, w)
				VADDPD(w, acc[2*j+h], acc[2*j+h])
			}
		}
	})
	VADDPD(acc[1], acc[0], acc[0])
	VADDPD(acc[3], acc[2], acc[2])
	VADDPD(acc[2], acc[0], acc[0])
	r := hreduce(s, f64, acc[0], VADDPD)
	Store(r, ReturnIndex(0))
	vzeroupper()
	RET()
}

// gatherU8: dst[i] = tab[idx[i]], a lookup of byte indices (a Parquet
// dictionary page's) in a 256-entry table: the indices widened to dwords,
// then one masked gather per vector. AVX2: 8 lanes, the mask a vector of
// ones; AVX-512: 16 lanes, the mask an opmask register.
func genGatherU8(s isa) {
	text("gatherF32U8"+s.name, "func(dst []float32, tab *[256]float32, idx []uint8)")
	dst, tab, idx, n := GP64(), GP64(), GP64(), GP64()
	Load(Param("dst").Base(), dst)
	Load(Param("tab"), tab)
	Load(Param("idx").Base(), idx)
	Load(Param("idx").Len(), n)
	i := GP64()
	XORQ(i, i)
	lanes := s.lanes(f32)
	loop("gather", i, n, lanes, 4, func(u int) {
		for j := range u {
			v, r := s.vec(), s.vec()
			VPMOVZXBD(Mem{Base: idx, Index: i, Scale: 1, Disp: j * lanes}, v)
			VPXOR(r.AsY(), r.AsY(), r.AsY()) // no dependence on r's old value
			if s.bytes == 64 {
				k := K()
				KXNORW(k, k, k)
				VGATHERDPS(Mem{Base: tab, Index: v, Scale: 4}, k, r)
			} else {
				m := YMM()
				VPCMPEQD(m, m, m)
				VGATHERDPS(m, Mem{Base: tab, Index: v, Scale: 4}, r)
			}
			VMOVUPS(r, elem(dst, i, f32, s, j))
		}
	})
	vzeroupper()
	RET()
}

// gatherRows16: for rows i < n&^3, x[i*ldx+k] = tab[k][idx[k][i]] for the
// sixteen columns k: a dictionary lookup and a transpose in one pass.
// Four rows at a time, two qword-indexed gathers fetch four index bytes
// of each column (from the sixteen pointers ptrs, advanced by four), each
// byte lane is then widened, offset by 256·k into the sixteen tables and
// gathered, and the row's sixteen values stored as one vector. With nt
// the stores are non-temporal (each row's values must then be one aligned
// cache line), followed by an SFENCE.
func genGatherRows16(nt bool) {
	name := "gatherRows16AVX512"
	if nt {
		name = "gatherRows16NTAVX512"
	}
	text(name, "func(x []float32, ldx int, ptrs *[16]*uint8, tab *[16][256]float32, n int)")
	x, ldx, ptrs, tab, n := GP64(), GP64(), GP64(), GP64(), GP64()
	Load(Param("x").Base(), x)
	Load(Param("ldx"), ldx)
	Load(Param("ptrs"), ptrs)
	Load(Param("tab"), tab)
	Load(Param("n"), n)
	SHLQ(U8(2), ldx) // bytes per row
	lo, hi := ZMM(), ZMM()
	VMOVDQU64(Mem{Base: ptrs}, lo)
	VMOVDQU64(Mem{Base: ptrs, Disp: 64}, hi)
	four, offs, mask := ZMM(), ZMM(), ZMM()
	VMOVDQU64(c("four64"), four)
	VMOVDQU32(c("col256"), offs)
	VMOVDQU32(c("byte32"), mask)
	zero := GP64()
	XORQ(zero, zero)
	ANDQ(I32(-4), n)
	i := GP64()
	XORQ(i, i)
	Label("rows16_loop")
	CMPQ(i, n)
	JAE(LabelRef("rows16_done"))
	ka, kb := K(), K()
	KXNORB(ka, ka, ka)
	KXNORB(kb, kb, kb)
	ya, yb := YMM(), YMM()
	VPXOR(ya, ya, ya)
	VPXOR(yb, yb, yb)
	VPGATHERQD(Mem{Base: zero, Index: lo, Scale: 1}, ka, ya)
	VPGATHERQD(Mem{Base: zero, Index: hi, Scale: 1}, kb, yb)
	all := ZMM()
	VINSERTI64X4(U8(1), yb, ya.AsZ(), all)
	for b := range 4 {
		v := ZMM()
		if b == 0 {
			VPANDD(mask, all, v)
		} else {
			VPSRLD(U8(8*b), all, v)
			VPANDD(mask, v, v)
		}
		VPADDD(offs, v, v)
		k := K()
		KXNORW(k, k, k)
		r := ZMM()
		VPXORD(r, r, r)
		VGATHERDPS(Mem{Base: tab, Index: v, Scale: 4}, k, r)
		if nt {
			VMOVNTPS(r, Mem{Base: x})
		} else {
			VMOVUPS(r, Mem{Base: x})
		}
		ADDQ(ldx, x)
	}
	VPADDQ(four, lo, lo)
	VPADDQ(four, hi, hi)
	ADDQ(U32(4), i)
	JMP(LabelRef("rows16_loop"))
	Label("rows16_done")
	if nt {
		SFENCE()
	}
	vzeroupper()
	RET()
}

// Build adds the elementwise maps, reductions and GEMV (elementwise_amd64.s) to avo's global context;
// the caller sets the build constraint and calls Generate.
func Build() {
	defineConstants()
	for _, s := range []isa{avx512, avx2} {
		for _, t := range []dtype{f32, f64} {
			genBinary(s, t, "add", "+", t.add, false)
			genBinary(s, t, "add", "+", t.add, true)
			genBinary(s, t, "sub", "-", t.sub, false)
			genBinary(s, t, "sub", "-", t.sub, true)
			genBinary(s, t, "mul", "*", t.mul, false)
			genBinary(s, t, "mul", "*", t.mul, true)
			genBinary(s, t, "div", "/", t.div, false)
			genBinary(s, t, "div", "/", t.div, true)
			genScalar(s, t, "addScalar", t.add)
			genScalar(s, t, "mulScalar", t.mul)
			genAxpy(s, t)
			genSumDot(s, t, false)
			genSumDot(s, t, true)
			genMaxMin(s, t, true)
			genMaxMin(s, t, false)
		}
		genUnary(s, "reluF32"+s.name, 4, func() func(v reg.VecVirtual) { return reluSetup(s) })
		genReluBackward(s)
		u := 2
		genUnary(s, "expF32"+s.name, u, func() func(v reg.VecVirtual) { return expSetup(s) })
		genUnary(s, "sigmoidF32"+s.name, u, func() func(v reg.VecVirtual) { return sigmoidSetup(s) })
		genUnary(s, "logF32"+s.name, u, func() func(v reg.VecVirtual) { return logSetup(s) })
		if s.bytes == 32 {
			u = 1
		}
		genUnary(s, "tanhF32"+s.name, u, func() func(v reg.VecVirtual) { return tanhSetup(s) })
		genExpShiftSum(s)
		genGemv4(s)
		genGatherU8(s)
	}
	genGatherRows16(false)
	genGatherRows16(true)
}
