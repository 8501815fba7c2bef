// Command _asm generates the GEMM micro-kernels of package kernel
// (../gemm_amd64.s and ../gemm_stubs_amd64.go) with avo.
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
// A is a packed micro-panel of `rows` rows (rows values per k step), B a
// packed micro-panel of nr columns (nr values per k step). Accumulators live
// in vector registers for the whole k loop; C is touched once at the end.
// There is one kernel per row count 1..MR so that edge panels in m need no
// padding. Column edges use AVX-512 opmasks (mask bit j enables column j); the
// AVX2 kernels always write a full nr-wide tile and the Go driver routes
// partial column tiles through a scratch tile.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kernelSpec describes one family of micro-kernels.
type kernelSpec struct {
	prefix string // function name prefix, e.g. "sgemmAVX512"
	elem   string // "float32" or "float64"
	size   int    // bytes per element
	lanes  int    // elements per vector register
	mr     int    // max rows
	nv     int    // vectors per row (nr = nv*lanes)
	unroll int    // k-loop unroll factor
	avx512 bool
}

func main() {
	ConstraintExpr("!purego")

	specs := []kernelSpec{
		{prefix: "sgemmAVX512", elem: "float32", size: 4, lanes: 16, mr: 14, nv: 2, unroll: 4, avx512: true},
		{prefix: "dgemmAVX512", elem: "float64", size: 8, lanes: 8, mr: 14, nv: 2, unroll: 4, avx512: true},
		{prefix: "sgemmAVX2", elem: "float32", size: 4, lanes: 8, mr: 6, nv: 2, unroll: 4},
		{prefix: "dgemmAVX2", elem: "float64", size: 8, lanes: 4, mr: 6, nv: 2, unroll: 4},
	}
	for _, s := range specs {
		for rows := 1; rows <= s.mr; rows++ {
			if s.avx512 {
				genAVX512(s, rows)
			} else {
				genAVX2(s, rows)
			}
		}
	}
	Generate()
}

// zmm returns the physical vector register number i at the spec's width.
func vec(s kernelSpec, i int) reg.VecPhysical {
	if s.avx512 {
		return zmms[i]
	}
	return ymms[i]
}

var zmms = []reg.VecPhysical{
	reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
	reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
	reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
	reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
}

var ymms = []reg.VecPhysical{
	reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
	reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15,
}

var kmasks = []reg.OpmaskPhysical{reg.K1, reg.K2, reg.K3, reg.K4}

// Register roles shared by all kernels.
var (
	regK    = reg.RCX // remaining k iterations
	regA    = reg.RSI // packed A pointer
	regB    = reg.RDX // packed B pointer
	regC    = reg.RDI // current C row pointer
	regLdc  = reg.R8  // C row stride in bytes
	regTmp  = reg.RAX // scratch
	regMask = reg.RBX // column mask
	regCnt  = reg.R9  // unrolled iteration count
)

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

func load(s kernelSpec, m, dst Op) {
	if isF32(s) {
		VMOVUPS(m, dst)
	} else {
		VMOVUPD(m, dst)
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
	if s.avx512 {
		return fmt.Sprintf("func(k int, a, b, c *%s, ldc int, beta %s, mask uint64)", s.elem, s.elem)
	}
	return fmt.Sprintf("func(k int, a, b, c *%s, ldc int, beta %s)", s.elem, s.elem)
}

// prologue loads the common arguments and zeroes the accumulators.
func prologue(s kernelSpec, rows int) {
	TEXT(fmt.Sprintf("%s%d", s.prefix, rows), NOSPLIT, signature(s))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s%d computes a %d×%d tile: C = A·B (beta == 0) or C = A·B + beta·C.",
		s.prefix, rows, rows, s.nv*s.lanes))
	Load(Param("k"), regK)
	Load(Param("a"), regA)
	Load(Param("b"), regB)
	Load(Param("c"), regC)
	Load(Param("ldc"), regLdc)
	SHLQ(U8(log2(s.size)), regLdc)

	// Warm C's rows in cache while the k loop runs.
	MOVQ(regC, regTmp)
	for i := 0; i < rows; i++ {
		PREFETCHT0(Mem{Base: regTmp})
		PREFETCHT0(Mem{Base: regTmp, Disp: s.nv*s.lanes*s.size - 1})
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
}

// kStep emits one k iteration at element offset u (in k steps) from regA/regB.
func kStep(s kernelSpec, rows, u int) {
	nr := s.nv * s.lanes
	bBase := rows * s.nv // first B register
	for j := 0; j < s.nv; j++ {
		load(s, Mem{Base: regB, Disp: (u*nr + j*s.lanes) * s.size}, vec(s, bBase+j))
	}
	if s.avx512 {
		for i := 0; i < rows; i++ {
			a := Mem{Base: regA, Disp: (u*rows + i) * s.size}
			for j := 0; j < s.nv; j++ {
				fmaBcst(s, a, vec(s, bBase+j), vec(s, i*s.nv+j))
			}
		}
		return
	}
	bc := vec(s, bBase+s.nv)
	for i := 0; i < rows; i++ {
		bcast(s, Mem{Base: regA, Disp: (u*rows + i) * s.size}, bc)
		for j := 0; j < s.nv; j++ {
			fma(s, vec(s, bBase+j), bc, vec(s, i*s.nv+j))
		}
	}
}

// kLoop emits the unrolled k loop and its remainder loop.
func kLoop(s kernelSpec, rows int) {
	nr := s.nv * s.lanes
	MOVQ(regK, regCnt)
	SHRQ(U8(log2(s.unroll)), regCnt)
	JZ(LabelRef(fmt.Sprintf("%s%d_tail", s.prefix, rows)))
	Label(fmt.Sprintf("%s%d_loop", s.prefix, rows))
	// Prefetch the A panel a few iterations ahead; B streams from L1/L2.
	PREFETCHT0(Mem{Base: regA, Disp: 4 * s.unroll * rows * s.size})
	for u := 0; u < s.unroll; u++ {
		kStep(s, rows, u)
	}
	ADDQ(U32(s.unroll*rows*s.size), regA)
	ADDQ(U32(s.unroll*nr*s.size), regB)
	DECQ(regCnt)
	JNZ(LabelRef(fmt.Sprintf("%s%d_loop", s.prefix, rows)))

	Label(fmt.Sprintf("%s%d_tail", s.prefix, rows))
	ANDQ(U8(s.unroll-1), regK)
	JZ(LabelRef(fmt.Sprintf("%s%d_store", s.prefix, rows)))
	Label(fmt.Sprintf("%s%d_tailloop", s.prefix, rows))
	kStep(s, rows, 0)
	ADDQ(U32(rows*s.size), regA)
	ADDQ(U32(nr*s.size), regB)
	DECQ(regK)
	JNZ(LabelRef(fmt.Sprintf("%s%d_tailloop", s.prefix, rows)))
	Label(fmt.Sprintf("%s%d_store", s.prefix, rows))
}

func genAVX512(s kernelSpec, rows int) {
	prologue(s, rows)
	// Opmasks for the column vectors.
	Load(Param("mask"), regMask)
	for j := 0; j < s.nv; j++ {
		KMOVW(regMask.As32(), kmasks[j])
		if j+1 < s.nv {
			SHRQ(U8(s.lanes), regMask)
		}
	}
	kLoop(s, rows)

	name := fmt.Sprintf("%s%d", s.prefix, rows)
	betaZ := reg.Z30
	tmp := reg.Z31
	betaIsZero(s)
	// beta == 0 (and not NaN): store without reading C.
	JNZ(LabelRef(name + "_beta"))
	for i := 0; i < rows; i++ {
		for j := 0; j < s.nv; j++ {
			m := Mem{Base: regC, Disp: j * s.lanes * s.size}
			if isF32(s) {
				VMOVUPS(vec(s, i*s.nv+j), kmasks[j], m)
			} else {
				VMOVUPD(vec(s, i*s.nv+j), kmasks[j], m)
			}
		}
		if i+1 < rows {
			ADDQ(regLdc, regC)
		}
	}
	VZEROUPPER()
	RET()

	Label(name + "_beta")
	bcast(s, paramAddr("beta"), betaZ)
	for i := 0; i < rows; i++ {
		for j := 0; j < s.nv; j++ {
			m := Mem{Base: regC, Disp: j * s.lanes * s.size}
			acc := vec(s, i*s.nv+j)
			if isF32(s) {
				VMOVUPS_Z(m, kmasks[j], tmp)
				VFMADD231PS(tmp, betaZ, acc)
				VMOVUPS(acc, kmasks[j], m)
			} else {
				VMOVUPD_Z(m, kmasks[j], tmp)
				VFMADD231PD(tmp, betaZ, acc)
				VMOVUPD(acc, kmasks[j], m)
			}
		}
		if i+1 < rows {
			ADDQ(regLdc, regC)
		}
	}
	VZEROUPPER()
	RET()
}

func genAVX2(s kernelSpec, rows int) {
	prologue(s, rows)
	kLoop(s, rows)

	name := fmt.Sprintf("%s%d", s.prefix, rows)
	betaY := reg.Y15
	tmp := reg.Y14
	// At most 12 accumulators + 3 work registers (B and the broadcast, dead
	// here), so Y14 and Y15 are free in the epilogue.
	betaIsZero(s)
	JNZ(LabelRef(name + "_beta"))
	for i := 0; i < rows; i++ {
		for j := 0; j < s.nv; j++ {
			load(s, vec(s, i*s.nv+j), Mem{Base: regC, Disp: j * s.lanes * s.size})
		}
		if i+1 < rows {
			ADDQ(regLdc, regC)
		}
	}
	VZEROUPPER()
	RET()

	Label(name + "_beta")
	bcast(s, paramAddr("beta"), betaY)
	for i := 0; i < rows; i++ {
		for j := 0; j < s.nv; j++ {
			m := Mem{Base: regC, Disp: j * s.lanes * s.size}
			acc := vec(s, i*s.nv+j)
			load(s, m, tmp)
			fma(s, tmp, betaY, acc)
			load(s, acc, m)
		}
		if i+1 < rows {
			ADDQ(regLdc, regC)
		}
	}
	VZEROUPPER()
	RET()
}

// paramAddr is the frame address of a scalar argument.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// betaIsZero sets ZF when beta is +0 or -0 (C must then not be read).
func betaIsZero(s kernelSpec) {
	if isF32(s) {
		MOVL(paramAddr("beta"), reg.EAX)
		SHLL(U8(1), reg.EAX)
	} else {
		MOVQ(paramAddr("beta"), regTmp)
		SHLQ(U8(1), regTmp)
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
