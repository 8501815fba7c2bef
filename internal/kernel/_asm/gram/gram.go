// Package gram generates internal/kernel/gram_amd64.s and its Go
// declarations with avo (`go run . -gen gram` in internal/kernel/_asm): the AVX-512 kernels that build the normal
// equations of ALS.
//
// Each kernel walks one entity's ratings; for every rating it loads the
// rated entity's factor y (a row of ld = 8 or 16 float64s, zero-padded past
// the rank) and adds w_a·y[p]·y to row p of the Gram accumulator for p below
// R (8 rows for ld 8, 12 for ld 16) and w_b·y to the right-hand side, all in
// registers (R·ld/8 + ld/8 zmm accumulators); at the end it stores them to a
// (R × ld, row-major) and b (ld). Row p's multiplier y[p] is an embedded
// broadcast of the memory operand, so a rating costs ld/8 loads and
// (R+1)·ld/8 FMAs; the row of the rating 8 places on is prefetched. The E kernels read float32 ratings (w_a = 1, w_b = r),
// the W kernels two float64 weight arrays.
//
// Run `go generate` in internal/kernel (see gram_amd64.go) to regenerate.
package gram

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// prefetchAhead is how many ratings ahead the kernels prefetch.
const prefetchAhead = 8

func genGram(ld int, weighted bool) {
	rows := map[int]int{8: 8, 16: 12}[ld]
	nv := ld / 8
	kind := "E"
	sig := "func(y []float64, idx []int32, val []float32, a, b []float64)"
	if weighted {
		kind = "W"
		sig = "func(y []float64, idx []int32, wa, wb []float64, a, b []float64)"
	}
	name := fmt.Sprintf("gram%s%dAVX512", kind, ld)
	TEXT(name, NOSPLIT, sig)
	Doc(fmt.Sprintf("%s stores Σ w_a·y[p]·y into a[p·%d:] for p < %d and Σ w_b·y into b[:%d] over the ratings idx (y = y[idx·%d:]).", name, ld, rows, ld, ld))
	yp := Load(Param("y").Base(), GP64())
	ip := Load(Param("idx").Base(), GP64())
	n := Load(Param("idx").Len(), GP64())
	var vp, wap, wbp reg.GPVirtual
	if weighted {
		wap = Load(Param("wa").Base(), GP64()).(reg.GPVirtual)
		wbp = Load(Param("wb").Base(), GP64()).(reg.GPVirtual)
	} else {
		vp = Load(Param("val").Base(), GP64()).(reg.GPVirtual)
	}
	acc := make([][]reg.VecVirtual, rows)
	for p := range acc {
		acc[p] = make([]reg.VecVirtual, nv)
		for q := range nv {
			acc[p][q] = ZMM()
			VXORPD(acc[p][q], acc[p][q], acc[p][q])
		}
	}
	rhs := make([]reg.VecVirtual, nv)
	for q := range rhs {
		rhs[q] = ZMM()
		VXORPD(rhs[q], rhs[q], rhs[q])
	}
	i := GP64()
	XORQ(i, i)
	last := GP64()
	MOVQ(n, last)
	DECQ(last)
	shift := map[int]uint8{8: 6, 16: 7}[ld]
	Label("loop")
	CMPQ(i, n)
	JGE(LabelRef("done"))
	// Prefetch the factor prefetchAhead ratings on (the last one near the
	// end): the rows are scattered over a factor matrix larger than the
	// caches.
	pf := GP64()
	MOVQ(i, pf)
	ADDQ(U8(prefetchAhead), pf)
	CMPQ(pf, last)
	CMOVQGT(last, pf)
	MOVLQSX(Mem{Base: ip, Index: pf, Scale: 4}, pf)
	SHLQ(U8(shift), pf)
	ADDQ(yp, pf)
	for q := range nv {
		PREFETCHT0(Mem{Base: pf, Disp: 64 * q})
	}
	row := GP64()
	MOVLQSX(Mem{Base: ip, Index: i, Scale: 4}, row)
	SHLQ(U8(shift), row)
	ADDQ(yp, row)
	yv := make([]reg.VecVirtual, nv)
	for q := range yv {
		yv[q] = ZMM()
		VMOVUPD(Mem{Base: row, Disp: 64 * q}, yv[q])
	}
	wb := ZMM()
	if weighted {
		VBROADCASTSD(Mem{Base: wbp, Index: i, Scale: 8}, wb)
	} else {
		x := XMM()
		VCVTSS2SD(Mem{Base: vp, Index: i, Scale: 4}, x, x)
		VBROADCASTSD(x, wb)
	}
	for q := range nv {
		VFMADD231PD(yv[q], wb, rhs[q])
	}
	z := yv
	if weighted {
		wa := ZMM()
		VBROADCASTSD(Mem{Base: wap, Index: i, Scale: 8}, wa)
		z = make([]reg.VecVirtual, nv)
		for q := range nv {
			z[q] = ZMM()
			VMULPD(yv[q], wa, z[q])
		}
	}
	for p := range rows {
		for q := range nv {
			VFMADD231PD_BCST(Mem{Base: row, Disp: 8 * p}, z[q], acc[p][q])
		}
	}
	INCQ(i)
	JMP(LabelRef("loop"))
	Label("done")
	ap := Load(Param("a").Base(), GP64())
	bp := Load(Param("b").Base(), GP64())
	for p := range rows {
		for q := range nv {
			VMOVUPD(acc[p][q], Mem{Base: ap, Disp: 8 * (p*ld + 8*q)})
		}
	}
	for q := range nv {
		VMOVUPD(rhs[q], Mem{Base: bp, Disp: 64 * q})
	}
	VZEROUPPER()
	RET()
}

// Build adds the ALS Gram kernels (gram_amd64.s) to avo's global context;
// the caller sets the build constraint and calls Generate.
func Build() {
	for _, ld := range []int{8, 16} {
		genGram(ld, false)
		genGram(ld, true)
	}
}
