package tensor

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fathom-ml/fathom/internal/f16"
	"github.com/fathom-ml/fathom/internal/kernel"
)

// Precision is the arithmetic of float32 matrix products (MatMul, Linear,
// Conv2d and their gradients) while autocast is on: what PyTorch's
// torch.autocast does on CPU, except that products come back as float32.
// Every other op (activations, normalization, reductions, losses,
// optimizer updates) stays float32, and so do parameters.
type Precision int32

const (
	// PrecisionFloat32 is plain float32 products (autocast off).
	PrecisionFloat32 Precision = iota
	// PrecisionBF16 rounds both operands of every float32 product to
	// bfloat16 and accumulates in float32 (kernel.SgemmBF16: VDPBF16PS on
	// AVX512-BF16 CPUs).
	PrecisionBF16
	// PrecisionFP16 rounds both operands to IEEE binary16 (values beyond
	// ±65504 become ±Inf, those below 2^-24 zero) and multiplies them with
	// the float32 kernel: products of binary16 values accumulated in
	// float32, emulated (fathom has no fp16 GEMM kernel). It is
	// meant for training with loss scaling (train.LossScale).
	PrecisionFP16
)

// String returns "float32", "bf16" or "fp16".
func (p Precision) String() string {
	switch p {
	case PrecisionFloat32:
		return "float32"
	case PrecisionBF16:
		return "bf16"
	case PrecisionFP16:
		return "fp16"
	}
	return fmt.Sprintf("Precision(%d)", int32(p))
}

// ParsePrecision parses "float32" (or "fp32", ""), "bf16" (or "bfloat16")
// and "fp16" (or "float16").
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "float32", "fp32":
		return PrecisionFloat32, nil
	case "bf16", "bfloat16":
		return PrecisionBF16, nil
	case "fp16", "float16":
		return PrecisionFP16, nil
	}
	return 0, fmt.Errorf("unknown precision %q (want float32, bf16 or fp16)", s)
}

// autocast is the process-wide Precision of float32 products.
var autocast atomic.Int32

// SetAutocast sets the precision of float32 matrix products, process-wide,
// and returns the previous one, so that a caller can restore it:
//
//	defer tensor.SetAutocast(tensor.SetAutocast(tensor.PrecisionBF16))
//
// The trainer sets it around the forward and backward passes of a step.
// Because it is global, two models trained concurrently in one process
// share it.
func SetAutocast(p Precision) Precision {
	if p < PrecisionFloat32 || p > PrecisionFP16 {
		panic(fmt.Sprintf("tensor: SetAutocast(%v)", p))
	}
	return Precision(autocast.Swap(int32(p)))
}

// Autocast returns the current precision of float32 matrix products.
func Autocast() Precision { return Precision(autocast.Load()) }

// sgemmAuto is kernel.Sgemm at the autocast precision: the GEMM of every
// float32 product of this package.
func sgemmAuto(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	switch Autocast() {
	case PrecisionBF16:
		kernel.SgemmBF16(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	case PrecisionFP16:
		sgemmFP16(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	default:
		kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}

var fp16Scratch sync.Pool // *[]float32

// sgemmFP16 rounds op(A) and op(B) to binary16 values in scratch copies and
// multiplies those with kernel.Sgemm (exact products, float32 sums).
func sgemmFP16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ra, rb := m, k // rows and columns of A and B as stored
	ca, cb := k, n
	if transA {
		ra, ca = k, m
	}
	if transB {
		rb, cb = n, k
	}
	pa, pb := roundedFP16(a, ra, ca, lda), roundedFP16(b, rb, cb, ldb)
	kernel.Sgemm(transA, transB, m, n, k, alpha, *pa, ca, *pb, cb, beta, c, ldc)
	fp16Scratch.Put(pa)
	fp16Scratch.Put(pb)
}

// roundedFP16 returns a rows×cols copy of x (row stride ld) with every
// element rounded to binary16.
func roundedFP16(x []float32, rows, cols, ld int) *[]float32 {
	p, _ := fp16Scratch.Get().(*[]float32)
	if p == nil || cap(*p) < rows*cols {
		s := make([]float32, rows*cols)
		p = &s
	}
	*p = (*p)[:rows*cols]
	dst := *p
	for i := 0; i < rows; i++ {
		row := x[i*ld : i*ld+cols]
		for j, v := range row {
			dst[i*cols+j] = f16.ToFloat32FP16(f16.FromFloat32FP16(v))
		}
	}
	return p
}
