package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// i8Shapes are awkward sizes for the int8 GEMM: empty, single, a k that is
// not a multiple of 4, one past a tile in m (4, 14) and n (8, 32), and
// shapes large enough to take the parallel path. With all (the exhaustive
// set) every combination of the small sizes runs.
func i8Shapes(all bool) []gemmShape {
	small := []int{0, 1, 3, 4, 5, 13, 14, 15, 31, 33}
	var shapes []gemmShape
	for i, m := range small {
		for j, n := range small {
			if !all {
				shapes = append(shapes, gemmShape{m, n, small[(i+j)%len(small)]})
				continue
			}
			for _, k := range small {
				shapes = append(shapes, gemmShape{m, n, k})
			}
		}
	}
	shapes = append(shapes,
		gemmShape{64, 256, 784}, gemmShape{29, 65, 513}, gemmShape{300, 7, 9}, gemmShape{2, 300, 70},
		gemmShape{128, 96, 288}, gemmShape{1, 1, 1000},
	)
	if all {
		shapes = append(shapes, gemmShape{1031, 40, 130}, gemmShape{200, 1030, 67}, gemmShape{17, 33, 4099})
	}
	return shapes
}

// i8Fill fills the operands: random values, or all at the extremes that
// would saturate a 16-bit pair sum (255·127·2 > 32767).
func i8Fill(r *rand.Rand, a []uint8, w []int8, extreme int) {
	for i := range a {
		switch extreme {
		case 0:
			a[i] = uint8(r.IntN(256))
		default:
			a[i] = 255
		}
	}
	for i := range w {
		switch extreme {
		case 0:
			w[i] = int8(r.IntN(256) - 128)
		case 1:
			w[i] = 127
		default:
			w[i] = -128
		}
	}
}

// withI8Variant runs fn with every int8 variant active in turn, those
// that read A in place once that way and once on packed A.
func withI8Variant(t *testing.T, fn func(t *testing.T)) {
	saved := i8Active
	defer func() { i8Active, i8Packed = saved, false }()
	for _, v := range i8Variants {
		i8Active = v
		i8Packed = false
		t.Run(v.name, fn)
		if v.direct != nil {
			i8Packed = true
			t.Run(v.name+"-packed", fn)
		}
	}
}

func TestGemmU8I8Variants(t *testing.T) {
	shapes := i8Shapes(exhaustive())
	withI8Variant(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, s := range shapes {
			for extreme := 0; extreme < 3; extreme++ {
				pad := extreme // padded strides in some cases
				lda, ldw, ldc := s.k+pad, s.k+2*pad, s.n+pad
				a := make([]uint8, max(0, s.m*lda))
				w := make([]int8, max(0, s.n*ldw))
				i8Fill(r, a, w, extreme)
				want := make([]int32, s.m*ldc)
				got := make([]int32, s.m*ldc)
				for i := range got {
					got[i], want[i] = -7, -7 // padding must be left alone
				}
				gemmU8I8Ref(s.m, s.n, s.k, a, lda, w, ldw, want, ldc)
				GemmU8I8(s.m, a, lda, PackI8(s.n, s.k, w, ldw), got, ldc)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("m=%d n=%d k=%d extreme=%d: C[%d] = %d, want %d", s.m, s.n, s.k, extreme, i, got[i], want[i])
					}
				}
			}
		}
	})
}

func TestGemmU8I8F32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	withI8Variant(t, func(t *testing.T) {
		for _, s := range []gemmShape{{1, 1, 1}, {5, 33, 17}, {70, 40, 300}, {3, 70, 8}} {
			for _, trans := range []bool{false, true} {
				m, n, k := s.m, s.n, s.k
				a := make([]uint8, m*k)
				w := make([]int8, n*k)
				i8Fill(r, a, w, 0)
				d := &I8Dequant{AScale: 0.02, AZero: 37, WScale: make([]float32, n), Bias: make([]float32, n), ReLU: trans, TransC: trans}
				for j := range n {
					d.WScale[j] = 0.001 * float32(j+1)
					d.Bias[j] = float32(j%5) - 2
				}
				c := make([]float32, m*n)
				GemmU8I8F32(m, a, k, PackI8(n, k, w, k), d, c, map[bool]int{false: n, true: m}[trans])
				for i := range m {
					for j := range n {
						var s float64
						for p := range k {
							s += (float64(a[i*k+p]) - 37) * 0.02 * float64(w[j*k+p]) * float64(d.WScale[j])
						}
						s += float64(d.Bias[j])
						if d.ReLU {
							s = math.Max(s, 0)
						}
						got := c[i*n+j]
						if trans {
							got = c[j*m+i]
						}
						if math.Abs(float64(got)-s) > 1e-4*(1+math.Abs(s)) {
							t.Fatalf("%v trans=%v: C(%d,%d) = %g, want %g", s, trans, i, j, got, s)
						}
					}
				}
			}
		}
	})
}

// TestGemmF32I8 checks the products that quantize float32 activations
// themselves against quantizing first (QuantizeU8) and multiplying the
// bytes: the same bytes, so the same results bit for bit, on awkward
// shapes and a padded row stride.
func TestGemmF32I8(t *testing.T) {
	shapes := i8Shapes(exhaustive())
	withI8Variant(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, s := range shapes {
			m, n, k := s.m, s.n, s.k
			ldx := k + 3
			x := make([]float32, max(0, (m-1)*ldx+k)) // the last row without its padding
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			w := make([]int8, n*k)
			i8Fill(r, nil, w, 0)
			pw := PackI8(n, k, w, k)
			d := &I8Dequant{AScale: 0.03, AZero: 100, WScale: make([]float32, n), Bias: make([]float32, n), ReLU: k%2 == 0}
			for j := range n {
				d.WScale[j] = 0.01 / float32(j+1)
				d.Bias[j] = float32(j%3) - 1
			}
			q := make([]uint8, m*k)
			for i := range m {
				QuantizeU8(q[i*k:(i+1)*k], x[i*ldx:i*ldx+k], 1/d.AScale, d.AZero)
			}
			want := make([]float32, m*n)
			got := make([]float32, m*n)
			GemmU8I8F32(m, q, k, pw, d, want, n)
			GemmF32I8F32(m, x, ldx, pw, d, got, n)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("m=%d n=%d k=%d: C[%d] = %g, want %g", m, n, k, i, got[i], want[i])
				}
			}
			rq := &I8Requant{I8Dequant: *d, OutScale: 0.05, OutZero: 20}
			want8 := make([]uint8, m*n)
			got8 := make([]uint8, m*n)
			GemmU8I8U8(m, q, k, pw, rq, want8, n)
			GemmF32I8U8(m, x, ldx, pw, rq, got8, n)
			for i := range want8 {
				if got8[i] != want8[i] {
					t.Fatalf("m=%d n=%d k=%d: requantized C[%d] = %d, want %d", m, n, k, i, got8[i], want8[i])
				}
			}
		}
	})
}

// TestGemmU8I8U8 checks the requantizing epilogue against the real
// product in float64: each byte is the rounded, clamped value of
// y/OutScale + OutZero (ReLU: clamped at OutZero), within half a step
// (plus float32 rounding: ties may go either way).
func TestGemmU8I8U8(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	withI8Variant(t, func(t *testing.T) {
		for _, s := range []gemmShape{{1, 1, 1}, {5, 33, 17}, {70, 40, 300}, {3, 70, 8}, {15, 31, 13}} {
			for _, relu := range []bool{false, true} {
				m, n, k := s.m, s.n, s.k
				a := make([]uint8, m*k)
				w := make([]int8, n*k)
				i8Fill(r, a, w, 0)
				rq := &I8Requant{I8Dequant: I8Dequant{AScale: 0.02, AZero: 37, WScale: make([]float32, n), Bias: make([]float32, n), ReLU: relu},
					OutScale: 0.004 * float32(k), OutZero: 90}
				for j := range n {
					rq.WScale[j] = 0.001 * float32(j+1)
					rq.Bias[j] = float32(j%5) - 2
				}
				ldc := n + 2
				c := make([]uint8, m*ldc)
				for i := range c {
					c[i] = 7
				}
				GemmU8I8U8(m, a, k, PackI8(n, k, w, k), rq, c, ldc)
				for i := range m {
					for j := range n {
						var y float64
						for p := range k {
							y += (float64(a[i*k+p]) - 37) * 0.02 * float64(w[j*k+p]) * float64(rq.WScale[j])
						}
						y += float64(rq.Bias[j])
						if relu {
							y = math.Max(y, 0)
						}
						q := min(max(y/float64(rq.OutScale)+90, 0), 255)
						if got := float64(c[i*ldc+j]); math.Abs(got-q) > 0.5+1e-3 {
							t.Fatalf("%v relu=%v: C(%d,%d) = %v, want round(%g)", s, relu, i, j, got, q)
						}
					}
					for j := n; j < ldc && i+1 < m; j++ {
						if c[i*ldc+j] != 7 {
							t.Fatalf("%v: padding C[%d] overwritten", s, i*ldc+j)
						}
					}
				}
			}
		}
	})
}

// TestMinMaxF32 checks the one-pass minimum and maximum against a plain
// loop on every length around the vector width, on a parallel size, and
// with a NaN anywhere.
func TestMinMaxF32(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range append(seq(0, 70), 1000, 1<<18+5) {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * 10)
		}
		if n > 3 {
			x[r.IntN(n)] = float32(math.Inf(1))
		}
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range x {
			lo, hi = min(lo, v), max(hi, v)
		}
		if gl, gh := MinMaxF32(x); gl != lo || gh != hi {
			t.Fatalf("n=%d: MinMaxF32 = %g, %g, want %g, %g", n, gl, gh, lo, hi)
		}
		if n > 0 {
			for _, at := range []int{0, n - 1, r.IntN(n)} {
				y := append([]float32(nil), x...)
				y[at] = float32(math.NaN())
				if gl, gh := MinMaxF32(y); gl == gl || gh == gh {
					t.Fatalf("n=%d NaN at %d: MinMaxF32 = %g, %g, want NaN", n, at, gl, gh)
				}
			}
		}
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

func TestPackI8RowSum(t *testing.T) {
	w := []int8{1, -2, 3, 127, -128, 0, 5, 5}
	p := PackI8(2, 4, w, 4)
	if p.RowSum[0] != 129 || p.RowSum[1] != -118 {
		t.Fatalf("RowSum = %v, want [129 -118]", p.RowSum)
	}
	defer func() {
		if recover() == nil {
			t.Error("PackI8 with k > MaxI8K did not panic")
		}
	}()
	PackI8(1, MaxI8K+1, make([]int8, MaxI8K+1), MaxI8K+1)
}

// BenchmarkGemmF32I8F32 times the product of a quantized layer on float32
// activations (quantized in the driver) against quantizing first.
func BenchmarkGemmF32I8F32(b *testing.B) {
	for _, s := range []gemmShape{{64, 256, 784}, {10000, 256, 784}} {
		for _, fused := range []bool{true, false} {
			b.Run(fmt.Sprintf("fused=%v/%dx%dx%d", fused, s.m, s.n, s.k), func(b *testing.B) {
				x := make([]float32, s.m*s.k)
				r := rand.New(rand.NewPCG(1, 1))
				for i := range x {
					x[i] = r.Float32()
				}
				w := make([]int8, s.n*s.k)
				i8Fill(r, nil, w, 0)
				p := PackI8(s.n, s.k, w, s.k)
				d := &I8Dequant{AScale: 1. / 255, WScale: make([]float32, s.n)}
				q := make([]uint8, s.m*s.k)
				c := make([]float32, s.m*s.n)
				for range b.N {
					if fused {
						GemmF32I8F32(s.m, x, s.k, p, d, c, s.n)
					} else {
						QuantizeU8(q, x, 255, 0)
						GemmU8I8F32(s.m, q, s.k, p, d, c, s.n)
					}
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gop/s")
			})
		}
	}
}

func BenchmarkGemmU8I8(b *testing.B) {
	for _, s := range []gemmShape{{64, 256, 784}, {256, 256, 256}, {1024, 1024, 1024}} {
		for _, v := range i8Variants {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", v.name, s.m, s.n, s.k), func(b *testing.B) {
				saved := i8Active
				i8Active = v
				defer func() { i8Active = saved }()
				a := make([]uint8, s.m*s.k)
				w := make([]int8, s.n*s.k)
				i8Fill(rand.New(rand.NewPCG(1, 1)), a, w, 0)
				p := PackI8(s.n, s.k, w, s.k)
				c := make([]int32, s.m*s.n)
				b.SetBytes(0)
				b.ResetTimer()
				for range b.N {
					GemmU8I8(s.m, a, s.k, p, c, s.n)
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gop/s")
			})
		}
	}
}

// TestQuantizeU8 checks QuantizeU8 (the AVX-512 kernel where there is one)
// against its definition: ties round to even, values clamp to [0, 255],
// NaN maps to 0, on every length around the vector width.
func TestQuantizeU8(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, 0.5, 1.5, 2.5, -0.5, -1.5, 127.5, 128.5, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 255, 256, -300}
	for n := 0; n <= 70; n++ {
		for _, zero := range []int32{0, 128, 255} {
			x := make([]float32, n)
			for i := range x {
				if r.IntN(3) == 0 {
					x[i] = special[r.IntN(len(special))]
				} else {
					x[i] = float32(r.NormFloat64() * 200)
				}
			}
			got := make([]uint8, n)
			QuantizeU8(got, x, 1, zero)
			for i, v := range x {
				q := 0.0 // NaN
				if v == v {
					q = math.RoundToEven(min(max(float64(v), float64(-zero)), float64(255-zero))) + float64(zero)
				}
				if got[i] != uint8(q) {
					t.Fatalf("n=%d zero=%d: QuantizeU8(%g) = %d, want %d", n, zero, v, got[i], uint8(q))
				}
			}
		}
	}
}

// TestIm2rowU8 checks the byte unfolding of an HWC image against the
// float Im2col of the same image in CHW, with taps reordered (c, i, j) →
// (i, j, c) and the padding value where Im2col writes 0.
func TestIm2rowU8(t *testing.T) {
	for _, g := range []Window2d{
		{H: 5, W: 4, KH: 3, KW: 3, PadH: 1, PadW: 1},
		{H: 7, W: 6, KH: 2, KW: 3, StrideH: 2, StrideW: 1, PadH: 2, PadW: 0, DilH: 2, DilW: 1},
		{H: 3, W: 3, KH: 1, KW: 1},
		{H: 9, W: 8, KH: 3, KW: 3, StrideH: 1, StrideW: 2, PadH: 1, PadW: 1},
	} {
		for _, ch := range []int{1, 3, 32} {
			hwc := make([]uint8, ch*g.H*g.W)
			chw := make([]float32, len(hwc))
			for c := range ch {
				for p := range g.H * g.W {
					v := uint8(1 + (c*g.H*g.W+p)%250) // never the padding value 0
					hwc[p*ch+c], chw[c*g.H*g.W+p] = v, float32(v)
				}
			}
			gn := g.norm("test")
			p, k := gn.OutH()*gn.OutW(), ch*g.KH*g.KW
			col := make([]float32, k*p)
			Im2col(col, p, chw, ch, g)
			for _, ld := range []int{k, k + 3} {
				rows := make([]uint8, p*ld)
				for i := range rows {
					rows[i] = 99 // the row ends must be cleared
				}
				Im2rowU8(rows, hwc, ch, g, 0, ld)
				for c := range ch {
					for i := range g.KH {
						for j := range g.KW {
							r := (c*g.KH+i)*g.KW + j
							rr := (i*g.KW+j)*ch + c
							for q := range p {
								if float32(rows[q*ld+rr]) != col[r*p+q] {
									t.Fatalf("%+v ld=%d: position %d tap (%d,%d,%d) = %d, want %g", g, ld, q, c, i, j, rows[q*ld+rr], col[r*p+q])
								}
							}
						}
					}
				}
				for q := range p {
					for b := k; b < ld; b++ {
						if rows[q*ld+b] != 0 {
							t.Fatalf("%+v ld=%d: byte %d past row %d is %d, want 0", g, ld, b, q, rows[q*ld+b])
						}
					}
				}
			}
		}
	}
}

// BenchmarkQuantizeU8 times the activation passes of dynamic quantization
// on a batch of 64 MNIST rows: the range (MinMaxF32) and the bytes.
func BenchmarkQuantizeU8(b *testing.B) {
	x := make([]float32, 64*784)
	for i := range x {
		x[i] = float32(i%255) / 255
	}
	q := make([]uint8, len(x))
	b.Run("minmax", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for range b.N {
			MinMaxF32(x)
		}
	})
	b.Run("quantize", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for range b.N {
			QuantizeU8(q, x, 255, 0)
		}
	})
}

// TestGemmU8I8F32Pool checks the pooling epilogue against the plain
// product followed by the maximum over each group of rows: the same
// float32 values, so equal bit for bit, on every variant (bias, ReLU,
// partial panels, several row blocks).
func TestGemmU8I8F32Pool(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	withI8Variant(t, func(t *testing.T) {
		for _, s := range []gemmShape{{4, 1, 1}, {8, 33, 17}, {784, 32, 9}, {196, 64, 288}, {36, 5, 40}} {
			for _, pool := range []int{1, 2, 4, 9} {
				if s.m%pool != 0 || pool > I8MaxPool() {
					continue
				}
				for _, relu := range []bool{false, true} {
					m, n, k := s.m, s.n, s.k
					a := make([]uint8, m*k)
					w := make([]int8, n*k)
					i8Fill(r, a, w, 0)
					d := &I8Dequant{AScale: 0.02, AZero: 37, WScale: make([]float32, n), Bias: make([]float32, n), ReLU: relu}
					for j := range n {
						d.WScale[j] = 0.001 * float32(j+1)
						d.Bias[j] = float32(j%5) - 2
					}
					pw := PackI8(n, k, w, k)
					full := make([]float32, m*n)
					GemmU8I8F32(m, a, k, pw, d, full, n)
					dp := *d
					dp.Pool = pool
					ldc := n + 1
					got := make([]float32, (m/pool)*ldc)
					GemmU8I8F32(m, a, k, pw, &dp, got, ldc)
					dp.TransC = true
					ldt := m/pool + 2
					gotT := make([]float32, n*ldt)
					GemmU8I8F32(m, a, k, pw, &dp, gotT, ldt)
					for q := range m / pool {
						for j := range n {
							want := full[q*pool*n+j]
							for i := q*pool + 1; i < (q+1)*pool; i++ {
								want = max(want, full[i*n+j])
							}
							if got[q*ldc+j] != want || gotT[j*ldt+q] != want {
								t.Fatalf("%v pool=%d relu=%v: C(%d,%d) = %g (transposed %g), want %g", s, pool, relu, q, j, got[q*ldc+j], gotT[j*ldt+q], want)
							}
						}
					}
				}
			}
		}
	})
}

// TestIm2rowU8Pooled checks that the pooled order holds the rows of the
// plain unfolding, each output position of a whole pooling window once.
func TestIm2rowU8Pooled(t *testing.T) {
	for _, tc := range []struct {
		g      Window2d
		ph, pw int
	}{
		{Window2d{H: 28, W: 28, KH: 3, KW: 3, PadH: 1, PadW: 1}, 2, 2},
		{Window2d{H: 7, W: 9, KH: 3, KW: 2, PadH: 1, PadW: 0}, 2, 3}, // odd sizes: a row and a column dropped
		{Window2d{H: 6, W: 6, KH: 1, KW: 1}, 3, 1},
	} {
		const ch = 3
		g := tc.g
		img := make([]uint8, ch*g.H*g.W)
		for i := range img {
			img[i] = uint8(1 + i%200)
		}
		gn := g.norm("test")
		oh, ow, k := gn.OutH(), gn.OutW(), ch*g.KH*g.KW
		ld := k + 1
		plain := make([]uint8, oh*ow*ld)
		Im2rowU8(plain, img, ch, g, 0, ld)
		qh, qw := oh/tc.ph, ow/tc.pw
		pooled := make([]uint8, qh*qw*tc.ph*tc.pw*ld)
		Im2rowU8Pooled(pooled, img, ch, g, 0, ld, tc.ph, tc.pw)
		r := 0
		for py := range qh {
			for px := range qw {
				for dy := range tc.ph {
					for dx := range tc.pw {
						y, x := py*tc.ph+dy, px*tc.pw+dx
						want := plain[(y*ow+x)*ld : (y*ow+x+1)*ld]
						got := pooled[r*ld : (r+1)*ld]
						for b := range want {
							if got[b] != want[b] {
								t.Fatalf("%+v pool %dx%d: row %d (position %d,%d) byte %d = %d, want %d", g, tc.ph, tc.pw, r, y, x, b, got[b], want[b])
							}
						}
						r++
					}
				}
			}
		}
	}
}

// TestGemmF32I8PerRow checks dynamic quantization per row: each row
// quantized with the map of its own range (AffineU8 of its min and max,
// QuantizeU8), the product then dequantized with that row's map, against
// the same computed in float64 from the bytes.
func TestGemmF32I8PerRow(t *testing.T) {
	shapes := i8Shapes(exhaustive())
	withI8Variant(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for _, s := range shapes {
			m, n, k := s.m, s.n, s.k
			ldx := k + 1
			x := make([]float32, m*ldx)
			for i := range x {
				// Rows of different ranges and signs.
				x[i] = float32(r.NormFloat64()*float64(1+(i/ldx)%5)) + float32((i/ldx)%3)
			}
			w := make([]int8, n*k)
			i8Fill(r, nil, w, 0)
			d := &I8Dequant{PerRow: true, WScale: make([]float32, n), Bias: make([]float32, n), ReLU: m%2 == 1}
			for j := range n {
				d.WScale[j] = 0.01 / float32(j+1)
				d.Bias[j] = float32(j%3) - 1
			}
			ldc := n + 1
			got := make([]float32, m*ldc)
			GemmF32I8F32(m, x, ldx, PackI8(n, k, w, k), d, got, ldc)
			q := make([]uint8, k)
			for i := range m {
				row := x[i*ldx : i*ldx+k]
				lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
				for _, v := range row {
					lo, hi = min(lo, v), max(hi, v)
				}
				sc, z := AffineU8(lo, hi)
				QuantizeU8(q, row, 1/sc, z)
				for j := range n {
					y := float64(d.Bias[j])
					for p := range k {
						y += float64(sc) * (float64(q[p]) - float64(z)) * float64(d.WScale[j]) * float64(w[j*k+p])
					}
					if d.ReLU {
						y = math.Max(y, 0)
					}
					if g := float64(got[i*ldc+j]); math.Abs(g-y) > 1e-4*(1+math.Abs(y)) {
						t.Fatalf("m=%d n=%d k=%d: C(%d,%d) = %g, want %g", m, n, k, i, j, g, y)
					}
				}
			}
		}
	})
}

func TestAffineU8(t *testing.T) {
	for _, c := range []struct {
		lo, hi, scale float32
		zero          int32
	}{
		{0, 255, 1, 0}, {-255, 0, 1, 255}, {1, 2, 2. / 255, 0}, {-1, 1, 2. / 255, 127}, // −lo/scale is 127.49999 in float32
		{0, 0, 1, 0}, {float32(math.NaN()), 1, 1, 0}, {float32(math.Inf(-1)), 1, 1, 0},
	} {
		s, z := AffineU8(c.lo, c.hi)
		if s != c.scale || z != c.zero {
			t.Errorf("AffineU8(%g, %g) = %g, %d; want %g, %d", c.lo, c.hi, s, z, c.scale, c.zero)
		}
	}
}
