package kernel

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(X) is X or Xᵀ. op(A) is m×k, op(B) is k×n, C is m×n.
// lda, ldb and ldc are the row strides of A, B and C as stored.
// When beta is 0, C is not read (NaNs in C do not propagate).
//
// The work is blocked and packed as in GotoBLAS/BLIS (see gemm_driver.go),
// runs an assembly micro-kernel chosen at start-up from the CPU's features,
// and is split over GOMAXPROCS cores when it is large enough.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemm(sgemmActive.pick(m, n, k), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemm(dgemmActive.pick(m, n, k), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmVariants and dgemmVariants list every micro-kernel family usable on
// this CPU, fastest first; the first entry is the one Sgemm/Dgemm use (or
// its wide sibling, listed too, for large products). The
// pure-Go variant is always last and always present. Tests run them all.
var (
	sgemmVariants []*gemmVariant[float32]
	dgemmVariants []*gemmVariant[float64]
	sgemmActive   *gemmVariant[float32]
	dgemmActive   *gemmVariant[float64]
)

func init() {
	sgemmVariants = append(sgemmAsmVariants(), sgemmGoVariant())
	dgemmVariants = append(dgemmAsmVariants(), dgemmGoVariant())
	sgemmActive = sgemmVariants[0]
	dgemmActive = dgemmVariants[0]
}

// sgemmRef is the reference triple loop the tests compare against.
func sgemmRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmRef(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// dgemmRef is sgemmRef for float64.
func dgemmRef(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gemmRef(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmRef computes C = alpha·op(A)·op(B) + beta·C one dot product at a time,
// accumulating in T in order of p; beta == 0 does not read C. It first
// copies the rows of op(A) and the columns of op(B) into contiguous runs, so
// that every dot product reads memory in order (the large products of the
// tests would otherwise walk B a column at a time).
func gemmRef[T float32 | float64](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	rows := make([]T, m*k) // rows[i*k+p] = op(A)(i, p)
	cols := make([]T, n*k) // cols[j*k+p] = op(B)(p, j)
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			if transA {
				rows[i*k+p] = a[p*lda+i]
			} else {
				rows[i*k+p] = a[i*lda+p]
			}
		}
	}
	for j := 0; j < n; j++ {
		for p := 0; p < k; p++ {
			if transB {
				cols[j*k+p] = b[j*ldb+p]
			} else {
				cols[j*k+p] = b[p*ldb+j]
			}
		}
	}
	for i := 0; i < m; i++ {
		ai := rows[i*k : i*k+k]
		for j := 0; j < n; j++ {
			bj := cols[j*k : j*k+k]
			var s T
			for p, x := range ai {
				s += x * bj[p]
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}
