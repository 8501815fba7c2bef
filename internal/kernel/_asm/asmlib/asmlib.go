// Package asmlib holds what the generator families share: the vector
// register lists, frame addresses, the counted vector loop of the
// elementwise and optimizer kernels, and the A-panel addressing of the
// GEMM-shaped micro-kernels (float32/64 and bf16).
package asmlib

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Zmms, Ymms and Xmms list the physical vector registers in order.
var (
	Zmms = []reg.VecPhysical{
		reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
	}
	Ymms = []reg.VecPhysical{
		reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15,
	}
	Xmms = []reg.VecPhysical{
		reg.X0, reg.X1, reg.X2, reg.X3, reg.X4, reg.X5, reg.X6, reg.X7,
		reg.X8, reg.X9, reg.X10, reg.X11, reg.X12, reg.X13, reg.X14, reg.X15,
	}
)

// ParamAddr is the frame address of a scalar argument.
func ParamAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// Text starts a NOSPLIT, noescape function.
func Text(name, signature string) {
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
}

// Loop runs body over i = 0, lanes, 2·lanes, ... below n: body(unroll)
// advances unroll vectors at a time while they fit, then body(1) one vector
// at a time; the tail below one vector is left to the caller.
func Loop(label string, i, n reg.GPVirtual, lanes, unroll int, body func(u int)) {
	limU := GP64()
	MOVQ(n, limU)
	ANDQ(I32(^(lanes*unroll - 1)), limU)
	lim1 := GP64()
	MOVQ(n, lim1)
	ANDQ(I32(^(lanes - 1)), lim1)
	if unroll > 1 {
		Label(label + "_blocks")
		CMPQ(i, limU)
		JAE(LabelRef(label + "_singles"))
		body(unroll)
		ADDQ(U32(lanes*unroll), i)
		JMP(LabelRef(label + "_blocks"))
	}
	Label(label + "_singles")
	CMPQ(i, lim1)
	JAE(LabelRef(label + "_done"))
	body(1)
	ADDQ(U32(lanes), i)
	JMP(LabelRef(label + "_singles"))
	Label(label + "_done")
}

// The A-panel registers of the GEMM-shaped micro-kernels. Flavor R (A read
// by rows): base rows 0, 3, 5, 10, and every row 0..13 is a base plus 0, 1,
// 2, 4 or 8 strides. Flavor C (A read by columns): RegA, with RegA3 = 3·lda
// and RegA4 = 4·lda.
var (
	RegLda = reg.R10 // A stride in bytes
	RegA   = reg.RSI
	RegA3  = reg.R11
	RegA4  = reg.R12
	RowReg = map[int]reg.GPPhysical{0: reg.RSI, 3: reg.R11, 5: reg.R12, 10: reg.R13}
)

// RowBases lists the base rows flavor R needs for a tile of `rows` rows.
func RowBases(rows int) []int {
	var bs []int
	for _, b := range []int{0, 3, 5, 10} {
		if b < rows {
			bs = append(bs, b)
		}
	}
	return bs
}

// RowMem is row i of the A panel at byte offset disp, for flavor R.
func RowMem(i, disp int) Mem {
	for _, b := range []int{10, 5, 3, 0} {
		switch d := i - b; d {
		case 0:
			return Mem{Base: RowReg[b], Disp: disp}
		case 1, 2, 4, 8:
			return Mem{Base: RowReg[b], Index: RegLda, Scale: uint8(d), Disp: disp}
		}
	}
	panic(fmt.Sprintf("row %d not addressable", i))
}

// ColMem is element i of column step u (u < 4) of the A panel, for flavor
// C, with elements of size bytes.
func ColMem(i, u, size int) Mem {
	m := Mem{Base: RegA, Disp: i * size}
	switch u {
	case 1:
		m.Index, m.Scale = RegLda, 1
	case 2:
		m.Index, m.Scale = RegLda, 2
	case 3:
		m.Index, m.Scale = RegA3, 1
	}
	return m
}
