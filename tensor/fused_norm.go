package tensor

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// normGrain is the least number of elements a task of the fused norms
// handles.
const normGrain = 1 << 14

// Fused layer and batch normalization: one pass for the statistics and
// the output, and a backward that computes the input gradient from the
// saved per-group mean and 1/σ with the closed form of Ioffe & Szegedy
// (ICML 2015, section 3):
//
//	x̂ = (x − μ)·r,  r = 1/√(σ² + ε),  ĝ = g·w
//	∂x = r·(ĝ − mean(ĝ) − x̂·mean(ĝ·x̂)),  ∂w = Σ g·x̂,  ∂b = Σ g
//
// where the means run over each normalized group (a row for LayerNorm, a
// channel over batch and positions for BatchNorm). Both are recorded with
// CustomOp and tested against the composites they replace
// (layerNormComposite, batchNormComposite).

// LayerNorm normalizes x over its last k dims,
// y = (x − E[x]) / √(Var[x] + eps) · w + b with the biased variance (Ba,
// Kiros & Hinton, "Layer Normalization", 2016), as
// torch.nn.functional.layer_norm. w and b are optional (nil) and have the
// shape of those k dims. Float32 and float64 inputs whose parameters share
// their dtype run the fused kernel; other dtypes compose primitive ops.
func LayerNorm(x, w, b *Tensor, k int, eps float64) *Tensor {
	if k < 1 || k > len(x.shape) {
		panic(fmt.Sprintf("tensor: LayerNorm over the last %d dims of an input %v", k, x.shape))
	}
	if !fusedNormOK(x, w, b) {
		return layerNormComposite(x, w, b, k, eps)
	}
	d := numelOf(x.shape[len(x.shape)-k:])
	checkNormParams("LayerNorm", w, b, d)
	return layerNormFused(x, w, b, d, eps)
}

// BatchNorm normalizes x [N, C, ...] per channel over the batch and the
// remaining dims with the batch statistics,
// y = (x − E[x]) / √(Var[x] + eps) · w + b with the biased variance (Ioffe
// & Szegedy, "Batch Normalization", ICML 2015): the training mode of
// torch.nn.functional.batch_norm. w and b are optional (nil), of shape
// [C]. It also returns the batch mean and biased variance per channel, as
// [C] tensors outside the graph (for running statistics): Float64 from the
// fused kernel (float32 and float64 inputs whose parameters share their
// dtype), x's dtype from the composite of primitive ops that other dtypes
// run.
func BatchNorm(x, w, b *Tensor, eps float64) (y, mean, variance *Tensor) {
	if len(x.shape) < 2 {
		panic(fmt.Sprintf("tensor: BatchNorm needs an input [N, C, ...], got %v", x.shape))
	}
	c := x.shape[1]
	if fusedNormOK(x, w, b) {
		checkNormParams("BatchNorm", w, b, c)
		y, ms, vs := batchNormFused(x, w, b, eps)
		return y, FromFloat64(ms), FromFloat64(vs)
	}
	// Per-channel tensors broadcast as [C, 1, ...].
	dims := []int{0}
	bshape := []int{c}
	for d := 2; d < len(x.shape); d++ {
		dims = append(dims, d)
		bshape = append(bshape, 1)
	}
	y, mean, variance = batchNormComposite(x, w, b, dims, bshape, eps)
	return y, mean.Detach().Reshape(c), variance.Detach().Reshape(c)
}

// checkNormParams panics unless the affine parameters present have n
// elements, the group size the fused kernels index them with.
func checkNormParams(op string, w, b *Tensor, n int) {
	for _, p := range []*Tensor{w, b} {
		if p != nil && p.Numel() != n {
			panic(fmt.Sprintf("tensor: %s: parameter of shape %v, want %d elements", op, p.shape, n))
		}
	}
}

// layerNormComposite is LayerNorm over the last k dims built from
// primitive ops: the reference for layerNormFused and the path for other
// dtypes.
func layerNormComposite(x, w, b *Tensor, k int, eps float64) *Tensor {
	dims := make([]int, k)
	for i := range dims {
		dims[i] = x.Dim() - k + i
	}
	xc := x.Sub(x.Mean(dims, true))
	y := xc.Mul(xc.Square().Mean(dims, true).AddScalar(eps).Rsqrt())
	if w != nil {
		y = y.Mul(w)
	}
	if b != nil {
		y = y.Add(b)
	}
	return y
}

// batchNormComposite is the training-mode batch norm built from primitive
// ops: the reference for batchNormFused and the path for other dtypes. It
// returns the output and the batch mean and biased variance (shaped to
// broadcast).
func batchNormComposite(x, w, b *Tensor, dims, bshape []int, eps float64) (y, mean, v *Tensor) {
	mean = x.Mean(dims, true)
	xc := x.Sub(mean)
	v = xc.Square().Mean(dims, true) // biased: divided by n
	y = xc.Mul(v.AddScalar(eps).Rsqrt())
	if w != nil {
		y = y.Mul(w.Reshape(bshape...))
	}
	if b != nil {
		y = y.Add(b.Reshape(bshape...))
	}
	return y, mean, v
}

// fusedNormOK reports whether the fused path handles x with the optional
// affine parameters: float32 or float64, all of one dtype.
func fusedNormOK(x, w, b *Tensor) bool {
	dt := x.DType()
	if dt != Float32 && dt != Float64 {
		return false
	}
	return (w == nil || w.DType() == dt) && (b == nil || b.DType() == dt)
}

// normValues returns the contiguous elements of t (no graph) as []T.
func normValues[T float](t *Tensor) []T {
	c := t.Detach().Contiguous()
	var zero T
	if _, ok := any(zero).(float32); ok {
		return any(c.Float32s()).([]T)
	}
	return any(c.Float64s()).([]T)
}

// normWrap views s as a tensor of the given shape.
func normWrap[T float](s []T, shape []int) *Tensor {
	if v, ok := any(s).([]float32); ok {
		return FromFloat32(v, shape...)
	}
	return FromFloat64(any(s).([]float64), shape...)
}

// affineInputs lists x and the non-nil affine parameters, the inputs of
// the custom op in order.
func affineInputs(x, w, b *Tensor) []*Tensor {
	in := []*Tensor{x}
	if w != nil {
		in = append(in, w)
	}
	if b != nil {
		in = append(in, b)
	}
	return in
}

// layerNormFused normalizes x over its last d elements per row.
func layerNormFused(x, w, b *Tensor, d int, eps float64) *Tensor {
	if x.DType() == Float32 {
		return layerNormT[float32](x, w, b, d, eps)
	}
	return layerNormT[float64](x, w, b, d, eps)
}

func layerNormT[T float](x, w, b *Tensor, d int, eps float64) *Tensor {
	shape := x.Shape()
	xs := normValues[T](x)
	var ws, bs []T
	if w != nil {
		ws = normValues[T](w)
	}
	if b != nil {
		bs = normValues[T](b)
	}
	rows := 0
	if d > 0 {
		rows = len(xs) / d
	}
	mean, rstd := make([]float64, rows), make([]float64, rows)
	ys := make([]T, len(xs))
	grain := max(1, normGrain/max(d, 1))
	parallel.For(rows, grain, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, yr := xs[r*d:(r+1)*d], ys[r*d:(r+1)*d]
			mu, rs := meanRstd(xr, eps)
			mean[r], rstd[r] = mu, rs
			for i, v := range xr {
				h := (float64(v) - mu) * rs
				if ws != nil {
					h *= float64(ws[i])
				}
				if bs != nil {
					h += float64(bs[i])
				}
				yr[i] = T(h)
			}
		}
	})
	return CustomOp("LayerNorm", normWrap(ys, shape), func(g *Tensor) []*Tensor {
		gs := normValues[T](g)
		var dx, dw, db []T
		if x.RequiresGrad() {
			dx = make([]T, len(xs))
		}
		// Each chunk of rows sums ∂w and ∂b into its own slot; the slots
		// are added in order at the end (deterministic for a fixed
		// number of cores).
		wantW, wantB := w != nil && w.RequiresGrad(), b != nil && b.RequiresGrad()
		count, size := parallel.Chunks(rows, grain)
		var partW, partB []float64
		if wantW {
			partW = make([]float64, max(count, 1)*d)
		}
		if wantB {
			partB = make([]float64, max(count, 1)*d)
		}
		parallel.For(rows, grain, func(lo, hi int) {
			var dw64, db64 []float64
			c := lo / max(size, 1)
			if wantW {
				dw64 = partW[c*d : (c+1)*d]
			}
			if wantB {
				db64 = partB[c*d : (c+1)*d]
			}
			layerNormBackRows(xs, gs, ws, dx, dw64, db64, mean, rstd, d, lo, hi)
		})
		var dw64, db64 []float64
		if wantW {
			dw64 = sumParts(partW, d)
		}
		if wantB {
			db64 = sumParts(partB, d)
		}
		out := []*Tensor{nil}
		if dx != nil {
			out[0] = normWrap(dx, shape)
		}
		if w != nil {
			out = append(out, nil)
			if dw64 != nil {
				dw = convertFloats[T](dw64)
				out[len(out)-1] = normWrap(dw, w.Shape())
			}
		}
		if b != nil {
			out = append(out, nil)
			if db64 != nil {
				db = convertFloats[T](db64)
				out[len(out)-1] = normWrap(db, b.Shape())
			}
		}
		return out
	}, affineInputs(x, w, b)...)
}

// meanRstd returns the mean of xs and 1/√(biased variance + eps), summed
// in float64 in two passes (the second over x − μ, which stays accurate
// when the mean is large).
func meanRstd[T float](xs []T, eps float64) (mu, rstd float64) {
	var s float64
	for _, v := range xs {
		s += float64(v)
	}
	mu = s / float64(len(xs))
	var q float64
	for _, v := range xs {
		d := float64(v) - mu
		q += d * d
	}
	return mu, 1 / math.Sqrt(q/float64(len(xs))+eps)
}

func convertFloats[T float](s []float64) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[i] = T(v)
	}
	return out
}

// batchNormFused normalizes x [N, C, S...] per channel over the batch and
// positions with batch statistics, and returns the output together with
// the batch mean and biased variance per channel (for the running
// statistics).
func batchNormFused(x, w, b *Tensor, eps float64) (y *Tensor, mean, variance []float64) {
	if x.DType() == Float32 {
		return batchNormT[float32](x, w, b, eps)
	}
	return batchNormT[float64](x, w, b, eps)
}

func batchNormT[T float](x, w, b *Tensor, eps float64) (*Tensor, []float64, []float64) {
	shape := x.Shape()
	n, c := shape[0], shape[1]
	s := 1
	for _, v := range shape[2:] {
		s *= v
	}
	m := float64(n * s) // elements per channel
	xs := normValues[T](x)
	var ws, bs []T
	if w != nil {
		ws = normValues[T](w)
	}
	if b != nil {
		bs = normValues[T](b)
	}
	// plane(i, ch) is the run of S elements of image i in channel ch.
	plane := func(v []T, i, ch int) []T { return v[(i*c+ch)*s : (i*c+ch+1)*s] }
	mean, variance, rstd := make([]float64, c), make([]float64, c), make([]float64, c)
	// Channels are independent: every loop runs over them in parallel.
	grain := max(1, normGrain/max(n*s, 1))
	forChannels := func(fn func(ch int)) {
		parallel.For(c, grain, func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				fn(ch)
			}
		})
	}
	forChannels(func(ch int) {
		var sum float64
		for i := range n {
			for _, v := range plane(xs, i, ch) {
				sum += float64(v)
			}
		}
		mu := sum / m
		var q float64
		for i := range n {
			for _, v := range plane(xs, i, ch) {
				d := float64(v) - mu
				q += d * d
			}
		}
		mean[ch], variance[ch] = mu, q/m
		rstd[ch] = 1 / math.Sqrt(q/m+eps)
	})
	ys := make([]T, len(xs))
	forChannels(func(ch int) {
		for i := range n {
			scale, shift := rstd[ch], -mean[ch]*rstd[ch]
			if ws != nil {
				scale *= float64(ws[ch])
				shift *= float64(ws[ch])
			}
			if bs != nil {
				shift += float64(bs[ch])
			}
			yp := plane(ys, i, ch)
			for j, v := range plane(xs, i, ch) {
				yp[j] = T(float64(v)*scale + shift)
			}
		}
	})
	y := CustomOp("BatchNorm", normWrap(ys, shape), func(g *Tensor) []*Tensor {
		gs := normValues[T](g)
		sg, sgx := make([]float64, c), make([]float64, c) // Σ g and Σ g·x̂ per channel
		forChannels(func(ch int) {
			mu, rs := mean[ch], rstd[ch]
			for i := range n {
				xp := plane(xs, i, ch)
				for j, gv := range plane(gs, i, ch) {
					sg[ch] += float64(gv)
					sgx[ch] += float64(gv) * (float64(xp[j]) - mu) * rs
				}
			}
		})
		out := []*Tensor{nil}
		if x.RequiresGrad() {
			dx := make([]T, len(xs))
			forChannels(func(ch int) {
				for i := range n {
					mu, rs := mean[ch], rstd[ch]
					wc := 1.0
					if ws != nil {
						wc = float64(ws[ch])
					}
					// With ĝ = g·w: mean(ĝ) = w·Σg/m, mean(ĝ·x̂) = w·Σg·x̂/m.
					a, k := wc*sg[ch]/m, wc*sgx[ch]/m
					xp, gp, dp := plane(xs, i, ch), plane(gs, i, ch), plane(dx, i, ch)
					for j, gv := range gp {
						h := (float64(xp[j]) - mu) * rs
						dp[j] = T(rs * (wc*float64(gv) - a - h*k))
					}
				}
			})
			out[0] = normWrap(dx, shape)
		}
		if w != nil {
			var dw *Tensor
			if w.RequiresGrad() {
				dw = normWrap(convertFloats[T](sgx), w.Shape())
			}
			out = append(out, dw)
		}
		if b != nil {
			var db *Tensor
			if b.RequiresGrad() {
				db = normWrap(convertFloats[T](sg), b.Shape())
			}
			out = append(out, db)
		}
		return out
	}, affineInputs(x, w, b)...)
	return y, mean, variance
}

// layerNormBackRows computes, for rows [lo, hi), the input gradient into
// dx (unless nil) and adds the rows' ∂w and ∂b into dw64 and db64 (unless
// nil).
func layerNormBackRows[T float](xs, gs, ws, dx []T, dw64, db64, mean, rstd []float64, d, lo, hi int) {
	for r := lo; r < hi; r++ {
		xr, gr := xs[r*d:(r+1)*d], gs[r*d:(r+1)*d]
		mu, rs := mean[r], rstd[r]
		var sg, sgx float64 // Σ ĝ and Σ ĝ·x̂ over the row
		for i, v := range xr {
			h := (float64(v) - mu) * rs
			gh := float64(gr[i])
			if dw64 != nil {
				dw64[i] += gh * h
			}
			if db64 != nil {
				db64[i] += gh
			}
			if ws != nil {
				gh *= float64(ws[i])
			}
			sg += gh
			sgx += gh * h
		}
		if dx == nil {
			continue
		}
		a, c := sg/float64(d), sgx/float64(d)
		dr := dx[r*d : (r+1)*d]
		for i, v := range xr {
			h := (float64(v) - mu) * rs
			gh := float64(gr[i])
			if ws != nil {
				gh *= float64(ws[i])
			}
			dr[i] = T(rs * (gh - a - h*c))
		}
	}
}

// sumParts adds the consecutive slots of d elements in parts.
func sumParts(parts []float64, d int) []float64 {
	out := parts[:d]
	for c := d; c < len(parts); c += d {
		for i, v := range parts[c : c+d] {
			out[i] += v
		}
	}
	return out
}
