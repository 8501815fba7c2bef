package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

var poolShapes = []struct {
	planes int
	g      Window2d
}{
	{1, Window2d{H: 1, W: 1, KH: 1, KW: 1}},
	{3, Window2d{H: 4, W: 4, KH: 2, KW: 2, StrideH: 2, StrideW: 2}},
	{2, Window2d{H: 7, W: 5, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadH: 1, PadW: 1}},
	{4, Window2d{H: 9, W: 6, KH: 3, KW: 2, StrideH: 1, StrideW: 3, PadH: 1, PadW: 1}},
	{2, Window2d{H: 5, W: 8, KH: 2, KW: 3, StrideH: 3, StrideW: 1, PadW: 1}},
	{5, Window2d{H: 11, W: 13, KH: 3, KW: 3, StrideH: 2, StrideW: 2}},
	{64, Window2d{H: 28, W: 28, KH: 2, KW: 2, StrideH: 2, StrideW: 2}}, // parallel
}

func TestMaxPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	shapes := append(poolShapes[:len(poolShapes):len(poolShapes)],
		struct {
			planes int
			g      Window2d
		}{2, Window2d{H: 9, W: 10, KH: 3, KW: 3, StrideH: 2, StrideW: 1, PadH: 1, PadW: 2, DilH: 2, DilW: 2}})
	for _, tc := range shapes {
		g := tc.g.norm("test")
		oh, ow := g.OutH(), g.OutW()
		// distinct values at least 0.01 apart, so the finite-difference
		// step below never changes which element is a window's maximum
		src := make([]float32, tc.planes*g.H*g.W)
		for i, v := range rng.Perm(len(src)) {
			src[i] = float32(v)*0.01 - 1
		}
		dst := make([]float32, tc.planes*oh*ow)
		idx := make([]int32, len(dst))
		MaxPool2dForwardF32(dst, idx, src, tc.planes, tc.g)
		for p := range tc.planes {
			for y := range oh {
				for x := range ow {
					best, at := float32(math.Inf(-1)), -1
					for kh := range g.KH {
						for kw := range g.KW {
							ih, iw := y*g.StrideH-g.PadH+kh*g.DilH, x*g.StrideW-g.PadW+kw*g.DilW
							if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W && src[p*g.H*g.W+ih*g.W+iw] > best {
								best, at = src[p*g.H*g.W+ih*g.W+iw], ih*g.W+iw
							}
						}
					}
					o := (p*oh+y)*ow + x
					if dst[o] != best || int(idx[o]) != at {
						t.Fatalf("%+v plane %d (%d,%d): %v@%d, want %v@%d", g, p, y, x, dst[o], idx[o], best, at)
					}
				}
			}
		}
		// backward: scatter by argmax, checked against finite differences
		// of the forward (max pooling is piecewise linear).
		dy := randF32(rng, len(dst), -1, 1)
		dx := randF32(rng, len(src), 3, 4) // garbage: must be overwritten
		MaxPool2dBackwardF32(dx, dy, idx, tc.planes, tc.g)
		if tc.planes*g.H*g.W > 2000 {
			continue // the probe below is quadratic
		}
		for i := range src {
			const h = 1e-3
			old := src[i]
			src[i] = old + h
			up := make([]float32, len(dst))
			MaxPool2dForwardF32(up, nil, src, tc.planes, tc.g)
			src[i] = old
			var fd float64
			for o := range up {
				fd += float64(dy[o]) * float64(up[o]-dst[o]) / h
			}
			if math.Abs(fd-float64(dx[i])) > 2e-2*(1+math.Abs(fd)) {
				t.Fatalf("%+v: d/dsrc[%d] = %v, finite difference %v", g, i, dx[i], fd)
			}
		}
	}
}

func TestMaxPoolNaNAndPaddingOnly(t *testing.T) {
	nan32 := float32(math.NaN())
	src := []float32{1, float32(math.NaN()), 3, 4}
	dst := make([]float32, 1)
	idx := make([]int32, 1)
	MaxPool2dForwardF32(dst, idx, src, 1, Window2d{H: 2, W: 2, KH: 2, KW: 2})
	if dst[0] == dst[0] || idx[0] != 1 {
		t.Fatalf("NaN in window: %v@%d, want NaN@1", dst[0], idx[0])
	}
	// several NaNs: the last one's index, as torch.nn.functional.max_pool2d
	// (torch 1.13: indices [4, 6] for this 2×4 plane)
	src = []float32{nan32, nan32, 1, nan32, nan32, 0, nan32, 2}
	dst, idx = make([]float32, 2), make([]int32, 2)
	MaxPool2dForwardF32(dst, idx, src, 1, Window2d{H: 2, W: 4, KH: 2, KW: 2, StrideW: 2})
	if dst[0] == dst[0] || dst[1] == dst[1] || idx[0] != 4 || idx[1] != 6 {
		t.Fatalf("NaNs in window: %v@%v, want NaN@[4 6]", dst, idx)
	}
	// dilation 3 with padding 2 on a 1-wide plane: the first window's taps
	// at columns −2 and 1 are both outside.
	g := Window2d{H: 1, W: 1, KH: 1, KW: 2, PadW: 2, DilW: 3}
	out := make([]float32, g.OutW())
	ix := make([]int32, g.OutW())
	MaxPool2dForwardF32(out, ix, []float32{5}, 1, g)
	if !math.IsInf(float64(out[0]), -1) || ix[0] != -1 {
		t.Fatalf("padding-only window: %v@%d", out[0], ix[0])
	}
	dx := []float32{9}
	MaxPool2dBackwardF32(dx, make([]float32, len(out)), ix, 1, g)
	if dx[0] != 0 {
		t.Fatalf("backward with -1 index: %v", dx)
	}
}

func TestAvgPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, tc := range poolShapes {
		for _, incl := range []bool{true, false} {
			g := tc.g.norm("test")
			oh, ow := g.OutH(), g.OutW()
			src := randF32(rng, tc.planes*g.H*g.W, -1, 1)
			dst := make([]float32, tc.planes*oh*ow)
			AvgPool2dForwardF32(dst, src, tc.planes, tc.g, incl)
			for p := range tc.planes {
				for y := range oh {
					for x := range ow {
						var s float64
						real := 0
						for kh := range g.KH {
							for kw := range g.KW {
								ih, iw := y*g.StrideH-g.PadH+kh, x*g.StrideW-g.PadW+kw
								if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
									s += float64(src[p*g.H*g.W+ih*g.W+iw])
									real++
								}
							}
						}
						div := float64(g.KH * g.KW) // ceil_mode=False: the window never leaves the padded plane
						if !incl {
							div = float64(real)
						}
						o := (p*oh+y)*ow + x
						if math.Abs(float64(dst[o])-s/div) > 1e-6 {
							t.Fatalf("%+v incl=%v plane %d (%d,%d): %v, want %v", g, incl, p, y, x, dst[o], s/div)
						}
					}
				}
			}
			// backward is the adjoint of the (linear) forward
			dy := randF32(rng, len(dst), -1, 1)
			dx := randF32(rng, len(src), 3, 4)
			AvgPool2dBackwardF32(dx, dy, tc.planes, tc.g, incl)
			lhs, rhs := dotRef(dst, dy), dotRef(src, dx)
			if math.Abs(lhs-rhs) > 1e-5*math.Sqrt(float64(len(dst)+1)) {
				t.Fatalf("%+v incl=%v: <pool x, dy> = %v, <x, pool' dy> = %v", g, incl, lhs, rhs)
			}
		}
	}
}

func TestAvgPoolRejectsDilation(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for dilated average pooling")
		}
	}()
	AvgPool2dForwardF32(make([]float32, 16), make([]float32, 16), 1, Window2d{H: 4, W: 4, KH: 2, KW: 2, DilH: 2}, true)
}
