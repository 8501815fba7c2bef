package optim

import (
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// mlpParams returns float32 parameters shaped like the 784-256-128-10 MLP
// (235,146 floats) with gradients set.
func mlpParams() []*tensor.Tensor {
	rng := tensor.NewRNG(1)
	var ps []*tensor.Tensor
	for _, s := range [][]int{{256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}} {
		p := rng.Normal(tensor.Float32, 0, 0.05, s...).SetRequiresGrad(true)
		p.SetGrad(rng.Normal(tensor.Float32, 0, 0.01, s...))
		ps = append(ps, p)
	}
	return ps
}

func numel(ps []*tensor.Tensor) int {
	n := 0
	for _, p := range ps {
		n += p.Numel()
	}
	return n
}

func benchStep(b *testing.B, o Optimizer, ps []*tensor.Tensor) {
	if err := o.Step(); err != nil { // create the state
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(4 * numel(ps)))
	b.ResetTimer()
	cpu0 := processCPUTime()
	for range b.N {
		if err := o.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// CPU time over all cores per step: on a loaded machine wall time
	// includes waiting for a core; this does not.
	b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

func BenchmarkAdamStepMLP(b *testing.B) {
	ps := mlpParams()
	o, err := NewAdam(ps, AdamOptions{LR: 1e-3})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, o, ps)
}

func BenchmarkAdamWStepMLP(b *testing.B) {
	ps := mlpParams()
	o, err := NewAdamW(ps, DefaultAdamW())
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, o, ps)
}

func BenchmarkSGDMomentumStepMLP(b *testing.B) {
	ps := mlpParams()
	o, err := NewSGD(ps, SGDOptions{LR: 0.01, Momentum: 0.9})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, o, ps)
}

func BenchmarkSGDStepMLP(b *testing.B) {
	ps := mlpParams()
	o, err := NewSGD(ps, SGDOptions{LR: 0.01})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, o, ps)
}

func BenchmarkRMSpropStepMLP(b *testing.B) {
	ps := mlpParams()
	o, err := NewRMSprop(ps, RMSpropOptions{})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, o, ps)
}

func BenchmarkAdagradStepMLP(b *testing.B) {
	ps := mlpParams()
	o, err := NewAdagrad(ps, AdagradOptions{})
	if err != nil {
		b.Fatal(err)
	}
	benchStep(b, o, ps)
}

func BenchmarkClipGradNormMLP(b *testing.B) {
	ps := mlpParams()
	b.ReportAllocs()
	for range b.N {
		if _, err := ClipGradNorm(ps, 1e9, 2); err != nil {
			b.Fatal(err)
		}
	}
}
