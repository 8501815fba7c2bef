package tensor

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// Fused cross-entropy from logits: one pass over the logits computes the
// log-softmax, the loss and the gradient, which is saved and handed back
// by a CustomOp, instead of the log_softmax, multiply and sum of the
// composite (and their three backward passes).
//
// With p = log_softmax(x) over the classes of a row and coefficients
// a[i, c] (the target, weighted and smoothed), the loss of row i and its
// gradient are
//
//	ℓ_i = −Σ_c a[i, c]·p[i, c]
//	∂ℓ_i/∂x[i, k] = softmax(x)[i, k]·A_i − a[i, k],  A_i = Σ_c a[i, c]
//
// because ∂p[i, c]/∂x[i, k] = δ_ck − softmax(x)[i, k].

// CrossEntropyTargets gives the coefficients a[i, c] of the cross-entropy
// of the rows of logits [M, C] (see CrossEntropyRows), in one of two
// forms:
//
//   - Dense, when set, holds a[i, c] for every row and class ([M·C],
//     row-major): class-probability targets, already weighted and
//     smoothed;
//   - otherwise row i has the target class Class[i], and
//     a[i, c] = Smooth[c] + Weight[i]·[c = Class[i]], or 0 for every c
//     when Skip[i] (an ignored target). Smooth (per class) and Skip are
//     optional; Weight is required, one per row.
//
// For torch's cross_entropy with class weights w and label smoothing ε,
// Weight[i] = (1 − ε)·w[Class[i]] and Smooth[c] = ε/C·w[c].
type CrossEntropyTargets struct {
	Dense []float64

	Class  []int64
	Weight []float64
	Skip   []bool
	Smooth []float64
}

// Row writes a[i, ·] into dst (C elements).
func (t *CrossEntropyTargets) Row(i int, dst []float64) {
	c := len(dst)
	if t.Dense != nil {
		copy(dst, t.Dense[i*c:(i+1)*c])
		return
	}
	clear(dst)
	if t.Skip == nil || !t.Skip[i] {
		copy(dst, t.Smooth)
		dst[t.Class[i]] += t.Weight[i]
	}
}

// CrossEntropyRows returns the cross-entropy ℓ_i = −Σ_c a[i, c]·
// log_softmax(x)[i, c] of each row of the logits x [M, C] as a tensor [M]
// of x's dtype, computed in one pass together with its gradient (recorded
// as op "CrossEntropyLoss"). Float32 logits run the log-softmax kernel of
// package internal/kernel; 16-bit floats compute in float32.
func CrossEntropyRows(logits *Tensor, t *CrossEntropyTargets) *Tensor {
	if logits.dtype.IsHalf() {
		return CrossEntropyRows(logits.To(Float32), t).To(logits.dtype)
	}
	loss, grad := crossEntropyPass(logits, t, 1)
	val := FromFloat64(loss, len(loss)).To(logits.dtype)
	return CustomOp("CrossEntropyLoss", val, func(g *Tensor) []*Tensor {
		return []*Tensor{grad.Mul(g.Reshape(-1, 1))}
	}, logits)
}

// CrossEntropySum returns Σ_i ℓ_i / div (see CrossEntropyRows) as a
// scalar of x's dtype: div = 1 gives the sum, and the sum of the weights
// of the counted targets torch's weighted mean.
func CrossEntropySum(logits *Tensor, t *CrossEntropyTargets, div float64) *Tensor {
	if logits.dtype.IsHalf() {
		return CrossEntropySum(logits.To(Float32), t, div).To(logits.dtype)
	}
	loss, grad := crossEntropyPass(logits, t, 1/div)
	var s float64
	for _, l := range loss {
		s += l
	}
	s /= div
	return CustomOp("CrossEntropyLoss", Scalar(s, logits.dtype), func(g *Tensor) []*Tensor {
		// A seed of exactly 1 returns the saved gradient as is.
		if s := g.Item(); s != 1 {
			return []*Tensor{grad.MulScalar(s)}
		}
		return []*Tensor{grad}
	}, logits)
}

// crossEntropyPass checks the logits and targets and returns the loss of
// every row and the gradient of Σ_i ℓ_i·gs with respect to the logits.
func crossEntropyPass(logits *Tensor, t *CrossEntropyTargets, gs float64) (loss []float64, grad *Tensor) {
	dt := logits.dtype
	if dt != Float32 && dt != Float64 {
		panic(fmt.Sprintf("tensor: CrossEntropy of %v logits", dt))
	}
	if len(logits.shape) != 2 {
		panic(fmt.Sprintf("tensor: CrossEntropy needs logits [M, C], got %v", logits.shape))
	}
	m, c := logits.shape[0], logits.shape[1]
	checkCrossEntropyTargets(t, m, c)
	xc := logits.Detach().Contiguous()
	loss = make([]float64, m)
	switch dt {
	case Float32:
		x := xc.Float32s()
		logp := make([]float32, m*c)
		g := make([]float32, m*c)
		kernel.LogSoftmaxRowsF32(logp, x, m, c)
		kernel.ExpF32(g, logp)
		crossEntropyRows(logp, g, m, c, t, gs, loss)
		grad = FromFloat32(g, m, c)
	case Float64:
		x := xc.Float64s()
		logp := make([]float64, m*c)
		g := make([]float64, m*c)
		for i := range m {
			xr, lr, gr := x[i*c:(i+1)*c], logp[i*c:(i+1)*c], g[i*c:(i+1)*c]
			mx := math.Inf(-1)
			for _, v := range xr {
				mx = math.Max(mx, v)
			}
			var s float64
			for _, v := range xr {
				s += math.Exp(v - mx)
			}
			lse := mx + math.Log(s)
			for k, v := range xr {
				lr[k] = v - lse
				gr[k] = math.Exp(lr[k])
			}
		}
		crossEntropyRows(logp, g, m, c, t, gs, loss)
		grad = FromFloat64(g, m, c)
	}
	return loss, grad
}

func checkCrossEntropyTargets(t *CrossEntropyTargets, m, c int) {
	if t.Dense != nil {
		if len(t.Dense) != m*c {
			panic(fmt.Sprintf("tensor: CrossEntropy: %d dense coefficients for logits [%d, %d]", len(t.Dense), m, c))
		}
		return
	}
	if len(t.Class) != m || len(t.Weight) != m || (t.Skip != nil && len(t.Skip) != m) || (t.Smooth != nil && len(t.Smooth) != c) {
		panic(fmt.Sprintf("tensor: CrossEntropy: %d classes, %d weights, %d skip flags and %d smoothing terms for logits [%d, %d]",
			len(t.Class), len(t.Weight), len(t.Skip), len(t.Smooth), m, c))
	}
	for i, y := range t.Class {
		if (t.Skip == nil || !t.Skip[i]) && (y < 0 || y >= int64(c)) {
			panic(fmt.Sprintf("tensor: CrossEntropy: class %d of row %d is out of range [0, %d)", y, i, c))
		}
	}
}

// crossEntropyRows turns, row by row, log-probabilities logp into the
// losses ℓ_i and the probabilities held in g into the gradient
// gs·∂ℓ_i/∂x[i, ·].
func crossEntropyRows[T float](logp, g []T, m, c int, t *CrossEntropyTargets, gs float64, loss []float64) {
	var smoothSum float64 // Σ_c Smooth[c]
	for _, v := range t.Smooth {
		smoothSum += v
	}
	for i := range m {
		lr, gr := logp[i*c:(i+1)*c], g[i*c:(i+1)*c]
		if t.Dense != nil {
			ar := t.Dense[i*c : (i+1)*c]
			var l, sa float64
			for k, ak := range ar {
				if ak != 0 {
					l -= ak * float64(lr[k])
				}
				sa += ak
			}
			loss[i] = l
			for k := range gr {
				gr[k] = T((float64(gr[k])*sa - ar[k]) * gs)
			}
			continue
		}
		if t.Skip != nil && t.Skip[i] {
			loss[i] = 0
			clear(gr)
			continue
		}
		y, hw := t.Class[i], t.Weight[i]
		l := -hw * float64(lr[y])
		sa := hw + smoothSum
		if t.Smooth != nil {
			for k, sk := range t.Smooth {
				l -= sk * float64(lr[k])
				gr[k] = T((float64(gr[k])*sa - sk) * gs)
			}
		} else {
			f := T(sa * gs)
			for k := range gr {
				gr[k] *= f
			}
		}
		gr[y] -= T(hw * gs)
		loss[i] = l
	}
}
