package prune

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

func build(t *testing.T, input []int, layers ...nn.LayerSpec) (*nn.Sequential, nn.Spec) {
	t.Helper()
	spec := nn.Spec{Input: input, Layers: layers}
	net, _, err := nn.Build(spec.Layers, spec.Input, tensor.NewRNG(7))
	if err != nil {
		t.Fatal(err)
	}
	return net, spec
}

func mlpSpec() []nn.LayerSpec {
	return []nn.LayerSpec{{Type: "linear", Out: 32}, {Type: "relu"}, {Type: "linear", Out: 16}, {Type: "relu"}, {Type: "linear", Out: 5}}
}

func cnnSpec() []nn.LayerSpec {
	return []nn.LayerSpec{
		{Type: "conv2d", Out: 8, Kernel: nn.IntPair{3, 3}, Padding: nn.IntPair{1, 1}}, {Type: "batchnorm2d"}, {Type: "relu"},
		{Type: "maxpool2d", Kernel: nn.IntPair{2, 2}},
		{Type: "conv2d", Out: 6, Kernel: nn.IntPair{3, 3}, Padding: nn.IntPair{1, 1}}, {Type: "relu"},
		{Type: "flatten"}, {Type: "linear", Out: 12}, {Type: "relu"}, {Type: "linear", Out: 3},
	}
}

func input(seed uint64, shape ...int) *tensor.Tensor {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return tensor.FromFloat32(v, shape...)
}

func zeros(v []float32) int {
	z := 0
	for _, x := range v {
		if x == 0 {
			z++
		}
	}
	return z
}

// TestMagnitudePerLayer: each layer loses exactly ⌊s·n⌋ weights, and
// none it keeps is smaller in magnitude than one it lost.
func TestMagnitudePerLayer(t *testing.T) {
	for _, s := range []float64{0, 0.5, 0.75, 0.9} {
		net, _ := build(t, []int{20}, mlpSpec()...)
		before := map[*tensor.Tensor][]float32{}
		ts, _ := targets(net)
		for _, tg := range ts {
			before[tg.w] = append([]float32(nil), tg.w.Float32s()...)
		}
		m, err := Magnitude(net, s, PerLayer)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range ts {
			v, old := tg.w.Float32s(), before[tg.w]
			if z, want := zeros(v), int(s*float64(len(v))); z != want {
				t.Errorf("s=%g %s: %d zeros, want %d", s, tg.name, z, want)
			}
			maxLost, minKept := 0.0, math.Inf(1)
			for i, x := range v {
				a := math.Abs(float64(old[i]))
				if x == 0 {
					maxLost = max(maxLost, a)
				} else {
					minKept = min(minKept, a)
					if x != old[i] {
						t.Fatalf("%s: kept weight %d changed", tg.name, i)
					}
				}
			}
			if maxLost > minKept {
				t.Errorf("s=%g %s: lost |w| %g > kept %g", s, tg.name, maxLost, minKept)
			}
		}
		if got := m.Sparsity(); math.Abs(got-s) > 0.01 {
			t.Errorf("mask sparsity %g, want %g", got, s)
		}
	}
}

// TestMagnitudeGlobal: the total is exact and one threshold holds across
// layers (layers do not all lose the same fraction).
func TestMagnitudeGlobal(t *testing.T) {
	net, _ := build(t, []int{20}, mlpSpec()...)
	ts, _ := targets(net)
	// Make layer 2's weights large: a global ranking spares them.
	for i := range ts[1].w.Float32s() {
		ts[1].w.Float32s()[i] *= 100
	}
	if _, err := Magnitude(net, 0.5, Global); err != nil {
		t.Fatal(err)
	}
	n, z := 0, 0
	for _, tg := range ts {
		n += tg.w.Numel()
		z += zeros(tg.w.Float32s())
	}
	if z != n/2 {
		t.Errorf("%d zeros of %d", z, n)
	}
	if z1, n1 := zeros(ts[1].w.Float32s()), ts[1].w.Numel(); z1 > n1/10 {
		t.Errorf("the large layer lost %d of %d weights", z1, n1)
	}
	if got := Sparsity(net); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("Sparsity %g", got)
	}
}

// TestMasksSurviveSteps: Adam moves every weight, the wrapper puts the
// pruned ones back to zero after each step, and the others train.
func TestMasksSurviveSteps(t *testing.T) {
	for _, method := range []Method{MagnitudeMethod, StructuredMethod} {
		net, _ := build(t, []int{20}, mlpSpec()...)
		adam, err := optim.NewAdam(net.Parameters(), optim.AdamOptions{LR: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		opt, err := NewOptimizer(adam, net, Schedule{Method: method, Sparsity: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		s0 := Sparsity(net)
		ts, _ := targets(net)
		w0 := append([]float32(nil), ts[0].w.Float32s()...)
		x := input(3, 16, 20)
		for range 5 {
			opt.ZeroGrad()
			net.Forward(x).Mul(net.Forward(x)).SumAll().Backward()
			if err := opt.Step(); err != nil {
				t.Fatal(err)
			}
		}
		if s := Sparsity(net); s != s0 || s < 0.2 {
			t.Errorf("method %d: sparsity %g after steps, %g after pruning", method, s, s0)
		}
		moved := 0
		for i, v := range ts[0].w.Float32s() {
			if w0[i] == 0 && v != 0 {
				t.Fatalf("method %d: pruned weight %d came back", method, i)
			}
			if v != w0[i] {
				moved++
			}
		}
		if moved == 0 {
			t.Errorf("method %d: no weight trained", method)
		}
	}
}

// TestShrinkSameOutputs: structured pruning then Shrink gives a smaller
// network with the masked network's outputs (MLP, and a CNN with a
// BatchNorm and a Flatten between pruned layers).
func TestShrinkSameOutputs(t *testing.T) {
	for _, test := range []struct {
		name  string
		in    []int
		specs []nn.LayerSpec
		x     *tensor.Tensor
	}{
		{"mlp", []int{20}, mlpSpec(), input(1, 9, 20)},
		{"cnn", []int{2, 8, 8}, cnnSpec(), input(2, 5, 2, 8, 8)},
	} {
		for _, norm := range []Norm{L1, L2} {
			net, spec := build(t, test.in, test.specs...)
			// Non-trivial running statistics.
			net.SetTraining(true)
			net.Forward(test.x)
			if _, err := Structured(net, 0.5, norm); err != nil {
				t.Fatal(err)
			}
			net.Eval()
			want := net.Forward(test.x).Float32s()
			small, sspec, err := Shrink(net, spec)
			if err != nil {
				t.Fatal(err)
			}
			got := small.Forward(test.x).Float32s()
			for i := range want {
				if math.Abs(float64(got[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%s: output %d: shrunk %v, masked %v", test.name, i, got[i], want[i])
				}
			}
			pn := func(m *nn.Sequential) int {
				n := 0
				for _, p := range m.Parameters() {
					n += p.Numel()
				}
				return n
			}
			if !(pn(small) < pn(net)*2/3) {
				t.Errorf("%s: %d parameters shrunk to %d", test.name, pn(net), pn(small))
			}
			if sspec.Layers[0].Out != test.specs[0].Out/2 || sspec.Layers[len(sspec.Layers)-1].Out != test.specs[len(test.specs)-1].Out {
				t.Errorf("%s: shrunk spec %+v", test.name, sspec.Layers)
			}
		}
	}
}

func TestStructuredErrors(t *testing.T) {
	net, _ := build(t, []int{4}, nn.LayerSpec{Type: "linear", Out: 4}, nn.LayerSpec{Type: "sigmoid"}, nn.LayerSpec{Type: "linear", Out: 2})
	if _, err := Structured(net, 0.5, L1); err == nil {
		t.Error("pruning through a sigmoid accepted")
	} else {
		t.Log(err)
	}
	if _, err := Magnitude(net, 1, PerLayer); !errors.Is(err, ErrSparsity) {
		t.Errorf("sparsity 1: %v", err)
	}
}

func TestScheduleAt(t *testing.T) {
	s := Schedule{Sparsity: 0.8, Begin: 10, End: 20, Every: 5}
	for _, c := range []struct {
		t    int
		want float64
		due  bool
	}{{0, 0, false}, {10, 0, true}, {15, 0.8 * (1 - 0.125), true}, {17, 0.8 * (1 - 0.027), false}, {20, 0.8, true}, {25, 0.8, false}} {
		if got := s.At(c.t); math.Abs(got-c.want) > 1e-12 || s.due(c.t) != c.due {
			t.Errorf("step %d: sparsity %g due %v, want %g %v", c.t, got, s.due(c.t), c.want, c.due)
		}
	}
	once := Schedule{Sparsity: 0.5, Begin: 3}
	if once.due(2) || !once.due(3) || once.due(4) || once.At(3) != 0.5 {
		t.Error("one-shot schedule")
	}
}
