package tensor

import (
	"fmt"
	"sync"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// Convolution as a matrix product (K. Chellapilla, S. Puri, P. Simard,
// "High Performance Convolutional Neural Networks for Document
// Processing", IWFHR 2006): each image is unfolded by im2col into a
// (C·KH·KW) × (OH·OW) matrix whose columns are the receptive fields, and
// the convolution is the GEMM weights[OC × C·KH·KW] · columns. Several
// images of a batch are unfolded side by side into one wide column matrix
// (row stride S·OH·OW for S images) so each GEMM is large enough to keep
// both cores busy; the chunk size S keeps the column buffer near
// convColumnBudget elements. The backward pass reuses the same layout:
//
//	dW  += dY[OC × S·P] · colsᵀ          (one GEMM per chunk and group)
//	dcol = Wᵀ · dY[OC × S·P], then col2im (the adjoint of im2col) into dX
//	db   = Σ over images and positions of dY
//
// Column buffers are scratch reused through a sync.Pool, so a training
// loop reaches a steady state without allocating them again.

// Conv2dOpts configures Conv2d. Zero values give PyTorch's defaults:
// stride 1, no padding, dilation 1, one group.
type Conv2dOpts struct {
	Stride   [2]int // [height, width]; 0 means 1
	Padding  [2]int // zero padding added on both sides of each spatial dim
	Dilation [2]int // spacing between kernel taps; 0 means 1
	Groups   int    // input and output channels split into Groups independent convolutions; 0 means 1
	// Relu applies max(0, ·) to the output in the same pass, while each
	// image's output is still in cache: Conv2d then returns
	// relu(conv(x)), whose gradient passes where the output is not ≤ 0,
	// without a separate activation tensor.
	Relu bool
}

// Conv1dOpts configures Conv1d; the fields mean what they do in Conv2dOpts
// for the single spatial dim.
type Conv1dOpts struct {
	Stride, Padding, Dilation int
	Groups                    int
}

// convColumnBudget is the number of elements the column matrix of one
// chunk of images aims at (the chunk holds at least one image).
var convColumnBudget = 1 << 20

// convGeom is the geometry of one convolution.
type convGeom struct {
	n, c, oc, groups int
	cg, ocg, kg      int // channels and output channels per group; kg = cg·KH·KW
	win              kernel.Window2d
	oh, ow, p        int // output height, width and plane size
	hw               int // input plane size
	pointwise        bool
	relu             bool // apply max(0, ·) to each image's output (Conv2dOpts.Relu)
}

func newConvGeom(xs, ws []int, o Conv2dOpts) convGeom {
	var g convGeom
	g.groups = max(o.Groups, 1)
	g.n, g.c = xs[0], xs[1]
	g.oc = ws[0]
	if g.c%g.groups != 0 || g.oc%g.groups != 0 || ws[1]*g.groups != g.c {
		panic(fmt.Sprintf("tensor: Conv2d: input %v and weight %v do not fit %d groups (weight must be [OC, C/groups, KH, KW] with OC divisible by groups)", xs, ws, g.groups))
	}
	g.cg, g.ocg = g.c/g.groups, g.oc/g.groups
	win := kernel.Window2d{H: xs[2], W: xs[3], KH: ws[2], KW: ws[3],
		StrideH: max(o.Stride[0], 1), StrideW: max(o.Stride[1], 1),
		PadH: o.Padding[0], PadW: o.Padding[1],
		DilH: max(o.Dilation[0], 1), DilW: max(o.Dilation[1], 1)}
	if win.PadH < 0 || win.PadW < 0 || !windowFits(win) {
		panic(fmt.Sprintf("tensor: Conv2d: input %v, weight %v and options %+v give no output", xs, ws, o))
	}
	g.win = win
	g.kg = g.cg * win.KH * win.KW
	g.oh, g.ow = win.OutH(), win.OutW()
	g.p = g.oh * g.ow
	g.hw = win.H * win.W
	g.pointwise = win.KH == 1 && win.KW == 1 && win.StrideH == 1 && win.StrideW == 1 && win.PadH == 0 && win.PadW == 0
	return g
}

// windowFits reports whether the dilated window fits the padded input
// at least once, i.e. the output is not empty. (Window2d.OutH alone would
// round a negative quotient up to 0 and report one output.)
func windowFits(g kernel.Window2d) bool {
	return g.H+2*g.PadH >= max(g.DilH, 1)*(g.KH-1)+1 && g.W+2*g.PadW >= max(g.DilW, 1)*(g.KW-1)+1
}

// Conv2d returns the 2-d cross-correlation of x with the filters w plus
// bias b, as torch.nn.functional.conv2d:
//
//	x [N, C, H, W] (or [C, H, W]), w [OC, C/groups, KH, KW], b [OC] or nil
//	out [N, OC, OH, OW], OH = ⌊(H + 2·padH − dilH·(KH−1) − 1)/strideH⌋ + 1
//
// Grouped convolution splits the channels into Groups independent
// convolutions (Groups = C = OC/k is a depthwise convolution). Float32 and
// float64 run natively; 16-bit and mixed inputs compute in float32. The
// gradients with respect to x, w and b are computed as needed.
func Conv2d(x, w, b *Tensor, opts Conv2dOpts) *Tensor {
	if len(x.shape) == 3 {
		return Conv2d(x.Unsqueeze(0), w, b, opts).Squeeze(0)
	}
	if len(x.shape) != 4 || len(w.shape) != 4 {
		panic(fmt.Sprintf("tensor: Conv2d needs x [N, C, H, W] and w [OC, C/groups, KH, KW], got %v and %v", x.shape, w.shape))
	}
	if b != nil && (len(b.shape) != 1 || b.shape[0] != w.shape[0]) {
		panic(fmt.Sprintf("tensor: Conv2d: bias %v does not match weight %v", b.shape, w.shape))
	}
	if r, ok := viaFloat(x, w, b, func(x, w, b *Tensor) *Tensor { return Conv2d(x, w, b, opts) }); ok {
		return r
	}
	ct := x.dtype
	g := newConvGeom(x.shape, w.shape, opts)
	xc, wc := x.contiguousRaw(), w.contiguousRaw()
	var bc *Tensor
	if b != nil {
		bc = b.contiguousRaw()
	}
	g.relu = opts.Relu
	out := emptyUninit(ct, []int{g.n, g.oc, g.oh, g.ow})
	switch ct {
	case Float32:
		convForward(convF32, &g, flat[float32](out), flat[float32](xc), flat[float32](wc), flatOrNil[float32](bc))
	case Float64:
		convForward(convF64, &g, flat[float64](out), flat[float64](xc), flat[float64](wc), flatOrNil[float64](bc))
	}
	if track3(out, x, w, b) {
		back := func(gy *Tensor) []*Tensor {
			gy = gy.contiguousRaw()
			if g.relu {
				// The gradient of the fused ReLU: gy unless out ≤ 0 (a NaN
				// output passes it, as in PyTorch). The
				// masked copy is scratch, recycled when the node is done.
				m := emptyUninit(ct, gy.shape)
				m.st.meta().eng = true
				defer m.st.recycle()
				switch ct {
				case Float32:
					kernel.ReluBackwardF32(flat[float32](m), flat[float32](gy), flat[float32](out))
				case Float64:
					reluMask(flat[float64](m), flat[float64](gy), flat[float64](out))
				}
				gy = m
			}
			var gx, gw, gb *Tensor
			if needs(x) {
				gx = emptyUninit(ct, x.shape)
			}
			if needs(w) {
				gw = emptyUninit(ct, w.shape)
			}
			if needs(b) {
				gb = emptyUninit(ct, b.shape)
			}
			switch ct {
			case Float32:
				convBackward(convF32, &g, flatOrNil[float32](gx), flatOrNil[float32](gw), flatOrNil[float32](gb), flat[float32](gy), flat[float32](xc), flat[float32](wc))
			case Float64:
				convBackward(convF64, &g, flatOrNil[float64](gx), flatOrNil[float64](gw), flatOrNil[float64](gb), flat[float64](gy), flat[float64](xc), flat[float64](wc))
			}
			return []*Tensor{gx, gw, gb}
		}
		if b != nil {
			out.attach("Conv2d", back, x, w, b)
		} else {
			out.attach("Conv2d", back, x, w)
		}
	}
	return out
}

// Conv1d is the 1-d convolution torch.nn.functional.conv1d: x [N, C, L]
// (or [C, L]), w [OC, C/groups, K], b [OC] or nil, out [N, OC, OL]. It runs
// as Conv2d over a height-1 image.
func Conv1d(x, w, b *Tensor, opts Conv1dOpts) *Tensor {
	if len(x.shape) == 2 {
		return Conv1d(x.Unsqueeze(0), w, b, opts).Squeeze(0)
	}
	if len(x.shape) != 3 || len(w.shape) != 3 {
		panic(fmt.Sprintf("tensor: Conv1d needs x [N, C, L] and w [OC, C/groups, K], got %v and %v", x.shape, w.shape))
	}
	o := Conv2dOpts{Stride: [2]int{1, opts.Stride}, Padding: [2]int{0, opts.Padding},
		Dilation: [2]int{1, opts.Dilation}, Groups: opts.Groups}
	return Conv2d(x.Unsqueeze(2), w.Unsqueeze(2), b, o).Squeeze(2)
}

// flatOrNil returns the contiguous elements of t, or nil for a nil t.
func flatOrNil[T elem](t *Tensor) []T {
	if t == nil {
		return nil
	}
	return flat[T](t)
}

// convOps holds what the generic convolution code needs per float type:
// its GEMM and its scratch buffers.
type convOps[T float] struct {
	gemm    func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)
	dot     func(a, b []T) T
	sum     func(x []T) T
	scratch sync.Pool // *[]T
}

var (
	convF32 = &convOps[float32]{gemm: sgemmAuto, dot: kernel.DotF32, sum: kernel.SumF32}
	convF64 = &convOps[float64]{gemm: kernel.Dgemm, dot: kernel.DotF64, sum: kernel.SumF64}
)

// get returns a scratch buffer of n elements (contents undefined).
func (o *convOps[T]) get(n int) *[]T {
	if p, ok := o.scratch.Get().(*[]T); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]T, n)
	return &s
}

func (o *convOps[T]) put(p *[]T) { o.scratch.Put(p) }

// forImages runs fn(s) for s in [0, count), on several cores when each
// call handles about `work` elements and there is enough in total.
func forImages(count, work int, fn func(s int)) {
	if count > 1 && count*work >= 2*grainElems {
		parallel.For(count, max(1, grainElems/max(work, 1)), func(lo, hi int) {
			for s := lo; s < hi; s++ {
				fn(s)
			}
		})
		return
	}
	for s := range count {
		fn(s)
	}
}

// convSmallFlops bounds the per-image GEMM work (2·OC·P·Kg flops per
// group) below which images are spread over cores, each running its own
// small single-threaded GEMMs; package kernel does not split GEMMs that
// small over cores itself. Larger convolutions unfold chunks of images
// into one wide column matrix and let the GEMM use every core.
var convSmallFlops = 16_000_000

// convImageGrain is the least work (column elements) per chunk of images
// in the per-image mode.
var convImageGrain = grainElems

// perImage reports whether the convolution runs one image per task.
func (g *convGeom) perImage() bool {
	return 2*g.ocg*g.p*g.kg < convSmallFlops || g.n == 1
}

// imageChunks returns how images are split over cores in the per-image
// mode: the number of chunks, the chunk length and the grain to pass to
// parallel.For so that it splits the same way.
func (g *convGeom) imageChunks() (count, size, grain int) {
	grain = max(1, convImageGrain/max(g.c*g.win.KH*g.win.KW*g.p, 1))
	count, size = parallel.Chunks(g.n, grain)
	return count, size, grain
}

// convForward computes out [N, OC, P] from x [N, C, H·W], w [OC, Kg·groups]
// and b [OC] (or nil); all contiguous.
func convForward[T float](ops *convOps[T], g *convGeom, out, x, w, b []T) {
	rows := g.c * g.win.KH * g.win.KW
	if g.perImage() {
		_, _, grain := g.imageChunks()
		parallel.For(g.n, grain, func(lo, hi int) {
			var colp *[]T
			if !g.pointwise {
				colp = ops.get(rows * g.p)
				defer ops.put(colp)
			}
			for n := lo; n < hi; n++ {
				img := x[n*g.c*g.hw : (n+1)*g.c*g.hw]
				col := img
				if !g.pointwise {
					col = *colp
					kernel.Im2col(col, g.p, img, g.c, g.win)
				}
				o := out[n*g.oc*g.p : (n+1)*g.oc*g.p]
				convImage(ops, g, o, col, g.p, w, b)
				if g.relu {
					reluInPlace(o)
				}
			}
		})
		return
	}
	s := min(max(1, convColumnBudget/max(rows*g.p, 1)), g.n)
	colp := ops.get(rows * s * g.p)
	tmpp := ops.get(g.oc * s * g.p)
	defer ops.put(colp)
	defer ops.put(tmpp)
	col, tmp := *colp, *tmpp
	for n0 := 0; n0 < g.n; n0 += s {
		cnt := min(s, g.n-n0)
		ld := cnt * g.p
		forImages(cnt, rows*g.p, func(i int) {
			img := x[(n0+i)*g.c*g.hw : (n0+i+1)*g.c*g.hw]
			kernel.Im2col(col[i*g.p:], ld, img, g.c, g.win)
		})
		if cnt == 1 {
			o := out[n0*g.oc*g.p : (n0+1)*g.oc*g.p]
			convImage(ops, g, o, col, g.p, w, b)
			if g.relu {
				reluInPlace(o)
			}
			continue
		}
		for gr := range g.groups {
			ops.gemm(false, false, g.ocg, ld, g.kg, 1, w[gr*g.ocg*g.kg:], g.kg,
				col[gr*g.kg*ld:], ld, 0, tmp[gr*g.ocg*ld:], ld)
		}
		// tmp is [OC × cnt·P]; image i's plane oc is tmp[oc·ld + i·P :].
		forImages(cnt, g.oc*g.p, func(i int) {
			o := out[(n0+i)*g.oc*g.p : (n0+i+1)*g.oc*g.p]
			for oc := range g.oc {
				dst, src := o[oc*g.p:(oc+1)*g.p], tmp[oc*ld+i*g.p:oc*ld+(i+1)*g.p]
				if b == nil {
					copy(dst, src)
				} else {
					addScalarTo(dst, src, b[oc])
				}
			}
			if g.relu {
				reluInPlace(o)
			}
		})
	}
}

// convImage sets o [OC × P] = W · col + b for one image whose columns
// have row stride ld.
func convImage[T float](ops *convOps[T], g *convGeom, o, col []T, ld int, w, b []T) {
	beta := T(0)
	if b != nil {
		for oc := range g.oc {
			fillSlice(o[oc*g.p:(oc+1)*g.p], b[oc])
		}
		beta = 1
	}
	for gr := range g.groups {
		ops.gemm(false, false, g.ocg, g.p, g.kg, 1, w[gr*g.ocg*g.kg:], g.kg,
			col[gr*g.kg*ld:], ld, beta, o[gr*g.ocg*g.p:], g.p)
	}
}

// addScalarTo sets dst = src + v.
func addScalarTo[T float](dst, src []T, v T) {
	src = src[:len(dst)]
	for j := range dst {
		dst[j] = src[j] + v
	}
}

// weightGrad accumulates dW_g += dY_g · col_gᵀ for one block of columns
// (n columns; dY rows have stride ldy, col rows stride ldc). beta 0
// overwrites dW. With few weights per group (Kg < 32, e.g. a first layer
// on one input channel) the GEMM would be a thin, badly shaped one, so
// each weight is one dot product over the columns instead.
func weightGrad[T float](ops *convOps[T], g *convGeom, gw, dy []T, ldy int, col []T, ldc, n int, beta T) {
	for gr := range g.groups {
		dwg := gw[gr*g.ocg*g.kg : (gr+1)*g.ocg*g.kg]
		if g.kg >= 32 {
			ops.gemm(false, true, g.ocg, g.kg, n, 1, dy[gr*g.ocg*ldy:], ldy,
				col[gr*g.kg*ldc:], ldc, beta, dwg, g.kg)
			continue
		}
		for oc := range g.ocg {
			dr := dy[(gr*g.ocg+oc)*ldy : (gr*g.ocg+oc)*ldy+n]
			for r := range g.kg {
				v := ops.dot(dr, col[(gr*g.kg+r)*ldc:(gr*g.kg+r)*ldc+n])
				if beta == 0 {
					dwg[oc*g.kg+r] = v
				} else {
					dwg[oc*g.kg+r] += v
				}
			}
		}
	}
}

// convBackward computes the gradients gx [N, C, H·W], gw and gb (each nil
// when not wanted) from gy [N, OC, P], x and w.
func convBackward[T float](ops *convOps[T], g *convGeom, gx, gw, gb, gy, x, w []T) {
	if gb != nil {
		clear(gb)
		for n := range g.n {
			for oc := range g.oc {
				gb[oc] += ops.sum(gy[(n*g.oc+oc)*g.p : (n*g.oc+oc+1)*g.p])
			}
		}
	}
	if gx == nil && gw == nil {
		return
	}
	rows := g.c * g.win.KH * g.win.KW
	wsize := g.oc * g.kg
	if g.perImage() {
		// Each chunk of images sums its weight gradient into its own slot;
		// the slots are added up at the end.
		count, size, grain := g.imageChunks()
		var partp *[]T
		if gw != nil && count > 1 {
			partp = ops.get((count - 1) * wsize)
			defer ops.put(partp)
		}
		parallel.For(g.n, grain, func(lo, hi int) {
			var colp *[]T
			if !g.pointwise {
				colp = ops.get(rows * g.p)
				defer ops.put(colp)
			}
			dw := gw
			if c := lo / size; c > 0 && gw != nil {
				dw = (*partp)[(c-1)*wsize : c*wsize]
			}
			for n := lo; n < hi; n++ {
				dy := gy[n*g.oc*g.p : (n+1)*g.oc*g.p]
				if gw != nil {
					img := x[n*g.c*g.hw : (n+1)*g.c*g.hw]
					col := img
					if !g.pointwise {
						col = *colp
						kernel.Im2col(col, g.p, img, g.c, g.win)
					}
					beta := T(1)
					if n == lo {
						beta = 0
					}
					weightGrad(ops, g, dw, dy, g.p, col, g.p, g.p, beta)
				}
				if gx != nil {
					dimg := gx[n*g.c*g.hw : (n+1)*g.c*g.hw]
					dcol := dimg
					if !g.pointwise {
						dcol = *colp
					}
					for gr := range g.groups {
						ops.gemm(true, false, g.kg, g.p, g.ocg, 1, w[gr*g.ocg*g.kg:], g.kg,
							dy[gr*g.ocg*g.p:], g.p, 0, dcol[gr*g.kg*g.p:], g.p)
					}
					if !g.pointwise {
						kernel.Col2im(dimg, dcol, g.p, g.c, g.win)
					}
				}
			}
		})
		if partp != nil {
			for c := 1; c < count; c++ {
				part := (*partp)[(c-1)*wsize : c*wsize]
				for i, v := range part {
					gw[i] += v
				}
			}
		}
		return
	}
	s := min(max(1, convColumnBudget/max(rows*g.p, 1)), g.n)
	colp := ops.get(rows * s * g.p)
	dyp := ops.get(g.oc * s * g.p)
	defer ops.put(colp)
	defer ops.put(dyp)
	col, dyt := *colp, *dyp
	for n0 := 0; n0 < g.n; n0 += s {
		cnt := min(s, g.n-n0)
		ld := cnt * g.p
		// dyt = dY of the chunk as [OC × cnt·P].
		dy := gy[n0*g.oc*g.p:]
		if cnt > 1 {
			dy = dyt
			forImages(cnt, g.oc*g.p, func(i int) {
				src := gy[(n0+i)*g.oc*g.p : (n0+i+1)*g.oc*g.p]
				for oc := range g.oc {
					copy(dyt[oc*ld+i*g.p:oc*ld+(i+1)*g.p], src[oc*g.p:(oc+1)*g.p])
				}
			})
		}
		if gw != nil {
			forImages(cnt, rows*g.p, func(i int) {
				img := x[(n0+i)*g.c*g.hw : (n0+i+1)*g.c*g.hw]
				kernel.Im2col(col[i*g.p:], ld, img, g.c, g.win)
			})
			beta := T(1)
			if n0 == 0 {
				beta = 0
			}
			weightGrad(ops, g, gw, dy, ld, col, ld, ld, beta)
		}
		if gx != nil {
			dcol := col // the columns are no longer needed
			for gr := range g.groups {
				ops.gemm(true, false, g.kg, ld, g.ocg, 1, w[gr*g.ocg*g.kg:], g.kg,
					dy[gr*g.ocg*ld:], ld, 0, dcol[gr*g.kg*ld:], ld)
			}
			forImages(cnt, rows*g.p, func(i int) {
				dimg := gx[(n0+i)*g.c*g.hw : (n0+i+1)*g.c*g.hw]
				kernel.Col2im(dimg, dcol[i*g.p:], ld, g.c, g.win)
			})
		}
	}
}

// fillSlice sets every element of s to v: a few stores, then doubling
// copies, which run as vectorized memmoves.
func fillSlice[T float](s []T, v T) {
	if len(s) == 0 {
		return
	}
	n := min(len(s), 16)
	for i := range n {
		s[i] = v
	}
	for ; n < len(s); n *= 2 {
		copy(s[n:], s[:n])
	}
}

// reluInPlace sets s = max(s, 0) with the semantics of Tensor.Relu for
// its float type.
func reluInPlace[T float](s []T) {
	switch v := any(s).(type) {
	case []float32:
		kernel.ReluF32(v, v)
	case []float64:
		unaryVec(opRelu, v, v, 0, 0)
	}
}

// reluMask sets dst = 0 where y ≤ 0, else g: the ReLU gradient from its
// input or output, passing g where y is NaN (PyTorch's threshold_backward).
func reluMask[T float](dst, g, y []T) {
	g, y = g[:len(dst)], y[:len(dst)]
	for i := range dst {
		if y[i] <= 0 {
			dst[i] = 0
		} else {
			dst[i] = g[i]
		}
	}
}
