package kernel

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// 2-d pooling over planes.
//
// Layout: src holds `planes` contiguous planes of g.H×g.W, row-major; for an
// NCHW tensor planes = N·C and plane p = n·C + c. dst holds the same number
// of planes of g.OutH()×g.OutW(). The window geometry follows PyTorch's
// MaxPool2d/AvgPool2d, with ceil_mode as g.Ceil (see Window2d).

func checkPool(op string, g Window2d, planes, srcLen, dstLen int) Window2d {
	g = g.norm(op)
	if planes < 0 {
		panic(fmt.Sprintf("kernel.%s: negative plane count %d", op, planes))
	}
	checkLen(op, "src", srcLen, planes*g.H*g.W)
	checkLen(op, "dst", dstLen, planes*g.OutH()*g.OutW())
	return g
}

// planeGrain is how many planes make a chunk worth a core.
func planeGrain(g Window2d) int {
	return max(1, grainCompute/max(g.OutH()*g.OutW()*g.KH*g.KW, 1))
}

// MaxPool2dForwardF32 sets each dst element to the maximum of its window
// (padding counts as −Inf; a NaN in the window wins, as in PyTorch) and, if
// argmax is not nil, argmax to the position of that maximum within its input
// plane, h·W + w (PyTorch's indices; the first maximum in row-major window
// order on ties, but the last NaN, as PyTorch's CPU kernel picks). A window lying entirely in the padding yields −Inf and
// index −1. argmax has the layout of dst. MaxPool2dForward is the same for
// both float types.
func MaxPool2dForwardF32(dst []float32, argmax []int32, src []float32, planes int, g Window2d) {
	MaxPool2dForward(dst, argmax, src, planes, g)
}

// MaxPool2dForward is MaxPool2dForwardF32 for float32 or float64.
func MaxPool2dForward[T float32 | float64](dst []T, argmax []int32, src []T, planes int, g Window2d) {
	g = checkPool("MaxPool2dForwardF32", g, planes, len(src), len(dst))
	oh, ow := g.OutH(), g.OutW()
	if argmax != nil {
		checkLen("MaxPool2dForwardF32", "argmax", len(argmax), planes*oh*ow)
	}
	if g.H*g.W > math.MaxInt32 {
		panic(fmt.Sprintf("kernel.MaxPool2dForwardF32: plane %d×%d too large for int32 indices", g.H, g.W))
	}
	negInf := T(math.Inf(-1))
	parallel.For(planes, planeGrain(g), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			in := src[p*g.H*g.W : (p+1)*g.H*g.W]
			out := dst[p*oh*ow : (p+1)*oh*ow]
			var idx []int32
			if argmax != nil {
				idx = argmax[p*oh*ow : (p+1)*oh*ow]
			}
			for y := range oh {
				for x := range ow {
					best, at := negInf, int32(-1)
					h0, w0 := y*g.StrideH-g.PadH, x*g.StrideW-g.PadW
					for kh := range g.KH {
						ih := h0 + kh*g.DilH
						if ih < 0 || ih >= g.H {
							continue
						}
						for kw := range g.KW {
							iw := w0 + kw*g.DilW
							if iw < 0 || iw >= g.W {
								continue
							}
							v := in[ih*g.W+iw]
							// torch: (val > maxval) || isnan(val)
							if v > best || v != v || at < 0 {
								best, at = v, int32(ih*g.W+iw)
							}
						}
					}
					out[y*ow+x] = best
					if idx != nil {
						idx[y*ow+x] = at
					}
				}
			}
		}
	})
}

// MaxPool2dBackwardF32 sets dx (the layout of the forward src) to the
// gradient of max pooling: each dy element is added at the input position
// argmax recorded for it (entries of −1 are skipped). dx is overwritten.
func MaxPool2dBackwardF32(dx, dy []float32, argmax []int32, planes int, g Window2d) {
	MaxPool2dBackward(dx, dy, argmax, planes, g)
}

// MaxPool2dBackward is MaxPool2dBackwardF32 for float32 or float64.
func MaxPool2dBackward[T float32 | float64](dx, dy []T, argmax []int32, planes int, g Window2d) {
	g = checkPool("MaxPool2dBackwardF32", g, planes, len(dx), len(dy))
	oh, ow := g.OutH(), g.OutW()
	checkLen("MaxPool2dBackwardF32", "argmax", len(argmax), planes*oh*ow)
	parallel.For(planes, planeGrain(g), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			in := dx[p*g.H*g.W : (p+1)*g.H*g.W]
			clear(in)
			grad := dy[p*oh*ow : (p+1)*oh*ow]
			for i, a := range argmax[p*oh*ow : (p+1)*oh*ow] {
				if a >= 0 {
					in[a] += grad[i]
				}
			}
		}
	})
}

// avgWindow returns the clipped window rows [h0, h1) and columns [w0, w1)
// of output (y, x) and its divisor: the size of the window clipped to the
// padded plane (KH·KW unless Ceil makes a last window run past the padding)
// when countIncludePad, else the number of real input elements in it.
func avgWindow(g Window2d, y, x int, countIncludePad bool) (h0, h1, w0, w1, div int) {
	h0, w0 = y*g.StrideH-g.PadH, x*g.StrideW-g.PadW
	h1, w1 = min(h0+g.KH, g.H+g.PadH), min(w0+g.KW, g.W+g.PadW)
	padded := (h1 - h0) * (w1 - w0)
	h0, w0 = max(h0, 0), max(w0, 0)
	h1, w1 = min(h1, g.H), min(w1, g.W)
	n := padded
	if !countIncludePad {
		n = (h1 - h0) * (w1 - w0)
	}
	return h0, h1, w0, w1, max(n, 1)
}

func checkAvg(op string, g Window2d) {
	if (g.DilH != 0 && g.DilH != 1) || (g.DilW != 0 && g.DilW != 1) {
		panic(fmt.Sprintf("kernel.%s: average pooling has no dilation, got %d×%d", op, g.DilH, g.DilW))
	}
}

// AvgPool2dForwardF32 sets each dst element to the mean of its window.
// With countIncludePad (PyTorch's default) the divisor is KH·KW, padding
// counting as zeros (with Ceil, a last window running past the padding
// counts only its part inside the padded plane); without it the divisor is
// the number of real input elements in the window. Dilation must be 1 (or 0).
func AvgPool2dForwardF32(dst, src []float32, planes int, g Window2d, countIncludePad bool) {
	AvgPool2dForward(dst, src, planes, g, countIncludePad)
}

// AvgPool2dForward is AvgPool2dForwardF32 for float32 or float64.
func AvgPool2dForward[T float32 | float64](dst, src []T, planes int, g Window2d, countIncludePad bool) {
	checkAvg("AvgPool2dForwardF32", g)
	g = checkPool("AvgPool2dForwardF32", g, planes, len(src), len(dst))
	oh, ow := g.OutH(), g.OutW()
	parallel.For(planes, planeGrain(g), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			in := src[p*g.H*g.W : (p+1)*g.H*g.W]
			out := dst[p*oh*ow : (p+1)*oh*ow]
			for y := range oh {
				for x := range ow {
					h0, h1, w0, w1, div := avgWindow(g, y, x, countIncludePad)
					var s T
					for ih := h0; ih < h1; ih++ {
						for _, v := range in[ih*g.W+w0 : ih*g.W+w1] {
							s += v
						}
					}
					out[y*ow+x] = s / T(div)
				}
			}
		}
	})
}

// AvgPool2dBackwardF32 sets dx (the layout of the forward src) to the
// gradient of AvgPool2dForwardF32 with the same arguments: each dy element,
// divided by its window's divisor, is added to every input element of the
// window. dx is overwritten.
func AvgPool2dBackwardF32(dx, dy []float32, planes int, g Window2d, countIncludePad bool) {
	AvgPool2dBackward(dx, dy, planes, g, countIncludePad)
}

// AvgPool2dBackward is AvgPool2dBackwardF32 for float32 or float64.
func AvgPool2dBackward[T float32 | float64](dx, dy []T, planes int, g Window2d, countIncludePad bool) {
	checkAvg("AvgPool2dBackwardF32", g)
	g = checkPool("AvgPool2dBackwardF32", g, planes, len(dx), len(dy))
	oh, ow := g.OutH(), g.OutW()
	parallel.For(planes, planeGrain(g), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			in := dx[p*g.H*g.W : (p+1)*g.H*g.W]
			clear(in)
			grad := dy[p*oh*ow : (p+1)*oh*ow]
			for y := range oh {
				for x := range ow {
					h0, h1, w0, w1, div := avgWindow(g, y, x, countIncludePad)
					v := grad[y*ow+x] / T(div)
					for ih := h0; ih < h1; ih++ {
						row := in[ih*g.W+w0 : ih*g.W+w1]
						for i := range row {
							row[i] += v
						}
					}
				}
			}
		}
	})
}
