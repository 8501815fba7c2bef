// Package gemm generates the GEMM micro-kernels of package kernel
// (gemm_amd64.s and gemm_stubs_amd64.go) with avo: `go run . -gen gemm` in
// internal/kernel/_asm.
//
// Run `go generate` in internal/kernel (see gemm_amd64.go) to regenerate.
//
// Each micro-kernel computes one register tile of C = A·B (+ beta·C) from
// packed panels, following the GotoBLAS/BLIS design (Goto & van de Geijn,
// "Anatomy of High-Performance Matrix Multiplication", ACM TOMS 2008; Van Zee
// & van de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS
// Functionality", ACM TOMS 2015):
//
//	for p := 0; p < k; p++ {
//		for i := 0; i < rows; i++ {
//			C[i][0:nr] += A[p*rows+i] * B[p*nr : p*nr+nr]
//		}
//	}
//
// B(p, j) is read at b[p*ldb + j]: a packed micro-panel of nr columns
// (ldb = nr) or, when it pays, B itself. A is read
// in place with a stride: flavor R reads A(i, p) at a[i*lda + p] (row-major
// rows, so packing A is a plain copy or nothing at all), flavor C reads it at
// a[p*lda + i] (a transposed A, or a classic packed panel with lda = rows).
// Accumulators live in vector registers for the whole k loop and C is touched
// once at the end: C = alpha·acc (beta == 0, C not read) or alpha·acc + beta·C.
// AVX-512 has two tile shapes per type. The 14-row tile (14×32 float32,
// 14×16 float64: 28 accumulators, two B vectors) wastes little on the edges
// of small and odd shapes. The wide 9-row tile (9×48, 9×24: 27 accumulators,
// three B vectors) needs 12 loads per 27 FMAs instead of 16 per 28, which
// runs its k loop at about 94% of the FMA peak against 87% (an isolated
// loop on a Sapphire Rapids-class core); the driver uses it for large
// products (see gemmWideMin).
// There is one kernel per row count 1..MR so that edge panels in m need no
// padding. Column edges use AVX-512 opmasks (mask bit j enables column j); the
// AVX2 kernels always write a full nr-wide tile and the Go driver routes
// partial column tiles through a scratch tile.
package gemm

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/fathom-ml/fathom/internal/kernel/_asm/asmlib"
)

// kernelSpec describes one family of micro-kernels.
type kernelSpec struct {
	prefix string // function name prefix, e.g. "sgemmAVX512"
	elem   string // "float32" or "float64"
	size   int    // bytes per element
	lanes  int    // elements per vector register
	mr     int    // max rows
	nv     int    // vectors per row (nr = nv*lanes)
	avx512 bool
}

// bcastReg selects explicit broadcasts into registers over embedded
// broadcast operands in the AVX-512 kernels: fewer load uops, measured about
// 10% faster on a Sapphire Rapids-class core (about 200 vs 182 GFLOP/s for
// the float32 14×32 tile in L1).
const bcastReg = true

// unroll is the k-loop unroll factor (the C flavor's addressing assumes 4).
const unroll = 4

// Build adds the GEMM micro-kernels (gemm_amd64.s) to avo's global context;
// the caller sets the build constraint and calls Generate.
func Build() {
	specs := []kernelSpec{
		{prefix: "sgemmAVX512", elem: "float32", size: 4, lanes: 16, mr: 14, nv: 2, avx512: true},
		{prefix: "dgemmAVX512", elem: "float64", size: 8, lanes: 8, mr: 14, nv: 2, avx512: true},
		{prefix: "sgemmAVX512W", elem: "float32", size: 4, lanes: 16, mr: 9, nv: 3, avx512: true},
		{prefix: "dgemmAVX512W", elem: "float64", size: 8, lanes: 8, mr: 9, nv: 3, avx512: true},
		{prefix: "sgemmAVX2", elem: "float32", size: 4, lanes: 8, mr: 6, nv: 2},
		{prefix: "dgemmAVX2", elem: "float64", size: 8, lanes: 4, mr: 6, nv: 2},
	}
	for _, s := range specs {
		for _, flavor := range []byte{'R', 'C'} {
			for rows := 1; rows <= s.mr; rows++ {
				gen(s, flavor, rows)
			}
		}
	}
	genTransposeS16()
	genTransposeD8()
}

// vec returns vector register i at the spec's width.
func vec(s kernelSpec, i int) reg.VecPhysical {
	if s.avx512 {
		return zmms[i]
	}
	return ymms[i]
}

var kmasks = []reg.OpmaskPhysical{reg.K1, reg.K2, reg.K3, reg.K4}

// Register roles shared by all kernels.
var (
	regK    = reg.RCX // remaining k iterations
	regB    = reg.RDX // packed B pointer
	regC    = reg.RDI // current C row pointer
	regLdc  = reg.R8  // C row stride in bytes
	regCnt  = reg.R9  // unrolled iteration count
	regLda  = asmlib.RegLda
	regTmp  = reg.RAX // scratch (prologue/epilogue)
	regMask = reg.RBX // column mask (prologue)
	regLdb  = reg.RBX // B k-step stride in bytes (k loop)
	regLdb3 = reg.RAX // 3·ldb (k loop)
	// A pointers: asmlib's A-panel registers (flavor R: base rows 0, 3, 5,
	// 10; flavor C: regA, regA3 = 3·lda, regA4 = 4·lda).
	regA   = asmlib.RegA
	regA3  = asmlib.RegA3
	regA4  = asmlib.RegA4
	rowReg = asmlib.RowReg
)

// rowMem is A(i, step u) for flavor R.
func rowMem(s kernelSpec, i, u int) Mem { return asmlib.RowMem(i, u*s.size) }

// colMem is A(i, step u) for flavor C (u < 4).
func colMem(s kernelSpec, i, u int) Mem { return asmlib.ColMem(i, u, s.size) }

func isF32(s kernelSpec) bool { return s.size == 4 }

func fma(s kernelSpec, src, mul, acc Op) {
	if isF32(s) {
		VFMADD231PS(src, mul, acc)
	} else {
		VFMADD231PD(src, mul, acc)
	}
}

func fmaBcst(s kernelSpec, m Mem, mul, acc Op) {
	if isF32(s) {
		VFMADD231PS_BCST(m, mul, acc)
	} else {
		VFMADD231PD_BCST(m, mul, acc)
	}
}

func mul(s kernelSpec, x, acc Op) {
	if isF32(s) {
		VMULPS(x, acc, acc)
	} else {
		VMULPD(x, acc, acc)
	}
}

func move(s kernelSpec, src, dst Op) {
	if isF32(s) {
		VMOVUPS(src, dst)
	} else {
		VMOVUPD(src, dst)
	}
}

func bcast(s kernelSpec, src, dst Op) {
	if isF32(s) {
		VBROADCASTSS(src, dst)
	} else {
		VBROADCASTSD(src, dst)
	}
}

func signature(s kernelSpec) string {
	sig := fmt.Sprintf("func(k int, a *%[1]s, lda int, b *%[1]s, ldb int, c *%[1]s, ldc int, alpha, beta %[1]s", s.elem)
	if s.avx512 {
		return sig + ", mask uint64)"
	}
	return sig + ")"
}

func gen(s kernelSpec, flavor byte, rows int) {
	name := fmt.Sprintf("%s%c%d", s.prefix, flavor, rows)
	nr := s.nv * s.lanes
	TEXT(name, NOSPLIT, signature(s))
	Pragma("noescape")
	layout := "a[i*lda+p]"
	if flavor == 'C' {
		layout = "a[p*lda+i]"
	}
	Doc(fmt.Sprintf("%s computes a %d×%d tile of C = alpha·A·B + beta·C with A(i,p) at %s.", name, rows, nr, layout),
		"C is not read when beta is 0.")

	Load(Param("k"), regK)
	Load(Param("a"), regA)
	Load(Param("lda"), regLda)
	SHLQ(U8(log2(s.size)), regLda)
	Load(Param("b"), regB)
	Load(Param("c"), regC)
	Load(Param("ldc"), regLdc)
	SHLQ(U8(log2(s.size)), regLdc)
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
		for off := 0; off < nr*s.size; off += 64 {
			PREFETCHT0(Mem{Base: regTmp, Disp: off})
		}
		if nr*s.size%64 != 0 {
			PREFETCHT0(Mem{Base: regTmp, Disp: nr*s.size - 1})
		}
		if i+1 < rows {
			ADDQ(regLdc, regTmp)
		}
	}
	for i := 0; i < rows*s.nv; i++ {
		z := vec(s, i)
		if s.avx512 {
			VPXORD(z, z, z)
		} else {
			VXORPS(z, z, z)
		}
	}
	if s.avx512 {
		Load(Param("mask"), regMask)
		for j := 0; j < s.nv; j++ {
			KMOVW(regMask.As32(), kmasks[j])
			if j+1 < s.nv {
				SHRQ(U8(s.lanes), regMask)
			}
		}
	}
	Load(Param("ldb"), regLdb)
	SHLQ(U8(log2(s.size)), regLdb)
	LEAQ(Mem{Base: regLdb, Index: regLdb, Scale: 2}, regLdb3)

	// k loop, unrolled.
	MOVQ(regK, regCnt)
	SHRQ(U8(log2(unroll)), regCnt)
	JZ(LabelRef(name + "_tail"))
	Label(name + "_loop")
	if flavor == 'C' {
		PREFETCHT0(Mem{Base: regA, Index: regA4, Scale: 2})
	}
	for u := 0; u < unroll; u++ {
		kStep(s, flavor, rows, u)
	}
	advanceA(s, flavor, rows, unroll)
	LEAQ(Mem{Base: regB, Index: regLdb, Scale: 4}, regB)
	DECQ(regCnt)
	JNZ(LabelRef(name + "_loop"))

	Label(name + "_tail")
	ANDQ(U8(unroll-1), regK)
	JZ(LabelRef(name + "_store"))
	Label(name + "_tailloop")
	kStep(s, flavor, rows, 0)
	advanceA(s, flavor, rows, 1)
	ADDQ(regLdb, regB)
	DECQ(regK)
	JNZ(LabelRef(name + "_tailloop"))

	Label(name + "_store")
	epilogue(s, name, rows)
}

// kStep emits one k step at offset u from the current A and B pointers.
func kStep(s kernelSpec, flavor byte, rows, u int) {
	bBase := rows * s.nv // first B register
	for j := 0; j < s.nv; j++ {
		m := Mem{Base: regB, Disp: j * s.lanes * s.size}
		switch u {
		case 1:
			m.Index, m.Scale = regLdb, 1
		case 2:
			m.Index, m.Scale = regLdb, 2
		case 3:
			m.Index, m.Scale = regLdb3, 1
		}
		move(s, m, vec(s, bBase+j))
	}
	aMem := func(i int) Mem {
		if flavor == 'R' {
			return rowMem(s, i, u)
		}
		return colMem(s, i, u)
	}
	if s.avx512 && !bcastReg {
		for i := 0; i < rows; i++ {
			for j := 0; j < s.nv; j++ {
				fmaBcst(s, aMem(i), vec(s, bBase+j), vec(s, i*s.nv+j))
			}
		}
		return
	}
	if s.avx512 {
		// One broadcast load per row into Z30/Z31 (never accumulators),
		// then register FMAs: fewer load uops than embedded broadcasts.
		for i := 0; i < rows; i++ {
			bc := zmms[30+i%2]
			bcast(s, aMem(i), bc)
			for j := 0; j < s.nv; j++ {
				fma(s, vec(s, bBase+j), bc, vec(s, i*s.nv+j))
			}
		}
		return
	}
	bc := vec(s, bBase+s.nv)
	for i := 0; i < rows; i++ {
		bcast(s, aMem(i), bc)
		for j := 0; j < s.nv; j++ {
			fma(s, vec(s, bBase+j), bc, vec(s, i*s.nv+j))
		}
	}
}

// advanceA moves the A pointers forward by `steps` k steps.
func advanceA(s kernelSpec, flavor byte, rows, steps int) {
	if flavor == 'R' {
		for _, b := range asmlib.RowBases(rows) {
			ADDQ(U32(steps*s.size), rowReg[b])
		}
		return
	}
	if steps == unroll {
		ADDQ(regA4, regA)
	} else {
		ADDQ(regLda, regA)
	}
}

// epilogue scales the accumulators by alpha and writes C, merging beta·C
// unless beta is zero. AVX-512 stores are opmasked by column.
func epilogue(s kernelSpec, name string, rows int) {
	var alpha, beta, tmp reg.VecPhysical
	if s.avx512 {
		alpha, beta, tmp = reg.Z29, reg.Z30, reg.Z31 // never accumulators (≤ 28)
	} else {
		alpha, beta, tmp = reg.Y13, reg.Y14, reg.Y15 // accumulators ≤ 12, B and broadcast dead
	}
	bcast(s, asmlib.ParamAddr("alpha"), alpha)
	for i := 0; i < rows*s.nv; i++ {
		mul(s, alpha, vec(s, i))
	}
	// beta is +0 or -0 exactly when its bits shifted left by one are zero.
	if isF32(s) {
		MOVL(asmlib.ParamAddr("beta"), reg.EAX)
		SHLL(U8(1), reg.EAX)
	} else {
		MOVQ(asmlib.ParamAddr("beta"), regTmp)
		SHLQ(U8(1), regTmp)
	}
	JNZ(LabelRef(name + "_beta"))
	writeC(s, rows, func(acc reg.VecPhysical, m Mem, j int) {
		storeC(s, acc, m, j)
	})
	Label(name + "_beta")
	bcast(s, asmlib.ParamAddr("beta"), beta)
	writeC(s, rows, func(acc reg.VecPhysical, m Mem, j int) {
		if s.avx512 {
			if isF32(s) {
				VMOVUPS_Z(m, kmasks[j], tmp)
			} else {
				VMOVUPD_Z(m, kmasks[j], tmp)
			}
		} else {
			move(s, m, tmp)
		}
		fma(s, tmp, beta, acc)
		storeC(s, acc, m, j)
	})
}

// writeC visits every accumulator with its C address, then returns.
func writeC(s kernelSpec, rows int, f func(acc reg.VecPhysical, m Mem, j int)) {
	for i := 0; i < rows; i++ {
		for j := 0; j < s.nv; j++ {
			f(vec(s, i*s.nv+j), Mem{Base: regC, Disp: j * s.lanes * s.size}, j)
		}
		if i+1 < rows {
			ADDQ(regLdc, regC)
		}
	}
	VZEROUPPER()
	RET()
}

func storeC(s kernelSpec, acc reg.VecPhysical, m Mem, j int) {
	switch {
	case !s.avx512:
		move(s, acc, m)
	case isF32(s):
		VMOVUPS(acc, kmasks[j], m)
	default:
		VMOVUPD(acc, kmasks[j], m)
	}
}

func log2(x int) int {
	n := 0
	for x > 1 {
		x >>= 1
		n++
	}
	return n
}

// genTransposeS16 emits sgemmTransAVX512(k, src, lds, dst, ldd), which sets
// dst[p*ldd + j] = src[j*lds + p] for j < 16 and p < k (k a multiple of 16):
// packing a transposed B. Each 16×16 block is transposed in registers with
// the usual four shuffle stages (unpack ps, unpack pd, two 128-bit lane
// shuffles).
func genTransposeS16() {
	TEXT("sgemmTransAVX512", NOSPLIT, "func(k int, src *float32, lds int, dst *float32, ldd int)")
	Pragma("noescape")
	Doc("sgemmTransAVX512 sets dst[p*ldd+j] = src[j*lds+p] for j < 16, p < k (k a multiple of 16).")
	transposeLoop(4, 16, func() {
		r, t := zmms[:16], zmms[16:]
		// Stage 1: interleave rows pairwise.
		for i := 0; i < 8; i++ {
			VUNPCKLPS(r[2*i+1], r[2*i], t[2*i])
			VUNPCKHPS(r[2*i+1], r[2*i], t[2*i+1])
		}
		// Stage 2: s[g*4+c] holds, in 128-bit lane l, column c+4l of rows 4g..4g+3.
		for g := 0; g < 4; g++ {
			a, b := t[4*g], t[4*g+1]   // rows 4g, 4g+1
			c, d := t[4*g+2], t[4*g+3] // rows 4g+2, 4g+3
			VUNPCKLPD(c, a, r[4*g+0])
			VUNPCKHPD(c, a, r[4*g+1])
			VUNPCKLPD(d, b, r[4*g+2])
			VUNPCKHPD(d, b, r[4*g+3])
		}
		// Stages 3 and 4: a 4×4 transpose of 128-bit lanes.
		for c := 0; c < 4; c++ {
			s0, s1, s2, s3 := r[c], r[4+c], r[8+c], r[12+c]
			VSHUFF32X4(U8(0x88), s1, s0, t[4*c+0])
			VSHUFF32X4(U8(0x88), s3, s2, t[4*c+1])
			VSHUFF32X4(U8(0xdd), s1, s0, t[4*c+2])
			VSHUFF32X4(U8(0xdd), s3, s2, t[4*c+3])
		}
		for c := 0; c < 4; c++ {
			u0, u1, v0, v1 := t[4*c], t[4*c+1], t[4*c+2], t[4*c+3]
			VSHUFF32X4(U8(0x88), u1, u0, r[c])
			VSHUFF32X4(U8(0xdd), u1, u0, r[c+8])
			VSHUFF32X4(U8(0x88), v1, v0, r[c+4])
			VSHUFF32X4(U8(0xdd), v1, v0, r[c+12])
		}
	})
}

// genTransposeD8 emits dgemmTransAVX512, the float64 counterpart on 8×8 blocks.
func genTransposeD8() {
	TEXT("dgemmTransAVX512", NOSPLIT, "func(k int, src *float64, lds int, dst *float64, ldd int)")
	Pragma("noescape")
	Doc("dgemmTransAVX512 sets dst[p*ldd+j] = src[j*lds+p] for j < 8, p < k (k a multiple of 8).")
	transposeLoop(8, 8, func() {
		r, t := zmms[:8], zmms[8:16]
		for i := 0; i < 4; i++ {
			VUNPCKLPD(r[2*i+1], r[2*i], t[2*i])
			VUNPCKHPD(r[2*i+1], r[2*i], t[2*i+1])
		}
		// t[2i] holds columns 0,2,4,6 of rows 2i,2i+1 (one per lane), t[2i+1] columns 1,3,5,7.
		for h := 0; h < 2; h++ {
			VSHUFF64X2(U8(0x88), t[2+h], t[h], r[h])   // rows 0-3, cols h, h+4 / h+2... (lanes 0,2)
			VSHUFF64X2(U8(0xdd), t[2+h], t[h], r[2+h]) // lanes 1,3
			VSHUFF64X2(U8(0x88), t[6+h], t[4+h], r[4+h])
			VSHUFF64X2(U8(0xdd), t[6+h], t[4+h], r[6+h])
		}
		// r[h] = [c h | c h+4] of rows 0-3 as lanes (c h rows01, c h+4 rows01, c h rows23, c h+4 rows23).
		for h := 0; h < 2; h++ {
			for q := 0; q < 2; q++ {
				lo, hi := r[2*q+h], r[4+2*q+h]
				col := h + 2*q
				VSHUFF64X2(U8(0x88), hi, lo, t[col])
				VSHUFF64X2(U8(0xdd), hi, lo, t[col+4])
			}
		}
		for i := 0; i < 8; i++ {
			VMOVAPD(t[i], r[i])
		}
	})
}

// transposeLoop emits the k loop shared by the transposes: load `n` rows of
// `n` elements, call body (which leaves column t in zmm t), store the columns.
func transposeLoop(size, n int, body func()) {
	k, src, lds, dst, ldd, rp := reg.RCX, reg.RSI, reg.R8, reg.RDI, reg.R9, reg.RAX
	Load(Param("k"), k)
	Load(Param("src"), src)
	Load(Param("lds"), lds)
	Load(Param("dst"), dst)
	Load(Param("ldd"), ldd)
	SHLQ(U8(log2(size)), lds)
	SHLQ(U8(log2(size)), ldd)
	SHRQ(U8(log2(n)), k)
	JZ(LabelRef(fmt.Sprintf("trans%d_done", size)))
	Label(fmt.Sprintf("trans%d_loop", size))
	MOVQ(src, rp)
	for j := 0; j < n; j++ {
		VMOVUPS(Mem{Base: rp}, zmms[j])
		if j+1 < n {
			ADDQ(lds, rp)
		}
	}
	body()
	for t := 0; t < n; t++ {
		VMOVUPS(zmms[t], Mem{Base: dst})
		ADDQ(ldd, dst)
	}
	ADDQ(U32(64), src)
	DECQ(k)
	JNZ(LabelRef(fmt.Sprintf("trans%d_loop", size)))
	Label(fmt.Sprintf("trans%d_done", size))
	VZEROUPPER()
	RET()
}

var zmms = asmlib.Zmms

var ymms = asmlib.Ymms
