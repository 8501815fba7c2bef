package optim

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// ClipGradNorm rescales the gradients of params so that their total norm
// (the normType-norm of all gradient elements together, as if
// concatenated) is at most maxNorm, as torch.nn.utils.clip_grad_norm_: every
// gradient is multiplied by maxNorm/(norm+1e-6) when that is below 1. It
// returns the total norm before clipping. normType is any p > 0 (2 for
// the Euclidean norm), or math.Inf(1) for the largest absolute value.
// Parameters without a gradient are skipped.
//
// A NaN or infinite total norm leaves the gradients unchanged and returns
// an error wrapping ErrNonFinite (PyTorch's error_if_nonfinite=True), so a
// training loop can skip the step.
func ClipGradNorm(params []*tensor.Tensor, maxNorm, normType float64) (float64, error) {
	if !(maxNorm >= 0) || !(normType > 0) {
		return 0, fmt.Errorf("optim: ClipGradNorm: invalid max norm %g or norm type %g", maxNorm, normType)
	}
	total := GradNorm(params, normType)
	if !finite(total) {
		return total, fmt.Errorf("optim: ClipGradNorm: total gradient norm is %g: %w", total, ErrNonFinite)
	}
	coef := maxNorm / (total + 1e-6)
	if coef >= 1 {
		return total, nil
	}
	for _, p := range params {
		if g := p.Grad(); g != nil {
			g.MulScalarInPlace(coef)
		}
	}
	return total, nil
}

// GradNorm returns the normType-norm of all gradients of params together
// (math.Inf(1) for the largest absolute value), accumulated in float64.
func GradNorm(params []*tensor.Tensor, normType float64) float64 {
	if math.IsInf(normType, 1) {
		m := 0.0
		for _, p := range params {
			g := p.Grad()
			if g == nil {
				continue
			}
			switch g.DType() {
			case tensor.Float32:
				if a := maxAbsF32(g.Contiguous().Float32s()); a > m || math.IsNaN(a) {
					m = a
				}
			default:
				for _, v := range g.Contiguous().Values() {
					a := math.Abs(v)
					if a > m || a != a {
						m = a
					}
				}
			}
			if math.IsNaN(m) {
				return m
			}
		}
		return m
	}
	sum := 0.0
	for _, p := range params {
		g := p.Grad()
		if g == nil {
			continue
		}
		switch {
		case g.DType() == tensor.Float32 && normType == 2:
			sum += sumSquaresF32(g.Contiguous().Float32s())
		case g.DType() == tensor.Float64 && normType == 2:
			for _, v := range g.Contiguous().Float64s() {
				sum += v * v
			}
		default:
			for _, v := range g.Values() {
				sum += math.Pow(math.Abs(v), normType)
			}
		}
	}
	if normType == 2 {
		return math.Sqrt(sum)
	}
	return math.Pow(sum, 1/normType)
}

// normChunk keeps each kernel call below the size at which package
// kernel splits work over cores (which allocates), so clipping in a
// training loop stays allocation-free.
const normChunk = 1 << 16

// sumSquaresF32 returns Σx², each chunk by the vectorized kernel.DotF32
// (float64 accumulation, rounded to float32 once per chunk) and the chunks
// summed in float64.
func sumSquaresF32(x []float32) float64 {
	s := 0.0
	for lo := 0; lo < len(x); lo += normChunk {
		c := x[lo:min(lo+normChunk, len(x))]
		s += float64(kernel.DotF32(c, c))
	}
	return s
}

// maxAbsF32 returns max |x| (NaN if any element is NaN) with the
// vectorized kernel.MaxF32 and MinF32.
func maxAbsF32(x []float32) float64 {
	m := 0.0
	for lo := 0; lo < len(x); lo += normChunk {
		c := x[lo:min(lo+normChunk, len(x))]
		hi, low := float64(kernel.MaxF32(c)), float64(kernel.MinF32(c))
		if math.IsNaN(hi) || math.IsNaN(low) {
			return math.NaN()
		}
		m = max(m, hi, -low)
	}
	return m
}

// ClipGradValue clamps every gradient element of params to [−clip, clip]
// in place (torch.nn.utils.clip_grad_value_). NaNs stay NaN.
func ClipGradValue(params []*tensor.Tensor, clip float64) error {
	if !(clip >= 0) {
		return fmt.Errorf("optim: ClipGradValue: invalid clip value %g", clip)
	}
	for _, p := range params {
		g := p.Grad()
		if g == nil {
			continue
		}
		if !g.IsContiguous() {
			return fmt.Errorf("optim: ClipGradValue: gradient of shape %v is not contiguous", g.Shape())
		}
		switch g.DType() {
		case tensor.Float32:
			clampSlice(g.Float32s(), float32(clip))
		case tensor.Float64:
			clampSlice(g.Float64s(), clip)
		default:
			return fmt.Errorf("optim: ClipGradValue: gradient dtype %v", g.DType())
		}
	}
	return nil
}

// float is the element type of a gradient.
type float interface{ ~float32 | ~float64 }

func clampSlice[T float](s []T, c T) {
	for i, v := range s {
		if v > c {
			s[i] = c
		} else if v < -c {
			s[i] = -c
		}
	}
}
