package kernel

import (
	"fmt"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// Window2d is the geometry of a 2-d sliding window (a convolution kernel or
// a pooling window) over one H×W plane, with PyTorch's conventions:
//
//	OutH = ⌊(H + 2·PadH − DilH·(KH−1) − 1) / StrideH⌋ + 1
//	OutW = ⌊(W + 2·PadW − DilW·(KW−1) − 1) / StrideW⌋ + 1
//
// Output position (oh, ow) and kernel tap (kh, kw) read input row
// ih = oh·StrideH − PadH + kh·DilH and column iw = ow·StrideW − PadW + kw·DilW;
// positions outside the plane are padding. A stride or dilation of 0 means 1.
//
// Ceil (pooling only, PyTorch's ceil_mode) rounds the division up instead,
// so a last, partial window covers the end of the input, except that every
// window must start inside the input or its left/top padding.
type Window2d struct {
	H, W             int // input plane height and width
	KH, KW           int // window height and width
	StrideH, StrideW int
	PadH, PadW       int
	DilH, DilW       int
	Ceil             bool // pooling only: round the output size up
}

// norm returns g with zero strides and dilations replaced by 1, after
// checking that the geometry is valid (op names the caller in the panic).
func (g Window2d) norm(op string) Window2d {
	if g.StrideH == 0 {
		g.StrideH = 1
	}
	if g.StrideW == 0 {
		g.StrideW = 1
	}
	if g.DilH == 0 {
		g.DilH = 1
	}
	if g.DilW == 0 {
		g.DilW = 1
	}
	if g.H < 0 || g.W < 0 || g.KH < 1 || g.KW < 1 || g.StrideH < 1 || g.StrideW < 1 ||
		g.PadH < 0 || g.PadW < 0 || g.DilH < 1 || g.DilW < 1 || g.OutH() < 1 || g.OutW() < 1 {
		panic(fmt.Sprintf("kernel.%s: invalid window %+v (output %d×%d)", op, g, g.OutH(), g.OutW()))
	}
	return g
}

// OutH returns the output height (see Window2d). Zero stride or dilation
// count as 1.
func (g Window2d) OutH() int {
	return windowOut(g.H, g.PadH, g.KH, g.DilH, g.StrideH, g.Ceil)
}

// OutW returns the output width (see Window2d).
func (g Window2d) OutW() int {
	return windowOut(g.W, g.PadW, g.KW, g.DilW, g.StrideW, g.Ceil)
}

// windowOut is floor((in + 2·pad − dil·(k−1) − 1)/stride) + 1 (ceil: the
// division rounded up, then one less if the last window would start past
// the input and its padding), and 0 when the dilated window is larger than
// the padded input (Go's division rounds toward zero, which would give 1 for
// a small negative numerator).
func windowOut(in, pad, k, dil, stride int, ceil bool) int {
	span := in + 2*pad - max(dil, 1)*(k-1) - 1
	if span < 0 {
		return 0
	}
	stride = max(stride, 1)
	if !ceil {
		return span/stride + 1
	}
	out := (span+stride-1)/stride + 1
	if (out-1)*stride >= in+pad {
		out--
	}
	return out
}

// noCeil panics when a convolution entry point is given a pooling-only
// Ceil geometry.
func (g Window2d) noCeil(op string) {
	if g.Ceil {
		panic(fmt.Sprintf("kernel.%s: Ceil is for pooling windows only", op))
	}
}

// colRange returns the output columns [lo, hi) whose input column
// ow·sw − pw + off lies inside [0, w): the rest read padding.
func colRange(outW, sw, pw, off, w int) (lo, hi int) {
	// iw >= 0  ⇔  ow >= ceil((pw − off)/sw)
	lo = 0
	if d := pw - off; d > 0 {
		lo = (d + sw - 1) / sw
	}
	// iw <= w−1  ⇔  ow <= floor((w − 1 + pw − off)/sw)
	hi = 0
	if d := w - 1 + pw - off; d >= 0 {
		hi = d/sw + 1
	}
	lo, hi = min(lo, outW), min(hi, outW)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// Im2colF32 unfolds one image for convolution as a matrix product.
//
// img holds one image in CHW layout: channels planes of g.H×g.W, row-major,
// img[(c·H + h)·W + w]. col receives the (channels·KH·KW) × (OutH·OutW)
// row-major matrix whose row (c·KH + kh)·KW + kw, column oh·OutW + ow holds
// the input value under kernel tap (kh, kw) of channel c at output (oh, ow),
// or 0 in the padding. A convolution of that image with weights laid out
// as PyTorch's OC×C×KH×KW (row-major, i.e. an OC × (C·KH·KW) matrix) is then
// out = weights · col, an OC × (OutH·OutW) matrix: exactly the CHW layout of
// the output image.
//
// Grouped convolution: for G groups, call Im2colF32 once per group on the
// group's channel slice img[g·(C/G)·H·W : (g+1)·(C/G)·H·W] with
// channels = C/G, and multiply by the group's rows of the weights.
//
// Every element of col[:channels·KH·KW·OutH·OutW] is written. Large images
// are unfolded on several cores (by channel). Im2col is the same with a row
// stride, for both float types.
func Im2colF32(col, img []float32, channels int, g Window2d) {
	g = g.norm("Im2colF32")
	g.noCeil("Im2colF32")
	oh, ow := g.OutH(), g.OutW()
	p, kk, hw := oh*ow, g.KH*g.KW, g.H*g.W
	checkLen("Im2colF32", "img", len(img), channels*hw)
	checkLen("Im2colF32", "col", len(col), channels*kk*p)
	parallel.For(channels, max(1, grainMem/max(kk*p, 1)), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			im2col(col[c*kk*p:], p, img[c*hw:], 1, g, oh, ow)
		}
	})
}

// Im2col unfolds one CHW image into the rows of col as Im2colF32 does, with
// row stride ld ≥ OutH·OutW: row r starts at col[r·ld], so the columns of
// several images can sit side by side in one wide matrix (one GEMM for a
// batch). It runs on the calling goroutine.
func Im2col[T float32 | float64](col []T, ld int, img []T, channels int, g Window2d) {
	g = g.norm("Im2col")
	g.noCeil("Im2col")
	oh, ow := g.OutH(), g.OutW()
	checkStride("Im2col", ld, oh*ow, len(col), channels*g.KH*g.KW)
	checkLen("Im2col", "img", len(img), channels*g.H*g.W)
	im2col(col, ld, img, channels, g, oh, ow)
}

// Col2imF32 is the adjoint of Im2colF32: it sets img (channels×H×W, CHW) to
// the sum, over every entry of col ((channels·KH·KW) × (OutH·OutW), the
// Im2colF32 layout), of that entry added at the input position it was read
// from; entries that came from padding are dropped. With col = Wᵀ·dOut this
// is the gradient of a convolution with respect to its input. img is
// overwritten (not accumulated into). Channels are processed in parallel.
// col is scratch: entries that map to padding may be set to zero.
func Col2imF32(img, col []float32, channels int, g Window2d) {
	g = g.norm("Col2imF32")
	g.noCeil("Col2imF32")
	oh, ow := g.OutH(), g.OutW()
	p, kk, hw := oh*ow, g.KH*g.KW, g.H*g.W
	checkLen("Col2imF32", "img", len(img), channels*hw)
	checkLen("Col2imF32", "col", len(col), channels*kk*p)
	parallel.For(channels, max(1, grainMem/max(kk*p, 1)), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			col2im(img[c*hw:], col[c*kk*p:], p, 1, g, oh, ow)
		}
	})
}

// Col2im is Col2imF32 with row stride ld (see Im2col), for both float
// types, on the calling goroutine. col is scratch: entries that map to
// padding may be set to zero.
func Col2im[T float32 | float64](img, col []T, ld int, channels int, g Window2d) {
	g = g.norm("Col2im")
	g.noCeil("Col2im")
	oh, ow := g.OutH(), g.OutW()
	checkStride("Col2im", ld, oh*ow, len(col), channels*g.KH*g.KW)
	checkLen("Col2im", "img", len(img), channels*g.H*g.W)
	col2im(img, col, ld, channels, g, oh, ow)
}

// checkStride panics unless a matrix of rows rows of width elements with
// row stride ld fits in n elements.
func checkStride(op string, ld, width, n, rows int) {
	if ld < width {
		panic(fmt.Sprintf("kernel.%s: row stride %d is less than the row width %d", op, ld, width))
	}
	if rows > 0 && n < (rows-1)*ld+width {
		panic(fmt.Sprintf("kernel.%s: col has %d elements, need %d (%d rows of %d, stride %d)", op, n, (rows-1)*ld+width, rows, width, ld))
	}
}

// im2col is Im2col on a normalized window with its output size.
//
// For stride-1 windows whose output rows are as long as the input rows
// (the "same" convolutions of most CNNs), each tap's valid block is the
// plane shifted by a constant: one copy, then the padding rows and edge
// columns are zeroed.
func im2col[T float32 | float64](col []T, ld int, img []T, channels int, g Window2d, oh, ow int) {
	p := oh * ow
	hw := g.H * g.W
	shifted := g.StrideH == 1 && g.StrideW == 1 && ow == g.W
	for c := range channels {
		plane := img[c*hw : (c+1)*hw]
		for kh := range g.KH {
			for kw := range g.KW {
				r := (c*g.KH+kh)*g.KW + kw
				out := col[r*ld : r*ld+p]
				offW := kw * g.DilW
				wlo, whi := colRange(ow, g.StrideW, g.PadW, offW, g.W)
				if shifted {
					ylo, yhi := colRange(oh, 1, g.PadH, kh*g.DilH, g.H)
					shift := (kh*g.DilH-g.PadH)*g.W + offW - g.PadW
					if ylo < yhi && wlo < whi {
						a, b := ylo*ow+wlo, (yhi-1)*ow+whi
						copy(out[a:b], plane[a+shift:b+shift])
						zeroEdges(out, ylo, yhi, ow, wlo, whi)
						clear(out[:ylo*ow])
						clear(out[yhi*ow:])
					} else {
						clear(out)
					}
					continue
				}
				for y := range oh {
					dst := out[y*ow : (y+1)*ow]
					ih := y*g.StrideH - g.PadH + kh*g.DilH
					if ih < 0 || ih >= g.H {
						clear(dst)
						continue
					}
					clear(dst[:wlo])
					clear(dst[whi:])
					src := plane[ih*g.W : (ih+1)*g.W]
					iw := wlo*g.StrideW - g.PadW + offW
					if g.StrideW == 1 {
						copy(dst[wlo:whi], src[iw:iw+whi-wlo])
						continue
					}
					for x := wlo; x < whi; x++ {
						dst[x] = src[iw]
						iw += g.StrideW
					}
				}
			}
		}
	}
}

// col2im is Col2im on a normalized window with its output size. In the
// shifted case (see im2col) each column row is added as one run after its
// padding entries are zeroed.
func col2im[T float32 | float64](img, col []T, ld int, channels int, g Window2d, oh, ow int) {
	hw := g.H * g.W
	clear(img[:channels*hw])
	shifted := g.StrideH == 1 && g.StrideW == 1 && ow == g.W
	for c := range channels {
		plane := img[c*hw : (c+1)*hw]
		for kh := range g.KH {
			for kw := range g.KW {
				r := (c*g.KH+kh)*g.KW + kw
				in := col[r*ld : r*ld+oh*ow]
				offW := kw * g.DilW
				wlo, whi := colRange(ow, g.StrideW, g.PadW, offW, g.W)
				if shifted {
					ylo, yhi := colRange(oh, 1, g.PadH, kh*g.DilH, g.H)
					if ylo >= yhi || wlo >= whi {
						continue
					}
					shift := (kh*g.DilH-g.PadH)*g.W + offW - g.PadW
					zeroEdges(in, ylo, yhi, ow, wlo, whi)
					a, b := ylo*ow+wlo, (yhi-1)*ow+whi
					addTo(plane[a+shift:b+shift], in[a:b])
					continue
				}
				for y := range oh {
					ih := y*g.StrideH - g.PadH + kh*g.DilH
					if ih < 0 || ih >= g.H {
						continue
					}
					dst := plane[ih*g.W : (ih+1)*g.W]
					src := in[y*ow : (y+1)*ow]
					iw := wlo*g.StrideW - g.PadW + offW
					if g.StrideW == 1 {
						d, s := dst[iw:iw+whi-wlo], src[wlo:whi]
						for x := range d {
							d[x] += s[x]
						}
						continue
					}
					for x := wlo; x < whi; x++ {
						dst[iw] += src[x]
						iw += g.StrideW
					}
				}
			}
		}
	}
}

// addTo sets dst[i] += src[i] with the vector axpy kernels.
func addTo[T float32 | float64](dst, src []T) {
	switch d := any(dst).(type) {
	case []float32:
		AxpyF32(1, any(src).([]float32), d)
	case []float64:
		AxpyF64(1, any(src).([]float64), d)
	}
}

// zeroEdges sets, in rows [ylo, yhi) of the row-major matrix m with ow
// columns, the columns before wlo and from whi on to zero. The runs are a
// few elements long (the padding width), so plain stores beat a call to
// clear per run, which dominated im2col on small images.
func zeroEdges[T float32 | float64](m []T, ylo, yhi, ow, wlo, whi int) {
	if ylo >= yhi {
		return
	}
	m = m[:yhi*ow]
	switch {
	case wlo == 0 && whi == ow:
		return
	case wlo == 1 && whi == ow: // a tap left of centre, padding 1
		for i := ylo * ow; i < len(m); i += ow {
			m[i] = 0
		}
		return
	case wlo == 0 && whi == ow-1: // a tap right of centre, padding 1
		for i := ylo*ow + ow - 1; i < len(m); i += ow {
			m[i] = 0
		}
		return
	}
	for y := ylo; y < yhi; y++ {
		row := m[y*ow : (y+1)*ow]
		for x := 0; x < wlo; x++ {
			row[x] = 0
		}
		for x := whi; x < len(row); x++ {
			row[x] = 0
		}
	}
}
