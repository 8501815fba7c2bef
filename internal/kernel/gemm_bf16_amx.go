package kernel

import "github.com/fathom-ml/fathom/internal/parallel"

// sbgemmAMX is the driver of the AMX variant. AMX tiles multiply 16×16
// blocks of float32 accumulators by A tiles of 16 rows × 16 bfloat16 pairs
// and B tiles of 16 pair rows × 16 columns: A must be row-major in pairs
// (for a transposed A the pair rows are transposed by 16×16 blocks), k is
// padded with zeros to a multiple of 16 pairs and m with zero rows to a
// multiple of 32. Each call of the strip kernel keeps a 32×32 block of C in
// four tiles over the whole of k, one panel after another.
func sbgemmAMX(v *sbgemmVariant, bf *sbgemmBuf, transA, transB bool, m, n, k, kp int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kpad := roundUp(kp, 16)
	mPad := roundUp(m, 32)
	apld := pairStride(kpad)
	bf.a = growWords(bf.a, mPad*apld)
	ap := bf.a
	if !transA {
		parallel.For(m, max(1, sbgemmConvGrain/k), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				h := asHalves(ap[i*apld : i*apld+kpad])
				sbgemmContig(v, a[i*lda:i*lda+k], h)
				clear(h[k:])
			}
		})
	} else {
		// Pair rows q of op(A) (kpad × mPad), then transposed into ap.
		ldt := pairStride(mPad)
		bf.t = growWords(bf.t, kpad*ldt)
		t := bf.t
		parallel.For(kpad/16, max(1, sbgemmConvGrain/(16*m)), func(lo, hi int) {
			for blk := lo; blk < hi; blk++ {
				for q := blk * 16; q < blk*16+16; q++ {
					row := t[q*ldt : q*ldt+mPad]
					if q >= kp {
						clear(row)
						continue
					}
					x := a[2*q*lda : 2*q*lda+m]
					var y []float32
					if 2*q+1 < k {
						y = a[(2*q+1)*lda : (2*q+1)*lda+m]
					}
					sbgemmPairs(v, m, x, y, row, sbNR)
				}
				v.trans16(mPad, t[blk*16*ldt:], ldt, ap[blk*16:], apld)
			}
		})
	}
	clear(ap[m*apld : mPad*apld])

	nq := (n + sbNR - 1) / sbNR
	panel := kpad * sbNR
	bp := sbgemmPackB(v, bf, transB, n, k, kp, kpad, b, ldb)

	strips := mPad / 32
	body := func(s0, s1, q0, q1 int) {
		cols := sbNR
		if q1 == nq {
			cols = n - (nq-1)*sbNR
		}
		for s := s0; s < s1; s++ {
			rows := min(32, m-s*32)
			v.amxStrip(kpad/16, ap[s*32*apld:], apld, bp[q0*panel:], panel, q1-q0, c[s*32*ldc+q0*sbNR:], ldc, alpha, beta, rows, cols)
		}
	}
	workers := parallel.Workers()
	switch {
	case workers == 1 || 2*float64(m)*float64(n)*float64(k) < float64(gemmParallelMinFlops):
		body(0, strips, 0, nq)
	case strips >= 2*workers || strips >= nq:
		parallel.For(strips, 1, func(lo, hi int) { body(lo, hi, 0, nq) })
	default:
		parallel.For(nq, 1, func(lo, hi int) { body(0, strips, lo, hi) })
	}
}
