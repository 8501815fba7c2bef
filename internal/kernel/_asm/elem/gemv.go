package elem

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// genGemv4 emits gemv4F32<ISA>(w []float32, ld int, x, y []float32): for
// the four rows of the row-major matrix w that start at w[0], w[ld],
// w[2ld] and w[3ld], y[r] = Σ_j w[r·ld+j]·x[j] over the longest prefix of x
// whose length is a multiple of the vector width, accumulated in float32.
// Each vector of x is loaded once and used by all four rows (the
// register-blocked matrix-vector product of Goto & van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", ACM TOMS 34(3), 2008, with an
// n_r of 1); every row has two accumulators so eight FMA chains hide the
// FMA latency. The four sums are reduced horizontally at the end.
func genGemv4(s isa) {
	t := f32
	fn := "gemv4F32" + s.name
	text(fn, "func(w []float32, ld int, x, y []float32)")
	w0 := Load(Param("w").Base(), GP64()).(reg.GPVirtual)
	ld := Load(Param("ld"), GP64()).(reg.GPVirtual)
	x := Load(Param("x").Base(), GP64()).(reg.GPVirtual)
	n := Load(Param("x").Len(), GP64()).(reg.GPVirtual)
	y := Load(Param("y").Base(), GP64()).(reg.GPVirtual)
	SHLQ(U8(2), ld) // row stride in bytes
	rows := []reg.GPVirtual{w0, GP64(), GP64(), GP64()}
	for r := 1; r < 4; r++ {
		MOVQ(rows[r-1], rows[r])
		ADDQ(ld, rows[r])
	}
	const nacc = 2
	acc := make([][]reg.VecVirtual, 4)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, nacc)
		for k := range acc[r] {
			acc[r][k] = s.vec()
			VXORPS(acc[r][k], acc[r][k], acc[r][k])
		}
	}
	i := GP64()
	XORQ(i, i)
	loop(fn, i, n, s.lanes(t), nacc, func(u int) {
		for j := range u {
			vx := s.vec()
			VMOVUPS(elem(x, i, t, s, j), vx)
			for r := range 4 {
				VFMADD231PS(elem(rows[r], i, t, s, j), vx, acc[r][j])
			}
		}
	})
	for r := range 4 {
		VADDPS(acc[r][1], acc[r][0], acc[r][0])
		sum := hreduce(s, t, acc[r][0], VADDPS)
		VMOVSS(sum, Mem{Base: y, Disp: 4 * r})
	}
	vzeroupper()
	RET()
}
