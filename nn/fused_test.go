package nn_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/tensor/gradcheck"
)

// TestSequentialFusesConvRelu checks that a Sequential running Conv2d and
// ReLU as one fused op gives the values and gradients of the two layers
// run one after the other.
func TestSequentialFusesConvRelu(t *testing.T) {
	rng := tensor.NewRNG(10)
	conv := nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 2, Out: 4, Kernel: nn.Pair(3), Padding: nn.Pair(1)})
	relu := nn.NewReLU()
	seq := nn.NewSequential(conv, relu, nn.NewFlatten())
	x := rng.Normal(tensor.Float32, 0, 1, 3, 2, 6, 6)
	seed := rng.Normal(tensor.Float32, 0, 1, 3, 4*6*6)
	y1, g1 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		conv.Weight, conv.Bias = in[1], in[2]
		return seq.Forward(in[0])
	}, []*tensor.Tensor{x, conv.Weight, conv.Bias}, seed)
	y2, g2 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		conv.Weight, conv.Bias = in[1], in[2]
		return relu.Forward(conv.Forward(in[0])).Reshape(3, -1)
	}, []*tensor.Tensor{x, conv.Weight, conv.Bias}, seed)
	gradcheck.Near(t, "y", y1, y2, 1e-6)
	for i := range g1 {
		gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], 1e-5)
	}
}

// TestSequentialFusesLinearRelu is TestSequentialFusesConvRelu for Linear.
func TestSequentialFusesLinearRelu(t *testing.T) {
	rng := tensor.NewRNG(12)
	lin := nn.NewLinear(rng, 5, 7)
	relu := nn.NewReLU()
	seq := nn.NewSequential(lin, relu)
	x := rng.Normal(tensor.Float32, 0, 1, 4, 5)
	seed := rng.Normal(tensor.Float32, 0, 1, 4, 7)
	y1, g1 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		lin.Weight, lin.Bias = in[1], in[2]
		return seq.Forward(in[0])
	}, []*tensor.Tensor{x, lin.Weight, lin.Bias}, seed)
	y2, g2 := gradcheck.Grads(func(in []*tensor.Tensor) *tensor.Tensor {
		lin.Weight, lin.Bias = in[1], in[2]
		return relu.Forward(lin.Forward(in[0]))
	}, []*tensor.Tensor{x, lin.Weight, lin.Bias}, seed)
	gradcheck.Near(t, "y", y1, y2, 1e-6)
	for i := range g1 {
		gradcheck.Near(t, []string{"dx", "dw", "db"}[i], g1[i], g2[i], 1e-5)
	}
}

// TestSequentialRecyclesInference: an inference pass over an MLP gives
// the values of its layers run one by one, twice in a row (the second
// pass on recycled buffers), and the second allocates far less than its
// intermediate activations; with a frozen first layer before a trained
// one, training still gets the gradients of the layers run one by one
// (the frozen layer's output is read by the backward pass, so it is not
// recycled).
func TestSequentialRecyclesInference(t *testing.T) {
	rng := tensor.NewRNG(3)
	const rows = 4096
	l1, l2, l3 := nn.NewLinear(rng, 64, 256), nn.NewLinear(rng, 256, 128), nn.NewLinear(rng, 128, 10)
	seq := nn.NewSequential(l1, nn.NewReLU(), l2, nn.NewReLU(), l3)
	x := rng.Normal(tensor.Float32, 0, 1, rows, 64)
	byHand := func(x *tensor.Tensor) *tensor.Tensor {
		h := l1.Forward(x).Relu()
		h = l2.Forward(h).Relu()
		return l3.Forward(h)
	}
	want := byHand(x.NoGrad()).Float32s()
	for pass := range 2 {
		var got []float32
		b := allocatedBytes(func() { got = seq.Forward(x.NoGrad()).Float32s() })
		if !slices.Equal(got, want) {
			t.Fatalf("pass %d differs from the layers run one by one", pass)
		}
		// The activations are 4096×(256+128+10) float32 = 6.2 MiB.
		if act := uint64(rows * (256 + 128 + 10) * 4); pass == 1 && b > act/2 {
			t.Errorf("second pass allocated %d bytes, want well under the %d of its activations", b, act)
		}
	}

	for _, p := range l1.Parameters() {
		p.SetRequiresGrad(false)
	}
	run := func(f func(*tensor.Tensor) *tensor.Tensor) [][]float32 {
		for _, p := range append(l2.Parameters(), l3.Parameters()...) {
			p.ZeroGrad()
		}
		f(x).Sum(nil, false).Backward()
		var g [][]float32
		for _, p := range append(l2.Parameters(), l3.Parameters()...) {
			g = append(g, p.Grad().Float32s())
		}
		return g
	}
	got, exp := run(seq.Forward), run(byHand)
	for i := range exp {
		if !slices.Equal(got[i], exp[i]) {
			t.Fatalf("gradient %d with a frozen first layer differs from the layers run one by one", i)
		}
	}
}

func allocatedBytes(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}
