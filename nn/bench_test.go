package nn_test

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// The Fashion-MNIST models of the project's benchmarks, at batch 64.

func mlp(rng *tensor.RNG) *nn.Sequential {
	return nn.NewSequential(nn.NewLinear(rng, 784, 256), nn.NewReLU(), nn.NewLinear(rng, 256, 128), nn.NewReLU(), nn.NewLinear(rng, 128, 10))
}

func cnn(rng *tensor.RNG) *nn.Sequential {
	return nn.NewSequential(
		nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 1, Out: 32, Kernel: nn.Pair(3), Padding: nn.Pair(1)}), nn.NewReLU(), nn.NewMaxPool2d(2),
		nn.NewConv2dWith(rng, nn.Conv2dConfig{In: 32, Out: 64, Kernel: nn.Pair(3), Padding: nn.Pair(1)}), nn.NewReLU(), nn.NewMaxPool2d(2),
		nn.NewFlatten(), nn.NewLinear(rng, 3136, 128), nn.NewReLU(), nn.NewLinear(rng, 128, 10))
}

// benchStep measures forward + cross-entropy + backward (gradients
// zeroed in place, no optimizer).
func benchStep(b *testing.B, model *nn.Sequential, x, y *tensor.Tensor) {
	b.ReportAllocs()
	for b.Loop() {
		loss := nn.CrossEntropyLoss(model.Forward(x), y, nn.ClassOptions{})
		loss.Backward()
		model.ZeroGrad()
	}
	b.ReportMetric(float64(x.Size(0))*float64(b.N)/b.Elapsed().Seconds(), "examples/s")
}

func BenchmarkMLPStep(b *testing.B) {
	rng := tensor.NewRNG(1)
	x := rng.Uniform(tensor.Float32, 0, 1, 64, 784)
	y := rng.RandInt(tensor.Int64, 0, 10, 64)
	benchStep(b, mlp(rng), x, y)
}

func BenchmarkMLPForward(b *testing.B) {
	rng := tensor.NewRNG(1)
	x := rng.Uniform(tensor.Float32, 0, 1, 64, 784).NoGrad()
	m := mlp(rng)
	b.ReportAllocs()
	for b.Loop() {
		m.Forward(x)
	}
}

func BenchmarkCNNStep(b *testing.B) {
	rng := tensor.NewRNG(2)
	x := rng.Uniform(tensor.Float32, 0, 1, 64, 1, 28, 28)
	y := rng.RandInt(tensor.Int64, 0, 10, 64)
	benchStep(b, cnn(rng), x, y)
}

func BenchmarkCNNForward(b *testing.B) {
	rng := tensor.NewRNG(2)
	x := rng.Uniform(tensor.Float32, 0, 1, 64, 1, 28, 28).NoGrad()
	m := cnn(rng)
	b.ReportAllocs()
	for b.Loop() {
		m.Forward(x)
	}
}

// BenchmarkCrossEntropy compares the fused loss with the composite one
// (forward + backward) on MLP logits [64, 10] and on a 1000-class head.
func BenchmarkCrossEntropy(b *testing.B) {
	for _, c := range []struct {
		name string
		n, k int
	}{{"64x10", 64, 10}, {"256x1000", 256, 1000}} {
		rng := tensor.NewRNG(3)
		logits := rng.Normal(tensor.Float32, 0, 1, c.n, c.k).SetRequiresGrad(true)
		y := rng.RandInt(tensor.Int64, 0, c.k, c.n)
		for _, f := range []struct {
			name string
			f    func(x, y *tensor.Tensor, o nn.ClassOptions) *tensor.Tensor
		}{{"fused", nn.CrossEntropyLoss}, {"composite", nn.CrossEntropyComposite}} {
			b.Run(c.name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					f.f(logits, y, nn.ClassOptions{}).Backward()
					logits.ZeroGrad()
				}
			})
		}
	}
}

// BenchmarkMLPInference runs the trained-size MLP forward with no graph
// (eval mode, NoGrad input) at batch 1, 64 and 10,000 and reports rows/s,
// the figure PyTorch's inference is compared on.
func BenchmarkMLPInference(b *testing.B) {
	for _, n := range []int{1, 64, 10000} {
		rng := tensor.NewRNG(4)
		m := mlp(rng)
		m.Eval()
		x := rng.Uniform(tensor.Float32, 0, 1, n, 784).NoGrad()
		b.Run(fmt.Sprintf("batch%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Forward(x)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
