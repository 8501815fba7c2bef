package tensor_test

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// The convolution and pooling layers of the Fashion-MNIST CNN with a
// mini-batch of 64: conv 1→32 3×3 pad 1 on 28×28, max pool 2, conv 32→64
// 3×3 pad 1 on 14×14, max pool 2.

type cnnLayer struct {
	name          string
	c, oc, hw     int
	inputNeedGrad bool // the first layer's input is data
}

var cnnLayers = []cnnLayer{
	{"conv1_1x32x28", 1, 32, 28, false},
	{"conv2_32x64x14", 32, 64, 14, true},
}

func convFlops(l cnnLayer, batch int) float64 {
	return 2 * float64(batch*l.oc*l.hw*l.hw*l.c*9)
}

func BenchmarkConv2dCNN(b *testing.B) {
	const batch = 64
	opts := tensor.Conv2dOpts{Padding: [2]int{1, 1}}
	for _, l := range cnnLayers {
		rng := tensor.NewRNG(1)
		x := rng.Uniform(tensor.Float32, 0, 1, batch, l.c, l.hw, l.hw)
		if l.inputNeedGrad {
			x.SetRequiresGrad(true)
		}
		w := rng.Normal(tensor.Float32, 0, 0.1, l.oc, l.c, 3, 3).SetRequiresGrad(true)
		bias := tensor.Zeros(tensor.Float32, l.oc).SetRequiresGrad(true)
		gy := rng.Uniform(tensor.Float32, -1, 1, batch, l.oc, l.hw, l.hw)
		b.Run(l.name+"/forward", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tensor.Conv2d(x.NoGrad(), w, bias, opts)
			}
			b.ReportMetric(convFlops(l, batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(l.name+"/forward+backward", func(b *testing.B) {
			b.ReportAllocs()
			passes := 2.0 // forward and dW
			if l.inputNeedGrad {
				passes = 3
			}
			for b.Loop() {
				tensor.Conv2d(x, w, bias, opts).BackwardWith(gy)
				x.SetGrad(nil)
				w.ZeroGrad()
				bias.ZeroGrad()
			}
			b.ReportMetric(passes*convFlops(l, batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConv2dChunk sweeps the column budget (how many images one GEMM
// covers) on the second CNN layer, forward and backward.
func BenchmarkConv2dChunk(b *testing.B) {
	const batch = 64
	l := cnnLayers[1]
	opts := tensor.Conv2dOpts{Padding: [2]int{1, 1}}
	rng := tensor.NewRNG(1)
	x := rng.Uniform(tensor.Float32, 0, 1, batch, l.c, l.hw, l.hw).SetRequiresGrad(true)
	w := rng.Normal(tensor.Float32, 0, 0.1, l.oc, l.c, 3, 3).SetRequiresGrad(true)
	bias := tensor.Zeros(tensor.Float32, l.oc).SetRequiresGrad(true)
	gy := rng.Uniform(tensor.Float32, -1, 1, batch, l.oc, l.hw, l.hw)
	perImage := l.c * 9 * l.hw * l.hw
	for _, images := range []int{1, 4, 8, 16, 32, 64} {
		b.Run(fmt.Sprintf("images=%d", images), func(b *testing.B) {
			old := tensor.SetConvColumnBudget(images * perImage)
			defer tensor.SetConvColumnBudget(old)
			b.ReportAllocs()
			for b.Loop() {
				tensor.Conv2d(x, w, bias, opts).BackwardWith(gy)
				x.SetGrad(nil)
				w.ZeroGrad()
				bias.ZeroGrad()
			}
			b.ReportMetric(3*convFlops(l, batch)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkPoolCNN(b *testing.B) {
	const batch = 64
	for _, s := range []struct {
		name  string
		c, hw int
	}{{"32x28", 32, 28}, {"64x14", 64, 14}} {
		rng := tensor.NewRNG(2)
		x := rng.Uniform(tensor.Float32, -1, 1, batch, s.c, s.hw, s.hw).SetRequiresGrad(true)
		gy := rng.Uniform(tensor.Float32, -1, 1, batch, s.c, s.hw/2, s.hw/2)
		k := [2]int{2, 2}
		b.Run("MaxPool2d/"+s.name+"/forward+backward", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tensor.MaxPool2d(x, k, [2]int{}, [2]int{}, [2]int{}, false).BackwardWith(gy)
				x.SetGrad(nil)
			}
		})
		b.Run("AvgPool2d/"+s.name+"/forward+backward", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tensor.AvgPool2d(x, k, [2]int{}, [2]int{}, false, true).BackwardWith(gy)
				x.SetGrad(nil)
			}
		})
		b.Run("AdaptiveAvgPool2d/"+s.name+"/forward+backward", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tensor.AdaptiveAvgPool2d(x, s.hw/2, s.hw/2).BackwardWith(gy)
				x.SetGrad(nil)
			}
		})
	}
}

// BenchmarkCNNFeatures runs the whole convolutional part of the CNN
// (conv-ReLU-pool twice) forward and backward on a batch of 64: the part
// of a training step this package's ops own.
func BenchmarkCNNFeatures(b *testing.B) {
	rng := tensor.NewRNG(3)
	x := rng.Uniform(tensor.Float32, 0, 1, 64, 1, 28, 28)
	w1 := rng.Normal(tensor.Float32, 0, 0.3, 32, 1, 3, 3).SetRequiresGrad(true)
	b1 := tensor.Zeros(tensor.Float32, 32).SetRequiresGrad(true)
	w2 := rng.Normal(tensor.Float32, 0, 0.06, 64, 32, 3, 3).SetRequiresGrad(true)
	b2 := tensor.Zeros(tensor.Float32, 64).SetRequiresGrad(true)
	gy := rng.Uniform(tensor.Float32, -1, 1, 64, 64, 7, 7)
	opts := tensor.Conv2dOpts{Padding: [2]int{1, 1}}
	k := [2]int{2, 2}
	b.ReportAllocs()
	for b.Loop() {
		h := tensor.MaxPool2d(tensor.Conv2d(x, w1, b1, opts).Relu(), k, [2]int{}, [2]int{}, [2]int{}, false)
		h = tensor.MaxPool2d(tensor.Conv2d(h, w2, b2, opts).Relu(), k, [2]int{}, [2]int{}, [2]int{}, false)
		h.BackwardWith(gy)
		for _, p := range []*tensor.Tensor{w1, b1, w2, b2} {
			p.ZeroGrad()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
}
