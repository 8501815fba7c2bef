package nn_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestQuantizedLayersTrackFloat: int8 layers stay close to the float layers
// they come from, dynamic and static, with and without the fused ReLU.
func TestQuantizedLayersTrackFloat(t *testing.T) {
	rng := tensor.NewRNG(3)
	lin := nn.NewLinear(rng, 20, 7)
	conv := nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 3, Out: 5, Kernel: nn.Pair(3), Padding: nn.Pair(1), Stride: nn.Pair(2)})
	xl := rng.Normal(tensor.Float32, 0, 1, 9, 20)
	xc := rng.Normal(tensor.Float32, 0, 1, 2, 3, 7, 7)
	for _, static := range []bool{false, true} {
		var pl, pc *tensor.QuantParams
		if static {
			lo, hi := tensor.MinMax(xl)
			p := tensor.ChooseQuantParams(lo, hi, false)
			pl = &p
			lo, hi = tensor.MinMax(xc)
			p2 := tensor.ChooseQuantParams(lo, hi, true)
			pc = &p2
		}
		ql := nn.QuantizeLinear(lin, pl)
		qc, err := nn.QuantizeConv2d(conv, pc)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name     string
			got, ref *tensor.Tensor
		}{
			{"linear", ql.Forward(xl), lin.Forward(xl)},
			{"linear+relu", nn.NewSequential(ql, nn.NewReLU()).Forward(xl), lin.Forward(xl).Relu()},
			{"conv2d", qc.Forward(xc), conv.Forward(xc)},
			{"conv2d+relu", nn.NewSequential(qc, nn.NewReLU()).Forward(xc), conv.Forward(xc).Relu()},
		} {
			if !slices.Equal(c.got.Shape(), c.ref.Shape()) {
				t.Fatalf("%s: shape %v, want %v", c.name, c.got.Shape(), c.ref.Shape())
			}
			if d := maxDiff(c.got.Float32s(), c.ref.Detach().Float32s()); d > 0.05 || d == 0 {
				t.Errorf("%s static=%v: max difference from float %g (want small, not zero)", c.name, static, d)
			}
		}
	}
}

// TestQuantizedSpecRoundTrip builds qlinear/qconv2d from a spec, loads the
// state of quantized layers into it and gets the same outputs: what a
// model file does.
func TestQuantizedSpecRoundTrip(t *testing.T) {
	rng := tensor.NewRNG(4)
	spec := nn.Spec{Input: []int{2, 6, 6}, Layers: []nn.LayerSpec{
		{Type: "conv2d", Out: 4, Kernel: nn.IntPair{3, 3}, Padding: nn.IntPair{1, 1}},
		{Type: "relu"}, {Type: "flatten"}, {Type: "linear", Out: 3},
	}}
	net, _, err := spec.Build(rng)
	if err != nil {
		t.Fatal(err)
	}
	q1, err := nn.QuantizeConv2d(net.At(0).(*nn.Conv2d), &tensor.QuantParams{Scale: 0.02, ZeroPoint: 128})
	if err != nil {
		t.Fatal(err)
	}
	qnet := nn.NewSequential(q1, net.At(1), net.At(2), nn.QuantizeLinear(net.At(3).(*nn.Linear), nil))
	qspec := spec
	qspec.Layers = slices.Clone(spec.Layers)
	qspec.Layers[0].Type, qspec.Layers[3].Type = "qconv2d", "qlinear"
	js, _ := json.Marshal(qspec)
	back, err := nn.DecodeSpecJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	built, _, err := back.Build(tensor.NewRNG(9))
	if err != nil {
		t.Fatal(err)
	}
	x := rng.Normal(tensor.Float32, 0, 1, 3, 2, 6, 6)
	before := built.Forward(x).Float32s() // packs the zero weights
	sd := nn.StateDict(qnet)
	if sd["0.weight"].DType() != tensor.Int8 || sd["3.weight_scale"].DType() != tensor.Float32 {
		t.Fatalf("state dict dtypes: %v %v", sd["0.weight"].DType(), sd["3.weight_scale"].DType())
	}
	if err := nn.LoadStateDict(built, sd, true); err != nil {
		t.Fatal(err)
	}
	want, got := qnet.Forward(x).Float32s(), built.Forward(x).Float32s()
	if d := maxDiff(got, want); d != 0 {
		t.Fatalf("loaded model differs by %g (packed weights not refreshed after loading?)", d)
	}
	if maxDiff(before, want) == 0 {
		t.Fatal("the model before loading already gave the outputs")
	}
	if d := nn.Describe(built); !strings.Contains(d, "QConv2d(2, 4") || !strings.Contains(d, "static") || !strings.Contains(d, "QLinear(in=144, out=3, bias=true, int8 dynamic)") {
		t.Errorf("Describe:\n%s", d)
	}
}

func TestQuantizedSpecErrors(t *testing.T) {
	for _, c := range []struct {
		spec nn.Spec
		want string
	}{
		{nn.Spec{Input: []int{4}, Layers: []nn.LayerSpec{{Type: "qlinear"}}}, "out"},
		{nn.Spec{Input: []int{4}, Layers: []nn.LayerSpec{{Type: "qconv2d", Out: 2, Kernel: nn.IntPair{1, 1}}}}, "[C, H, W]"},
		{nn.Spec{Input: []int{2, 4, 4}, Layers: []nn.LayerSpec{{Type: "qconv2d", Out: 2, Kernel: nn.IntPair{1, 1}, Groups: 2}}}, "groups"},
	} {
		_, _, err := c.spec.Build(tensor.NewRNG(1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.spec.Layers, err, c.want)
		}
	}
	conv := nn.NewConv2dWith(tensor.NewRNG(1), nn.Conv2dConfig{In: 2, Out: 2, Kernel: nn.Pair(1), Groups: 2})
	if _, err := nn.QuantizeConv2d(conv, nil); err == nil || !strings.Contains(err.Error(), "groups=2") {
		t.Errorf("grouped conv: %v", err)
	}
}

// TestQConvPoolFused: in a Sequential, an int8 convolution followed by
// ReLU and a 2×2 max pooling runs as one fused op; its output equals the
// layers run one by one, bit for bit. A pooling it cannot fuse (stride
// unlike the kernel) runs as its own layer and gives the same as well.
func TestQConvPoolFused(t *testing.T) {
	rng := tensor.NewRNG(4)
	conv := nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 3, Out: 6, Kernel: nn.Pair(3), Padding: nn.Pair(1)})
	x := rng.Normal(tensor.Float32, 0, 1, 2, 3, 9, 9)
	q, err := nn.QuantizeConv2d(conv, nil)
	if err != nil {
		t.Fatal(err)
	}
	overlap := nn.NewMaxPool2d(3)
	overlap.Stride = nn.Pair(2)
	for _, pool := range []*nn.MaxPool2d{nn.NewMaxPool2d(2), overlap} {
		seq := nn.NewSequential(q, nn.NewReLU(), pool)
		got := seq.Forward(x)
		want := pool.Forward(nn.NewReLU().Forward(q.Forward(x)))
		if !slices.Equal(got.Shape(), want.Shape()) || maxDiff(got.Float32s(), want.Float32s()) != 0 {
			t.Fatalf("pool %v stride %v: fused %v differs from layer by layer %v (max diff %g)",
				pool.Kernel, pool.Stride, got.Shape(), want.Shape(), maxDiff(got.Float32s(), want.Float32s()))
		}
	}
}

// TestQLinearChainU8: statically quantized Linear layers in a Sequential
// pass uint8 activations to each other (requantized in the epilogue); the
// result matches the layers run one by one (float32 between them) up to
// the requantization's rounding (a tie may go either way: one step of
// the next layer's map), and the float model within quantization error.
func TestQLinearChainU8(t *testing.T) {
	rng := tensor.NewRNG(5)
	l1, l2, l3 := nn.NewLinear(rng, 30, 20), nn.NewLinear(rng, 20, 16), nn.NewLinear(rng, 16, 4)
	x := rng.Normal(tensor.Float32, 0, 1, 37, 30)
	float := nn.NewSequential(l1, nn.NewReLU(), l2, nn.NewReLU(), l3)
	// Calibrate each layer's input map on x itself.
	h1 := nn.NewReLU().Forward(l1.Forward(x))
	h2 := nn.NewReLU().Forward(l2.Forward(h1))
	mp := func(v *tensor.Tensor) *tensor.QuantParams {
		lo, hi := tensor.MinMax(v)
		p := tensor.ChooseQuantParams(lo, hi, false)
		return &p
	}
	q1, q2, q3 := nn.QuantizeLinear(l1, mp(x)), nn.QuantizeLinear(l2, mp(h1)), nn.QuantizeLinear(l3, mp(h2))
	got := nn.NewSequential(q1, nn.NewReLU(), q2, nn.NewReLU(), q3).Forward(x)
	if got.DType() != tensor.Float32 || !slices.Equal(got.Shape(), []int{37, 4}) {
		t.Fatalf("chain output %v %v, want float32 [37 4]", got.DType(), got.Shape())
	}
	relu := nn.NewReLU()
	stepwise := q3.Forward(relu.Forward(q2.Forward(relu.Forward(q1.Forward(x)))))
	if d := maxDiff(got.Float32s(), stepwise.Float32s()); d > 0.05 {
		t.Errorf("uint8 chain vs float32 between layers: max diff %g", d)
	}
	if d := maxDiff(got.Float32s(), float.Forward(x).Float32s()); d > 0.1 {
		t.Errorf("uint8 chain vs float model: max diff %g", d)
	}
	// The layer alone takes the uint8 activations of the one before.
	u := tensor.LinearInt8U8(x, mustWeights(t, q1), q1.Bias, *mp(x), true, *mp(h1))
	if u.DType() != tensor.Uint8 {
		t.Fatalf("LinearInt8U8 gave %v, want uint8", u.DType())
	}
	if d := maxDiff(q2.Forward(u).Float32s(), q2.Forward(relu.Forward(q1.Forward(x))).Float32s()); d > 0.05 {
		t.Errorf("QLinear on uint8 input vs float input: max diff %g", d)
	}
}

func mustWeights(t *testing.T, q *nn.QLinear) *tensor.Int8Weights {
	w, err := tensor.NewInt8Weights(q.Weight, q.WeightScale)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestQLinearChainDynamic: dynamically quantized Linear layers in a
// Sequential run as one chain (tensor.LinearInt8Chain); the result is that
// of the layers run one by one, bit for bit, and the float model's within
// quantization error.
func TestQLinearChainDynamic(t *testing.T) {
	rng := tensor.NewRNG(6)
	l1, l2, l3 := nn.NewLinear(rng, 40, 24), nn.NewLinear(rng, 24, 16), nn.NewLinear(rng, 16, 5)
	x := rng.Normal(tensor.Float32, 0, 1, 70, 40)
	q1, q2, q3 := nn.QuantizeLinear(l1, nil), nn.QuantizeLinear(l2, nil), nn.QuantizeLinear(l3, nil)
	got := nn.NewSequential(q1, nn.NewReLU(), q2, nn.NewReLU(), q3).Forward(x)
	relu := nn.NewReLU()
	stepwise := q3.Forward(relu.Forward(q2.Forward(relu.Forward(q1.Forward(x)))))
	if !slices.Equal(got.Shape(), []int{70, 5}) || !slices.Equal(got.Float32s(), stepwise.Float32s()) {
		t.Errorf("chain %v differs from the layers one by one (max diff %g)", got.Shape(), maxDiff(got.Float32s(), stepwise.Float32s()))
	}
	float := nn.NewSequential(l1, nn.NewReLU(), l2, nn.NewReLU(), l3)
	if d := maxDiff(got.Float32s(), float.Forward(x).Float32s()); d > 0.1 {
		t.Errorf("int8 chain vs float model: max diff %g", d)
	}
}
