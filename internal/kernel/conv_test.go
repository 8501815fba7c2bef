package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// convShapes are awkward geometries: non-square planes, strides larger than
// the kernel, padding, dilation, 1×1 kernels and windows wider than the
// plane's unpadded width.
var convShapes = []struct {
	c int
	g Window2d
}{
	{1, Window2d{H: 1, W: 1, KH: 1, KW: 1}},
	{3, Window2d{H: 5, W: 7, KH: 3, KW: 3, PadH: 1, PadW: 1}},
	{2, Window2d{H: 8, W: 6, KH: 3, KW: 2, StrideH: 2, StrideW: 3}},
	{4, Window2d{H: 9, W: 11, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadH: 1, PadW: 2, DilH: 2, DilW: 1}},
	{2, Window2d{H: 4, W: 3, KH: 5, KW: 5, PadH: 2, PadW: 2}},
	{3, Window2d{H: 7, W: 7, KH: 1, KW: 1, StrideH: 3, StrideW: 2}},
	{2, Window2d{H: 10, W: 13, KH: 3, KW: 4, StrideH: 1, StrideW: 2, PadH: 3, PadW: 1, DilH: 3, DilW: 2}},
	{6, Window2d{H: 28, W: 28, KH: 5, KW: 5, PadH: 2, PadW: 2}},
	{64, Window2d{H: 32, W: 32, KH: 3, KW: 3, PadH: 1, PadW: 1}}, // big enough to run in parallel
}

// directConv is the textbook convolution (cross-correlation, as in
// PyTorch) of one CHW image with OC×C×KH×KW weights, in float64.
func directConv(img, wts []float32, c, oc int, g Window2d) []float64 {
	g = g.norm("directConv")
	oh, ow := g.OutH(), g.OutW()
	out := make([]float64, oc*oh*ow)
	for o := range oc {
		for y := range oh {
			for x := range ow {
				var s float64
				for ci := range c {
					for kh := range g.KH {
						for kw := range g.KW {
							ih := y*g.StrideH - g.PadH + kh*g.DilH
							iw := x*g.StrideW - g.PadW + kw*g.DilW
							if ih < 0 || ih >= g.H || iw < 0 || iw >= g.W {
								continue
							}
							s += float64(wts[((o*c+ci)*g.KH+kh)*g.KW+kw]) * float64(img[(ci*g.H+ih)*g.W+iw])
						}
					}
				}
				out[(o*oh+y)*ow+x] = s
			}
		}
	}
	return out
}

func TestIm2colConvMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tc := range convShapes {
		g := tc.g
		oh, ow := g.OutH(), g.OutW()
		const oc = 5
		img := randF32(rng, tc.c*g.H*g.W, -1, 1)
		wts := randF32(rng, oc*tc.c*g.KH*g.KW, -1, 1)
		k := tc.c * g.KH * g.KW
		col := make([]float32, k*oh*ow)
		for i := range col {
			col[i] = float32(math.NaN()) // every element must be written
		}
		Im2colF32(col, img, tc.c, g)
		out := make([]float32, oc*oh*ow)
		sgemmRef(false, false, oc, oh*ow, k, 1, wts, k, col, oh*ow, 0, out, oh*ow)
		want := directConv(img, wts, tc.c, oc, g)
		for i := range out {
			if math.Abs(float64(out[i])-want[i]) > 1e-5*float64(k) {
				t.Fatalf("c=%d %+v: out[%d] = %v, direct %v", tc.c, g, i, out[i], want[i])
			}
		}
	}
}

// Grouped convolution as documented: per-group channel slices.
func TestIm2colGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	const c, groups, oc = 6, 3, 9 // 2 input and 3 output channels per group
	g := Window2d{H: 7, W: 5, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideW: 2}
	oh, ow := g.OutH(), g.OutW()
	cg, ocg := c/groups, oc/groups
	img := randF32(rng, c*g.H*g.W, -1, 1)
	wts := randF32(rng, oc*cg*g.KH*g.KW, -1, 1) // PyTorch layout OC × C/G × KH × KW
	out := make([]float32, oc*oh*ow)
	k := cg * g.KH * g.KW
	col := make([]float32, k*oh*ow)
	for gi := range groups {
		Im2colF32(col, img[gi*cg*g.H*g.W:(gi+1)*cg*g.H*g.W], cg, g)
		sgemmRef(false, false, ocg, oh*ow, k, 1, wts[gi*ocg*k:], k, col, oh*ow, 0, out[gi*ocg*oh*ow:], oh*ow)
	}
	for gi := range groups {
		want := directConv(img[gi*cg*g.H*g.W:], wts[gi*ocg*k:], cg, ocg, g)
		got := out[gi*ocg*oh*ow : (gi+1)*ocg*oh*ow]
		for i := range got {
			if math.Abs(float64(got[i])-want[i]) > 1e-5 {
				t.Fatalf("group %d out[%d] = %v, direct %v", gi, i, got[i], want[i])
			}
		}
	}
}

// Col2im is the adjoint of Im2col: <im2col(x), y> = <x, col2im(y)>, and it
// equals a naive scatter-add.
func TestCol2imAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, tc := range convShapes {
		g := tc.g.norm("test")
		oh, ow := g.OutH(), g.OutW()
		rows := tc.c * g.KH * g.KW
		x := randF32(rng, tc.c*g.H*g.W, -1, 1)
		y := randF32(rng, rows*oh*ow, -1, 1)
		cx := make([]float32, len(y))
		Im2colF32(cx, x, tc.c, g)
		img := randF32(rng, len(x), 5, 6) // garbage: must be overwritten
		Col2imF32(img, y, tc.c, g)
		lhs, rhs := dotRef(cx, y), dotRef(x, img)
		if math.Abs(lhs-rhs) > 1e-4*math.Sqrt(float64(len(y))) {
			t.Fatalf("c=%d %+v: <im2col x, y> = %v, <x, col2im y> = %v", tc.c, g, lhs, rhs)
		}
		want := make([]float64, len(x))
		for ci := range tc.c {
			for kh := range g.KH {
				for kw := range g.KW {
					r := (ci*g.KH+kh)*g.KW + kw
					for yy := range oh {
						for xx := range ow {
							ih := yy*g.StrideH - g.PadH + kh*g.DilH
							iw := xx*g.StrideW - g.PadW + kw*g.DilW
							if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
								want[(ci*g.H+ih)*g.W+iw] += float64(y[r*oh*ow+yy*ow+xx])
							}
						}
					}
				}
			}
		}
		for i := range want {
			if math.Abs(float64(img[i])-want[i]) > 1e-5 {
				t.Fatalf("c=%d %+v: col2im[%d] = %v, scatter %v", tc.c, g, i, img[i], want[i])
			}
		}
	}
}

func TestWindowInvalidPanics(t *testing.T) {
	for _, g := range []Window2d{
		{H: 2, W: 2, KH: 3, KW: 1},           // window larger than the plane
		{H: 4, W: 4, KH: 0, KW: 1},           // empty kernel
		{H: 4, W: 4, KH: 1, KW: 1, PadH: -1}, // negative padding
		{H: 4, W: 4, KH: 1, KW: 1, StrideW: -2},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", g)
				}
			}()
			Im2colF32(make([]float32, 100), make([]float32, 100), 1, g)
		}()
	}
}

func BenchmarkIm2col(b *testing.B) {
	g := Window2d{H: 32, W: 32, KH: 3, KW: 3, PadH: 1, PadW: 1}
	const c = 64
	img := make([]float32, c*g.H*g.W)
	col := make([]float32, c*9*g.OutH()*g.OutW())
	b.SetBytes(int64(4 * len(col)))
	for b.Loop() {
		Im2colF32(col, img, c, g)
	}
}

// A 3×3 convolution with padding 1 of a one-channel 3×3 image, as a matrix
// product: weights (1 × 9) times the unfolded image (9 × 9).
func ExampleIm2colF32() {
	img := []float32{
		1, 2, 3,
		4, 5, 6,
		7, 8, 9,
	}
	g := Window2d{H: 3, W: 3, KH: 3, KW: 3, PadH: 1, PadW: 1}
	oh, ow := g.OutH(), g.OutW()
	col := make([]float32, 9*oh*ow)
	Im2colF32(col, img, 1, g)
	sum3x3 := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1} // box filter
	out := make([]float32, oh*ow)
	for j := range out {
		for k, w := range sum3x3 {
			out[j] += w * col[k*oh*ow+j]
		}
	}
	fmt.Println(oh, ow, out)
	// Output: 3 3 [12 21 16 27 45 33 24 39 28]
}

func TestWindowOutTooLargeWindow(t *testing.T) {
	for _, test := range []struct {
		g          Window2d
		outH, outW int
	}{
		{Window2d{H: 2, W: 2, KH: 3, KW: 3}, 0, 0},
		{Window2d{H: 2, W: 2, KH: 3, KW: 3, StrideH: 2, StrideW: 3}, 0, 0},
		{Window2d{H: 2, W: 2, KH: 3, KW: 3, PadH: 1, PadW: 1, StrideH: 2, StrideW: 2}, 1, 1},
		{Window2d{H: 5, W: 7, KH: 3, KW: 2, DilH: 3, DilW: 2, StrideH: 2}, 0, 5},
		{Window2d{H: 28, W: 28, KH: 3, KW: 3, PadH: 1, PadW: 1}, 28, 28},
	} {
		if h, w := test.g.OutH(), test.g.OutW(); h != test.outH || w != test.outW {
			t.Errorf("%+v: out %dx%d, want %dx%d", test.g, h, w, test.outH, test.outW)
		}
	}
}

// TestIm2colStrided checks the row-strided generic Im2col/Col2im against
// Im2colF32/Col2imF32 in float32 and float64, on shifted (stride-1, same
// width) and general windows, leaving the gap between rows untouched.
func TestIm2colStrided(t *testing.T) {
	for _, g := range []Window2d{
		{H: 6, W: 5, KH: 3, KW: 3, PadH: 1, PadW: 1},                      // shifted path
		{H: 7, W: 6, KH: 2, KW: 3, StrideH: 2, StrideW: 2, PadW: 1},       // strided
		{H: 5, W: 5, KH: 3, KW: 2, DilH: 2, PadH: 2, PadW: 1, StrideW: 3}, // dilated
		{H: 4, W: 4, KH: 5, KW: 5, PadH: 2, PadW: 2},                      // window larger than image
	} {
		const c = 3
		oh, ow := g.OutH(), g.OutW()
		p, rows := oh*ow, c*g.KH*g.KW
		ld := p + 5
		img := make([]float32, c*g.H*g.W)
		for i := range img {
			img[i] = float32(i%17) - 8
		}
		want := make([]float32, rows*p)
		Im2colF32(want, img, c, g)

		got := make([]float32, rows*ld)
		for i := range got {
			got[i] = 99
		}
		Im2col(got, ld, img, c, g)
		img64 := make([]float64, len(img))
		for i, v := range img {
			img64[i] = float64(v)
		}
		got64 := make([]float64, rows*ld)
		Im2col(got64, ld, img64, c, g)
		for r := range rows {
			for j := range ld {
				v := got[r*ld+j]
				if j >= p {
					if v != 99 {
						t.Fatalf("%+v: row %d gap element %d overwritten", g, r, j)
					}
					continue
				}
				if v != want[r*p+j] || float32(got64[r*ld+j]) != want[r*p+j] {
					t.Fatalf("%+v: row %d col %d: got %v / %v, want %v", g, r, j, v, got64[r*ld+j], want[r*p+j])
				}
			}
		}

		// Col2im of the strided columns equals Col2imF32 of the packed ones.
		dense := make([]float32, rows*p)
		for i := range dense {
			dense[i] = float32(i%13) - 6
		}
		strided := make([]float32, rows*ld)
		for r := range rows {
			copy(strided[r*ld:r*ld+p], dense[r*p:(r+1)*p])
		}
		wantImg := make([]float32, len(img))
		Col2imF32(wantImg, append([]float32(nil), dense...), c, g)
		gotImg := make([]float32, len(img))
		Col2im(gotImg, strided, ld, c, g)
		for i := range wantImg {
			if d := gotImg[i] - wantImg[i]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%+v: Col2im img[%d] = %v, want %v", g, i, gotImg[i], wantImg[i])
			}
		}
	}
}
