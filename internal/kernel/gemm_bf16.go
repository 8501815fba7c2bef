package kernel

// bfloat16 GEMM: float32 operands rounded to bfloat16, products accumulated
// in float32 (what AVX512-BF16's VDPBF16PS computes, and what PyTorch's
// autocast does with a bf16 matmul on CPU).
//
// The driver first lays both operands out in k pairs, one 32-bit word per
// pair (low half element 2q, high half 2q+1, a zero pad when k is odd):
//
//	op(A) not transposed: row i of A, m × kp words (flavor R kernels)
//	op(A) transposed:     kp × m words, row q interleaving rows 2q, 2q+1
//	op(B):                panels of 32 columns, kp × 32 words each
//
// which is also the rounding to bfloat16 (to nearest even; subnormal inputs
// become zero, as VCVTNEPS2BF16 does). Then the micro-kernels of
// gemm_bf16_amd64.s (or sbgemmMicroGo) run over 14×32 tiles of C, the A
// micro-panel of a block of kp held in L1 while the B panels stream from L2
// (the wide-tile order of gemm_driver.go). The conversions read each input
// once: they cost (m·k + k·n) element moves against 2·m·n·k flops.

import (
	"math"
	"sync"
	"unsafe"

	"github.com/fathom-ml/fathom/internal/f16"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// SgemmBF16 computes C = alpha·op(A)·op(B) + beta·C like Sgemm, but with the
// elements of A and B rounded to bfloat16 (8 significant bits) and the
// products summed in float32. C, alpha and beta stay float32. On a CPU with
// AVX512-BF16 it runs VDPBF16PS kernels (twice the multiply-adds of a
// float32 FMA per instruction); elsewhere a Go kernel with the same
// rounding.
func SgemmBF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sbgemm(sbgemmActive, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// RoundBF16 rounds every element of x to the nearest bfloat16 (ties to
// even; subnormals flush to zero, NaN stays NaN), in place: the values
// SgemmBF16 multiplies.
func RoundBF16(x []float32) {
	for i, v := range x {
		x[i] = bf16Value(bf16Bits(v))
	}
}

// bf16Bits rounds f to bfloat16 as VCVTNEPS2BF16 does: to nearest even,
// subnormal inputs to signed zero, NaN to a quiet NaN.
func bf16Bits(f float32) uint16 {
	if b := math.Float32bits(f); b&0x7f800000 == 0 { // zero or subnormal
		return uint16(b>>16) & 0x8000
	}
	return f16.FromFloat32BF16(f)
}

// bf16Value is the float32 value of bfloat16 bits h.
func bf16Value(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// sbgemmVariant is one implementation of the bf16 GEMM's inner pieces.
type sbgemmVariant struct {
	name string
	// micro computes a rows×cols (≤ 14×32) tile of C from kp pairs: A(i,q)
	// at a[i*lda+q] when rowA, else a[q*lda+i]; B(q,j) at b[q*ldb+j] (32
	// readable columns). C is not read when beta is 0.
	micro func(rowA bool, rows, cols, kp int, a []uint32, lda int, b []uint32, ldb int, c []float32, ldc int, alpha, beta float32)
	// pairs32 handles the first n&^31 columns of sbgemmPairs, contig32 the
	// first n&^31 elements of sbgemmContig; nil means Go only.
	pairs32  func(n int, x, y []float32, dst []uint32, stride int)
	contig32 func(x []float32, dst []uint16)
	// trans16, when set, sets dst[p*ldd+j] = src[j*lds+p] for j < 16, p < k
	// (k a multiple of 16): the transposition of a transposed B.
	trans16 func(k int, src []uint32, lds int, dst []uint32, ldd int)
	// amxStrip, when set, replaces micro: it computes rows ≤ 32 rows of C
	// against npanels B panels with AMX tiles (see sbgemmAMX).
	amxStrip func(k16 int, a []uint32, lda int, b []uint32, panel, npanels int, c []float32, ldc int, alpha, beta float32, rows, cols int)
}

const (
	sbMR = 14  // tile rows
	sbNR = 32  // tile columns
	sbKC = 192 // k pairs per block: the A micro-panel (10.5 KiB) stays in L1
)

var (
	sbgemmVariants []*sbgemmVariant
	sbgemmActive   *sbgemmVariant
)

func init() {
	sbgemmVariants = append(sbgemmAsmVariants(), sbgemmGoVariant())
	sbgemmActive = sbgemmVariants[0]
}

// SgemmBF16Kernel names the variant SgemmBF16 runs: "avx512bf16" or "go".
func SgemmBF16Kernel() string { return sbgemmActive.name }

func sbgemmGoVariant() *sbgemmVariant {
	return &sbgemmVariant{name: "go", micro: sbgemmMicroGo}
}

// sbgemmMicroGo is the Go micro-kernel: the same products, in the same
// order, as VDPBF16PS (a bfloat16 product is exact in float32, so each step
// rounds once, as the instruction does).
func sbgemmMicroGo(rowA bool, rows, cols, kp int, a []uint32, lda int, b []uint32, ldb int, c []float32, ldc int, alpha, beta float32) {
	var acc [sbMR * sbNR]float32
	for q := 0; q < kp; q++ {
		brow := b[q*ldb : q*ldb+cols]
		for i := 0; i < rows; i++ {
			var w uint32
			if rowA {
				w = a[i*lda+q]
			} else {
				w = a[q*lda+i]
			}
			alo, ahi := bf16Value(uint16(w)), bf16Value(uint16(w>>16))
			row := acc[i*sbNR : i*sbNR+cols]
			for j, bw := range brow {
				s := row[j] + ahi*bf16Value(uint16(bw>>16))
				row[j] = s + alo*bf16Value(uint16(bw))
			}
		}
	}
	for i := 0; i < rows; i++ {
		dst := c[i*ldc : i*ldc+cols]
		for j := range dst {
			v := alpha * acc[i*sbNR+j]
			if beta != 0 {
				v = float32(math.FMA(float64(dst[j]), float64(beta), float64(v)))
			}
			dst[j] = v
		}
	}
}

// sbgemmPairs sets dst[(j/32)*stride + j%32] = bf16(x[j]) | bf16(y[j])<<16
// for j < n, and zeroes the words of columns n..roundUp(n, 32); y == nil
// stands for zeros (the pad of an odd k).
func sbgemmPairs(v *sbgemmVariant, n int, x, y []float32, dst []uint32, stride int) {
	j0 := 0
	if v.pairs32 != nil && y != nil && n >= 32 {
		j0 = n &^ 31
		v.pairs32(j0, x, y, dst, stride)
	}
	for j := j0; j < roundUp(n, sbNR); j++ {
		var w uint32
		if j < n {
			w = uint32(bf16Bits(x[j]))
			if y != nil {
				w |= uint32(bf16Bits(y[j])) << 16
			}
		}
		dst[(j/sbNR)*stride+j%sbNR] = w
	}
}

// sbgemmContig sets dst[j] = bf16(x[j]) for j < len(x).
func sbgemmContig(v *sbgemmVariant, x []float32, dst []uint16) {
	j0 := 0
	if v.contig32 != nil && len(x) >= 32 {
		j0 = len(x) &^ 31
		v.contig32(x[:j0], dst)
	}
	for j := j0; j < len(x); j++ {
		dst[j] = bf16Bits(x[j])
	}
}

// asHalves views words as their 2·len(words) halves (little-endian: the low
// half of word q is element 2q).
func asHalves(words []uint32) []uint16 {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&words[0])), 2*len(words))
}

// sbgemmBuf holds the operands of one call in pairs.
type sbgemmBuf struct {
	a, b, t []uint32
}

var sbgemmBufs = sync.Pool{New: func() any { return new(sbgemmBuf) }}

// growWords returns buf resized to n words, reallocating (64-byte aligned)
// if needed.
func growWords(buf []uint32, n int) []uint32 {
	if cap(buf) >= n {
		return buf[:n]
	}
	s := alignedSlice[float32](max(n, 1))
	return unsafe.Slice((*uint32)(unsafe.Pointer(&s[0])), n)
}

// pairStride pads a row of n words so that rows do not map onto one L1 set.
func pairStride(n int) int {
	if !friendlyStride(n * 4) {
		return n + 16
	}
	return n
}

// sbgemmConvGrain is the elements per parallel chunk of the conversions.
const sbgemmConvGrain = 1 << 15

func sbgemm(v *sbgemmVariant, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	kp := (k + 1) / 2
	bf := sbgemmBufs.Get().(*sbgemmBuf)
	defer sbgemmBufs.Put(bf)
	if v.amxStrip != nil {
		sbgemmAMX(v, bf, transA, transB, m, n, k, kp, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}

	// A in pairs.
	var ap []uint32
	var apld int
	rowA := !transA
	if rowA {
		apld = pairStride(kp)
		bf.a = growWords(bf.a, m*apld)
		ap = bf.a
		parallel.For(m, max(1, sbgemmConvGrain/k), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				h := asHalves(ap[i*apld : i*apld+kp])
				sbgemmContig(v, a[i*lda:i*lda+k], h)
				if k%2 == 1 {
					h[k] = 0
				}
			}
		})
	} else {
		apld = pairStride(roundUp(m, sbNR))
		bf.a = growWords(bf.a, kp*apld)
		ap = bf.a
		parallel.For(kp, max(1, sbgemmConvGrain/m), func(lo, hi int) {
			for q := lo; q < hi; q++ {
				x := a[2*q*lda : 2*q*lda+m]
				var y []float32
				if 2*q+1 < k {
					y = a[(2*q+1)*lda : (2*q+1)*lda+m]
				}
				sbgemmPairs(v, m, x, y, ap[q*apld:], sbNR)
			}
		})
	}

	nq := (n + sbNR - 1) / sbNR
	kpp := roundUp(kp, 16)
	panel := kpp * sbNR
	bp := sbgemmPackB(v, bf, transB, n, k, kp, kpp, b, ldb)

	// The tiles.
	kc := balancedBlock(sbKC, kp, unroll4)
	mPanels := (m + sbMR - 1) / sbMR
	body := func(r0, r1, q0, q1 int) {
		for pc := 0; pc < kp; pc += kc {
			kcur := min(kc, kp-pc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for r := r0; r < r1; r++ {
				ir := r * sbMR
				rows := min(sbMR, m-ir)
				var apan []uint32
				if rowA {
					apan = ap[ir*apld+pc:]
				} else {
					apan = ap[pc*apld+ir:]
				}
				for q := q0; q < q1; q++ {
					jr := q * sbNR
					cols := min(sbNR, n-jr)
					v.micro(rowA, rows, cols, kcur, apan, apld, bp[q*panel+pc*sbNR:], sbNR, c[ir*ldc+jr:], ldc, alpha, bet)
				}
			}
		}
	}
	workers := parallel.Workers()
	switch {
	case workers == 1 || 2*float64(m)*float64(n)*float64(k) < float64(gemmParallelMinFlops):
		body(0, mPanels, 0, nq)
	case mPanels >= 2*workers || mPanels >= nq:
		parallel.For(mPanels, 1, func(lo, hi int) { body(lo, hi, 0, nq) })
	default:
		parallel.For(nq, 1, func(lo, hi int) { body(0, mPanels, lo, hi) })
	}
}

// sbgemmPackB lays op(B) out in panels of 32 columns, kpp ≥ kp pair rows
// each; the rows from kp to kpp are zero.
func sbgemmPackB(v *sbgemmVariant, bf *sbgemmBuf, transB bool, n, k, kp, kpp int, b []float32, ldb int) []uint32 {
	nq := (n + sbNR - 1) / sbNR
	panel := kpp * sbNR
	bf.b = growWords(bf.b, nq*panel)
	bp := bf.b
	if transB {
		sbgemmPackBT(v, bf, n, k, kp, kpp, b, ldb, bp)
		return bp
	}
	parallel.For(kp, max(1, sbgemmConvGrain/n), func(lo, hi int) {
		for q := lo; q < hi; q++ {
			x := b[2*q*ldb : 2*q*ldb+n]
			var y []float32
			if 2*q+1 < k {
				y = b[(2*q+1)*ldb : (2*q+1)*ldb+n]
			}
			sbgemmPairs(v, n, x, y, bp[q*sbNR:], panel)
		}
	})
	for q := 0; q < nq; q++ {
		clear(bp[q*panel+kp*sbNR : (q+1)*panel])
	}
	return bp
}

// unroll4 keeps k blocks a multiple of the kernels' unrolled step.
const unroll4 = 4

// sbgemmPackBT packs a transposed B (op(B)(p, j) = b[j*ldb+p]) into panels:
// each row of b converts to kp contiguous pairs, which a 16×16 transposition
// (or a Go scatter) moves into the panel's columns. The columns past n of
// the last panel are left as they are: the kernels never use them.
func sbgemmPackBT(v *sbgemmVariant, bf *sbgemmBuf, n, k, kp, kpp int, b []float32, ldb int, bp []uint32) {
	panel := kpp * sbNR
	groups := (n + 15) / 16
	if v.trans16 == nil {
		parallel.For(n, max(1, sbgemmConvGrain/k), func(lo, hi int) {
			row := make([]uint32, kp)
			for j := lo; j < hi; j++ {
				h := asHalves(row)
				sbgemmContig(v, b[j*ldb:j*ldb+k], h)
				if k%2 == 1 {
					h[k] = 0
				}
				dst := bp[(j/sbNR)*panel+j%sbNR:]
				for q, w := range row {
					dst[q*sbNR] = w
				}
			}
		})
		return
	}
	bf.t = growWords(bf.t, groups*16*kpp)
	t := bf.t
	parallel.For(groups, max(1, sbgemmConvGrain/(16*k)), func(lo, hi int) {
		for g := lo; g < hi; g++ {
			blk := t[g*16*kpp : (g+1)*16*kpp]
			for r := 0; r < 16; r++ {
				row := blk[r*kpp : (r+1)*kpp]
				j := g*16 + r
				if j >= n {
					clear(row)
					continue
				}
				h := asHalves(row)
				sbgemmContig(v, b[j*ldb:j*ldb+k], h)
				clear(h[k:])
			}
			j0 := g * 16
			v.trans16(kpp, blk, kpp, bp[(j0/sbNR)*panel+j0%sbNR:], sbNR)
		}
	})
}

// sbgemmRef is the reference the tests compare against: op(A) and op(B)
// rounded to bfloat16 element by element, products summed in float64.
func sbgemmRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	rows := make([]float64, m*k) // rows[i*k+p] = op(A)(i, p), rounded
	cols := make([]float64, n*k) // cols[j*k+p] = op(B)(p, j), rounded
	round := func(x float32) float64 { return float64(bf16Value(bf16Bits(x))) }
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			if transA {
				rows[i*k+p] = round(a[p*lda+i])
			} else {
				rows[i*k+p] = round(a[i*lda+p])
			}
		}
	}
	for j := 0; j < n; j++ {
		for p := 0; p < k; p++ {
			if transB {
				cols[j*k+p] = round(b[j*ldb+p])
			} else {
				cols[j*k+p] = round(b[p*ldb+j])
			}
		}
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p, x := range rows[i*k : i*k+k] {
				s += x * cols[j*k+p]
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(v)
		}
	}
}
