// Package bf16 generates the bfloat16 GEMM kernels of package kernel
// (gemm_bf16_amd64.s and gemm_bf16_stubs_amd64.go) with avo: `go run . -gen
// bf16` in internal/kernel/_asm.
//
// Run `go generate` in internal/kernel (see gemm_bf16_amd64.go) to
// regenerate.
//
// The micro-kernels compute one 14×32 register tile of C = alpha·A·B +
// beta·C with AVX512-BF16's VDPBF16PS, which multiplies pairs of bfloat16
// values and adds both products to a float32 lane:
//
//	acc[j] += A(i, 2q+1)·B(2q+1, j)   (Intel's order: the odd element first)
//	acc[j] += A(i, 2q)·B(2q, j)
//
// so A and B hold k in pairs: a 32-bit word (low half element 2q, high half
// element 2q+1) per pair q. A(i, q) is read at a[i*lda+q] (flavor R) or
// a[p*lda+i] (flavor C), broadcast to all 16 lanes; B(q, j) at b[q*ldb+j],
// 32 columns as two vectors. 28 accumulators, two B vectors and two
// broadcast registers fill the 32 zmm registers, as in the float32 14×32
// tile of package gemm (see that generator for the design, after GotoBLAS/BLIS).
//
// It also emits the conversions the driver uses to lay the operands out in
// pairs: VCVTNE2PS2BF16 rounds float32 to bfloat16 to nearest even (and
// flushes subnormal inputs to zero), VPERMW interleaves two converted rows.
//
// Neither avo nor the Go assembler knows the AVX512-BF16 instructions, so
// this generator encodes them itself (evex below) and emits their bytes; the
// encodings were checked with objdump, and the kernel tests compare every
// result with the Go reference.
package bf16

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/fathom-ml/fathom/internal/kernel/_asm/asmlib"
)

const (
	mr    = 14 // tile rows
	nv    = 2  // B vectors per k pair
	lanes = 16 // float32 lanes per zmm
	size  = 4  // bytes per A/B element (one pair) and per C element
)

// unroll is the k-loop unroll factor (the C flavor's addressing assumes 4).
const unroll = 4

// Build adds the bfloat16 GEMM kernels (gemm_bf16_amd64.s) to avo's global context;
// the caller sets the build constraint and calls Generate.
func Build() {
	for _, flavor := range []byte{'R', 'C'} {
		for rows := 1; rows <= mr; rows++ {
			gen(flavor, rows)
		}
	}
	genPairs()
	genContig()
	genAMX()
}

var kmasks = []reg.OpmaskPhysical{reg.K1, reg.K2}

// raw emits bytes as BYTE directives.
func raw(bs ...byte) {
	for _, b := range bs {
		Instruction(&ir.Instruction{Opcode: "BYTE", Operands: []Op{U8(b)}})
	}
}

// evex emits a 512-bit, register-only EVEX instruction in Intel operand
// order: op reg, vvvv, rm (Intel SDM vol. 2, 2.7 "EVEX encoding"). pp
// selects the implied prefix (1: 66, 2: F3, 3: F2), map 2 is 0F38.
func evex(pp, opcode byte, regIdx, vvvv, rm int) {
	inv := func(x int, bit uint) byte { return byte(^x>>bit) & 1 }
	p0 := inv(regIdx, 3)<<7 | inv(rm, 4)<<6 | inv(rm, 3)<<5 | inv(regIdx, 4)<<4 | 2 // map 0F38
	p1 := byte(^vvvv&0xf)<<3 | 1<<2 | pp                                            // W0
	p2 := byte(2)<<5 | inv(vvvv, 4)<<3                                              // L'L = 512, no mask
	modrm := byte(0xc0) | byte(regIdx&7)<<3 | byte(rm&7)
	raw(0x62, p0, p1, p2, opcode, modrm)
}

// vdpbf16ps emits VDPBF16PS zmm(acc), zmm(x), zmm(y): acc += pairwise x·y.
func vdpbf16ps(acc, x, y int) { evex(2, 0x52, acc, x, y) }

// vcvtne2ps2bf16 emits VCVTNE2PS2BF16 zmm(dst), zmm(hi), zmm(lo): the 16
// bfloat16 of lo in the low half of dst, those of hi in the high half.
func vcvtne2ps2bf16(dst, hi, lo int) { evex(3, 0x72, dst, hi, lo) }

// Register roles of the micro-kernels (as in package gemm).
var (
	regK    = reg.RCX // remaining k pairs
	regB    = reg.RDX // B pointer
	regC    = reg.RDI // current C row pointer
	regLdc  = reg.R8  // C row stride in bytes
	regCnt  = reg.R9  // unrolled iteration count
	regLda  = asmlib.RegLda
	regTmp  = reg.RAX // scratch (prologue/epilogue)
	regMask = reg.RBX // column mask (prologue)
	regLdb  = reg.RBX // B stride in bytes (k loop)
	regLdb3 = reg.RAX // 3·ldb (k loop)
	// A pointers: asmlib's A-panel registers (flavor R: base rows 0, 3, 5,
	// 10; flavor C: regA, regA3 = 3·lda, regA4 = 4·lda).
	regA   = asmlib.RegA
	regA3  = asmlib.RegA3
	regA4  = asmlib.RegA4
	rowReg = asmlib.RowReg
)

// rowMem is A(i, pair u) for flavor R.
func rowMem(i, u int) Mem { return asmlib.RowMem(i, u*size) }

// colMem is A(i, pair u) for flavor C (u < 4).
func colMem(i, u int) Mem { return asmlib.ColMem(i, u, size) }

func gen(flavor byte, rows int) {
	name := fmt.Sprintf("sbgemmAVX512%c%d", flavor, rows)
	nr := nv * lanes
	TEXT(name, NOSPLIT, "func(k int, a *uint32, lda int, b *uint32, ldb int, c *float32, ldc int, alpha, beta float32, mask uint64)")
	Pragma("noescape")
	layout := "a[i*lda+q]"
	if flavor == 'C' {
		layout = "a[q*lda+i]"
	}
	Doc(fmt.Sprintf("%s computes a %d×%d tile of C = alpha·A·B + beta·C from k bfloat16 pairs, A(i,q) at %s, B(q,j) at b[q*ldb+j].", name, rows, nr, layout),
		"C is not read when beta is 0; mask bit j enables column j.")

	Load(Param("k"), regK)
	Load(Param("a"), regA)
	Load(Param("lda"), regLda)
	SHLQ(U8(2), regLda)
	Load(Param("b"), regB)
	Load(Param("c"), regC)
	Load(Param("ldc"), regLdc)
	SHLQ(U8(2), regLdc)
	if flavor == 'R' {
		for _, b := range asmlib.RowBases(rows)[1:] {
			IMUL3Q(U32(b), regLda, rowReg[b])
			ADDQ(regA, rowReg[b])
		}
	} else {
		LEAQ(Mem{Base: regLda, Index: regLda, Scale: 2}, regA3)
		MOVQ(regLda, regA4)
		SHLQ(U8(2), regA4)
	}
	// Warm C's rows in cache while the k loop runs.
	MOVQ(regC, regTmp)
	for i := 0; i < rows; i++ {
		for off := 0; off < nr*size; off += 64 {
			PREFETCHT0(Mem{Base: regTmp, Disp: off})
		}
		if i+1 < rows {
			ADDQ(regLdc, regTmp)
		}
	}
	for i := 0; i < rows*nv; i++ {
		VPXORD(zmms[i], zmms[i], zmms[i])
	}
	Load(Param("mask"), regMask)
	KMOVW(regMask.As32(), kmasks[0])
	SHRQ(U8(lanes), regMask)
	KMOVW(regMask.As32(), kmasks[1])
	Load(Param("ldb"), regLdb)
	SHLQ(U8(2), regLdb)
	LEAQ(Mem{Base: regLdb, Index: regLdb, Scale: 2}, regLdb3)

	MOVQ(regK, regCnt)
	SHRQ(U8(2), regCnt)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	if flavor == 'C' {
		PREFETCHT0(Mem{Base: regA, Index: regA4, Scale: 2})
	}
	for u := 0; u < unroll; u++ {
		kStep(flavor, rows, u)
	}
	advanceA(flavor, rows, unroll)
	LEAQ(Mem{Base: regB, Index: regLdb, Scale: 4}, regB)
	DECQ(regCnt)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), regK)
	JZ(LabelRef(name + "_store"))
	Label(name + "_tailloop")
	kStep(flavor, rows, 0)
	advanceA(flavor, rows, 1)
	ADDQ(regLdb, regB)
	DECQ(regK)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_store")
	epilogue(name, rows)
}

// kStep emits one k pair at offset u from the current A and B pointers.
func kStep(flavor byte, rows, u int) {
	bBase := rows * nv // first B register
	for j := 0; j < nv; j++ {
		m := Mem{Base: regB, Disp: j * lanes * size}
		switch u {
		case 1:
			m.Index, m.Scale = regLdb, 1
		case 2:
			m.Index, m.Scale = regLdb, 2
		case 3:
			m.Index, m.Scale = regLdb3, 1
		}
		VMOVDQU32(m, zmms[bBase+j])
	}
	for i := 0; i < rows; i++ {
		bc := 30 + i%2 // never an accumulator (≤ 28) or a B register
		m := rowMem(i, u)
		if flavor == 'C' {
			m = colMem(i, u)
		}
		VPBROADCASTD(m, zmms[bc])
		for j := 0; j < nv; j++ {
			vdpbf16ps(i*nv+j, bBase+j, bc)
		}
	}
}

// advanceA moves the A pointers forward by `steps` k pairs.
func advanceA(flavor byte, rows, steps int) {
	if flavor == 'R' {
		for _, b := range asmlib.RowBases(rows) {
			ADDQ(U32(steps*size), rowReg[b])
		}
		return
	}
	if steps == unroll {
		ADDQ(regA4, regA)
	} else {
		ADDQ(regLda, regA)
	}
}

// epilogue scales the accumulators by alpha and writes C (opmasked by
// column), merging beta·C unless beta is zero.
func epilogue(name string, rows int) {
	alpha, beta, tmp := reg.Z29, reg.Z30, reg.Z31 // never accumulators (≤ 28)
	VBROADCASTSS(asmlib.ParamAddr("alpha"), alpha)
	for i := 0; i < rows*nv; i++ {
		VMULPS(alpha, zmms[i], zmms[i])
	}
	// beta is +0 or -0 exactly when its bits shifted left by one are zero.
	MOVL(asmlib.ParamAddr("beta"), reg.EAX)
	SHLL(U8(1), reg.EAX)
	JNZ(LabelRef(name + "_beta"))
	writeC(rows, func(acc reg.VecPhysical, m Mem, j int) {
		VMOVUPS(acc, kmasks[j], m)
	})
	Label(name + "_beta")
	VBROADCASTSS(asmlib.ParamAddr("beta"), beta)
	writeC(rows, func(acc reg.VecPhysical, m Mem, j int) {
		VMOVUPS_Z(m, kmasks[j], tmp)
		VFMADD231PS(tmp, beta, acc)
		VMOVUPS(acc, kmasks[j], m)
	})
}

// writeC visits every accumulator with its C address, then returns.
func writeC(rows int, f func(acc reg.VecPhysical, m Mem, j int)) {
	for i := 0; i < rows; i++ {
		for j := 0; j < nv; j++ {
			f(zmms[i*nv+j], Mem{Base: regC, Disp: j * lanes * size}, j)
		}
		if i+1 < rows {
			ADDQ(regLdc, regC)
		}
	}
	VZEROUPPER()
	RET()
}

// genPairs emits sbgemmPairsAVX512(n, x, y, dst, stride): for each j < n (n
// a multiple of 32) the word dst[j] = bf16(x[j]) | bf16(y[j])<<16, where
// the words of columns 32t..32t+31 start stride bytes after those of
// 32(t-1): stride 128 writes one contiguous row, a larger one scatters the
// row over packed B panels.
func genPairs() {
	idx := GLOBL("sbgemmInterleave", RODATA|NOPTR)
	for j := 0; j < 16; j++ {
		DATA(4*j, U16(j))      // word 2j: x[j] (low half of the conversion)
		DATA(4*j+2, U16(16+j)) // word 2j+1: y[j] (high half)
	}
	TEXT("sbgemmPairsAVX512", NOSPLIT, "func(n int, x, y *float32, dst *uint32, stride int)")
	Pragma("noescape")
	Doc("sbgemmPairsAVX512 sets dst[j] = bf16(x[j]) | bf16(y[j])<<16 for j < n (a multiple of 32), 32 words per stride bytes.")
	n, x, y, dst, stride := reg.RCX, reg.RSI, reg.RDI, reg.RDX, reg.R8
	Load(Param("n"), n)
	Load(Param("x"), x)
	Load(Param("y"), y)
	Load(Param("dst"), dst)
	Load(Param("stride"), stride)
	VMOVDQU16(idx, reg.Z31)
	SHRQ(U8(5), n)
	JZ(LabelRef("pairs_done"))
	Label("pairs_loop")
	for h := 0; h < 2; h++ {
		VMOVUPS(Mem{Base: x, Disp: 64 * h}, reg.Z0)
		VMOVUPS(Mem{Base: y, Disp: 64 * h}, reg.Z1)
		vcvtne2ps2bf16(2, 1, 0) // Z2 = [bf16(x) | bf16(y)]
		VPERMW(reg.Z2, reg.Z31, reg.Z3)
		VMOVDQU32(reg.Z3, Mem{Base: dst, Disp: 64 * h})
	}
	ADDQ(U32(128), x)
	ADDQ(U32(128), y)
	ADDQ(stride, dst)
	DECQ(n)
	JNZ(LabelRef("pairs_loop"))
	Label("pairs_done")
	VZEROUPPER()
	RET()
}

// genContig emits sbgemmContigAVX512(n, x, dst): dst[j] = bf16(x[j]) for j
// < n (a multiple of 32), so consecutive elements pair up in words.
func genContig() {
	TEXT("sbgemmContigAVX512", NOSPLIT, "func(n int, x *float32, dst *uint16)")
	Pragma("noescape")
	Doc("sbgemmContigAVX512 sets dst[j] = bf16(x[j]) for j < n (a multiple of 32).")
	n, x, dst := reg.RCX, reg.RSI, reg.RDX
	Load(Param("n"), n)
	Load(Param("x"), x)
	Load(Param("dst"), dst)
	SHRQ(U8(5), n)
	JZ(LabelRef("contig_done"))
	Label("contig_loop")
	VMOVUPS(Mem{Base: x}, reg.Z0)
	VMOVUPS(Mem{Base: x, Disp: 64}, reg.Z1)
	vcvtne2ps2bf16(2, 1, 0)
	VMOVDQU16(reg.Z2, Mem{Base: dst})
	ADDQ(U32(128), x)
	ADDQ(U32(64), dst)
	DECQ(n)
	JNZ(LabelRef("contig_loop"))
	Label("contig_done")
	VZEROUPPER()
	RET()
}

// vexTile emits a VEX-encoded AMX instruction (map 0F38, W0, L0): opcode
// with implied prefix pp (0: none, 1: 66, 2: F3, 3: F2), ModRM reg field
// r (a tile), and either a tile rm (memory == false) or a [base + index·1
// + disp8] memory operand (Intel SDM vol. 2, 2.3 "VEX", and the AMX
// chapter of the ISA extensions reference).
// hw is the hardware number of a general-purpose register.
func hw(r reg.GPPhysical) int {
	for i, x := range []reg.GPPhysical{reg.RAX, reg.RCX, reg.RDX, reg.RBX, reg.RSP, reg.RBP, reg.RSI, reg.RDI,
		reg.R8, reg.R9, reg.R10, reg.R11, reg.R12, reg.R13, reg.R14, reg.R15} {
		if x == r {
			return i
		}
	}
	panic(fmt.Sprintf("register %v", r))
}

func vexTile(pp, opcode byte, r, vvvv int, memory bool, base, index reg.GPPhysical, disp int8, rm int) {
	inv := func(x int, bit uint) byte { return byte(^x>>bit) & 1 }
	var x, b int
	if memory {
		x, b = hw(index), hw(base)
	} else {
		b = rm
	}
	p1 := inv(r, 3)<<7 | inv(x, 3)<<6 | inv(b, 3)<<5 | 2
	p2 := byte(^vvvv&0xf)<<3 | pp
	if !memory {
		raw(0xc4, p1, p2, opcode, 0xc0|byte(r&7)<<3|byte(rm&7))
		return
	}
	// mod 01 (disp8) with a SIB byte: works for every base, RBP and R13
	// included.
	raw(0xc4, p1, p2, opcode, 0x40|byte(r&7)<<3|4, byte(x&7)<<3|byte(b&7), byte(disp))
}

func ldtilecfg(base reg.GPPhysical) {
	// LDTILECFG m512: VEX.128.NP.0F38.W0 49 /0, [base + disp8 0] (no SIB
	// needed; base must not be RSP or R12).
	inv := func(x int, bit uint) byte { return byte(^x>>bit) & 1 }
	id := hw(base)
	raw(0xc4, 1<<7|1<<6|inv(id, 3)<<5|2, 0x78, 0x49, 0x40|byte(id&7), 0)
}

func tilerelease() { raw(0xc4, 0xe2, 0x78, 0x49, 0xc0) }

func tilezero(t int) { vexTile(3, 0x49, t, 0, false, nil, nil, 0, 0) }

// tileloadd loads tile t with rows at base+disp, base+disp+stride, ...
func tileloadd(t int, base, stride reg.GPPhysical, disp int8) {
	vexTile(3, 0x4b, t, 0, true, base, stride, disp, 0)
}

// tilestored stores tile t to rows at base+disp, base+disp+stride, ...
func tilestored(t int, base, stride reg.GPPhysical, disp int8) {
	vexTile(2, 0x4b, t, 0, true, base, stride, disp, 0)
}

// tdpbf16ps emits TDPBF16PS tmm(c), tmm(a), tmm(b): C[m][n] += Σ_q
// A[m][q]·B[q][n] over bfloat16 pairs (float32 C).
func tdpbf16ps(c, a, b int) { vexTile(2, 0x5c, c, b, false, nil, nil, 0, a) }

// genAMX emits sbgemmAMXStrip: a strip of 32 rows of C against npanels
// panels of 32 columns, with AMX tiles. Tiles 0-3 are the 2×2 blocks of
// 16×16 float32 accumulators, 4-5 the two 16-row halves of A (16 pairs
// per row), 6-7 the two 16-column halves of a B panel (16 pair rows). Each
// panel's accumulators go through scratch (32×32 float32) into C, scaled
// by alpha, merged with beta·C, rows < rows and opmasked columns.
func genAMX() {
	TEXT("sbgemmAMXStrip", NOSPLIT, "func(k16 int, a *uint32, lda int, b *uint32, panel int, npanels int, c *float32, ldc int, alpha, beta float32, rows int, mask uint64, cfg *byte, scratch *float32)")
	Pragma("noescape")
	Doc("sbgemmAMXStrip computes rows (≤ 32) rows of C = alpha·A·B + beta·C over npanels panels of 32 columns with AMX tiles:",
		"A(i,q) at a[i*lda+q] (32 readable rows), panel p's B(q,j) at b[p*panel+q*32+j], k16 blocks of 16 pairs.",
		"mask enables the columns of the last panel; C is not read when beta is 0.")
	var (
		aPtr   = reg.RSI
		a2     = reg.RDI
		lda    = reg.R8
		bPtr   = reg.RDX
		s128   = reg.R9
		scr    = reg.R10
		cPtr   = reg.R11
		ldc    = reg.R12
		kCnt   = reg.RCX
		pCnt   = reg.RBX
		tmp    = reg.RAX
		cRow   = reg.R13
		rowCnt = reg.RCX // the k counter is free while merging
	)
	alpha, beta := reg.Z30, reg.Z31
	Load(Param("cfg"), tmp)
	ldtilecfg(tmp)
	Load(Param("lda"), lda)
	SHLQ(U8(2), lda)
	Load(Param("ldc"), ldc)
	SHLQ(U8(2), ldc)
	Load(Param("b"), bPtr)
	Load(Param("c"), cPtr)
	Load(Param("scratch"), scr)
	MOVQ(U32(128), s128)
	VBROADCASTSS(asmlib.ParamAddr("alpha"), alpha)
	VBROADCASTSS(asmlib.ParamAddr("beta"), beta)
	Load(Param("npanels"), pCnt)
	MOVL(U32(0xffff), tmp.As32())
	KMOVW(tmp.As32(), reg.K1)
	KMOVW(tmp.As32(), reg.K2)

	Label("amx_panel")
	// The last panel takes the caller's column mask.
	CMPQ(pCnt, U8(1))
	JNE(LabelRef("amx_full"))
	Load(Param("mask"), tmp)
	KMOVW(tmp.As32(), reg.K1)
	SHRQ(U8(16), tmp)
	KMOVW(tmp.As32(), reg.K2)
	Label("amx_full")
	for t := 0; t < 4; t++ {
		tilezero(t)
	}
	Load(Param("a"), aPtr)
	MOVQ(lda, a2)
	SHLQ(U8(4), a2)
	ADDQ(aPtr, a2)
	MOVQ(bPtr, tmp) // the panel's B pointer walks k; bPtr stays at the panel
	Load(Param("k16"), kCnt)
	Label("amx_k")
	tileloadd(4, aPtr, lda, 0)
	tileloadd(5, a2, lda, 0)
	tileloadd(6, tmp, s128, 0)
	tileloadd(7, tmp, s128, 64)
	tdpbf16ps(0, 4, 6)
	tdpbf16ps(1, 4, 7)
	tdpbf16ps(2, 5, 6)
	tdpbf16ps(3, 5, 7)
	ADDQ(U8(64), aPtr)
	ADDQ(U8(64), a2)
	ADDQ(U32(2048), tmp)
	DECQ(kCnt)
	JNZ(LabelRef("amx_k"))

	// Accumulators to scratch (row stride 128 bytes).
	tilestored(0, scr, s128, 0)
	tilestored(1, scr, s128, 64)
	MOVQ(scr, tmp)
	ADDQ(U32(2048), tmp)
	tilestored(2, tmp, s128, 0)
	tilestored(3, tmp, s128, 64)

	// Merge rows into C.
	MOVQ(cPtr, cRow)
	MOVQ(scr, tmp)
	Load(Param("rows"), rowCnt)
	MOVL(asmlib.ParamAddr("beta"), reg.EAX.As32())
	// (EAX is tmp's low half: reload tmp after the test.)
	SHLL(U8(1), reg.EAX)
	JNZ(LabelRef("amx_merge_beta"))
	MOVQ(scr, tmp)
	Label("amx_store")
	VMULPS(Mem{Base: tmp}, alpha, reg.Z0)
	VMULPS(Mem{Base: tmp, Disp: 64}, alpha, reg.Z1)
	VMOVUPS(reg.Z0, reg.K1, Mem{Base: cRow})
	VMOVUPS(reg.Z1, reg.K2, Mem{Base: cRow, Disp: 64})
	ADDQ(U32(128), tmp)
	ADDQ(ldc, cRow)
	DECQ(rowCnt)
	JNZ(LabelRef("amx_store"))
	JMP(LabelRef("amx_next"))

	Label("amx_merge_beta")
	MOVQ(scr, tmp)
	Label("amx_merge")
	VMULPS(Mem{Base: tmp}, alpha, reg.Z0)
	VMULPS(Mem{Base: tmp, Disp: 64}, alpha, reg.Z1)
	VMOVUPS_Z(Mem{Base: cRow}, reg.K1, reg.Z2)
	VMOVUPS_Z(Mem{Base: cRow, Disp: 64}, reg.K2, reg.Z3)
	VFMADD231PS(reg.Z2, beta, reg.Z0)
	VFMADD231PS(reg.Z3, beta, reg.Z1)
	VMOVUPS(reg.Z0, reg.K1, Mem{Base: cRow})
	VMOVUPS(reg.Z1, reg.K2, Mem{Base: cRow, Disp: 64})
	ADDQ(U32(128), tmp)
	ADDQ(ldc, cRow)
	DECQ(rowCnt)
	JNZ(LabelRef("amx_merge"))

	Label("amx_next")
	ADDQ(U32(128), cPtr)
	Load(Param("panel"), tmp)
	SHLQ(U8(2), tmp)
	ADDQ(tmp, bPtr)
	DECQ(pCnt)
	JNZ(LabelRef("amx_panel"))
	tilerelease()
	VZEROUPPER()
	RET()
}

var zmms = asmlib.Zmms
