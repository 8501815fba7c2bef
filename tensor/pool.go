package tensor

import (
	"fmt"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// 2-d pooling over NCHW tensors, as torch.nn.functional's max_pool2d,
// avg_pool2d (both with ceil_mode) and adaptive_avg_pool2d. Inputs are
// [N, C, H, W] or [C, H, W]; every N·C plane is pooled independently.
// Float32 runs the kernels of package internal/kernel; float64 runs the
// same loops here; 16-bit inputs compute in float32.

// poolPlanes checks a pooling input and returns it as float, contiguous,
// with the number of planes and the input height and width.
func poolPlanes(op string, x *Tensor) (planes, h, w int) {
	if len(x.shape) != 3 && len(x.shape) != 4 {
		panic(fmt.Sprintf("tensor: %s needs an input [N, C, H, W] or [C, H, W], got %v", op, x.shape))
	}
	if !x.dtype.IsFloat() {
		panic(fmt.Sprintf("tensor: %s on a %v tensor", op, x.dtype))
	}
	nd := len(x.shape)
	return numelOf(x.shape[:nd-2]), x.shape[nd-2], x.shape[nd-1]
}

// poolWindow builds and checks a window geometry; a zero stride means the
// kernel size, a zero dilation means 1.
func poolWindow(op string, h, w int, k, stride, pad, dil [2]int, ceilMode bool) kernel.Window2d {
	g := kernel.Window2d{H: h, W: w, KH: k[0], KW: k[1], StrideH: stride[0], StrideW: stride[1],
		PadH: pad[0], PadW: pad[1], DilH: max(dil[0], 1), DilW: max(dil[1], 1), Ceil: ceilMode}
	if g.StrideH == 0 {
		g.StrideH = k[0]
	}
	if g.StrideW == 0 {
		g.StrideW = k[1]
	}
	if g.KH < 1 || g.KW < 1 || g.StrideH < 1 || g.StrideW < 1 || g.PadH < 0 || g.PadW < 0 ||
		2*g.PadH > g.KH || 2*g.PadW > g.KW || !windowFits(g) {
		panic(fmt.Sprintf("tensor: %s: kernel %v, stride %v, padding %v, dilation %v do not fit an input plane of %d×%d (padding may be at most half the kernel)", op, k, stride, pad, dil, h, w))
	}
	return g
}

// Pool2dOutSize returns the output height and width of MaxPool2d and
// AvgPool2d for an input plane h×w and the same window arguments (a zero
// stride means the kernel size, a zero dilation means 1). It checks
// nothing: a size below 1 means the window does not fit.
func Pool2dOutSize(h, w int, kernelSize, stride, padding, dilation [2]int, ceilMode bool) (oh, ow int) {
	g := kernel.Window2d{H: h, W: w, KH: kernelSize[0], KW: kernelSize[1], StrideH: stride[0], StrideW: stride[1],
		PadH: padding[0], PadW: padding[1], DilH: max(dilation[0], 1), DilW: max(dilation[1], 1), Ceil: ceilMode}
	if g.StrideH == 0 {
		g.StrideH = kernelSize[0]
	}
	if g.StrideW == 0 {
		g.StrideW = kernelSize[1]
	}
	return g.OutH(), g.OutW()
}

// pooledShape returns x's shape with the last two dims replaced.
func pooledShape(x *Tensor, oh, ow int) []int {
	s := append([]int(nil), x.shape...)
	s[len(s)-2], s[len(s)-1] = oh, ow
	return s
}

// MaxPool2d returns the maximum over each kernel window: x [N, C, H, W]
// (or [C, H, W]) gives [N, C, OH, OW] with OH = ⌊(H + 2·padH −
// dilH·(KH−1) − 1)/strideH⌋ + 1, or with ceilMode (PyTorch's ceil_mode)
// the division rounded up, as long as the last window starts inside the
// input or its top/left padding. A zero stride means the kernel size
// (PyTorch's default) and a zero dilation means 1; padding counts as −∞
// and may be at most half the kernel. The gradient goes to the position of
// each window's maximum (the first one on ties).
func MaxPool2d(x *Tensor, kernelSize, stride, padding, dilation [2]int, ceilMode bool) *Tensor {
	out, _ := maxPool2d(x, kernelSize, stride, padding, dilation, ceilMode, false)
	return out
}

// MaxPool2dWithIndices is MaxPool2d that also returns, as Int64, the
// position h·W + w of each maximum within its input plane (the indices
// torch's max_pool2d returns with return_indices=True).
func MaxPool2dWithIndices(x *Tensor, kernelSize, stride, padding, dilation [2]int, ceilMode bool) (out, indices *Tensor) {
	return maxPool2d(x, kernelSize, stride, padding, dilation, ceilMode, true)
}

func maxPool2d(x *Tensor, k, stride, pad, dil [2]int, ceilMode, wantIdx bool) (*Tensor, *Tensor) {
	planes, h, w := poolPlanes("MaxPool2d", x)
	if x.dtype.IsHalf() {
		o, i := maxPool2d(x.To(Float32), k, stride, pad, dil, ceilMode, wantIdx)
		return o.To(x.dtype), i
	}
	g := poolWindow("MaxPool2d", h, w, k, stride, pad, dil, ceilMode)
	oh, ow := g.OutH(), g.OutW()
	xc := x.contiguousRaw()
	out := emptyUninit(x.dtype, pooledShape(x, oh, ow))
	record := track1(out, x)
	if is2x2(g) {
		return maxPool2x2Op(x, xc, out, planes, g, record, wantIdx)
	}
	argmax := make([]int32, planes*oh*ow)
	switch x.dtype {
	case Float32:
		kernel.MaxPool2dForwardF32(flat[float32](out), argmax, flat[float32](xc), planes, g)
	default:
		kernel.MaxPool2dForward(flat[float64](out), argmax, flat[float64](xc), planes, g)
	}
	if record {
		out.attach("MaxPool2d", func(gy *Tensor) []*Tensor {
			gy = gy.contiguousRaw()
			gx := emptyUninit(gy.dtype, x.shape)
			switch gy.dtype {
			case Float32:
				kernel.MaxPool2dBackwardF32(flat[float32](gx), flat[float32](gy), argmax, planes, g)
			case Float64:
				kernel.MaxPool2dBackward(flat[float64](gx), flat[float64](gy), argmax, planes, g)
			}
			return []*Tensor{gx}
		}, x)
	}
	var idx *Tensor
	if wantIdx {
		idx = empty(Int64, out.shape)
		iv := flat[int64](idx)
		for i, a := range argmax {
			iv[i] = int64(a)
		}
	}
	return out, idx
}

// maxPool2x2Op runs the 2×2, stride-2 max pooling of xc into out. The
// window position of each maximum is kept as a one-byte code (0..3, row-
// major in the window) in a recycled buffer that the engine gives back with the
// node; backward writes each 2×2 block of the input gradient in one pass.
func maxPool2x2Op(x, xc, out *Tensor, planes int, g kernel.Window2d, record, wantIdx bool) (*Tensor, *Tensor) {
	oh, ow := g.OutH(), g.OutW()
	var code []uint8
	if record || wantIdx {
		code = scratchU8(planes * oh * ow)
	}
	switch x.dtype {
	case Float32:
		maxPool2x2(flat[float32](out), code, flat[float32](xc), planes, g)
	default:
		maxPool2x2(flat[float64](out), code, flat[float64](xc), planes, g)
	}
	var idx *Tensor
	if wantIdx {
		idx = empty(Int64, out.shape)
		iv := flat[int64](idx)
		for i, k := range code {
			iv[i] = int64(window2x2Index(i, k, oh, ow, g.W))
		}
	}
	if !record {
		if code != nil {
			recyclerU8.put(code)
		}
		return out, idx
	}
	out.attach("MaxPool2d", func(gy *Tensor) []*Tensor {
		gy = gy.contiguousRaw()
		gx := emptyUninit(gy.dtype, x.shape)
		switch gy.dtype {
		case Float32:
			maxPool2x2Backward(flat[float32](gx), flat[float32](gy), code, planes, g)
		case Float64:
			maxPool2x2Backward(flat[float64](gx), flat[float64](gy), code, planes, g)
		}
		return []*Tensor{gx}
	}, x)
	out.node.free = func() { recyclerU8.put(code) }
	return out, idx
}

// window2x2Index returns the position h·W + w in its input plane of the
// window element with code k of output i (planes of oh×ow outputs).
func window2x2Index(i int, k uint8, oh, ow, w int) int {
	j := i % (oh * ow)
	y, x := j/ow, j%ow
	return (2*y+int(k>>1))*w + 2*x + int(k&1)
}

// is2x2 reports whether g is the common 2×2 window with stride 2 and no
// padding or dilation (and, with Ceil, no partial last window).
func is2x2(g kernel.Window2d) bool {
	return g.KH == 2 && g.KW == 2 && g.StrideH == 2 && g.StrideW == 2 && g.PadH == 0 && g.PadW == 0 && g.DilH == 1 && g.DilW == 1 &&
		(!g.Ceil || g.H%2 == 0 && g.W%2 == 0)
}

// maxPool2x2 is max pooling with a 2×2 window and stride 2, unrolled: the
// same results as the general loop (first maximum in row-major window
// order; the last NaN wins, as in PyTorch). code, unless nil, receives the window
// position of each maximum: 0 top left, 1 top right, 2 bottom left, 3
// bottom right.
func maxPool2x2[T float](dst []T, code []uint8, src []T, planes int, g kernel.Window2d) {
	oh, ow := g.OutH(), g.OutW()
	parallel.For(planes, max(1, grainElems/max(4*oh*ow, 1)), func(lo, hi int) {
		var spare []uint8
		if code == nil {
			spare = make([]uint8, ow)
		}
		for p := lo; p < hi; p++ {
			in := src[p*g.H*g.W : (p+1)*g.H*g.W]
			out := dst[p*oh*ow : (p+1)*oh*ow]
			for y := range oh {
				r0 := in[2*y*g.W : (2*y+1)*g.W]
				r1 := in[(2*y+1)*g.W : (2*y+2)*g.W]
				o := out[y*ow : (y+1)*ow]
				cd := spare
				if code != nil {
					cd = code[(p*oh+y)*ow : (p*oh+y+1)*ow]
				}
				r0, r1, cd = r0[:2*len(o)], r1[:2*len(o)], cd[:len(o)]
				for x := range o {
					// Branch-free on ordinary data: the maximum, then the
					// first window position holding it (selects, not jumps).
					a, b, c, d := r0[2*x], r0[2*x+1], r1[2*x], r1[2*x+1]
					m := max(max(a, b), max(c, d)) // NaN if any is NaN
					// k = index of the first element equal to m, from
					// 0/1 flags (SETcc) rather than jumps.
					n0, n1, n2 := b2u(a != m), b2u(b != m), b2u(c != m)
					k := n0 * (1 + n1*(1+n2))
					if m != m { // the last NaN wins, as in PyTorch
						switch {
						case d != d:
							k = 3
						case c != c:
							k = 2
						case b != b:
							k = 1
						default:
							k = 0
						}
					}
					o[x], cd[x] = m, k
				}
			}
		}
	})
}

// maxPool2x2Backward sets dx, the input gradient of maxPool2x2, from the
// output gradient dy and the window codes: each pair of input rows is
// cleared while in cache and gets dy at the maximum of each window; rows
// no window covers get 0.
func maxPool2x2Backward[T float](dx, dy []T, code []uint8, planes int, g kernel.Window2d) {
	oh, ow := g.OutH(), g.OutW()
	hw := g.H * g.W
	parallel.For(planes, max(1, grainElems/max(hw, 1)), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			in := dx[p*hw : (p+1)*hw]
			for y := range oh {
				gr := dy[(p*oh+y)*ow : (p*oh+y+1)*ow]
				cr := code[(p*oh+y)*ow : (p*oh+y+1)*ow]
				cr = cr[:len(gr)]
				rows := in[2*y*g.W : (2*y+2)*g.W]
				clear(rows)
				for x, v := range gr {
					k := int(cr[x] & 3)
					rows[(k>>1)*g.W+2*x+k&1] = v
				}
			}
			clear(in[2*oh*g.W:])
		}
	})
}

// AvgPool2d returns the mean over each kernel window (no dilation; a zero
// stride means the kernel size). With countIncludePad (PyTorch's default)
// the divisor is KH·KW, padding counting as zeros (with ceilMode, a last
// window that runs past the padding counts only its part inside it);
// otherwise it is the number of real input elements in the window. Shapes,
// and ceilMode, follow MaxPool2d.
func AvgPool2d(x *Tensor, kernelSize, stride, padding [2]int, ceilMode, countIncludePad bool) *Tensor {
	planes, h, w := poolPlanes("AvgPool2d", x)
	if x.dtype.IsHalf() {
		return AvgPool2d(x.To(Float32), kernelSize, stride, padding, ceilMode, countIncludePad).To(x.dtype)
	}
	g := poolWindow("AvgPool2d", h, w, kernelSize, stride, padding, [2]int{1, 1}, ceilMode)
	oh, ow := g.OutH(), g.OutW()
	xc := x.contiguousRaw()
	out := emptyUninit(x.dtype, pooledShape(x, oh, ow))
	switch x.dtype {
	case Float32:
		kernel.AvgPool2dForwardF32(flat[float32](out), flat[float32](xc), planes, g, countIncludePad)
	case Float64:
		kernel.AvgPool2dForward(flat[float64](out), flat[float64](xc), planes, g, countIncludePad)
	}
	if track1(out, x) {
		out.attach("AvgPool2d", func(gy *Tensor) []*Tensor {
			gy = gy.contiguousRaw()
			gx := empty(gy.dtype, x.shape)
			switch gy.dtype {
			case Float32:
				kernel.AvgPool2dBackwardF32(flat[float32](gx), flat[float32](gy), planes, g, countIncludePad)
			case Float64:
				kernel.AvgPool2dBackward(flat[float64](gx), flat[float64](gy), planes, g, countIncludePad)
			}
			return []*Tensor{gx}
		}, x)
	}
	return out
}

// adaptiveRange returns the input range [start, end) that output i of n
// averages over an input of size in: start = ⌊i·in/n⌋, end = ⌈(i+1)·in/n⌉,
// PyTorch's formula.
func adaptiveRange(i, n, in int) (start, end int) {
	return i * in / n, ((i+1)*in + n - 1) / n
}

// AdaptiveAvgPool2d averages x [N, C, H, W] (or [C, H, W]) down to
// [N, C, outH, outW]: output (i, j) is the mean of input rows
// [⌊i·H/outH⌋, ⌈(i+1)·H/outH⌉) and the columns given likewise, as in
// torch.nn.functional.adaptive_avg_pool2d. outH and outW may exceed H and
// W (windows then overlap).
func AdaptiveAvgPool2d(x *Tensor, outH, outW int) *Tensor {
	planes, h, w := poolPlanes("AdaptiveAvgPool2d", x)
	if outH < 1 || outW < 1 || h < 1 || w < 1 {
		panic(fmt.Sprintf("tensor: AdaptiveAvgPool2d to %d×%d from input %v", outH, outW, x.shape))
	}
	if x.dtype.IsHalf() {
		return AdaptiveAvgPool2d(x.To(Float32), outH, outW).To(x.dtype)
	}
	xc := x.contiguousRaw()
	out := empty(x.dtype, pooledShape(x, outH, outW))
	switch x.dtype {
	case Float32:
		adaptiveAvg(flat[float32](out), flat[float32](xc), planes, h, w, outH, outW, false)
	case Float64:
		adaptiveAvg(flat[float64](out), flat[float64](xc), planes, h, w, outH, outW, false)
	}
	if track1(out, x) {
		out.attach("AdaptiveAvgPool2d", func(gy *Tensor) []*Tensor {
			gy = gy.contiguousRaw()
			gx := empty(gy.dtype, x.shape)
			switch gy.dtype {
			case Float32:
				adaptiveAvg(flat[float32](gy), flat[float32](gx), planes, h, w, outH, outW, true)
			case Float64:
				adaptiveAvg(flat[float64](gy), flat[float64](gx), planes, h, w, outH, outW, true)
			}
			return []*Tensor{gx}
		}, x)
	}
	return out
}

// adaptiveAvg is the forward (pooled from plane) or backward (plane from
// pooled) of adaptive average pooling.
func adaptiveAvg[T float](pooled, plane []T, planes, h, w, oh, ow int, backward bool) {
	hw := h * w
	grain := max(1, grainElems/max(hw, 1))
	parallel.For(planes, grain, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			in := plane[p*hw : (p+1)*hw]
			if backward {
				clear(in)
			}
			for y := range oh {
				h0, h1 := adaptiveRange(y, oh, h)
				for x := range ow {
					w0, w1 := adaptiveRange(x, ow, w)
					o := &pooled[p*oh*ow+y*ow+x]
					inv := 1 / T((h1-h0)*(w1-w0))
					if backward {
						v := *o * inv
						for ih := h0; ih < h1; ih++ {
							row := in[ih*w+w0 : ih*w+w1]
							for i := range row {
								row[i] += v
							}
						}
						continue
					}
					var s T
					for ih := h0; ih < h1; ih++ {
						for _, v := range in[ih*w+w0 : ih*w+w1] {
							s += v
						}
					}
					*o = s * inv
				}
			}
		}
	})
}

// b2u returns 1 for true and 0 for false (compiled to SETcc, no jump).
func b2u(b bool) uint8 {
	var u uint8
	if b {
		u = 1
	}
	return u
}
