package nn

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/tensor"
)

// StatsReducer sums a batch norm's per-channel statistics over the
// processes of a data-parallel job, for SyncBatchNorm (package ddp
// provides one over a process group; nn knows nothing of processes).
type StatsReducer interface {
	// SumStats replaces x on every process by the sum of every process's
	// x. Every process calls it at the same points. A failure is kept by
	// the reducer and reported by its owner (ddp.Sync); x is then left as
	// it is.
	SumStats(x []float64)
	// Share is this process's weight in the global loss: its rows over
	// the global batch's (1/N for equal parts).
	Share() float64
}

// syncForward is BatchNorm's training pass with statistics over the whole
// global batch (PyTorch's SyncBatchNorm): the mean and the biased variance
// per channel come from every process's rows (two sums over the
// processes: the sums and counts, then the squared deviations from the
// global mean, for accuracy), and the backward pass sums, per channel, the
// gradient and its product with the normalized input over the processes
// too, so that each process's input gradient is its part of the gradient
// of the global loss. Parameter gradients stay local sums, as every
// parameter's: the data-parallel reduction combines them.
func (b *BatchNorm) syncForward(x *tensor.Tensor) *tensor.Tensor {
	dt := x.DType()
	if dt != tensor.Float32 && dt != tensor.Float64 {
		panic(fmt.Sprintf("nn: SyncBatchNorm: input dtype %v (float32 or float64)", dt))
	}
	shape := x.Shape()
	c := shape[1]
	inner := 1
	for d := 2; d < len(shape); d++ {
		inner *= shape[d]
	}
	outer := shape[0]
	xv := toFloat64s(x.Detach().Contiguous())
	mean, variance, m := b.syncStats(xv, outer, c, inner)
	invstd := make([]float64, c)
	for ch := range c {
		invstd[ch] = 1 / math.Sqrt(variance[ch]+b.Eps)
	}
	var w, bias []float64
	if b.Weight != nil {
		w = toFloat64s(b.Weight.Detach())
		bias = toFloat64s(b.Bias.Detach())
	}
	xhat := make([]float64, len(xv))
	yv := make([]float64, len(xv))
	for n := range outer {
		for ch := range c {
			off := (n*c + ch) * inner
			for i := off; i < off+inner; i++ {
				xhat[i] = (xv[i] - mean[ch]) * invstd[ch]
				yv[i] = xhat[i]
				if w != nil {
					yv[i] = xhat[i]*w[ch] + bias[ch]
				}
			}
		}
	}
	b.updateRunning(mean, variance, m)
	out := tensor.FromFloat64(yv, shape...).To(dt)
	share := b.Sync.Share()
	backward := func(g *tensor.Tensor) []*tensor.Tensor {
		gv := toFloat64s(g.Contiguous())
		sums := make([]float64, 2*c) // Σ g and Σ g·x̂ per channel, this process's
		for n := range outer {
			for ch := range c {
				off := (n*c + ch) * inner
				for i := off; i < off+inner; i++ {
					sums[ch] += gv[i]
					sums[c+ch] += gv[i] * xhat[i]
				}
			}
		}
		db, dw := sums[:c], sums[c:] // sums is not changed below
		// The global sums, each process's weighted by its share of the
		// loss; divided back by this process's share below, because the
		// data-parallel reduction multiplies this process's gradients by
		// it.
		glob := make([]float64, 2*c)
		for i, v := range sums {
			glob[i] = v * share
		}
		b.Sync.SumStats(glob)
		dx := make([]float64, len(gv))
		for n := range outer {
			for ch := range c {
				k := invstd[ch]
				if w != nil {
					k *= w[ch]
				}
				a, bb := glob[ch]/(m*share), glob[c+ch]/(m*share)
				off := (n*c + ch) * inner
				for i := off; i < off+inner; i++ {
					dx[i] = k * (gv[i] - a - xhat[i]*bb)
				}
			}
		}
		grads := []*tensor.Tensor{tensor.FromFloat64(dx, shape...).To(dt), nil, nil}
		if w != nil {
			pdt := b.Weight.DType()
			grads[1] = tensor.FromFloat64(dw, c).To(pdt)
			grads[2] = tensor.FromFloat64(db, c).To(pdt)
		}
		return grads
	}
	if b.Weight != nil {
		return tensor.CustomOp("SyncBatchNorm", out, backward, x, b.Weight, b.Bias)
	}
	return tensor.CustomOp("SyncBatchNorm", out, func(g *tensor.Tensor) []*tensor.Tensor { return backward(g)[:1] }, x)
}

// syncStats returns the mean and the biased variance per channel of the
// global batch, and the number of values per channel m: the sums and
// counts summed over the processes, then the squared deviations from the
// global mean. xv holds this process's outer×c×inner values.
func (b *BatchNorm) syncStats(xv []float64, outer, c, inner int) (mean, variance []float64, m float64) {
	// Sums and counts, then the squared deviations.
	st := make([]float64, c+1)
	for n := range outer {
		for ch := range c {
			row := xv[(n*c+ch)*inner : (n*c+ch+1)*inner]
			s := 0.0
			for _, v := range row {
				s += v
			}
			st[ch] += s
		}
	}
	st[c] = float64(outer * inner)
	b.Sync.SumStats(st)
	m = st[c]
	if m <= 1 {
		panic(fmt.Sprintf("nn: SyncBatchNorm: expected more than 1 value per channel over all processes, got %g", m))
	}
	mean = make([]float64, c)
	for ch := range c {
		mean[ch] = st[ch] / m
	}
	dev := make([]float64, c)
	for n := range outer {
		for ch := range c {
			row := xv[(n*c+ch)*inner : (n*c+ch+1)*inner]
			s := 0.0
			for _, v := range row {
				d := v - mean[ch]
				s += d * d
			}
			dev[ch] += s
		}
	}
	b.Sync.SumStats(dev)
	variance = make([]float64, c)
	for ch := range c {
		variance[ch] = dev[ch] / m
	}
	return mean, variance, m
}

// updateRunning moves the running statistics (when tracked) towards the
// global batch's mean and unbiased variance (m values per channel).
func (b *BatchNorm) updateRunning(mean, variance []float64, m float64) {
	if b.RunningMean == nil {
		return
	}
	c := len(mean)
	b.NumBatchesTracked.AddScalarInPlace(1)
	f := b.Momentum
	if b.CumulativeAverage {
		f = 1 / b.NumBatchesTracked.Item()
	}
	unbiased := make([]float64, c)
	for ch := range c {
		unbiased[ch] = variance[ch] * m / (m - 1)
	}
	rdt := b.RunningMean.DType()
	b.RunningMean.MulScalarInPlace(1-f).AxpyInPlace(f, tensor.FromFloat64(mean, c).To(rdt))
	b.RunningVar.MulScalarInPlace(1-f).AxpyInPlace(f, tensor.FromFloat64(unbiased, c).To(rdt))
}

// toFloat64s returns t's elements as float64 (a copy for float32).
func toFloat64s(t *tensor.Tensor) []float64 {
	if t.DType() == tensor.Float64 {
		return append([]float64(nil), t.Float64s()...)
	}
	f := t.Float32s()
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = float64(v)
	}
	return out
}
