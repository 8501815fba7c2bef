package tensor_test

import (
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// BenchmarkLinear measures one fully connected layer of the Fashion-MNIST
// MLP: forward x[64×784]·wᵀ[784×256] + b and backward to w and b (x is
// data, so backward is one GEMM for dw plus the bias row sum).
func BenchmarkLinear(b *testing.B) {
	rng := tensor.NewRNG(1)
	x := rng.Uniform(tensor.Float32, -1, 1, 64, 784)
	w := rng.Normal(tensor.Float32, 0, 0.05, 256, 784).SetRequiresGrad(true)
	bias := tensor.Zeros(tensor.Float32, 256).SetRequiresGrad(true)
	g := rng.Uniform(tensor.Float32, -1, 1, 64, 256)
	b.Run("forward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tensor.Linear(x.NoGrad(), w, bias)
		}
		b.ReportMetric(2*64*784*256*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("forward+backward", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := tensor.Linear(x, w, bias)
			out.BackwardWith(g)
			w.ZeroGrad()
			bias.ZeroGrad()
		}
		b.ReportMetric(2*2*64*784*256*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}

// BenchmarkElementwise measures ops over 1Mi float32 elements.
func BenchmarkElementwise(b *testing.B) {
	rng := tensor.NewRNG(2)
	n := 1 << 20
	x := rng.Uniform(tensor.Float32, -1, 1, n)
	y := rng.Uniform(tensor.Float32, -1, 1, n)
	m := x.Reshape(1024, 1024)
	row := rng.Uniform(tensor.Float32, -1, 1, 1024)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"Add", func() { x.Add(y) }},
		{"Mul", func() { x.Mul(y) }},
		{"AddBroadcastRow", func() { m.Add(row) }},
		{"AddTransposed", func() { m.T().Add(m) }},
		{"MulScalar", func() { x.MulScalar(0.5) }},
		{"Relu", func() { x.Relu() }},
		{"Tanh", func() { x.Tanh() }},
		{"Gelu", func() { x.Gelu() }},
		{"SumAll", func() { x.SumAll() }},
		{"SumRows", func() { m.Sum([]int{1}, false) }},
		{"SumCols", func() { m.Sum([]int{0}, false) }},
		{"Softmax", func() { m.Softmax(-1) }},
		{"AxpyInPlace", func() { x.AxpyInPlace(1e-9, y) }},
		{"Contiguous", func() { m.T().Contiguous() }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.f()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	}
}

// BenchmarkMLPStep is one SGD training step of a 784-256-128-10 MLP at
// batch 64 (the Fashion-MNIST model): forward, cross-entropy, backward,
// parameter update.
func BenchmarkMLPStep(b *testing.B) { benchMLPStep(b, false) }

// benchMLPStep runs BenchmarkMLPStep, with a no-op grad-ready hook on
// every parameter when hooks is set (checked to fire once per step).
func benchMLPStep(b *testing.B, hooks bool) {
	rng := tensor.NewRNG(3)
	sizes := []int{784, 256, 128, 10}
	var params []*tensor.Tensor
	for i := 0; i+1 < len(sizes); i++ {
		params = append(params,
			rng.Normal(tensor.Float32, 0, 0.05, sizes[i+1], sizes[i]).SetRequiresGrad(true),
			tensor.Zeros(tensor.Float32, sizes[i+1]).SetRequiresGrad(true))
	}
	ready := 0
	if hooks {
		for _, p := range params {
			p.RegisterGradReadyHook(func(*tensor.Tensor) { ready++ })
		}
	}
	x := rng.Uniform(tensor.Float32, 0, 1, 64, 784)
	target := tensor.OneHot(rng.RandInt(tensor.Int64, 0, 10, 64), 10)
	b.ReportAllocs()
	for b.Loop() {
		h := x
		for l := 0; l < 3; l++ {
			h = tensor.Linear(h, params[2*l], params[2*l+1])
			if l < 2 {
				h = h.Relu()
			}
		}
		loss := h.LogSoftmax(-1).Mul(target).SumAll().MulScalar(-1.0 / 64)
		loss.Backward()
		for _, p := range params {
			p.AxpyInPlace(-0.01, p.Grad())
			p.ZeroGrad()
		}
	}
	if hooks && ready != b.N*len(params) {
		b.Fatalf("%d hooks ran in %d steps", ready, b.N)
	}
}

// BenchmarkSmallOps measures per-op overhead on tensors of a few hundred
// elements, where allocation and dispatch dominate.
func BenchmarkSmallOps(b *testing.B) {
	rng := tensor.NewRNG(4)
	x := rng.Uniform(tensor.Float32, -1, 1, 64, 10)
	y := rng.Uniform(tensor.Float32, -1, 1, 64, 10)
	row := rng.Uniform(tensor.Float32, -1, 1, 10)
	w := rng.Uniform(tensor.Float32, -1, 1, 10, 10).SetRequiresGrad(true)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"Add", func() { x.Add(y) }},
		{"AddBroadcast", func() { x.Add(row) }},
		{"MulScalar", func() { x.MulScalar(2) }},
		{"Relu", func() { x.Relu() }},
		{"SumAll", func() { x.SumAll() }},
		{"Transpose", func() { x.T() }},
		{"Reshape", func() { x.Reshape(-1) }},
		{"MulRecorded", func() { x.Mul(w.Sum([]int{0}, false)) }},
		{"LogSoftmax", func() { x.LogSoftmax(-1) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.f()
			}
		})
	}
}

// BenchmarkReluMax measures the NaN-propagating ReLU (forward and
// backward), Maximum and the Max reductions on 1 Mi Float32 elements.
func BenchmarkReluMax(b *testing.B) {
	rng := tensor.NewRNG(3)
	n := 1 << 20
	x := rng.Uniform(tensor.Float32, -1, 1, n)
	y := rng.Uniform(tensor.Float32, -1, 1, n)
	m := x.Reshape(1024, 1024)
	xg := x.Detach().SetRequiresGrad(true)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"Relu", func() { x.Relu() }},
		{"ReluBackward", func() { xg.Relu().SumAll().Backward() }},
		{"Maximum", func() { x.Maximum(y) }},
		{"MaxAll", func() { x.MaxAll() }},
		{"MaxRows", func() { m.Max([]int{1}, false) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
		})
	}
}
