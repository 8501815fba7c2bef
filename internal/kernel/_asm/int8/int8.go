// Package int8 generates the int8 GEMM micro-kernels of package kernel
// (int8_amd64.s and int8_stubs_amd64.go) with avo: `go run . -gen int8` in
// internal/kernel/_asm. It needs avo v0.6.0, the first release that knows
// the AVX512-VNNI instructions.
//
// Run `go generate` in internal/kernel (see int8_amd64.go) to regenerate.
//
// Each micro-kernel computes one int32 tile of C = A·Wᵀ from packed panels:
// A is uint8, W int8, and k runs in groups of four (kg groups), the unit of
// VPDPBUSD. The layouts (see internal/kernel/int8.go):
//
//	A panel: a[g*4*rows + 4*i + t] = A(i, 4g+t)       rows × 4 bytes per group
//	W panel: b[g*128 + 4*j + t]    = W(j, 4g+t)       32 columns × 4 bytes per group
//	C tile:  c[i*32 + j]                              int32, overwritten
//
// AVX512-VNNI (i8gemmVNNI1..14): a 14×32 tile in 28 zmm accumulators; per
// group two W loads and, per row, one dword broadcast of A and two
// VPDPBUSD (u8×s8, four products summed into each int32 lane, no
// saturation).
//
// AVX2 (i8gemmAVX2R1..4): a 4×8 tile, for CPUs without VNNI. It avoids
// VPMADDUBSW, whose int16 pair sums saturate (255·127·2 > 32767): W bytes
// are sign-extended and A bytes zero-extended to int16 (VPMOVSXBW,
// VPMOVZXBW) and VPMADDWD forms exact int32 pair sums. Each accumulator
// lane then holds half of a column's sum (k ≡ 0,1 or 2,3 mod 4); VPHADDD
// and VPERMQ fold the halves and restore the column order once, at the end.
//
// i8DequantAVX512 is the epilogue of the float32 product: for each of
// rows rows of a 32-wide int32 tile it writes
// dst[j] = max(float32(acc[j])·sc[j] + off[j], floor) for the columns whose
// mask bit is set (floor 0 applies a ReLU, −Inf none).
//
// i8QuantAVX512 quantizes n (a multiple of 16) float32 values to uint8:
// clamp(x·inv, lo, hi) rounded half to even (VCVTPS2DQ under the default
// rounding mode) plus the zero point; NaN becomes lo (VMAXPS returns its
// second source for NaN).
//
// i8PeakVNNI runs VPDPBUSD on registers only: the instruction throughput
// that bounds any int8 GEMM on this core (fathom bench matmul --dtype int8
// reports it beside the GEMM's rate).
package int8

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/fathom-ml/fathom/internal/kernel/_asm/asmlib"
)

const (
	vnniMR = 14
	avx2MR = 4
	groupB = 128 // bytes of a W panel per k group (32 columns × 4)
	tileC  = 128 // bytes of a C tile row (32 int32)
)

var (
	regG = reg.RCX // remaining k groups
	regA = reg.RSI
	regB = reg.RDX
	regC = reg.RDI
)

const signature = "func(kg int, a *uint8, b *int8, c *int32)"

// Build adds the int8 GEMM kernels (int8_amd64.s) to avo's global context;
// the caller sets the build constraint and calls Generate.
func Build() {
	for rows := 1; rows <= vnniMR; rows++ {
		genVNNI(rows)
	}
	for rows := 1; rows <= avx2MR; rows++ {
		genAVX2(rows)
	}
	for rows := 1; rows <= vnniMR; rows++ {
		genVNNIDirect(rows)
	}
	genPeak()
	genDequant()
	genRequant()
	genDequantT()
	genDequantPool()
	genDequantRows()
	genDequantPoolT()
	genQuant()
	genMinMax()
	genPrefetch()
}

func prologue() {
	Load(Param("kg"), regG)
	Load(Param("a"), regA)
	Load(Param("b"), regB)
	Load(Param("c"), regC)
}

func genVNNI(rows int) {
	name := fmt.Sprintf("i8gemmVNNI%d", rows)
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets the %d×32 int32 tile c (row stride 32) to A·Wᵀ over kg groups of 4 (AVX512-VNNI).", name, rows))
	prologue()
	for i := 0; i < 2*rows; i++ {
		VPXORD(zmms[i], zmms[i], zmms[i])
	}
	b0, b1 := zmms[28], zmms[29]
	TESTQ(regG, regG)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	VMOVDQU32(Mem{Base: regB}, b0)
	VMOVDQU32(Mem{Base: regB, Disp: 64}, b1)
	for i := 0; i < rows; i++ {
		t := zmms[30+i%2]
		VPBROADCASTD(Mem{Base: regA, Disp: 4 * i}, t)
		VPDPBUSD(b0, t, zmms[2*i])
		VPDPBUSD(b1, t, zmms[2*i+1])
	}
	ADDQ(U32(4*rows), regA)
	ADDQ(U32(groupB), regB)
	DECQ(regG)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	for i := 0; i < rows; i++ {
		VMOVDQU32(zmms[2*i], Mem{Base: regC, Disp: i * tileC})
		VMOVDQU32(zmms[2*i+1], Mem{Base: regC, Disp: i*tileC + 64})
	}
	VZEROUPPER()
	RET()
}

// genVNNIDirect is genVNNI reading A unpacked: row i's group g at
// a + i*lda + 4g. Three base registers (rows 0, 5 and 10) with lda and
// 3·lda as index reach every row of the tile: base + {0, 1, 2, 4}·lda or
// base + 3·lda.
func genVNNIDirect(rows int) {
	name := fmt.Sprintf("i8gemmVNNID%d", rows)
	TEXT(name, NOSPLIT, "func(kg int, a *uint8, lda int, b *int8, c *int32)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets the %d×32 int32 tile c (row stride 32) to A·Wᵀ over kg groups of 4, A unpacked", name, rows),
		"(row i at a + i·lda; AVX512-VNNI).")
	Load(Param("kg"), regG)
	Load(Param("a"), regA)
	Load(Param("b"), regB)
	Load(Param("c"), regC)
	l, l3 := reg.R10, reg.R11
	bases := []reg.Register{regA, reg.R8, reg.R9}
	Load(Param("lda"), l)
	LEAQ(Mem{Base: l, Index: l, Scale: 2}, l3)
	for bi := 1; bi < len(bases) && 5*bi < rows; bi++ {
		// base_bi = a + 5·bi·lda
		LEAQ(Mem{Base: l, Index: l, Scale: 4}, bases[bi])
		if bi == 2 {
			ADDQ(bases[bi], bases[bi])
		}
		ADDQ(regA, bases[bi])
	}
	rowMem := func(i int) Mem {
		b := bases[i/5]
		switch i % 5 {
		case 0:
			return Mem{Base: b}
		case 1:
			return Mem{Base: b, Index: l, Scale: 1}
		case 2:
			return Mem{Base: b, Index: l, Scale: 2}
		case 3:
			return Mem{Base: b, Index: l3, Scale: 1}
		default:
			return Mem{Base: b, Index: l, Scale: 4}
		}
	}
	for i := 0; i < 2*rows; i++ {
		VPXORD(zmms[i], zmms[i], zmms[i])
	}
	b0, b1 := zmms[28], zmms[29]
	TESTQ(regG, regG)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	VMOVDQU32(Mem{Base: regB}, b0)
	VMOVDQU32(Mem{Base: regB, Disp: 64}, b1)
	for i := 0; i < rows; i++ {
		t := zmms[30+i%2]
		VPBROADCASTD(rowMem(i), t)
		VPDPBUSD(b0, t, zmms[2*i])
		VPDPBUSD(b1, t, zmms[2*i+1])
	}
	for bi := 0; bi < len(bases) && 5*bi < rows; bi++ {
		ADDQ(U8(4), bases[bi])
	}
	ADDQ(U32(groupB), regB)
	DECQ(regG)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	for i := 0; i < rows; i++ {
		VMOVDQU32(zmms[2*i], Mem{Base: regC, Disp: i * tileC})
		VMOVDQU32(zmms[2*i+1], Mem{Base: regC, Disp: i*tileC + 64})
	}
	VZEROUPPER()
	RET()
}

func genAVX2(rows int) {
	name := fmt.Sprintf("i8gemmAVX2R%d", rows)
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s sets the %d×8 int32 tile c (row stride 32) to A·Wᵀ over kg groups of 4, b", name, rows),
		"pointing at 8 columns of a 32-column W panel (AVX2, exact int16 products).")
	prologue()
	for i := 0; i < 2*rows; i++ {
		VPXOR(ymms[i], ymms[i], ymms[i])
	}
	b0, b1 := ymms[8], ymms[9]
	TESTQ(regG, regG)
	JZ(LabelRef(name + "_store"))
	Label(name + "_loop")
	VPMOVSXBW(Mem{Base: regB}, b0)
	VPMOVSXBW(Mem{Base: regB, Disp: 16}, b1)
	for i := 0; i < rows; i++ {
		VPBROADCASTD(Mem{Base: regA, Disp: 4 * i}, xmms[10])
		VPMOVZXBW(xmms[10], ymms[10])
		VPMADDWD(b0, ymms[10], ymms[11])
		VPADDD(ymms[11], ymms[2*i], ymms[2*i])
		VPMADDWD(b1, ymms[10], ymms[12])
		VPADDD(ymms[12], ymms[2*i+1], ymms[2*i+1])
	}
	ADDQ(U32(4*rows), regA)
	ADDQ(U32(groupB), regB)
	DECQ(regG)
	JNZ(LabelRef(name + "_loop"))
	Label(name + "_store")
	for i := 0; i < rows; i++ {
		// Lanes of acc0: col 0 (two halves), col 1, | col 2, col 3; acc1 the
		// same for cols 4..7. VPHADDD gives cols 0 1 4 5 | 2 3 6 7.
		VPHADDD(ymms[2*i+1], ymms[2*i], ymms[12])
		VPERMQ(U8(0xD8), ymms[12], ymms[12])
		VMOVDQU(ymms[12], Mem{Base: regC, Disp: i * tileC})
	}
	VZEROUPPER()
	RET()
}

func genPeak() {
	TEXT("i8PeakVNNI", NOSPLIT, "func(n int)")
	Pragma("noescape")
	Doc("i8PeakVNNI runs n iterations of 24 independent VPDPBUSD on zmm registers",
		"(24·64 multiply-adds each): the instruction's throughput, for reports.")
	Load(Param("n"), regG)
	for i := 0; i < 26; i++ {
		VPXORD(zmms[i], zmms[i], zmms[i])
	}
	TESTQ(regG, regG)
	JZ(LabelRef("peak_done"))
	Label("peak_loop")
	for i := 0; i < 24; i++ {
		VPDPBUSD(zmms[24+i%2], zmms[25-i%2], zmms[i])
	}
	DECQ(regG)
	JNZ(LabelRef("peak_loop"))
	Label("peak_done")
	VZEROUPPER()
	RET()
}

func genDequant() {
	TEXT("i8DequantAVX512", NOSPLIT, "func(rows int, acc *int32, sc *float32, off *float32, dst *float32, ldd int, mask uint64, floor float32)")
	Pragma("noescape")
	Doc("i8DequantAVX512 writes rows rows of max(acc·sc + off, floor) into dst (row stride ldd), masked columns only.")
	rows, acc, dst, ldd, tmp := reg.RCX, reg.RSI, reg.RDI, reg.R8, reg.RAX
	Load(Param("rows"), rows)
	Load(Param("acc"), acc)
	Load(Param("sc"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[2])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[3])
	Load(Param("off"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[4])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[5])
	VBROADCASTSS(asmlib.ParamAddr("floor"), zmms[6])
	Load(Param("dst"), dst)
	Load(Param("ldd"), ldd)
	SHLQ(U8(2), ldd)
	Load(Param("mask"), tmp)
	KMOVW(tmp.As32(), reg.K1)
	SHRQ(U8(16), tmp)
	KMOVW(tmp.As32(), reg.K2)
	TESTQ(rows, rows)
	JZ(LabelRef("deq_done"))
	Label("deq_loop")
	VCVTDQ2PS(Mem{Base: acc}, zmms[0])
	VCVTDQ2PS(Mem{Base: acc, Disp: 64}, zmms[1])
	VFMADD213PS(zmms[4], zmms[2], zmms[0])
	VFMADD213PS(zmms[5], zmms[3], zmms[1])
	VMAXPS(zmms[6], zmms[0], zmms[0])
	VMAXPS(zmms[6], zmms[1], zmms[1])
	VMOVUPS(zmms[0], reg.K1, Mem{Base: dst})
	VMOVUPS(zmms[1], reg.K2, Mem{Base: dst, Disp: 64})
	ADDQ(U32(tileC), acc)
	ADDQ(ldd, dst)
	DECQ(rows)
	JNZ(LabelRef("deq_loop"))
	Label("deq_done")
	VZEROUPPER()
	RET()
}

// genDequantT is genDequant storing the tile transposed: row i (an output
// position) goes to dst + i (4 bytes each) + idx[j] for column j, idx the
// byte offsets of the 32 output channels (j·ldc·4), by VSCATTERDPS; the
// channel-major (NCHW) output of a convolution computed as positions ×
// channels, written with no transpose pass.
func genDequantT() {
	TEXT("i8DequantTAVX512", NOSPLIT, "func(rows int, acc *int32, sc *float32, off *float32, dst *float32, idx *int32, mask uint64, floor float32)")
	Pragma("noescape")
	Doc("i8DequantTAVX512 writes rows rows of max(acc·sc + off, floor) transposed: row i, column j at dst + 4i + idx[j] bytes, masked columns only.")
	rows, acc, dst, tmp, m0, m1 := reg.RCX, reg.RSI, reg.RDI, reg.RAX, reg.R8, reg.R9
	Load(Param("rows"), rows)
	Load(Param("acc"), acc)
	Load(Param("sc"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[2])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[3])
	Load(Param("off"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[4])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[5])
	VBROADCASTSS(asmlib.ParamAddr("floor"), zmms[6])
	Load(Param("idx"), tmp)
	VMOVDQU32(Mem{Base: tmp}, zmms[7])
	VMOVDQU32(Mem{Base: tmp, Disp: 64}, zmms[8])
	Load(Param("dst"), dst)
	Load(Param("mask"), m0)
	MOVQ(m0, m1)
	SHRQ(U8(16), m1)
	TESTQ(rows, rows)
	JZ(LabelRef("dqt_done"))
	Label("dqt_loop")
	VCVTDQ2PS(Mem{Base: acc}, zmms[0])
	VCVTDQ2PS(Mem{Base: acc, Disp: 64}, zmms[1])
	VFMADD213PS(zmms[4], zmms[2], zmms[0])
	VFMADD213PS(zmms[5], zmms[3], zmms[1])
	VMAXPS(zmms[6], zmms[0], zmms[0])
	VMAXPS(zmms[6], zmms[1], zmms[1])
	// A scatter clears its mask: reload both each row.
	KMOVW(m0.As32(), reg.K1)
	KMOVW(m1.As32(), reg.K2)
	VSCATTERDPS(zmms[0], reg.K1, Mem{Base: dst, Index: zmms[7], Scale: 1})
	VSCATTERDPS(zmms[1], reg.K2, Mem{Base: dst, Index: zmms[8], Scale: 1})
	ADDQ(U32(tileC), acc)
	ADDQ(U8(4), dst)
	DECQ(rows)
	JNZ(LabelRef("dqt_loop"))
	Label("dqt_done")
	VZEROUPPER()
	RET()
}

// genDequantPool is genDequant with max pooling: each group of g
// consecutive tile rows (the output positions of one pooling window, which
// the unfolding put next to each other) is dequantized and reduced by
// VMAXPS to one output row, so the convolution's full output is never
// stored.
func genDequantPool() {
	TEXT("i8DequantPoolAVX512", NOSPLIT, "func(groups int, pool int, acc *int32, sc *float32, off *float32, dst *float32, ldd int, mask uint64, floor float32)")
	Pragma("noescape")
	Doc("i8DequantPoolAVX512 writes groups rows, each the lane-wise max over pool tile rows of max(acc·sc + off, floor), into dst (row stride ldd), masked columns only.")
	groups, acc, dst, ldd, tmp, r := reg.RCX, reg.RSI, reg.RDI, reg.R8, reg.RAX, reg.R9
	gg := reg.R10
	Load(Param("groups"), groups)
	Load(Param("pool"), gg)
	Load(Param("acc"), acc)
	Load(Param("sc"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[2])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[3])
	Load(Param("off"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[4])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[5])
	VBROADCASTSS(asmlib.ParamAddr("floor"), zmms[6])
	Load(Param("dst"), dst)
	Load(Param("ldd"), ldd)
	SHLQ(U8(2), ldd)
	Load(Param("mask"), tmp)
	KMOVW(tmp.As32(), reg.K1)
	SHRQ(U8(16), tmp)
	KMOVW(tmp.As32(), reg.K2)
	TESTQ(groups, groups)
	JZ(LabelRef("dqp_done"))
	Label("dqp_group")
	VMOVAPS(zmms[6], zmms[7])
	VMOVAPS(zmms[6], zmms[8])
	MOVQ(gg, r)
	Label("dqp_row")
	VCVTDQ2PS(Mem{Base: acc}, zmms[0])
	VCVTDQ2PS(Mem{Base: acc, Disp: 64}, zmms[1])
	VFMADD213PS(zmms[4], zmms[2], zmms[0])
	VFMADD213PS(zmms[5], zmms[3], zmms[1])
	VMAXPS(zmms[7], zmms[0], zmms[7])
	VMAXPS(zmms[8], zmms[1], zmms[8])
	ADDQ(U32(tileC), acc)
	DECQ(r)
	JNZ(LabelRef("dqp_row"))
	VMOVUPS(zmms[7], reg.K1, Mem{Base: dst})
	VMOVUPS(zmms[8], reg.K2, Mem{Base: dst, Disp: 64})
	ADDQ(ldd, dst)
	DECQ(groups)
	JNZ(LabelRef("dqp_group"))
	Label("dqp_done")
	VZEROUPPER()
	RET()
}

// genDequantRows is genDequant for activations quantized row by row
// (dynamic quantization per row, each with its own scale s_i and zero
// point z_i): y = (acc·u + z_i·v)·s_i + b with the column vectors u = the
// weight scales, v = −u·RowSum and b the bias, s_i and z_i broadcast from
// the row arrays.
func genDequantRows() {
	TEXT("i8DequantRowsAVX512", NOSPLIT, "func(rows int, acc *int32, cols *float32, rs *float32, rz *float32, dst *float32, ldd int, mask uint64, floor float32)")
	Pragma("noescape")
	Doc("i8DequantRowsAVX512 writes rows rows of max((acc·u + rz[i]·v)·rs[i] + b, floor) into dst (row stride ldd), masked columns only;",
		"cols holds u, v and b, 32 values each.")
	rows, acc, dst, ldd, tmp, rs, rz := reg.RCX, reg.RSI, reg.RDI, reg.R8, reg.RAX, reg.R9, reg.R10
	Load(Param("rows"), rows)
	Load(Param("acc"), acc)
	Load(Param("cols"), tmp)
	for i := 0; i < 6; i++ {
		VMOVUPS(Mem{Base: tmp, Disp: 64 * i}, zmms[2+i]) // u0 u1 v0 v1 b0 b1
	}
	VBROADCASTSS(asmlib.ParamAddr("floor"), zmms[8])
	Load(Param("rs"), rs)
	Load(Param("rz"), rz)
	Load(Param("dst"), dst)
	Load(Param("ldd"), ldd)
	SHLQ(U8(2), ldd)
	Load(Param("mask"), tmp)
	KMOVW(tmp.As32(), reg.K1)
	SHRQ(U8(16), tmp)
	KMOVW(tmp.As32(), reg.K2)
	TESTQ(rows, rows)
	JZ(LabelRef("dqr_done"))
	Label("dqr_loop")
	VBROADCASTSS(Mem{Base: rz}, zmms[9])
	VBROADCASTSS(Mem{Base: rs}, zmms[10])
	VCVTDQ2PS(Mem{Base: acc}, zmms[0])
	VCVTDQ2PS(Mem{Base: acc, Disp: 64}, zmms[1])
	VMULPS(zmms[2], zmms[0], zmms[0])
	VMULPS(zmms[3], zmms[1], zmms[1])
	VFMADD231PS(zmms[4], zmms[9], zmms[0])
	VFMADD231PS(zmms[5], zmms[9], zmms[1])
	VFMADD213PS(zmms[6], zmms[10], zmms[0])
	VFMADD213PS(zmms[7], zmms[10], zmms[1])
	VMAXPS(zmms[8], zmms[0], zmms[0])
	VMAXPS(zmms[8], zmms[1], zmms[1])
	VMOVUPS(zmms[0], reg.K1, Mem{Base: dst})
	VMOVUPS(zmms[1], reg.K2, Mem{Base: dst, Disp: 64})
	ADDQ(U32(tileC), acc)
	ADDQ(U8(4), rs)
	ADDQ(U8(4), rz)
	ADDQ(ldd, dst)
	DECQ(rows)
	JNZ(LabelRef("dqr_loop"))
	Label("dqr_done")
	VZEROUPPER()
	RET()
}

// genDequantPoolT is genDequantPool storing each pooled row transposed by
// VSCATTERDPS, as genDequantT: pooled row q, column j at dst + 4q + idx[j]
// bytes (NCHW straight from the epilogue).
func genDequantPoolT() {
	TEXT("i8DequantPoolTAVX512", NOSPLIT, "func(groups int, pool int, acc *int32, sc *float32, off *float32, dst *float32, idx *int32, mask uint64, floor float32)")
	Pragma("noescape")
	Doc("i8DequantPoolTAVX512 is i8DequantPoolAVX512 storing pooled row q, column j at dst + 4q + idx[j] bytes.")
	groups, acc, dst, tmp, r, gg, m0, m1 := reg.RCX, reg.RSI, reg.RDI, reg.RAX, reg.R9, reg.R10, reg.R11, reg.R12
	Load(Param("groups"), groups)
	Load(Param("pool"), gg)
	Load(Param("acc"), acc)
	Load(Param("sc"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[2])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[3])
	Load(Param("off"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[4])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[5])
	VBROADCASTSS(asmlib.ParamAddr("floor"), zmms[6])
	Load(Param("idx"), tmp)
	VMOVDQU32(Mem{Base: tmp}, zmms[9])
	VMOVDQU32(Mem{Base: tmp, Disp: 64}, zmms[10])
	Load(Param("dst"), dst)
	Load(Param("mask"), m0)
	MOVQ(m0, m1)
	SHRQ(U8(16), m1)
	TESTQ(groups, groups)
	JZ(LabelRef("dqpt_done"))
	Label("dqpt_group")
	VMOVAPS(zmms[6], zmms[7])
	VMOVAPS(zmms[6], zmms[8])
	MOVQ(gg, r)
	Label("dqpt_row")
	VCVTDQ2PS(Mem{Base: acc}, zmms[0])
	VCVTDQ2PS(Mem{Base: acc, Disp: 64}, zmms[1])
	VFMADD213PS(zmms[4], zmms[2], zmms[0])
	VFMADD213PS(zmms[5], zmms[3], zmms[1])
	VMAXPS(zmms[7], zmms[0], zmms[7])
	VMAXPS(zmms[8], zmms[1], zmms[8])
	ADDQ(U32(tileC), acc)
	DECQ(r)
	JNZ(LabelRef("dqpt_row"))
	KMOVW(m0.As32(), reg.K1)
	KMOVW(m1.As32(), reg.K2)
	VSCATTERDPS(zmms[7], reg.K1, Mem{Base: dst, Index: zmms[9], Scale: 1})
	VSCATTERDPS(zmms[8], reg.K2, Mem{Base: dst, Index: zmms[10], Scale: 1})
	ADDQ(U8(4), dst)
	DECQ(groups)
	JNZ(LabelRef("dqpt_group"))
	Label("dqpt_done")
	VZEROUPPER()
	RET()
}

// genRequant is the epilogue of a product whose output is quantized again
// (uint8 activations for the next layer): dst[j] = clamp(acc·sc + off, lo,
// hi) rounded half to even, the output zero point folded into off.
func genRequant() {
	TEXT("i8RequantAVX512", NOSPLIT, "func(rows int, acc *int32, sc *float32, off *float32, dst *uint8, ldd int, mask uint64, lo float32, hi float32)")
	Pragma("noescape")
	Doc("i8RequantAVX512 writes rows rows of round(clamp(acc·sc + off, lo, hi)) as bytes into dst (row stride ldd), masked columns only.")
	rows, acc, dst, ldd, tmp := reg.RCX, reg.RSI, reg.RDI, reg.R8, reg.RAX
	Load(Param("rows"), rows)
	Load(Param("acc"), acc)
	Load(Param("sc"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[2])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[3])
	Load(Param("off"), tmp)
	VMOVUPS(Mem{Base: tmp}, zmms[4])
	VMOVUPS(Mem{Base: tmp, Disp: 64}, zmms[5])
	VBROADCASTSS(asmlib.ParamAddr("lo"), zmms[6])
	VBROADCASTSS(asmlib.ParamAddr("hi"), zmms[7])
	Load(Param("dst"), dst)
	Load(Param("ldd"), ldd)
	Load(Param("mask"), tmp)
	KMOVW(tmp.As32(), reg.K1)
	SHRQ(U8(16), tmp)
	KMOVW(tmp.As32(), reg.K2)
	TESTQ(rows, rows)
	JZ(LabelRef("rq_done"))
	Label("rq_loop")
	VCVTDQ2PS(Mem{Base: acc}, zmms[0])
	VCVTDQ2PS(Mem{Base: acc, Disp: 64}, zmms[1])
	VFMADD213PS(zmms[4], zmms[2], zmms[0])
	VFMADD213PS(zmms[5], zmms[3], zmms[1])
	VMAXPS(zmms[6], zmms[0], zmms[0])
	VMAXPS(zmms[6], zmms[1], zmms[1])
	VMINPS(zmms[7], zmms[0], zmms[0])
	VMINPS(zmms[7], zmms[1], zmms[1])
	VCVTPS2DQ(zmms[0], zmms[0])
	VCVTPS2DQ(zmms[1], zmms[1])
	VPMOVDB(zmms[0], reg.K1, Mem{Base: dst})
	VPMOVDB(zmms[1], reg.K2, Mem{Base: dst, Disp: 16})
	ADDQ(U32(tileC), acc)
	ADDQ(ldd, dst)
	DECQ(rows)
	JNZ(LabelRef("rq_loop"))
	Label("rq_done")
	VZEROUPPER()
	RET()
}

// genMinMax scans n (a multiple of 16) float32 values once for their
// minimum and maximum: two vectors per step into two accumulators each
// (16 lanes wide), then folded to scalars in registers; the result says
// whether any value was NaN (VCMPPS unordered, or-ed into a mask
// register), in which case lo and hi mean nothing.
func genMinMax() {
	TEXT("i8MinMaxAVX512", NOSPLIT, "func(n int, x *float32) (lo float32, hi float32, nan bool)")
	Pragma("noescape")
	Doc("i8MinMaxAVX512 returns the minimum and maximum of n (a multiple of 16, at least 16) values",
		"and whether any value is NaN (then lo and hi are meaningless).")
	n, x := reg.RCX, reg.RSI
	Load(Param("n"), n)
	Load(Param("x"), x)
	VMOVUPS(Mem{Base: x}, zmms[0])
	VMOVAPS(zmms[0], zmms[1])
	VMOVAPS(zmms[0], zmms[2])
	VMOVAPS(zmms[0], zmms[3])
	KXORW(reg.K2, reg.K2, reg.K2)
	KXORW(reg.K3, reg.K3, reg.K3)
	SHRQ(U8(4), n)
	// Pairs of vectors, then a last single one when n/16 is odd.
	Label("mm_pair")
	CMPQ(n, U8(2))
	JB(LabelRef("mm_single"))
	VMOVUPS(Mem{Base: x}, zmms[4])
	VMOVUPS(Mem{Base: x, Disp: 64}, zmms[5])
	VMINPS(zmms[4], zmms[0], zmms[0])
	VMAXPS(zmms[4], zmms[1], zmms[1])
	VMINPS(zmms[5], zmms[2], zmms[2])
	VMAXPS(zmms[5], zmms[3], zmms[3])
	VCMPPS(U8(3), zmms[4], zmms[4], reg.K1)
	KORW(reg.K1, reg.K2, reg.K2)
	VCMPPS(U8(3), zmms[5], zmms[5], reg.K1)
	KORW(reg.K1, reg.K3, reg.K3)
	ADDQ(U32(128), x)
	SUBQ(U8(2), n)
	JMP(LabelRef("mm_pair"))
	Label("mm_single")
	TESTQ(n, n)
	JZ(LabelRef("mm_fold"))
	VMOVUPS(Mem{Base: x}, zmms[4])
	VMINPS(zmms[4], zmms[0], zmms[0])
	VMAXPS(zmms[4], zmms[1], zmms[1])
	VCMPPS(U8(3), zmms[4], zmms[4], reg.K1)
	KORW(reg.K1, reg.K2, reg.K2)
	Label("mm_fold")
	KORW(reg.K3, reg.K2, reg.K2)
	VMINPS(zmms[2], zmms[0], zmms[0])
	VMAXPS(zmms[3], zmms[1], zmms[1])
	VEXTRACTF32X8(U8(1), zmms[0], ymms[2])
	VMINPS(ymms[2], ymms[0], ymms[0])
	VEXTRACTF32X8(U8(1), zmms[1], ymms[3])
	VMAXPS(ymms[3], ymms[1], ymms[1])
	VEXTRACTF128(U8(1), ymms[0], xmms[2])
	VMINPS(xmms[2], xmms[0], xmms[0])
	VEXTRACTF128(U8(1), ymms[1], xmms[3])
	VMAXPS(xmms[3], xmms[1], xmms[1])
	VPERMILPS(U8(0x4E), xmms[0], xmms[2])
	VMINPS(xmms[2], xmms[0], xmms[0])
	VPERMILPS(U8(0x4E), xmms[1], xmms[3])
	VMAXPS(xmms[3], xmms[1], xmms[1])
	VPERMILPS(U8(0xB1), xmms[0], xmms[2])
	VMINSS(xmms[2], xmms[0], xmms[0])
	VPERMILPS(U8(0xB1), xmms[1], xmms[3])
	VMAXSS(xmms[3], xmms[1], xmms[1])
	Store(xmms[0], ReturnIndex(0))
	Store(xmms[1], ReturnIndex(1))
	KORTESTW(reg.K2, reg.K2)
	SETNE(reg.AL)
	Store(reg.AL, ReturnIndex(2))
	VZEROUPPER()
	RET()
}

// genPrefetch asks for n cache lines from p on (PREFETCHT1, into L2):
// the driver fetches the next block of float32 activations while the
// current one is multiplied, so the first pass over a row does not wait
// on memory.
func genPrefetch() {
	TEXT("i8Prefetch", NOSPLIT, "func(p *float32, n int)")
	Pragma("noescape")
	Doc("i8Prefetch prefetches n cache lines from p on into L2.")
	p, n := reg.RSI, reg.RCX
	Load(Param("p"), p)
	Load(Param("n"), n)
	TESTQ(n, n)
	JZ(LabelRef("pf_done"))
	Label("pf_loop")
	PREFETCHT1(Mem{Base: p})
	ADDQ(U8(64), p)
	DECQ(n)
	JNZ(LabelRef("pf_loop"))
	Label("pf_done")
	RET()
}

func genQuant() {
	TEXT("i8QuantAVX512", NOSPLIT, "func(n int, x *float32, dst *uint8, inv float32, lo float32, hi float32, zero int32)")
	Pragma("noescape")
	Doc("i8QuantAVX512 sets dst[i] = round(clamp(x[i]·inv, lo, hi)) + zero for n (a multiple of 16) values.")
	n, x, dst := reg.RCX, reg.RSI, reg.RDI
	Load(Param("n"), n)
	Load(Param("x"), x)
	Load(Param("dst"), dst)
	VBROADCASTSS(asmlib.ParamAddr("inv"), zmms[1])
	VBROADCASTSS(asmlib.ParamAddr("lo"), zmms[2])
	VBROADCASTSS(asmlib.ParamAddr("hi"), zmms[3])
	Load(Param("zero"), reg.EAX)
	VPBROADCASTD(reg.EAX, zmms[4])
	SHRQ(U8(4), n)
	JZ(LabelRef("q_done"))
	Label("q_loop")
	VMULPS(Mem{Base: x}, zmms[1], zmms[0])
	VMAXPS(zmms[2], zmms[0], zmms[0])
	VMINPS(zmms[3], zmms[0], zmms[0])
	VCVTPS2DQ(zmms[0], zmms[0])
	VPADDD(zmms[4], zmms[0], zmms[0])
	VPMOVDB(zmms[0], Mem{Base: dst})
	ADDQ(U32(64), x)
	ADDQ(U32(16), dst)
	DECQ(n)
	JNZ(LabelRef("q_loop"))
	Label("q_done")
	VZEROUPPER()
	RET()
}

var zmms = asmlib.Zmms

var ymms = asmlib.Ymms

var xmms = asmlib.Xmms
