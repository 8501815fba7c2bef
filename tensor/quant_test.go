package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

func randnQ(rng *tensor.RNG, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

// fakeQuant returns the values the int8 path computes with: x quantized
// with p (x·(1/scale), rounded half to even, clamped) and mapped back.
func fakeQuant(x []float32, p tensor.QuantParams) []float32 {
	inv := 1 / p.Scale
	out := make([]float32, len(x))
	for i, v := range x {
		q := math.RoundToEven(float64(v * inv))
		q = min(max(q+float64(p.ZeroPoint), 0), 255)
		out[i] = p.Scale * float32(q-float64(p.ZeroPoint))
	}
	return out
}

// dequant returns scale[j]·q[j, ...].
func dequant(q, scale *tensor.Tensor) *tensor.Tensor {
	qs, sc := q.To(tensor.Float32).Float32s(), scale.Float32s()
	per := len(qs) / len(sc)
	for j := range sc {
		for i := range per {
			qs[j*per+i] *= sc[j]
		}
	}
	return tensor.FromFloat32(qs, q.Shape()...)
}

func closeQ(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > tol*(1+math.Abs(float64(want[i]))) {
			t.Fatalf("%s: [%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func TestQuantizeWeightInt8(t *testing.T) {
	w := tensor.FromFloat32([]float32{0.5, -1, 0.25, 0, 0, 0, 3, 1e-3, -3}, 3, 3)
	q, s := tensor.QuantizeWeightInt8(w)
	if got, want := q.Int8s(), []int8{64, -127, 32, 0, 0, 0, 127, 0, -127}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("q = %v, want %v", got, want)
	}
	closeQ(t, "scale", s.Float32s(), []float32{1.0 / 127, 1, 3.0 / 127}, 1e-7)
}

func TestChooseQuantParams(t *testing.T) {
	for _, c := range []struct {
		lo, hi float32
		sym    bool
		want   tensor.QuantParams
	}{
		{0, 2.55, false, tensor.QuantParams{Scale: 0.01, ZeroPoint: 0}},
		{-1, 1.55, false, tensor.QuantParams{Scale: 0.01, ZeroPoint: 100}},
		{1, 2.55, false, tensor.QuantParams{Scale: 0.01, ZeroPoint: 0}}, // widened to contain 0
		{-2.55, -1, false, tensor.QuantParams{Scale: 0.01, ZeroPoint: 255}},
		{-1, 2.55, true, tensor.QuantParams{Scale: 0.02, ZeroPoint: 128}},
		{0, 0, false, tensor.QuantParams{Scale: 1, ZeroPoint: 0}},
	} {
		got := tensor.ChooseQuantParams(c.lo, c.hi, c.sym)
		if math.Abs(float64(got.Scale-c.want.Scale)) > 1e-6 || got.ZeroPoint != c.want.ZeroPoint {
			t.Errorf("ChooseQuantParams(%g, %g, %v) = %+v, want %+v", c.lo, c.hi, c.sym, got, c.want)
		}
	}
}

// TestLinearInt8 checks the int8 path exactly against float arithmetic on
// the quantized values (fake quantization), and loosely against the float
// layer.
// TestLinearInt8 checks the int8 Linear against the float Linear of the
// values it computes with (activations quantized and mapped back, weights
// dequantized): static with a fixed map, dynamic with one map per row.
func TestLinearInt8(t *testing.T) {
	rng := tensor.NewRNG(1)
	for _, c := range []struct {
		rows, in, out int
		static, bias  bool
		relu          bool
	}{
		{1, 1, 1, false, true, false}, {5, 7, 3, false, false, true}, {64, 784, 256, false, true, true},
		{33, 130, 70, true, true, false}, {3, 9, 40, true, false, true}, {0, 5, 4, false, true, false},
	} {
		t.Run(fmt.Sprintf("%dx%dx%d_static=%v", c.rows, c.in, c.out, c.static), func(t *testing.T) {
			xv := randnQ(rng, c.rows*c.in, 1)
			x := tensor.FromFloat32(xv, c.rows, c.in)
			w := tensor.FromFloat32(randnQ(rng, c.out*c.in, 0.1), c.out, c.in)
			var b *tensor.Tensor
			if c.bias {
				b = tensor.FromFloat32(randnQ(rng, c.out, 1), c.out)
			}
			q, s := tensor.QuantizeWeightInt8(w)
			iw, err := tensor.NewInt8Weights(q, s)
			if err != nil {
				t.Fatal(err)
			}
			var p *tensor.QuantParams
			var fq []float32
			if c.static {
				qp := tensor.QuantParams{Scale: 0.01, ZeroPoint: 120} // clips: |x| reaches past 1.2
				p = &qp
				fq = fakeQuant(xv, qp)
			} else {
				// Dynamic: each row with the min-max map of its own range.
				for i := range c.rows {
					row := tensor.FromFloat32(xv[i*c.in:(i+1)*c.in], c.in)
					lo, hi := tensor.MinMax(row)
					fq = append(fq, fakeQuant(row.Float32s(), tensor.ChooseQuantParams(lo, hi, false))...)
				}
			}
			got := tensor.LinearInt8(x, iw, b, p, c.relu)
			want := tensor.Linear(tensor.FromFloat32(fq, c.rows, c.in), dequant(q, s), b)
			if c.relu {
				want = want.Relu()
			}
			if fmt.Sprint(got.Shape()) != fmt.Sprint([]int{c.rows, c.out}) {
				t.Fatalf("shape %v", got.Shape())
			}
			closeQ(t, "vs fake-quantized float", got.Float32s(), want.Float32s(), 1e-4)
			if !c.static {
				ref := tensor.Linear(x, w, b)
				if c.relu {
					ref = ref.Relu()
				}
				// Quantization error: about half a step of x times Σ|w| per output.
				closeQ(t, "vs float", got.Float32s(), ref.Float32s(), 0.1)
			}
		})
	}
}

func TestConv2dInt8(t *testing.T) {
	rng := tensor.NewRNG(2)
	for _, c := range []struct {
		n, ch, h, w, oc, k int
		opts               tensor.Conv2dOpts
	}{
		{2, 1, 28, 28, 32, 3, tensor.Conv2dOpts{Padding: [2]int{1, 1}, Relu: true}},
		{3, 5, 9, 7, 6, 3, tensor.Conv2dOpts{Stride: [2]int{2, 1}}},
		{1, 4, 6, 6, 33, 1, tensor.Conv2dOpts{}},
		{2, 3, 8, 8, 4, 2, tensor.Conv2dOpts{Padding: [2]int{2, 1}, Dilation: [2]int{2, 2}}},
	} {
		t.Run(fmt.Sprintf("%v", c), func(t *testing.T) {
			xv := randnQ(rng, c.n*c.ch*c.h*c.w, 1)
			x := tensor.FromFloat32(xv, c.n, c.ch, c.h, c.w)
			w := tensor.FromFloat32(randnQ(rng, c.oc*c.ch*c.k*c.k, 0.2), c.oc, c.ch, c.k, c.k)
			b := tensor.FromFloat32(randnQ(rng, c.oc, 1), c.oc)
			q, s := tensor.QuantizeWeightInt8(w)
			iw, err := tensor.NewInt8ConvWeights(q, s)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := tensor.MinMax(x)
			qp := tensor.ChooseQuantParams(lo, hi, false)
			got := tensor.Conv2dInt8(x, iw, b, nil, c.opts)
			want := tensor.Conv2d(tensor.FromFloat32(fakeQuant(xv, qp), x.Shape()...), dequant(q, s), b, c.opts)
			if fmt.Sprint(got.Shape()) != fmt.Sprint(want.Shape()) {
				t.Fatalf("shape %v, want %v", got.Shape(), want.Shape())
			}
			closeQ(t, "vs fake-quantized float", got.Float32s(), want.Float32s(), 1e-4)
			// Fused with a max pooling: the pooling of the unfused output,
			// bit for bit (the same products, the maximum taken in float32).
			for _, pool := range [][2]int{{2, 2}, {3, 1}, {1, 2}} {
				gotP := tensor.Conv2dInt8Pool(x, iw, b, nil, c.opts, pool)
				wantP := tensor.MaxPool2d(got, pool, pool, [2]int{}, [2]int{1, 1}, false)
				if fmt.Sprint(gotP.Shape()) != fmt.Sprint(wantP.Shape()) {
					t.Fatalf("pool %v: shape %v, want %v", pool, gotP.Shape(), wantP.Shape())
				}
				closeQ(t, fmt.Sprintf("pool %v vs Conv2dInt8 then MaxPool2d", pool), gotP.Float32s(), wantP.Float32s(), 0)
			}
		})
	}
}

func TestNewInt8WeightsErrors(t *testing.T) {
	q := tensor.Zeros(tensor.Int8, 2, 3)
	for _, s := range []*tensor.Tensor{tensor.Ones(tensor.Float32, 3), tensor.Zeros(tensor.Float32, 2), tensor.Ones(tensor.Float64, 2)} {
		if _, err := tensor.NewInt8Weights(q, s); err == nil {
			t.Errorf("scale %v %v accepted", s.DType(), s)
		}
	}
	if _, err := tensor.NewInt8Weights(tensor.Zeros(tensor.Float32, 2, 3), tensor.Ones(tensor.Float32, 2)); err == nil {
		t.Error("float weight accepted")
	}
}

func TestInt8Tensor(t *testing.T) {
	x := tensor.FromInt8([]int8{-128, -1, 0, 127}, 2, 2)
	if got := fmt.Sprint(x.To(tensor.Float32).Float32s()); got != "[-128 -1 0 127]" {
		t.Errorf("int8 → float32 = %s", got)
	}
	if got := fmt.Sprint(tensor.FromFloat32([]float32{-3, 2.9, 100}, 3).To(tensor.Int8).Int8s()); got != "[-3 2 100]" {
		t.Errorf("float32 → int8 = %s", got)
	}
	if got := fmt.Sprint(x.T().Contiguous().Int8s()); got != "[-128 0 -1 127]" {
		t.Errorf("transpose = %s", got)
	}
	if x.DType().String() != "int8" || x.DType().Size() != 1 {
		t.Errorf("dtype %v size %d", x.DType(), x.DType().Size())
	}
}

func BenchmarkLinearInt8(b *testing.B) {
	rng := tensor.NewRNG(3)
	for _, s := range [][3]int{{64, 784, 256}, {10000, 784, 256}} {
		m, in, out := s[0], s[1], s[2]
		x := tensor.FromFloat32(randnQ(rng, m*in, 1), m, in)
		w := tensor.FromFloat32(randnQ(rng, out*in, 0.1), out, in)
		bias := tensor.FromFloat32(randnQ(rng, out, 1), out)
		q, sc := tensor.QuantizeWeightInt8(w)
		iw, _ := tensor.NewInt8Weights(q, sc)
		b.Run(fmt.Sprintf("int8/%dx%dx%d", m, in, out), func(b *testing.B) {
			for range b.N {
				tensor.LinearInt8(x, iw, bias, nil, true)
			}
		})
		b.Run(fmt.Sprintf("float32/%dx%dx%d", m, in, out), func(b *testing.B) {
			for range b.N {
				tensor.LinearRelu(x.NoGrad(), w, bias)
			}
		})
	}
}

// TestLinearInt8Chain: a chain of int8 Linear layers (dynamic, static and
// mixed, with a batch dimension, and with an empty layer that takes the
// one-by-one path) equals LinearInt8 / LinearInt8U8 called layer by layer,
// bit for bit.
func TestLinearInt8Chain(t *testing.T) {
	rng := tensor.NewRNG(3)
	for ci, c := range []struct {
		dims   []int
		static []bool
		shape  []int // leading dims of x
	}{
		{[]int{784, 256, 128, 10}, []bool{false, false, false}, []int{64}},
		{[]int{50, 40, 30}, []bool{true, true}, []int{3, 11}},
		{[]int{50, 40, 30, 20}, []bool{true, false, true}, []int{17}},
		{[]int{9, 33, 5}, []bool{false, true}, []int{1}},
		{[]int{0, 4, 3}, []bool{false, true}, []int{4}},
		{[]int{9, 7, 5}, []bool{false, false}, []int{0}},
	} {
		t.Run(fmt.Sprint(ci), func(t *testing.T) {
			var layers []tensor.Int8Layer
			for l := range len(c.dims) - 1 {
				in, out := c.dims[l], c.dims[l+1]
				q, s := tensor.QuantizeWeightInt8(tensor.FromFloat32(randnQ(rng, out*in, 0.1), out, in))
				w, err := tensor.NewInt8Weights(q, s)
				if err != nil {
					t.Fatal(err)
				}
				L := tensor.Int8Layer{W: w, Bias: tensor.FromFloat32(randnQ(rng, out, 0.5), out), ReLU: l%2 == 0}
				if c.static[l] {
					L.Input = &tensor.QuantParams{Scale: 0.02 * float32(l+1), ZeroPoint: int32(10 + 50*l)}
				}
				layers = append(layers, L)
			}
			shape := append(append([]int(nil), c.shape...), c.dims[0])
			x := tensor.FromFloat32(randnQ(rng, numel(shape), 1), shape...)
			got := tensor.LinearInt8Chain(x, layers)
			want := x
			for l, L := range layers {
				if l+1 < len(layers) && L.Input != nil && layers[l+1].Input != nil {
					want = tensor.LinearInt8U8(want, L.W, L.Bias, *L.Input, L.ReLU, *layers[l+1].Input)
				} else {
					want = tensor.LinearInt8(want, L.W, L.Bias, L.Input, L.ReLU)
				}
			}
			if fmt.Sprint(got.Shape()) != fmt.Sprint(want.Shape()) || got.DType() != tensor.Float32 {
				t.Fatalf("chain gave %v %v, want float32 %v", got.DType(), got.Shape(), want.Shape())
			}
			for i, v := range want.Float32s() {
				if g := got.Float32s()[i]; math.Float32bits(g) != math.Float32bits(v) {
					t.Fatalf("element %d: %g, want %g", i, g, v)
				}
			}
		})
	}
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
