package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// naiveConv2d is the textbook 7-loop convolution in float64 (the
// definition torch.nn.functional.conv2d documents), the reference the
// im2col implementation is compared with.
func naiveConv2d(x, w, b *tensor.Tensor, o tensor.Conv2dOpts) *tensor.Tensor {
	xs, ws := x.Shape(), w.Shape()
	n, c, h, wd := xs[0], xs[1], xs[2], xs[3]
	oc, cg, kh, kw := ws[0], ws[1], ws[2], ws[3]
	groups := max(o.Groups, 1)
	sh, sw := max(o.Stride[0], 1), max(o.Stride[1], 1)
	dh, dw := max(o.Dilation[0], 1), max(o.Dilation[1], 1)
	ph, pw := o.Padding[0], o.Padding[1]
	oh := (h+2*ph-dh*(kh-1)-1)/sh + 1
	ow := (wd+2*pw-dw*(kw-1)-1)/sw + 1
	xv, wv := x.Values(), w.Values()
	var bv []float64
	if b != nil {
		bv = b.Values()
	}
	out := make([]float64, n*oc*oh*ow)
	ocg := oc / groups
	for i := 0; i < n; i++ {
		for f := 0; f < oc; f++ {
			g := f / ocg
			for y := 0; y < oh; y++ {
				for z := 0; z < ow; z++ {
					s := 0.0
					if bv != nil {
						s = bv[f]
					}
					for ci := 0; ci < cg; ci++ {
						ch := g*cg + ci
						for p := 0; p < kh; p++ {
							for q := 0; q < kw; q++ {
								iy, iz := y*sh-ph+p*dh, z*sw-pw+q*dw
								if iy < 0 || iy >= h || iz < 0 || iz >= wd {
									continue
								}
								s += xv[((i*c+ch)*h+iy)*wd+iz] * wv[((f*cg+ci)*kh+p)*kw+q]
							}
						}
					}
					out[((i*oc+f)*oh+y)*ow+z] = s
				}
			}
		}
	}
	_ = c
	return tensor.FromFloat64(out, n, oc, oh, ow)
}

type convCase struct {
	name       string
	n, c, h, w int
	oc, kh, kw int
	opts       tensor.Conv2dOpts
	bias       bool
}

var convCases = []convCase{
	{"3x3pad1", 5, 3, 7, 6, 4, 3, 3, tensor.Conv2dOpts{Padding: [2]int{1, 1}}, true},
	{"stride2/pad12/dil21", 3, 2, 9, 8, 3, 3, 2, tensor.Conv2dOpts{Stride: [2]int{2, 2}, Padding: [2]int{1, 2}, Dilation: [2]int{2, 1}}, true},
	{"stride31/noBias", 4, 3, 8, 5, 2, 2, 3, tensor.Conv2dOpts{Stride: [2]int{3, 1}}, false},
	{"groups2", 3, 4, 6, 6, 6, 3, 3, tensor.Conv2dOpts{Padding: [2]int{1, 0}, Groups: 2}, true},
	{"depthwise", 3, 3, 5, 7, 6, 3, 3, tensor.Conv2dOpts{Padding: [2]int{1, 1}, Groups: 3}, true},
	{"pointwise", 5, 4, 3, 5, 3, 1, 1, tensor.Conv2dOpts{}, true},
	{"pointwise/groups2", 2, 4, 3, 3, 2, 1, 1, tensor.Conv2dOpts{Groups: 2}, false},
	{"1x1stride2pad1", 2, 3, 5, 4, 2, 1, 1, tensor.Conv2dOpts{Stride: [2]int{2, 2}, Padding: [2]int{1, 1}}, true},
	{"dilated/same", 2, 2, 6, 7, 3, 3, 3, tensor.Conv2dOpts{Padding: [2]int{2, 2}, Dilation: [2]int{2, 2}}, true},
	{"3x1/same/tinyPlane", 2, 3, 2, 3, 2, 3, 1, tensor.Conv2dOpts{Padding: [2]int{1, 0}}, false},
	{"kernelAsLargeAsInput", 2, 2, 3, 4, 3, 3, 4, tensor.Conv2dOpts{}, true},
}

// convTunings make Conv2d take each of its paths: images spread over
// tasks one by one (a single task, and one task per image with partial
// weight gradients), chunks of one image, of two images with a remainder,
// and the whole batch in one chunk.
func convTunings(c convCase) []tensor.ConvTuning {
	perImage := c.c * c.kh * c.kw * c.h * c.w // at least the columns of one image
	return []tensor.ConvTuning{
		{ColumnBudget: 1 << 20, SmallFlops: 1 << 30, ImageGrain: 1 << 30},
		{ColumnBudget: 1 << 20, SmallFlops: 1 << 30, ImageGrain: 1},
		{ColumnBudget: 1, SmallFlops: 0, ImageGrain: 1},
		{ColumnBudget: 2*perImage + 1, SmallFlops: 0, ImageGrain: 1},
		{ColumnBudget: 1 << 24, SmallFlops: 0, ImageGrain: 1},
	}
}

func TestConv2dMatchesNaive(t *testing.T) {
	for _, c := range convCases {
		for ti, tune := range convTunings(c) {
			old := tensor.SetConvTuning(tune)
			rng := tensor.NewRNG(uint64(len(c.name)))
			x := rng.Uniform(tensor.Float64, -1, 1, c.n, c.c, c.h, c.w)
			w := rng.Uniform(tensor.Float64, -1, 1, c.oc, c.c/max(c.opts.Groups, 1), c.kh, c.kw)
			var b *tensor.Tensor
			if c.bias {
				b = rng.Uniform(tensor.Float64, -1, 1, c.oc)
			}
			want := naiveConv2d(x, w, b, c.opts)
			got := tensor.Conv2d(x, w, b, c.opts)
			closeTo(t, fmt.Sprintf("%s/tuning%d/f64", c.name, ti), got, want, 1e-12)
			var b32 *tensor.Tensor
			if b != nil {
				b32 = b.To(tensor.Float32)
			}
			got32 := tensor.Conv2d(x.To(tensor.Float32), w.To(tensor.Float32), b32, c.opts)
			if got32.DType() != tensor.Float32 {
				t.Errorf("%s: float32 conv gave %v", c.name, got32.DType())
			}
			closeTo(t, fmt.Sprintf("%s/tuning%d/f32", c.name, ti), got32, want, 1e-5)
			tensor.SetConvTuning(old)
		}
	}
}

// closeTo checks |got − want| ≤ tol·(1 + |want|) elementwise.
func closeTo(t *testing.T, name string, got, want *tensor.Tensor, tol float64) {
	t.Helper()
	gs, ws := got.Shape(), want.Shape()
	if fmt.Sprint(gs) != fmt.Sprint(ws) {
		t.Fatalf("%s: shape %v, want %v", name, gs, ws)
	}
	g, w := got.Values(), want.Values()
	for i := range g {
		if math.Abs(g[i]-w[i]) > tol*(1+math.Abs(w[i])) || math.IsNaN(g[i]) {
			t.Fatalf("%s: element %d = %v, want %v", name, i, g[i], w[i])
		}
	}
}

func TestConv2dGradients(t *testing.T) {
	for _, c := range convCases {
		if c.n > 3 {
			c.n = 2 // keep the finite-difference sweep small
		}
		for ti, tune := range convTunings(c) {
			if ti == 0 || ti == 3 {
				continue // covered by the other tunings' paths
			}
			t.Run(fmt.Sprintf("%s/tuning%d", c.name, ti), func(t *testing.T) {
				old := tensor.SetConvTuning(tune)
				defer tensor.SetConvTuning(old)
				// x is a non-contiguous view (channels stored last).
				x := tensor.NewRNG(1).Uniform(tensor.Float64, -1, 1, c.n, c.h, c.w, c.c).Permute(0, 3, 1, 2).SetRequiresGrad(true)
				w := leaf64(2, c.oc, c.c/max(c.opts.Groups, 1), c.kh, c.kw)
				in := []*tensor.Tensor{x, w}
				if c.bias {
					in = append(in, leaf64(3, c.oc))
				}
				checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor {
					var b *tensor.Tensor
					if len(v) > 2 {
						b = v[2]
					}
					return tensor.Conv2d(v[0], v[1], b, c.opts)
				}, in...)
			})
		}
	}
}

// TestConv2dGradPaths checks that the float32 gradients of the one-image
// and chunked paths agree with float64 ones on a larger problem, and that
// only the gradients asked for are produced.
func TestConv2dGradPaths(t *testing.T) {
	opts := tensor.Conv2dOpts{Padding: [2]int{1, 1}}
	rng := tensor.NewRNG(5)
	x64 := rng.Uniform(tensor.Float64, -1, 1, 6, 5, 9, 9)
	w64 := rng.Uniform(tensor.Float64, -1, 1, 7, 5, 3, 3)
	b64 := rng.Uniform(tensor.Float64, -1, 1, 7)
	gy := rng.Uniform(tensor.Float64, -1, 1, 6, 7, 9, 9)
	grads := func(dt tensor.DType, tune tensor.ConvTuning) []*tensor.Tensor {
		old := tensor.SetConvTuning(tune)
		defer tensor.SetConvTuning(old)
		x, w, b := x64.Detach().To(dt).SetRequiresGrad(true), w64.Detach().To(dt).SetRequiresGrad(true), b64.Detach().To(dt).SetRequiresGrad(true)
		tensor.Conv2d(x, w, b, opts).BackwardWith(gy.To(dt))
		return []*tensor.Tensor{x.Grad(), w.Grad(), b.Grad()}
	}
	tunings := convTunings(convCase{c: 5, kh: 3, kw: 3, h: 9, w: 9})
	ref := grads(tensor.Float64, tunings[0])
	for ti, tune := range tunings {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			got := grads(dt, tune)
			for i, name := range []string{"dx", "dw", "db"} {
				closeTo(t, fmt.Sprintf("%s/%v/tuning%d", name, dt, ti), got[i], ref[i], 1e-4)
			}
		}
	}
	// Only w requires grad: x gets none.
	x := x64.To(tensor.Float32)
	w := w64.To(tensor.Float32).SetRequiresGrad(true)
	tensor.Conv2d(x, w, nil, opts).SumAll().Backward()
	if x.Grad() != nil || w.Grad() == nil {
		t.Error("gradients computed for the wrong inputs")
	}
}

func TestConv1d(t *testing.T) {
	rng := tensor.NewRNG(9)
	x := rng.Uniform(tensor.Float64, -1, 1, 3, 4, 11)
	w := rng.Uniform(tensor.Float64, -1, 1, 6, 2, 3)
	b := rng.Uniform(tensor.Float64, -1, 1, 6)
	o := tensor.Conv1dOpts{Stride: 2, Padding: 2, Dilation: 2, Groups: 2}
	got := tensor.Conv1d(x, w, b, o)
	want := naiveConv2d(x.Unsqueeze(2), w.Unsqueeze(2), b, tensor.Conv2dOpts{Stride: [2]int{1, 2}, Padding: [2]int{0, 2}, Dilation: [2]int{1, 2}, Groups: 2}).Squeeze(2)
	closeTo(t, "Conv1d", got, want, 1e-12)
	// Unbatched input.
	closeTo(t, "Conv1d/unbatched", tensor.Conv1d(x.Select(0, 1), w, b, o), want.Select(0, 1), 1e-12)
	checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor { return tensor.Conv1d(v[0], v[1], v[2], o) },
		permuted64(10, 2, 4, 9), leaf64(11, 6, 2, 3), leaf64(12, 6))
}

func TestConv2dHalfAndPanics(t *testing.T) {
	rng := tensor.NewRNG(4)
	x := rng.Uniform(tensor.Float32, -1, 1, 2, 3, 5, 5)
	w := rng.Uniform(tensor.Float32, -1, 1, 4, 3, 3, 3)
	want := tensor.Conv2d(x, w, nil, tensor.Conv2dOpts{})
	got := tensor.Conv2d(x.To(tensor.BFloat16), w.To(tensor.BFloat16), nil, tensor.Conv2dOpts{})
	if got.DType() != tensor.BFloat16 {
		t.Errorf("bfloat16 conv gave %v", got.DType())
	}
	closeTo(t, "bf16", got.To(tensor.Float32), want, 0.1)
	panicsWith(t, "groups", func() { tensor.Conv2d(x, w, nil, tensor.Conv2dOpts{Groups: 2}) }, "Conv2d", "groups")
	panicsWith(t, "too small", func() { tensor.Conv2d(x, tensor.Zeros(tensor.Float32, 4, 3, 6, 6), nil, tensor.Conv2dOpts{}) }, "Conv2d", "no output")
	panicsWith(t, "bias", func() { tensor.Conv2d(x, w, tensor.Zeros(tensor.Float32, 3), tensor.Conv2dOpts{}) }, "bias")
}

func ExampleConv2d() {
	// One 1×3×3 image, one 2×2 filter summing its window, stride 1.
	x := tensor.Arange(tensor.Float32, 0, 9, 1).Reshape(1, 1, 3, 3)
	w := tensor.Ones(tensor.Float32, 1, 1, 2, 2)
	y := tensor.Conv2d(x, w, nil, tensor.Conv2dOpts{})
	fmt.Println(y.Shape(), y.Float32s())
	// Output: [1 1 2 2] [8 12 20 24]
}

// TestConv2dReluMatchesComposite checks the fused ReLU option against
// Conv2d(...).Relu() on every work-splitting path, values and gradients
// of input, weight and bias, in float32 and float64; the float64 fused op
// also passes the finite-difference check.
func TestConv2dReluMatchesComposite(t *testing.T) {
	rng := tensor.NewRNG(8)
	c := convCase{c: 3, kh: 3, kw: 3, h: 7, w: 6}
	x64 := rng.Uniform(tensor.Float64, -1, 1, 4, 3, 7, 6)
	w64 := rng.Uniform(tensor.Float64, -1, 1, 5, 3, 3, 3)
	b64 := rng.Uniform(tensor.Float64, -1, 1, 5)
	gy := rng.Uniform(tensor.Float64, -1, 1, 4, 5, 7, 6)
	run := func(dt tensor.DType, fused bool) []*tensor.Tensor {
		x, w, b := x64.Detach().To(dt).SetRequiresGrad(true), w64.Detach().To(dt).SetRequiresGrad(true), b64.Detach().To(dt).SetRequiresGrad(true)
		opts := tensor.Conv2dOpts{Padding: [2]int{1, 1}, Relu: fused}
		y := tensor.Conv2d(x, w, b, opts)
		if !fused {
			y = y.Relu()
		}
		y.BackwardWith(gy.To(dt))
		return []*tensor.Tensor{y.Detach(), x.Grad(), w.Grad(), b.Grad()}
	}
	for ti, tune := range convTunings(c) {
		old := tensor.SetConvTuning(tune)
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			want, got := run(dt, false), run(dt, true)
			for i, name := range []string{"y", "dx", "dw", "db"} {
				closeTo(t, fmt.Sprintf("%s/%v/tuning%d", name, dt, ti), got[i], want[i], 1e-6)
			}
		}
		tensor.SetConvTuning(old)
	}
	x := tensor.NewRNG(9).Uniform(tensor.Float64, -1, 1, 2, 2, 5, 5).SetRequiresGrad(true)
	checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor {
		return tensor.Conv2d(v[0], v[1], v[2], tensor.Conv2dOpts{Padding: [2]int{1, 1}, Relu: true})
	}, x, leaf64(2, 3, 2, 3, 3), leaf64(3, 3))
}
