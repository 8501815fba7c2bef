package kernel

// Pure-Go micro-kernel: a 4×4 register tile over packed panels. It is the
// fallback under the purego build tag and on other architectures, and a
// registered variant everywhere so tests always exercise it.

func sgemmGoVariant() *gemmVariant[float32] {
	return &gemmVariant[float32]{name: "go", mr: 4, nr: 4, kc: 256, mc: 128, nc: 1024, masked: true, micro: goMicro[float32]}
}

func dgemmGoVariant() *gemmVariant[float64] {
	return &gemmVariant[float64]{name: "go", mr: 4, nr: 4, kc: 256, mc: 64, nc: 1024, masked: true, micro: goMicro[float64]}
}

// goMicro is the microKernel of the pure-Go variant (mr = nr = 4). The
// driver gives it packed panels (rowA false, lda = rows, ldb = 4).
func goMicro[T gemmFloat](rowA bool, rows, cols, k int, a []T, lda int, b []T, ldb int, c []T, ldc int, alpha, beta T) {
	if rows == 4 && cols == 4 && !rowA && lda == 4 && ldb == 4 {
		goMicro4x4(k, a, b, c, ldc, alpha, beta)
		return
	}
	var acc [4][4]T
	for p := 0; p < k; p++ {
		bp := b[p*ldb : p*ldb+cols]
		for i := 0; i < rows; i++ {
			x := a[p*lda+i]
			if rowA {
				x = a[i*lda+p]
			}
			for j, y := range bp {
				acc[i][j] += x * y
			}
		}
	}
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		for j := range row {
			if beta == 0 {
				row[j] = alpha * acc[i][j]
			} else {
				row[j] = alpha*acc[i][j] + beta*row[j]
			}
		}
	}
}

// goMicro4x4 keeps the 16 accumulators in locals so the compiler can hold
// them in registers.
func goMicro4x4[T gemmFloat](k int, a, b, c []T, ldc int, alpha, beta T) {
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	var c20, c21, c22, c23, c30, c31, c32, c33 T
	a = a[:4*k]
	b = b[:4*k]
	for p := 0; p+4 <= len(a) && p+4 <= len(b); p += 4 {
		b0, b1, b2, b3 := b[p], b[p+1], b[p+2], b[p+3]
		a0 := a[p]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		a1 := a[p+1]
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a2 := a[p+2]
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		a3 := a[p+3]
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	store := func(row []T, x0, x1, x2, x3 T) {
		row = row[:4]
		if beta == 0 {
			row[0], row[1], row[2], row[3] = alpha*x0, alpha*x1, alpha*x2, alpha*x3
			return
		}
		row[0] = alpha*x0 + beta*row[0]
		row[1] = alpha*x1 + beta*row[1]
		row[2] = alpha*x2 + beta*row[2]
		row[3] = alpha*x3 + beta*row[3]
	}
	store(c[0:], c00, c01, c02, c03)
	store(c[ldc:], c10, c11, c12, c13)
	store(c[2*ldc:], c20, c21, c22, c23)
	store(c[3*ldc:], c30, c31, c32, c33)
}
