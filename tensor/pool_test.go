package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// naivePool pools every plane of x [N, C, H, W] with the window rule of
// torch's max_pool2d/avg_pool2d, in float64. It returns the pooled values
// and, for max, the argmax positions h·W + w.
func naivePool(x *tensor.Tensor, k, s, p, d [2]int, ceil, isMax, countIncludePad bool) (*tensor.Tensor, []float64) {
	xs := x.Shape()
	n, c, h, w := xs[0], xs[1], xs[2], xs[3]
	for i := range s {
		if s[i] == 0 {
			s[i] = k[i]
		}
		d[i] = max(d[i], 1)
	}
	size := func(in, k, s, p, d int) int {
		q := float64(in+2*p-d*(k-1)-1) / float64(s)
		if !ceil {
			return int(math.Floor(q)) + 1
		}
		out := int(math.Ceil(q)) + 1
		if (out-1)*s >= in+p { // the last window must start inside the input or its left padding
			out--
		}
		return out
	}
	oh, ow := size(h, k[0], s[0], p[0], d[0]), size(w, k[1], s[1], p[1], d[1])
	xv := x.Values()
	out := make([]float64, n*c*oh*ow)
	arg := make([]float64, len(out))
	for pl := 0; pl < n*c; pl++ {
		for y := 0; y < oh; y++ {
			for z := 0; z < ow; z++ {
				best, at, sum, cnt, padded := math.Inf(-1), -1, 0.0, 0, 0
				for a := 0; a < k[0]; a++ {
					for b := 0; b < k[1]; b++ {
						iy, iz := y*s[0]-p[0]+a*d[0], z*s[1]-p[1]+b*d[1]
						if iy < h+p[0] && iz < w+p[1] {
							padded++
						}
						if iy < 0 || iy >= h || iz < 0 || iz >= w {
							continue
						}
						v := xv[pl*h*w+iy*w+iz]
						if v > best {
							best, at = v, iy*w+iz
						}
						sum += v
						cnt++
					}
				}
				o := pl*oh*ow + y*ow + z
				if isMax {
					out[o], arg[o] = best, float64(at)
				} else if countIncludePad {
					out[o] = sum / float64(padded)
				} else {
					out[o] = sum / float64(cnt)
				}
			}
		}
	}
	return tensor.FromFloat64(out, n, c, oh, ow), arg
}

// distinct returns a tensor of the given shape holding a random
// permutation of 0.1, 0.2, ... so no pooling window has a tie.
func distinct(seed uint64, shape ...int) *tensor.Tensor {
	n := 1
	for _, s := range shape {
		n *= s
	}
	v := make([]float64, n)
	for i, j := range tensor.NewRNG(seed).Perm(n) {
		v[i] = 0.1*float64(j) - 0.05*float64(n)
	}
	return tensor.FromFloat64(v, shape...)
}

var poolCases = []struct {
	name       string
	shape      []int
	k, s, p, d [2]int
	ceil       bool
}{
	{"2x2", []int{2, 3, 6, 8}, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, false},
	{"3x3s2p1", []int{2, 2, 7, 6}, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{}, false},
	{"3x2s1p10", []int{1, 3, 5, 5}, [2]int{3, 2}, [2]int{1, 1}, [2]int{1, 0}, [2]int{}, false},
	{"oddCrop", []int{3, 1, 7, 9}, [2]int{2, 4}, [2]int{3, 2}, [2]int{1, 2}, [2]int{}, false},
	{"dilated", []int{2, 2, 9, 8}, [2]int{3, 2}, [2]int{2, 1}, [2]int{1, 1}, [2]int{2, 3}, false},
	// ceil_mode: partial last windows (past the input, and past the padding).
	{"ceil2x2odd", []int{2, 2, 5, 7}, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, true},
	{"ceil2x2even", []int{1, 2, 4, 6}, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, true},
	{"ceil3x3s2p1", []int{2, 2, 6, 7}, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{}, true},
	{"ceil3x2s3p1", []int{1, 3, 8, 6}, [2]int{3, 2}, [2]int{3, 3}, [2]int{1, 1}, [2]int{}, true},
	{"ceilDilated", []int{1, 2, 9, 10}, [2]int{2, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{2, 2}, true},
}

func TestPoolsMatchNaive(t *testing.T) {
	for _, c := range poolCases {
		x := distinct(uint64(len(c.name)), c.shape...)
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			xd := x.To(dt)
			want, arg := naivePool(x, c.k, c.s, c.p, c.d, c.ceil, true, false)
			got, idx := tensor.MaxPool2dWithIndices(xd, c.k, c.s, c.p, c.d, c.ceil)
			closeTo(t, fmt.Sprintf("max/%s/%v", c.name, dt), got, want, 1e-6)
			for i, v := range idx.Values() {
				if v != arg[i] {
					t.Fatalf("max/%s/%v: index %d = %v, want %v", c.name, dt, i, v, arg[i])
				}
			}
			if c.d != [2]int{} {
				continue
			}
			for _, inc := range []bool{true, false} {
				want, _ := naivePool(x, c.k, c.s, c.p, c.d, c.ceil, false, inc)
				got := tensor.AvgPool2d(xd, c.k, c.s, c.p, c.ceil, inc)
				closeTo(t, fmt.Sprintf("avg/%s/%v/includePad=%v", c.name, dt, inc), got, want, 1e-6)
			}
		}
	}
}

func TestAdaptiveAvgPool(t *testing.T) {
	x := tensor.Arange(tensor.Float64, 0, 20, 1).Reshape(1, 4, 5) // unbatched [C=1, 4, 5]
	// Rows for outH=3 of H=4: [0,2) [1,3) [2,4); columns for outW=2 of W=5: [0,3) [2,5).
	got := tensor.AdaptiveAvgPool2d(x, 3, 2)
	want := []float64{}
	for _, r := range [][2]int{{0, 2}, {1, 3}, {2, 4}} {
		for _, c := range [][2]int{{0, 3}, {2, 5}} {
			s, n := 0.0, 0
			for i := r[0]; i < r[1]; i++ {
				for j := c[0]; j < c[1]; j++ {
					s += float64(i*5 + j)
					n++
				}
			}
			want = append(want, s/float64(n))
		}
	}
	wantValues(t, "adaptive", got, []int{1, 3, 2}, want)
	// Global average pooling, and upsampling (output larger than input).
	g := tensor.AdaptiveAvgPool2d(x.To(tensor.Float32).Unsqueeze(0), 1, 1)
	wantValues(t, "global", g, []int{1, 1, 1, 1}, []float64{9.5})
	up := tensor.AdaptiveAvgPool2d(tensor.FromFloat64([]float64{1, 2}, 1, 1, 1, 2), 1, 3)
	wantValues(t, "up", up, []int{1, 1, 1, 3}, []float64{1, 1.5, 2})
}

func TestPoolGradients(t *testing.T) {
	for _, c := range poolCases {
		// A non-contiguous input: planes stored channels-last.
		s := c.shape
		base := distinct(uint64(7+len(c.name)), s[0], s[2], s[3], s[1])
		x := base.Permute(0, 3, 1, 2).SetRequiresGrad(true)
		t.Run("max/"+c.name, func(t *testing.T) {
			checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor { return tensor.MaxPool2d(v[0], c.k, c.s, c.p, c.d, c.ceil) }, x)
		})
		if c.d != [2]int{} {
			continue
		}
		for _, inc := range []bool{true, false} {
			t.Run(fmt.Sprintf("avg/%s/%v", c.name, inc), func(t *testing.T) {
				checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor { return tensor.AvgPool2d(v[0], c.k, c.s, c.p, c.ceil, inc) }, x)
			})
		}
	}
	for _, o := range [][2]int{{3, 2}, {1, 1}, {5, 7}, {2, 4}} {
		t.Run(fmt.Sprintf("adaptive/%dx%d", o[0], o[1]), func(t *testing.T) {
			x := permuted64(uint64(o[0]*10+o[1]), 2, 3, 5, 4)
			checkGrad(t, func(v []*tensor.Tensor) *tensor.Tensor { return tensor.AdaptiveAvgPool2d(v[0], o[0], o[1]) }, x)
		})
	}
}

// TestPoolFloat32Backward compares the float32 kernels' gradients with
// the float64 ones.
func TestPoolFloat32Backward(t *testing.T) {
	x64 := distinct(3, 2, 3, 8, 8)
	for _, f := range []struct {
		name string
		fn   func(x *tensor.Tensor) *tensor.Tensor
	}{
		{"max", func(x *tensor.Tensor) *tensor.Tensor {
			return tensor.MaxPool2d(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{}, false)
		}},
		{"avg", func(x *tensor.Tensor) *tensor.Tensor {
			return tensor.AvgPool2d(x, [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, false, false)
		}},
		{"adaptive", func(x *tensor.Tensor) *tensor.Tensor { return tensor.AdaptiveAvgPool2d(x, 3, 5) }},
	} {
		var grads []*tensor.Tensor
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			x := x64.Detach().To(dt).SetRequiresGrad(true)
			y := f.fn(x)
			y.BackwardWith(tensor.NewRNG(1).Uniform(tensor.Float64, -1, 1, y.Shape()...).To(dt))
			grads = append(grads, x.Grad())
		}
		closeTo(t, f.name, grads[1], grads[0], 1e-5)
	}
}

func TestPoolPanics(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 1, 1, 4, 4)
	panicsWith(t, "pad", func() { tensor.MaxPool2d(x, [2]int{2, 2}, [2]int{}, [2]int{2, 0}, [2]int{}, false) }, "MaxPool2d", "padding")
	panicsWith(t, "big", func() { tensor.AvgPool2d(x, [2]int{5, 5}, [2]int{}, [2]int{}, false, true) }, "AvgPool2d")
	panicsWith(t, "dims", func() {
		tensor.MaxPool2d(tensor.Zeros(tensor.Float32, 4, 4), [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, false)
	}, "[4 4]")
	panicsWith(t, "int", func() { tensor.AdaptiveAvgPool2d(tensor.Zeros(tensor.Int64, 1, 4, 4), 2, 2) }, "int64")
}

func ExampleMaxPool2d() {
	x := tensor.FromFloat32([]float32{
		1, 5, 2, 0,
		3, 4, 8, 6,
		0, 1, 2, 3,
		9, 7, 4, 5}, 1, 1, 4, 4)
	fmt.Println(tensor.MaxPool2d(x, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, false).Float32s())
	// Output: [5 8 9 5]
}

// TestPoolCeilModeMatchesPyTorch pins ceil_mode to torch 1.13's numbers:
// F.max_pool2d / F.avg_pool2d(x, 3, 2, 1, ceil_mode=True) on arange(36) as
// 6×6 (the last window runs past the bottom/right padding, so its divisor
// counts only the part inside it), and a 2×2 window over 5×7.
func TestPoolCeilModeMatchesPyTorch(t *testing.T) {
	x := tensor.Arange(tensor.Float64, 0, 36, 1).Reshape(1, 1, 6, 6)
	k, s, p := [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}
	wantValues(t, "max", tensor.MaxPool2d(x, k, s, p, [2]int{}, true), []int{1, 1, 4, 4},
		[]float64{7, 9, 11, 11, 19, 21, 23, 23, 31, 33, 35, 35, 31, 33, 35, 35})
	wantValues(t, "avg/includePad", tensor.AvgPool2d(x, k, s, p, true, true), []int{1, 1, 4, 4},
		[]float64{14.0 / 9, 30.0 / 9, 42.0 / 9, 16.0 / 6, 75.0 / 9, 14, 16, 51.0 / 6, 147.0 / 9, 26, 28, 87.0 / 6, 61.0 / 6, 16, 17, 8.75})
	wantValues(t, "avg/excludePad", tensor.AvgPool2d(x, k, s, p, true, false), []int{1, 1, 4, 4},
		[]float64{3.5, 5, 7, 8, 12.5, 14, 16, 17, 24.5, 26, 28, 29, 30.5, 32, 34, 35})
	y := tensor.Arange(tensor.Float32, 0, 35, 1).Reshape(1, 1, 5, 7)
	wantValues(t, "max2x2", tensor.MaxPool2d(y, [2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, true), []int{1, 1, 3, 4},
		[]float64{8, 10, 12, 13, 22, 24, 26, 27, 29, 31, 33, 34})
	wantValues(t, "avg2x2", tensor.AvgPool2d(y, [2]int{2, 2}, [2]int{}, [2]int{}, true, true), []int{1, 1, 3, 4},
		[]float64{4, 6, 8, 9.5, 18, 20, 22, 23.5, 28.5, 30.5, 32.5, 34})
}

// TestPool2dOutSize checks the size helper against the outputs of
// MaxPool2d and AvgPool2d, and that a window too large gives a size below 1.
func TestPool2dOutSize(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 1, 2, 9, 7)
	for _, c := range []struct {
		k, s, p, d [2]int
		ceil       bool
	}{
		{[2]int{2, 2}, [2]int{}, [2]int{}, [2]int{}, false},
		{[2]int{3, 2}, [2]int{2, 1}, [2]int{1, 1}, [2]int{1, 1}, false},
		{[2]int{3, 3}, [2]int{2, 2}, [2]int{1, 0}, [2]int{}, true},
		{[2]int{2, 3}, [2]int{3, 2}, [2]int{}, [2]int{2, 2}, true},
	} {
		oh, ow := tensor.Pool2dOutSize(9, 7, c.k, c.s, c.p, c.d, c.ceil)
		if got := tensor.MaxPool2d(x, c.k, c.s, c.p, c.d, c.ceil).Shape(); got[2] != oh || got[3] != ow {
			t.Errorf("%+v: Pool2dOutSize %d×%d, MaxPool2d gives %v", c, oh, ow, got)
		}
		if c.d == ([2]int{}) {
			if got := tensor.AvgPool2d(x, c.k, c.s, c.p, c.ceil, true).Shape(); got[2] != oh || got[3] != ow {
				t.Errorf("%+v: Pool2dOutSize %d×%d, AvgPool2d gives %v", c, oh, ow, got)
			}
		}
	}
	if oh, ow := tensor.Pool2dOutSize(9, 7, [2]int{10, 2}, [2]int{}, [2]int{}, [2]int{}, false); oh >= 1 && ow >= 1 {
		t.Errorf("a 10-high window fits a 9-high plane: %d×%d", oh, ow)
	}
}
