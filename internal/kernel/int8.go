package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// Int8 GEMM: C = A·Wᵀ with A an m×k uint8 matrix (quantized activations), W
// an n×k int8 matrix (quantized weights, one row per output channel, the
// layout of a Linear layer's weight) and C int32. This is the product
// behind post-training quantization (Jacob et al., "Quantization and
// Training of Neural Networks for Efficient Integer-Arithmetic-Only
// Inference", CVPR 2018): with real A ≈ sa·(qa − za) and W ≈ sw_j·qw,
//
//	(A·Wᵀ)_ij ≈ sa·sw_j·(Σ_p qa_ip·qw_jp − za·Σ_p qw_jp)
//
// so one integer GEMM and a per-column correction (RowSum) give the float
// result, which GemmU8I8F32 applies in the same pass as the bias (and
// ReLU) while each tile is still in L1.
//
// W is packed once (PackI8, at quantization or load time) into panels of 32
// columns in groups of 4 k values: the operand layout of VPDPBUSD, which
// multiplies 4 unsigned bytes by 4 signed bytes and adds the four products
// to an int32 lane. A is packed per row block by the driver. Sums are
// exact: no kernel saturates (see _asm_int8 for the AVX2 kernel, which
// avoids VPMADDUBSW for this reason), and k ≤ MaxI8K keeps every int32
// accumulator in range (255·128·65536 < 2³¹).

// MaxI8K is the largest inner dimension the int8 GEMM accepts.
const MaxI8K = 1 << 16

const i8NR = 32 // columns of a packed W panel and of a C tile

// PackedI8 is an n×k int8 matrix W packed for GemmU8I8. It is read-only
// once built and may be shared by concurrent products.
type PackedI8 struct {
	N, K int
	kg   int    // groups of 4 k values: ceil(K/4)
	data []int8 // ceil(N/32) panels of kg·128 bytes; padding is zero
	// RowSum[j] is Σ_p W(j, p), the correction for the activations' zero point.
	RowSum []int32
}

// PackI8 packs the n×k matrix W, row j at w[j*ldw : j*ldw+k].
func PackI8(n, k int, w []int8, ldw int) *PackedI8 {
	if n < 0 || k < 0 || k > MaxI8K {
		panic(fmt.Sprintf("kernel.PackI8: n=%d k=%d (k at most %d)", n, k, MaxI8K))
	}
	if n > 0 && k > 0 {
		checkStride("PackI8", ldw, k, len(w), n)
	}
	kg := (k + 3) / 4
	panels := (n + i8NR - 1) / i8NR
	p := &PackedI8{N: n, K: k, kg: kg, data: make([]int8, panels*kg*4*i8NR), RowSum: make([]int32, n)}
	for j := 0; j < n; j++ {
		row := w[j*ldw : j*ldw+k]
		panel := p.data[(j/i8NR)*kg*4*i8NR:]
		jj := j % i8NR
		var s int32
		for q, v := range row {
			panel[(q/4)*4*i8NR+jj*4+q%4] = v
			s += int32(v)
		}
		p.RowSum[j] = s
	}
	return p
}

// Bytes returns the memory the packed matrix holds.
func (p *PackedI8) Bytes() int { return len(p.data) + 4*len(p.RowSum) }

// i8Variant is one implementation of the int8 micro-kernel: micro sets the
// rows×32 int32 tile c (row stride 32) to A·Wᵀ over kg groups, A packed as
// a[g*4*rows + 4*i + t], b one W panel. direct, when set, does the same
// reading A unpacked, row i's group g at a[i*lda+4g:], so the driver skips
// packing A (every row must hold 4·kg readable bytes).
type i8Variant struct {
	name    string
	mr      int
	micro   func(rows, kg int, a []uint8, b []int8, c []int32)
	direct  func(rows, kg int, a []uint8, lda int, b []int8, c []int32)
	dequant dequantFunc // nil: dequantGo
	// dequantT is dequant storing the tile transposed, dst[j*ldd+i]; nil: dequantTGo.
	dequantT dequantFunc
	// dequantRows is dequant with a map per row (PerRow); nil: dequantRowsGo.
	dequantRows dequantRowsFunc
	// dequantPool is dequant reducing each group of g rows to their
	// maximum; nil: dequantPoolGo. dequantPoolT stores the pooled rows
	// transposed, dst[j*ldd+q]; nil: dequantPoolTGo.
	dequantPool, dequantPoolT dequantPoolFunc
	requant                   requantFunc // nil: requantGo
}

// dequantFunc writes rows rows of cols values, dst[i*ldd+j] =
// acc[i*32+j]·sc[j] + off[j], with ReLU when relu is set.
type dequantFunc func(rows, cols int, acc []int32, sc, off *[i8NR]float32, dst []float32, ldd int, relu bool)

func dequantGo(rows, cols int, acc []int32, sc, off *[i8NR]float32, dst []float32, ldd int, relu bool) {
	for i := 0; i < rows; i++ {
		ar := acc[i*i8NR : i*i8NR+cols]
		dr := dst[i*ldd : i*ldd+cols]
		for j, v := range ar {
			y := float32(v)*sc[j] + off[j]
			if relu && !(y > 0) {
				y = 0
			}
			dr[j] = y
		}
	}
}

// requantFunc writes rows rows of cols bytes, dst[i*ldd+j] =
// round(clamp(acc[i*32+j]·sc[j] + off[j], lo, hi)), rounding half to even.
type requantFunc func(rows, cols int, acc []int32, sc, off *[i8NR]float32, dst []uint8, ldd int, lo, hi float32)

func requantGo(rows, cols int, acc []int32, sc, off *[i8NR]float32, dst []uint8, ldd int, lo, hi float32) {
	const magic = 1.5 * (1 << 23)
	for i := 0; i < rows; i++ {
		ar := acc[i*i8NR : i*i8NR+cols]
		dr := dst[i*ldd : i*ldd+cols]
		for j, v := range ar {
			y := float32(v)*sc[j] + off[j]
			if !(y >= lo) {
				y = lo
			}
			if y > hi {
				y = hi
			}
			dr[j] = uint8(int32((y + magic) - magic))
		}
	}
}

// i8Variants lists the variants this CPU runs, the Go one first; i8Active is
// the one the exported functions use (the last, the fastest). Tests set it
// to each variant in turn, and i8Packed to force the packed path.
var (
	i8Variants = append([]*i8Variant{{name: "go", mr: 4, micro: i8MicroGo, direct: i8MicroGoDirect}}, asmI8Variants()...)
	i8Active   = i8Variants[len(i8Variants)-1]
	i8Packed   = false
)

// Int8Variant names the int8 GEMM variant in use ("vnni", "avx2" or "go").
func Int8Variant() string { return i8Active.name }

// i8MicroGo is the portable micro-kernel.
func i8MicroGo(rows, kg int, a []uint8, b []int8, c []int32) {
	i8MicroGoStrided(rows, kg, a, 4, 4*rows, b, c)
}

// i8MicroGoDirect is i8MicroGo on unpacked A.
func i8MicroGoDirect(rows, kg int, a []uint8, lda int, b []int8, c []int32) {
	i8MicroGoStrided(rows, kg, a, lda, 4, b, c)
}

// i8MicroGoStrided is the portable micro-kernel with row i's group g of
// four bytes at a[i*rs+g*gs:]: packed A has rs = 4 and gs = 4·rows,
// unpacked A rs = lda and gs = 4.
func i8MicroGoStrided(rows, kg int, a []uint8, rs, gs int, b []int8, c []int32) {
	var acc [i8NR]int32
	for i := 0; i < rows; i++ {
		acc = [i8NR]int32{}
		for g := 0; g < kg; g++ {
			o := i*rs + g*gs
			ar := a[o : o+4 : o+4]
			a0, a1, a2, a3 := int32(ar[0]), int32(ar[1]), int32(ar[2]), int32(ar[3])
			bg := b[g*4*i8NR : (g+1)*4*i8NR : (g+1)*4*i8NR]
			for j := range acc {
				bj := bg[4*j : 4*j+4 : 4*j+4]
				acc[j] += a0*int32(bj[0]) + a1*int32(bj[1]) + a2*int32(bj[2]) + a3*int32(bj[3])
			}
		}
		copy(c[i*i8NR:(i+1)*i8NR], acc[:])
	}
}

// I8Tile receives one finished tile of C: rows×cols values, C(i0+i, j0+j)
// at acc[i*ld+j]. Tiles are disjoint and may arrive concurrently.
type I8Tile func(i0, j0, rows, cols int, acc []int32, ld int)

// i8TileFn is I8Tile with the maps of rows quantized one by one (PerRow):
// row i0+i has scale rs[i] and zero point rz[i] (nil otherwise).
type i8TileFn func(i0, j0, rows, cols int, acc []int32, ld int, rs, rz []float32)

// GemmU8I8 sets C = A·Wᵀ: A(i, p) at a[i*lda+p] (m×k uint8), W packed, and
// C(i, j) at c[i*ldc+j] (m×n int32). Large products run on several cores.
func GemmU8I8(m int, a []uint8, lda int, w *PackedI8, c []int32, ldc int) {
	if m > 0 && w.N > 0 {
		checkStride("GemmU8I8", ldc, w.N, len(c), m)
	}
	GemmU8I8Tiles(m, a, lda, w, func(i0, j0, rows, cols int, acc []int32, ld int) {
		for i := 0; i < rows; i++ {
			copy(c[(i0+i)*ldc+j0:(i0+i)*ldc+j0+cols], acc[i*ld:i*ld+cols])
		}
	})
}

// I8Dequant turns the int32 sums of GemmU8I8 into float32 outputs:
//
//	C(i, j) = AScale·WScale[j]·(acc − AZero·RowSum[j]) + Bias[j], then max(·, 0) with ReLU
//
// for activations A ≈ AScale·(qa − AZero) and weights W(j,·) ≈ WScale[j]·qw.
type I8Dequant struct {
	AScale float32
	AZero  int32
	WScale []float32 // one per output column (len n)
	Bias   []float32 // nil or len n
	ReLU   bool
	// TransC stores C(i, j) at c[j*ldc+i] instead of c[i*ldc+j]: the
	// channel-major output of a convolution computed as positions × channels.
	TransC bool
	// PerRow quantizes each row of float32 activations (GemmF32I8F32) with
	// the min-max map of that row alone (dynamic quantization per row, see
	// AffineU8) instead of AScale and AZero: a row's result then does not
	// depend on the other rows of the batch. TransC and Pool must be unset.
	PerRow bool
	// Pool > 1 max-pools the result over groups of Pool consecutive rows
	// (after bias and ReLU): C has m/Pool rows, row q the lane-wise maximum
	// of rows q·Pool … q·Pool+Pool−1. m must be a multiple of Pool, Pool at
	// most I8MaxPool(); with TransC the pooled rows are stored transposed.
	// With Im2rowU8Pooled's order this is a convolution followed by a
	// non-overlapping max pooling.
	Pool int
}

// I8MaxPool returns the largest I8Dequant.Pool the int8 GEMM in use takes
// (its tile height).
func I8MaxPool() int { return i8Active.mr }

func (d *I8Dequant) check(op string, m, n int, lenC, ldc int) {
	if len(d.WScale) != n || (d.Bias != nil && len(d.Bias) != n) {
		panic(fmt.Sprintf("kernel.%s: %d weight scales and %d biases for n=%d", op, len(d.WScale), len(d.Bias), n))
	}
	if d.PerRow && (d.TransC || d.Pool > 1) {
		panic(fmt.Sprintf("kernel.%s: PerRow with TransC or Pool", op))
	}
	if d.Pool > 1 {
		if d.Pool > I8MaxPool() || m%d.Pool != 0 {
			panic(fmt.Sprintf("kernel.%s: pooling %d rows of m=%d (at most %d rows)", op, d.Pool, m, I8MaxPool()))
		}
		m /= d.Pool
	}
	if m > 0 && n > 0 {
		if d.TransC {
			checkStride(op, ldc, m, lenC, n)
		} else {
			checkStride(op, ldc, n, lenC, m)
		}
	}
}

// scales returns the per-column factor and offset of the whole product,
// padded with zeros to whole panels: acc·sc[j] + off[j] is the real
// product plus bias. Computed once per call, so tiles only slice them.
func (d *I8Dequant) scales(w *PackedI8) (sc, off []float32) {
	np := (w.N + i8NR - 1) / i8NR * i8NR
	buf := make([]float32, 2*np)
	sc, off = buf[:np], buf[np:]
	for j := 0; j < w.N; j++ {
		sc[j] = d.AScale * d.WScale[j]
		off[j] = -sc[j] * float32(d.AZero*w.RowSum[j])
		if d.Bias != nil {
			off[j] += d.Bias[j]
		}
	}
	return sc, off
}

// tileOf returns the 32 values of v for the tile at column j0.
func tileOf(v []float32, j0 int) *[i8NR]float32 { return (*[i8NR]float32)(v[j0 : j0+i8NR]) }

// epilogue returns the tile function that writes the dequantized tiles into c.
func (d *I8Dequant) epilogue(v *i8Variant, w *PackedI8, c []float32, ldc int) i8TileFn {
	deq, deqT := v.dequant, v.dequantT
	if deq == nil {
		deq = dequantGo
	}
	if deqT == nil {
		deqT = dequantTGo
	}
	if d.PerRow {
		rowsDeq := v.dequantRows
		if rowsDeq == nil {
			rowsDeq = dequantRowsGo
		}
		// Per panel: u = WScale, v = −WScale·RowSum, b = Bias, 32 each.
		np := (w.N + i8NR - 1) / i8NR
		cv := make([]float32, np*3*i8NR)
		for j := 0; j < w.N; j++ {
			p, jj := j/i8NR, j%i8NR
			cv[p*3*i8NR+jj] = d.WScale[j]
			cv[p*3*i8NR+i8NR+jj] = -d.WScale[j] * float32(w.RowSum[j])
			if d.Bias != nil {
				cv[p*3*i8NR+2*i8NR+jj] = d.Bias[j]
			}
		}
		return func(i0, j0, rows, cols int, acc []int32, ld int, rs, rz []float32) {
			p := j0 / i8NR
			rowsDeq(rows, cols, acc, (*[3 * i8NR]float32)(cv[p*3*i8NR:(p+1)*3*i8NR]), rs, rz, c[i0*ldc+j0:], ldc, d.ReLU)
		}
	}
	scs, offs := d.scales(w)
	if d.Pool > 1 {
		pool, poolT := v.dequantPool, v.dequantPoolT
		if pool == nil {
			pool = dequantPoolGo
		}
		if poolT == nil {
			poolT = dequantPoolTGo
		}
		if d.TransC {
			return func(i0, j0, rows, cols int, acc []int32, ld int, _, _ []float32) {
				poolT(rows, d.Pool, cols, acc, tileOf(scs, j0), tileOf(offs, j0), c[j0*ldc+i0/d.Pool:], ldc, d.ReLU)
			}
		}
		return func(i0, j0, rows, cols int, acc []int32, ld int, _, _ []float32) {
			pool(rows, d.Pool, cols, acc, tileOf(scs, j0), tileOf(offs, j0), c[(i0/d.Pool)*ldc+j0:], ldc, d.ReLU)
		}
	}
	return func(i0, j0, rows, cols int, acc []int32, ld int, _, _ []float32) {
		if !d.TransC {
			deq(rows, cols, acc, tileOf(scs, j0), tileOf(offs, j0), c[i0*ldc+j0:], ldc, d.ReLU)
			return
		}
		// Column-major writes: one run of rows floats per output column.
		deqT(rows, cols, acc, tileOf(scs, j0), tileOf(offs, j0), c[j0*ldc+i0:], ldc, d.ReLU)
	}
}

// dequantPoolFunc writes rows/g rows of cols values: the lane-wise maximum
// over each group of g consecutive rows of what dequantFunc would write.
type dequantPoolFunc func(rows, g, cols int, acc []int32, sc, off *[i8NR]float32, dst []float32, ldd int, relu bool)

func dequantPoolGo(rows, g, cols int, acc []int32, sc, off *[i8NR]float32, dst []float32, ldd int, relu bool) {
	for q := 0; q < rows/g; q++ {
		dr := dst[q*ldd : q*ldd+cols]
		for j := range dr {
			m := float32(math.Inf(-1))
			if relu {
				m = 0
			}
			for r := q * g; r < (q+1)*g; r++ {
				m = max(m, float32(acc[r*i8NR+j])*sc[j]+off[j])
			}
			dr[j] = m
		}
	}
}

// dequantRowsFunc writes rows rows of cols values, dst[i*ldd+j] =
// (acc[i*32+j]·u[j] + rz[i]·v[j])·rs[i] + b[j], with ReLU when relu is set;
// cv holds u, v and b, 32 values each.
type dequantRowsFunc func(rows, cols int, acc []int32, cv *[3 * i8NR]float32, rs, rz []float32, dst []float32, ldd int, relu bool)

func dequantRowsGo(rows, cols int, acc []int32, cv *[3 * i8NR]float32, rs, rz []float32, dst []float32, ldd int, relu bool) {
	u, v, b := cv[:i8NR], cv[i8NR:2*i8NR], cv[2*i8NR:]
	for i := 0; i < rows; i++ {
		ar := acc[i*i8NR : i*i8NR+cols]
		dr := dst[i*ldd : i*ldd+cols]
		s, z := rs[i], rz[i]
		for j, a := range ar {
			y := (float32(a)*u[j]+z*v[j])*s + b[j]
			if relu && !(y > 0) {
				y = 0
			}
			dr[j] = y
		}
	}
}

// AffineU8 returns the uint8 map (real = scale·(q − zero)) of values in
// [lo, hi], the range first widened to contain 0 so that 0 is exact: [lo,
// hi] onto [0, 255]. An empty, NaN or infinite range gets scale 1, zero 0.
func AffineU8(lo, hi float32) (scale float32, zero int32) {
	lo, hi = min(lo, 0), max(hi, 0)
	if !(hi > lo) || math.IsInf(float64(hi-lo), 0) {
		return 1, 0
	}
	s := (hi - lo) / 255
	z := int32(math.Round(float64(-lo / s)))
	return s, min(max(z, 0), 255)
}

// dequantPoolTGo is dequantPoolGo storing the pooled rows transposed.
func dequantPoolTGo(rows, g, cols int, acc []int32, sc, off *[i8NR]float32, dst []float32, ldd int, relu bool) {
	var row [i8NR]float32
	for q := 0; q < rows/g; q++ {
		dequantPoolGo(g, g, cols, acc[q*g*i8NR:], sc, off, row[:], i8NR, relu)
		for j, v := range row[:cols] {
			dst[j*ldd+q] = v
		}
	}
}

// dequantTGo is dequantGo storing the tile transposed: dst[j*ldd+i].
func dequantTGo(rows, cols int, acc []int32, sc, off *[i8NR]float32, dst []float32, ldd int, relu bool) {
	for j := 0; j < cols; j++ {
		dc := dst[j*ldd : j*ldd+rows]
		s, o := sc[j], off[j]
		for i := range dc {
			y := float32(acc[i*i8NR+j])*s + o
			if relu && !(y > 0) {
				y = 0
			}
			dc[i] = y
		}
	}
}

// GemmU8I8F32 computes A·Wᵀ as GemmU8I8 does and writes the dequantized
// float32 result (see I8Dequant) into c, tile by tile.
func GemmU8I8F32(m int, a []uint8, lda int, w *PackedI8, d *I8Dequant, c []float32, ldc int) {
	d.check("GemmU8I8F32", m, w.N, len(c), ldc)
	v := i8Active
	gemmI8(v, m, i8Src{u8: a, lda: lda, group: d.Pool}, w, d.epilogue(v, w, c, ldc))
}

// GemmF32I8F32 is GemmU8I8F32 on float32 activations: A(i, p) at
// x[i*ldx+p] is quantized with the map of d, q = clamp(round(x/AScale) +
// AZero, 0, 255) as QuantizeU8 does, one block of rows at a time as the
// product reaches it (so the bytes never leave the cache and the
// quantization runs on the GEMM's cores), then multiplied and dequantized.
func GemmF32I8F32(m int, x []float32, ldx int, w *PackedI8, d *I8Dequant, c []float32, ldc int) {
	d.check("GemmF32I8F32", m, w.N, len(c), ldc)
	if !d.PerRow && (!(d.AScale > 0) || d.AZero < 0 || d.AZero > 255) {
		panic(fmt.Sprintf("kernel.GemmF32I8F32: activation scale %g, zero point %d", d.AScale, d.AZero))
	}
	v := i8Active
	gemmI8(v, m, i8Src{f32: x, lda: ldx, inv: 1 / d.AScale, zero: d.AZero, group: d.Pool, perRow: d.PerRow}, w, d.epilogue(v, w, c, ldc))
}

// I8Requant maps the int32 sums of GemmU8I8 to uint8 activations of
// another affine map (the input of the next quantized layer):
//
//	y = AScale·WScale[j]·(acc − AZero·RowSum[j]) + Bias[j]  (then max(y, 0) with ReLU)
//	C(i, j) = clamp(round(y/OutScale) + OutZero, 0, 255)
//
// rounding half to even; the float y is never stored.
type I8Requant struct {
	I8Dequant
	OutScale float32
	OutZero  int32
}

// GemmU8I8U8 computes A·Wᵀ as GemmU8I8 does and writes the requantized
// uint8 result (see I8Requant) into c (row-major, row stride ldc).
func GemmU8I8U8(m int, a []uint8, lda int, w *PackedI8, r *I8Requant, c []uint8, ldc int) {
	gemmU8Out("GemmU8I8U8", m, i8Src{u8: a, lda: lda}, w, r, c, ldc)
}

// GemmF32I8U8 is GemmU8I8U8 on float32 activations quantized block by
// block as in GemmF32I8F32.
func GemmF32I8U8(m int, x []float32, ldx int, w *PackedI8, r *I8Requant, c []uint8, ldc int) {
	if !(r.AScale > 0) || r.AZero < 0 || r.AZero > 255 {
		panic(fmt.Sprintf("kernel.GemmF32I8U8: activation scale %g, zero point %d", r.AScale, r.AZero))
	}
	gemmU8Out("GemmF32I8U8", m, i8Src{f32: x, lda: ldx, inv: 1 / r.AScale, zero: r.AZero}, w, r, c, ldc)
}

func gemmU8Out(op string, m int, src i8Src, w *PackedI8, r *I8Requant, c []uint8, ldc int) {
	n := w.N
	if len(r.WScale) != n || (r.Bias != nil && len(r.Bias) != n) || r.TransC || r.PerRow || r.Pool > 1 {
		panic(fmt.Sprintf("kernel.%s: %d weight scales and %d biases for n=%d (TransC %v)", op, len(r.WScale), len(r.Bias), n, r.TransC))
	}
	if !(r.OutScale > 0) || r.OutZero < 0 || r.OutZero > 255 {
		panic(fmt.Sprintf("kernel.%s: output scale %g, zero point %d", op, r.OutScale, r.OutZero))
	}
	if m > 0 && n > 0 {
		checkStride(op, ldc, n, len(c), m)
	}
	v := i8Active
	rq := v.requant
	if rq == nil {
		rq = requantGo
	}
	inv := 1 / r.OutScale
	lo, hi := float32(0), float32(255)
	if r.ReLU {
		lo = float32(r.OutZero)
	}
	sc, off := r.scales(w)
	for j := range sc {
		sc[j] *= inv
		off[j] = off[j]*inv + float32(r.OutZero)
	}
	gemmI8(v, m, src, w, func(i0, j0, rows, cols int, acc []int32, ld int, _, _ []float32) {
		rq(rows, cols, acc, tileOf(sc, j0), tileOf(off, j0), c[i0*ldc+j0:], ldc, lo, hi)
	})
}

// i8Scratch is one worker's packed A block, quantized A block and C tile.
type i8Scratch struct {
	a    []uint8
	q    []uint8
	tile []int32
	// rs, rz: the maps of the rows of q (PerRow).
	rs, rz []float32
}

var i8Pool = sync.Pool{New: func() any { return new(i8Scratch) }}

// i8SerialOps is the size (multiply-adds) below which a product runs on the
// calling goroutine.
const i8SerialOps = 1 << 20

// GemmU8I8Tiles computes A·Wᵀ (A as for GemmU8I8) and hands each finished
// tile to fn instead of storing it: the hook for fused epilogues.
func GemmU8I8Tiles(m int, a []uint8, lda int, w *PackedI8, fn I8Tile) {
	gemmI8(i8Active, m, i8Src{u8: a, lda: lda}, w, func(i0, j0, rows, cols int, acc []int32, ld int, _, _ []float32) {
		fn(i0, j0, rows, cols, acc, ld)
	})
}

// i8Src is the A operand of a product: uint8 rows, or float32 rows that
// the driver quantizes (x·inv rounded, plus zero, clamped) block by block.
type i8Src struct {
	u8   []uint8
	f32  []float32
	lda  int
	inv  float32
	zero int32
	// group > 1 makes every row block a multiple of group rows (pooling).
	group int
	// perRow quantizes each float32 row with its own min-max map.
	perRow bool
}

func gemmI8(v *i8Variant, m int, src i8Src, w *PackedI8, fn i8TileFn) {
	n, k := w.N, w.K
	if m < 0 {
		panic(fmt.Sprintf("kernel.GemmU8I8: m=%d", m))
	}
	if m == 0 || n == 0 {
		return
	}
	lda, kg := src.lda, w.kg
	if k > 0 {
		if src.f32 != nil {
			checkStride("GemmF32I8", lda, k, len(src.f32), m)
		} else {
			checkStride("GemmU8I8", lda, k, len(src.u8), m)
		}
	}
	// Read A in place when the variant can and every row has 4·kg bytes
	// to read (past k the weights are zero, so those bytes do not count).
	direct := v.direct != nil && !i8Packed && k > 0 &&
		(src.f32 != nil || k == 4*kg || (m-1)*lda+4*kg <= len(src.u8))
	// Blocks of equal height (64 rows: 13, 13, 13, 13, 12 rather than
	// 14, 14, 14, 14, 8), so that no core waits on a full block while
	// another finishes a short one.
	g := max(src.group, 1)
	vmr := v.mr / g * g
	workers := parallel.Workers()
	big := float64(m)*float64(n)*float64(k) >= i8SerialOps && workers > 1
	if big && (m+vmr-1)/vmr < 4*workers {
		// Shorter blocks, down to 4 rows, so that every core gets several:
		// cheaper than splitting the panels, which would quantize each block
		// of float32 activations once per piece.
		t := max(m/(4*workers), 4)
		vmr = min(vmr, max(t/g*g, g))
	}
	blocks := (m + vmr - 1) / vmr
	mr := ((m+blocks-1)/blocks + g - 1) / g * g
	panels := (n + i8NR - 1) / i8NR
	// Split the panels into chunks too when there are few row blocks, so
	// every core has work in pieces small enough to even out.
	chunks := 1
	if big && blocks < 4*workers {
		chunks = min(panels, (4*workers+blocks-1)/blocks)
	}
	per := (panels + chunks - 1) / chunks
	units := blocks * chunks
	run := func(lo, hi int) {
		s := i8Pool.Get().(*i8Scratch)
		if cap(s.a) < v.mr*4*kg {
			s.a = make([]uint8, v.mr*4*kg)
		}
		if cap(s.tile) < v.mr*i8NR {
			s.tile = make([]int32, v.mr*i8NR)
		}
		if src.f32 != nil && cap(s.q) < v.mr*4*kg {
			s.q = make([]uint8, v.mr*4*kg)
		}
		var rs, rz []float32
		if src.perRow {
			if cap(s.rs) < v.mr {
				s.rs, s.rz = make([]float32, v.mr), make([]float32, v.mr)
			}
			rs, rz = s.rs[:mr], s.rz[:mr]
		}
		quantized := -1 // the block s.q holds
		for u := lo; u < hi; u++ {
			blk, ch := u/chunks, u%chunks
			i0 := blk * mr
			rows := min(mr, m-i0)
			// ab, ld: this block of A in bytes, unpacked.
			var ab []uint8
			ld := lda
			if k > 0 {
				if src.f32 != nil {
					ld = 4 * kg
					ab = s.q[:rows*ld]
					if quantized != blk {
						quantRowsU8(ab, ld, src.f32[i0*lda:], lda, k, rows, src.perRow, src.inv, src.zero, rs, rz)
						// Fetch the next block's rows while this one is multiplied.
						if next := i0 + rows; next < m && ch == 0 {
							prefetchF32(src.f32[next*lda : min(len(src.f32), min(m, next+mr)*lda)])
						}
						quantized = blk
					}
				} else {
					ab = src.u8[i0*lda:]
				}
			}
			ap := s.a[:rows*4*kg]
			if k > 0 && !direct {
				packAI8(ap, ab, ld, rows, k, kg)
			}
			for p := ch * per; p < min(panels, (ch+1)*per); p++ {
				j0 := p * i8NR
				b := w.data[p*kg*4*i8NR : (p+1)*kg*4*i8NR]
				if direct {
					v.direct(rows, kg, ab, ld, b, s.tile)
				} else {
					v.micro(rows, kg, ap, b, s.tile)
				}
				fn(i0, j0, rows, min(i8NR, n-j0), s.tile, i8NR, rs, rz)
			}
		}
		i8Pool.Put(s)
	}
	if !big {
		run(0, units)
		return
	}
	parallel.For(units, 1, run)
}

// packAI8 packs rows×k of A (row stride lda) as dst[g*4*rows + 4*i + t] =
// A(i, 4g+t), zero past k.
func packAI8(dst, a []uint8, lda, rows, k, kg int) {
	full := k / 4
	stride := 4 * rows
	le := binary.LittleEndian
	for i := 0; i < rows; i++ {
		row := a[i*lda : i*lda+k]
		d := dst[4*i:]
		for g := 0; g < full; g++ {
			le.PutUint32(d[g*stride:], le.Uint32(row[4*g:]))
		}
		if full < kg {
			o := full * stride
			for t := 0; t < 4; t++ {
				var x uint8
				if 4*full+t < k {
					x = row[4*full+t]
				}
				d[o+t] = x
			}
		}
	}
}

// gemmU8I8Ref is the reference: the definition, on unpacked W (row j at
// w[j*ldw:]), that every variant is tested against.
func gemmU8I8Ref(m, n, k int, a []uint8, lda int, w []int8, ldw int, c []int32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s int32
			for p := 0; p < k; p++ {
				s += int32(a[i*lda+p]) * int32(w[j*ldw+p])
			}
			c[i*ldc+j] = s
		}
	}
}

// MinMaxF32 returns the smallest and largest element of x in one pass
// (NaN, NaN if any element is NaN; +Inf, −Inf for an empty slice), on
// several cores when x is large: the range of dynamic quantization.
func MinMaxF32(x []float32) (lo, hi float32) {
	type span struct{ lo, hi float32 }
	inf := float32(math.Inf(1))
	// A smaller grain than other memory-bound maps: this pass usually reads
	// a batch fresh from memory, where two cores fetch faster than one.
	const grain = 1 << 14
	if len(x) < 2*grain {
		return minMaxF32(x)
	}
	nb := (len(x) + block - 1) / block
	r := parallel.MapReduce(nb, grain/block, span{inf, -inf}, func(b0, b1 int) span {
		lo, hi := minMaxF32(x[b0*block : min(b1*block, len(x))])
		return span{lo, hi}
	}, func(a, b span) span {
		if a.lo != a.lo || b.lo != b.lo {
			nan := float32(math.NaN())
			return span{nan, nan}
		}
		return span{min(a.lo, b.lo), max(a.hi, b.hi)}
	})
	return r.lo, r.hi
}

// minMaxF32Go is MinMaxF32 on one core in Go.
// quantRowsU8 quantizes rows rows of k float32 values (x, row stride ldx)
// into q (row stride ld, the bytes past k zeroed): with one scale for all
// (inv = 1/scale, zero) or, perRow, each row its own affine map of its
// min and max, whose scale and zero point go to rs[i] and rz[i] (the row
// is then read twice, the second time from L1).
func quantRowsU8(q []uint8, ld int, x []float32, ldx, k, rows int, perRow bool, inv float32, zero int32, rs, rz []float32) {
	for i := 0; i < rows; i++ {
		row := q[i*ld : (i+1)*ld]
		xr := x[i*ldx : i*ldx+k]
		inv, zero := inv, zero
		if perRow {
			sc, z := AffineU8(minMaxF32(xr))
			rs[i], rz[i] = sc, float32(z)
			inv, zero = 1/sc, z
		}
		quantU8(row[:k], xr, inv, zero)
		clear(row[k:])
	}
}

func minMaxF32Go(x []float32) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	for _, v := range x {
		if v != v {
			return v, v
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi
}

// QuantizeU8 sets dst[i] = clamp(round(x[i]·inv) + zero, 0, 255), rounding
// half to even (the rounding of VCVTPS2DQ); NaN maps to 0.
// inv is 1/scale of the affine map real = scale·(q − zero).
func QuantizeU8(dst []uint8, x []float32, inv float32, zero int32) {
	checkLen("QuantizeU8", "dst", len(dst), len(x))
	quantU8(dst[:len(x)], x, inv, zero)
}

// quantU8Go is QuantizeU8 in Go. Adding and subtracting 1.5·2²³ rounds a
// float32 of magnitude below 2²² to the nearest integer, ties to even (Go
// rounds every float32 operation to float32).
func quantU8Go(dst []uint8, x []float32, inv float32, zero int32) {
	const magic = 1.5 * (1 << 23)
	lo, hi := float32(-zero), float32(255-zero)
	dst = dst[:len(x)]
	for i, v := range x {
		v *= inv
		if !(v >= lo) {
			v = lo
		}
		if v > hi {
			v = hi
		}
		dst[i] = uint8(int32((v+magic)-magic) + zero)
	}
}

// Im2rowU8 unfolds one quantized image stored HWC (channels innermost)
// position-major: row p of dst (OutH·OutW rows of KH·KW·channels bytes,
// row stride ld, the A operand of GemmU8I8 for a convolution computed as
// positions × output channels) holds the window of output position p, tap
// (i, j, c) at column (i·KW + j)·channels + c, so each tap is one run of
// channels bytes (and, without dilation, each kernel row one run of
// KW·channels bytes). Taps in the padding get pad (the zero point: the
// quantized 0); the ld − k bytes past each row's end are set to 0. The
// weights must be packed in the same (KH, KW, C) order. A stride ld that
// is a multiple of 4 lets the int8 GEMM read the rows in place.
func Im2rowU8(dst, img []uint8, channels int, g Window2d, pad uint8, ld int) {
	im2rowU8("Im2rowU8", dst, img, channels, g, pad, ld, 1, 1)
}

// Im2rowU8Pooled is Im2rowU8 with the rows in the order of a max pooling
// of kernel and stride ph×pw that follows the convolution: the ph·pw
// output positions of pooled position (py, px) (row-major over the
// OutH/ph × OutW/pw pooled grid) are rows q·ph·pw … q·ph·pw + ph·pw − 1,
// q = py·(OutW/pw) + px, window-row-major. Positions past the last whole
// window are left out (as a pooling without ceil mode drops them). Then
// I8Dequant.Pool = ph·pw pools in the GEMM's epilogue.
func Im2rowU8Pooled(dst, img []uint8, channels int, g Window2d, pad uint8, ld, ph, pw int) {
	if ph < 1 || pw < 1 {
		panic(fmt.Sprintf("kernel.Im2rowU8Pooled: pooling window %d×%d", ph, pw))
	}
	im2rowU8("Im2rowU8Pooled", dst, img, channels, g, pad, ld, ph, pw)
}

func im2rowU8(op string, dst, img []uint8, channels int, g Window2d, pad uint8, ld, ph, pw int) {
	g = g.norm(op)
	g.noCeil(op)
	oh, ow := g.OutH(), g.OutW()
	c := channels
	k := c * g.KH * g.KW
	if ld < k {
		panic(fmt.Sprintf("kernel.%s: row stride %d below the row length %d", op, ld, k))
	}
	checkLen(op, "img", len(img), c*g.H*g.W)
	qh, qw := oh/ph, ow/pw // the pooled grid (the plain one when ph = pw = 1)
	rows := qh * qw * ph * pw
	if rows == 0 {
		return
	}
	checkLen(op, "dst", len(dst), (rows-1)*ld+k)
	run := g.KW * c // bytes of one kernel row when it lies inside the image
	p := 0
	for py := 0; py < qh; py++ {
		for px := 0; px < qw; px++ {
			for dy := 0; dy < ph; dy++ {
				for dx := 0; dx < pw; dx++ {
					y, x := py*ph+dy, px*pw+dx
					row := dst[p*ld : p*ld+k]
					if ld > k && p+1 < rows {
						clear(dst[p*ld+k : (p+1)*ld])
					}
					p++
					ix0 := x*g.StrideW - g.PadW
					inW := ix0 >= 0 && ix0+(g.KW-1)*g.DilW < g.W
					iy0 := y*g.StrideH - g.PadH
					if inW && g.DilW == 1 && iy0 >= 0 && iy0+(g.KH-1)*g.DilH < g.H {
						// The whole window inside the image: KH runs of KW·c bytes.
						base, step := (iy0*g.W+ix0)*c, g.DilH*g.W*c
						if run == 3 {
							for i := 0; i < g.KH; i++ {
								s3 := img[base : base+3 : base+3]
								r3 := row[3*i : 3*i+3 : 3*i+3]
								r3[0], r3[1], r3[2] = s3[0], s3[1], s3[2]
								base += step
							}
						} else {
							for i := 0; i < g.KH; i++ {
								copy(row[i*run:(i+1)*run], img[base:base+run])
								base += step
							}
						}
						continue
					}
					o := 0
					for i := 0; i < g.KH; i++ {
						iy := y*g.StrideH - g.PadH + i*g.DilH
						if iy < 0 || iy >= g.H {
							fill(row[o:o+run], pad)
							o += run
							continue
						}
						src := img[iy*g.W*c:]
						if inW && g.DilW == 1 {
							// The kernel row is one run of the image row.
							seg := src[ix0*c : ix0*c+run]
							if run <= 8 {
								for t, v := range seg {
									row[o+t] = v
								}
							} else {
								copy(row[o:o+run], seg)
							}
							o += run
							continue
						}
						for j := 0; j < g.KW; j++ {
							ix := ix0 + j*g.DilW
							tap := row[o : o+c]
							if ix < 0 || ix >= g.W {
								fill(tap, pad)
							} else if c == 1 {
								tap[0] = src[ix]
							} else {
								copy(tap, src[ix*c:ix*c+c])
							}
							o += c
						}
					}
				}
			}
		}
	}
	if ld > k && len(dst) >= rows*ld {
		clear(dst[(rows-1)*ld+k : rows*ld])
	}
}

func fill(b []uint8, v uint8) {
	for i := range b {
		b[i] = v
	}
}
