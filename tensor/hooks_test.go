package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// readyLog registers a grad-ready hook on each named leaf that records the
// order of firing and a copy of the gradient the hook saw.
type readyLog struct {
	order []string
	seen  map[string]*tensor.Tensor // the gradient at the last firing
	count map[string]int
}

func logReady(leaves map[string]*tensor.Tensor) (*readyLog, map[string]func()) {
	l := &readyLog{seen: map[string]*tensor.Tensor{}, count: map[string]int{}}
	remove := map[string]func(){}
	for name, p := range leaves {
		remove[name] = p.RegisterGradReadyHook(func(p *tensor.Tensor) {
			l.order = append(l.order, name)
			l.seen[name] = p.Grad().Clone()
			l.count[name]++
		})
	}
	return l, remove
}

func sameValues(a, b *tensor.Tensor, tol float64) bool {
	if a == nil || b == nil || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	av, bv := a.Values(), b.Values()
	for i := range av {
		if math.Abs(av[i]-bv[i]) > tol {
			return false
		}
	}
	return true
}

// mlp is a 5-4-3-2 MLP as the nn package builds it (LinearRelu, then a
// Linear head), with a cross-entropy loss.
type mlp struct {
	names  []string
	params map[string]*tensor.Tensor
}

func newMLP(seed uint64) *mlp {
	rng := tensor.NewRNG(seed)
	m := &mlp{params: map[string]*tensor.Tensor{}}
	sizes := []int{5, 4, 3, 2}
	for l := 0; l+1 < len(sizes); l++ {
		w, b := fmt.Sprintf("w%d", l+1), fmt.Sprintf("b%d", l+1)
		m.names = append(m.names, w, b)
		m.params[w] = rng.Normal(tensor.Float64, 0, 0.5, sizes[l+1], sizes[l]).SetRequiresGrad(true)
		m.params[b] = rng.Normal(tensor.Float64, 0, 0.1, sizes[l+1]).SetRequiresGrad(true)
	}
	return m
}

func (m *mlp) loss(x *tensor.Tensor) *tensor.Tensor {
	h := tensor.LinearRelu(x, m.params["w1"], m.params["b1"])
	h = tensor.LinearRelu(h, m.params["w2"], m.params["b2"])
	h = tensor.Linear(h, m.params["w3"], m.params["b3"])
	return h.LogSoftmax(-1).Narrow(-1, 0, 1).MeanAll().Neg() // every row labelled class 0
}

func TestGradReadyOrderLastLayerFirst(t *testing.T) {
	m := newMLP(1)
	x := tensor.NewRNG(2).Uniform(tensor.Float64, -1, 1, 6, 5)
	log, _ := logReady(m.params)
	loss := m.loss(x)

	want := []string{"w3", "b3", "w2", "b2", "w1", "b1"}
	var reach []string
	for _, p := range loss.ReachableLeaves() {
		for name, q := range m.params {
			if p == q {
				reach = append(reach, name)
			}
		}
	}
	if !slices.Equal(reach, want) {
		t.Fatalf("ReachableLeaves order %v, want %v", reach, want)
	}

	loss.Backward()
	if !slices.Equal(log.order, want) {
		t.Fatalf("hooks fired in order %v, want %v", log.order, want)
	}
	for _, name := range m.names {
		if log.count[name] != 1 {
			t.Errorf("%s: fired %d times, want 1", name, log.count[name])
		}
		if !sameValues(log.seen[name], m.params[name].Grad(), 0) {
			t.Errorf("%s: hook saw %v, final grad %v", name, log.seen[name], m.params[name].Grad())
		}
	}
}

// TestGradReadyAfterEveryUse ties a parameter (uses it twice) and checks
// that its hook fires once, after both contributions: the gradient the
// hook sees is the sum of the gradients of two untied copies.
func TestGradReadyAfterEveryUse(t *testing.T) {
	x := tensor.NewRNG(3).Uniform(tensor.Float64, -1, 1, 4, 3)
	for _, c := range []struct {
		name string
		f    func(a, b *tensor.Tensor) *tensor.Tensor // loss of two uses of a 3×3 parameter
	}{
		{"two Linear layers", func(a, b *tensor.Tensor) *tensor.Tensor {
			return tensor.Linear(tensor.Linear(x, a, nil).Tanh(), b, nil).Square().SumAll()
		}},
		{"two LinearRelu layers and a broadcast third use", func(a, b *tensor.Tensor) *tensor.Tensor {
			return tensor.LinearRelu(tensor.LinearRelu(x, a, nil), b, nil).Add(a.Narrow(0, 0, 1)).SumAll()
		}},
		{"input projection and transposed output projection", func(a, b *tensor.Tensor) *tensor.Tensor {
			return x.MatMul(a).Tanh().MatMul(b.T()).Exp().MeanAll()
		}},
		{"both operands of one op", func(a, b *tensor.Tensor) *tensor.Tensor {
			return a.Mul(b).Sin().SumAll()
		}},
		{"uses far apart in the graph", func(a, b *tensor.Tensor) *tensor.Tensor {
			h := x.MatMul(a)
			for range 20 {
				h = h.Tanh().MulScalar(1.1)
			}
			return h.MatMul(b).Add(x.MatMul(a)).SumAll()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w0 := tensor.NewRNG(4).Normal(tensor.Float64, 0, 0.5, 3, 3)
			a, b := w0.Clone().SetRequiresGrad(true), w0.Clone().SetRequiresGrad(true)
			c.f(a, b).Backward()
			want := a.Grad().Add(b.Grad())

			w := w0.Clone().SetRequiresGrad(true)
			log, _ := logReady(map[string]*tensor.Tensor{"w": w})
			loss := c.f(w, w)
			if r := loss.ReachableLeaves(); len(r) != 1 || r[0] != w {
				t.Fatalf("ReachableLeaves %v, want [w]", r)
			}
			loss.Backward()
			if log.count["w"] != 1 {
				t.Fatalf("fired %d times, want 1", log.count["w"])
			}
			if !sameValues(log.seen["w"], w.Grad(), 0) {
				t.Fatalf("hook saw %v, final grad %v", log.seen["w"], w.Grad())
			}
			if !sameValues(log.seen["w"], want, 1e-12) {
				t.Fatalf("hook saw %v, want the sum of both uses %v", log.seen["w"], want)
			}
		})
	}
}

func TestGradReadyAccumulation(t *testing.T) {
	m := newMLP(5)
	x := tensor.NewRNG(6).Uniform(tensor.Float64, -1, 1, 6, 5)
	log, _ := logReady(m.params)

	m.loss(x).Backward()
	first := map[string]*tensor.Tensor{}
	for name, g := range log.seen {
		first[name] = g
	}
	m.loss(x).Backward() // same batch: every gradient doubles
	for _, name := range m.names {
		if log.count[name] != 2 {
			t.Errorf("%s: fired %d times over two backwards, want 2", name, log.count[name])
		}
		if !sameValues(log.seen[name], first[name].MulScalar(2), 1e-12) {
			t.Errorf("%s: second hook saw %v, want twice %v", name, log.seen[name], first[name])
		}
		if !sameValues(log.seen[name], m.params[name].Grad(), 0) {
			t.Errorf("%s: hook saw %v, final grad %v", name, log.seen[name], m.params[name].Grad())
		}
	}
	if len(log.order) != 12 || !slices.Equal(log.order[:6], log.order[6:]) {
		t.Fatalf("order over two backwards %v", log.order)
	}
}

func TestGradReadyRetainGraph(t *testing.T) {
	m := newMLP(7)
	x := tensor.NewRNG(8).Uniform(tensor.Float64, -1, 1, 6, 5)
	log, _ := logReady(m.params)
	loss := m.loss(x)
	loss.Backward(tensor.RetainGraph)
	first := log.seen["w1"]
	loss.Backward()
	for _, name := range m.names {
		if log.count[name] != 2 {
			t.Errorf("%s: fired %d times over two backwards of one graph, want 2", name, log.count[name])
		}
	}
	if !sameValues(log.seen["w1"], first.MulScalar(2), 1e-12) {
		t.Fatalf("second pass saw %v, want twice %v", log.seen["w1"], first)
	}
	mustPanic(t, "freed", func() { loss.ReachableLeaves() })

	// A graph that shares a freed part cannot be listed either.
	h := m.params["w1"].Exp()
	h.SumAll().Backward()
	mustPanic(t, "freed", func() { h.MulScalar(2).SumAll().ReachableLeaves() })
}

func TestGradReadyRemove(t *testing.T) {
	w := tensor.FromFloat64([]float64{1, 2}, 2).SetRequiresGrad(true)
	var fired []string
	hook := func(name string) func(*tensor.Tensor) {
		return func(*tensor.Tensor) { fired = append(fired, name) }
	}
	removeA := w.RegisterGradReadyHook(hook("a"))
	removeB := w.RegisterGradReadyHook(hook("b"))
	step := func() []string {
		fired = nil
		w.Square().SumAll().Backward()
		return fired
	}
	if got := step(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("fired %v, want [a b] (registration order)", got)
	}
	removeA()
	removeA() // a second call does nothing
	if got := step(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after removing a: fired %v", got)
	}
	removeB()
	if got := step(); len(got) != 0 {
		t.Fatalf("after removing all: fired %v", got)
	}
	if fmt.Sprint(w.Grad().Values()) != "[6 12]" {
		t.Fatalf("grad %v after three backwards", w.Grad())
	}

	// A hook may remove itself or a later hook of the same leaf; the
	// removed ones do not run again, not even in the same firing.
	var removeSelf, removeD func()
	removeSelf = w.RegisterGradReadyHook(func(*tensor.Tensor) { fired = append(fired, "self"); removeSelf() })
	w.RegisterGradReadyHook(func(*tensor.Tensor) { fired = append(fired, "c"); removeD() })
	removeD = w.RegisterGradReadyHook(hook("d"))
	if got := step(); !slices.Equal(got, []string{"self", "c"}) {
		t.Fatalf("fired %v, want [self c]", got)
	}
	if got := step(); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("fired %v, want [c]", got)
	}
}

func TestGradReadyRegisteredDuringBackward(t *testing.T) {
	// A hook registered while Backward runs takes effect from the next
	// call; the leaf's uses were counted before it existed.
	a := tensor.FromFloat64([]float64{1}, 1).SetRequiresGrad(true)
	b := tensor.FromFloat64([]float64{2}, 1).SetRequiresGrad(true)
	var fired []string
	registered := false
	a.RegisterGradReadyHook(func(*tensor.Tensor) {
		fired = append(fired, "a")
		if !registered {
			registered = true
			b.RegisterGradReadyHook(func(*tensor.Tensor) { fired = append(fired, "b") })
		}
	})
	loss := func() *tensor.Tensor { return a.Exp().Mul(b).Mul(b).SumAll() } // b is ready before a
	loss().Backward()
	if !slices.Equal(fired, []string{"a"}) {
		t.Fatalf("first backward fired %v, want [a]", fired)
	}
	fired = nil
	loss().Backward()
	if !slices.Equal(fired, []string{"b", "a"}) {
		t.Fatalf("second backward fired %v, want [b a]", fired)
	}
}

func TestGradReadyUnreachedAndFrozen(t *testing.T) {
	m := newMLP(9)
	x := tensor.NewRNG(10).Uniform(tensor.Float64, -1, 1, 6, 5)
	unused := tensor.Zeros(tensor.Float64, 3).SetRequiresGrad(true)
	detachedUse := tensor.Ones(tensor.Float64, 2).SetRequiresGrad(true)
	leaves := map[string]*tensor.Tensor{"unused": unused, "detachedUse": detachedUse}
	for name, p := range m.params {
		leaves[name] = p
	}
	log, _ := logReady(leaves)

	// Freeze the first layer after registering its hooks: a frozen
	// parameter gets no gradient and its hooks do not fire.
	m.params["w1"].SetRequiresGrad(false)
	m.params["b1"].SetRequiresGrad(false)
	loss := m.loss(x).Add(detachedUse.Detach().SumAll()) // a detached view of a parameter is data
	reached := loss.ReachableLeaves()
	loss.Backward()
	want := []string{"w3", "b3", "w2", "b2"}
	if !slices.Equal(log.order, want) {
		t.Fatalf("fired %v, want %v", log.order, want)
	}
	if len(reached) != len(want) {
		t.Fatalf("ReachableLeaves has %d leaves, want %d", len(reached), len(want))
	}
	for _, name := range []string{"w1", "b1", "unused", "detachedUse"} {
		if slices.Contains(reached, leaves[name]) {
			t.Errorf("ReachableLeaves contains %s", name)
		}
		if leaves[name].Grad() != nil {
			t.Errorf("%s has a gradient", name)
		}
	}

	// Unfrozen again, the first layer's hooks fire again.
	m.params["w1"].SetRequiresGrad(true)
	m.params["b1"].SetRequiresGrad(true)
	log.order = nil
	m.loss(x).Backward()
	if !slices.Equal(log.order, []string{"w3", "b3", "w2", "b2", "w1", "b1"}) {
		t.Fatalf("after unfreezing fired %v", log.order)
	}
}

func TestGradReadyLeafRoot(t *testing.T) {
	w := tensor.FromFloat64([]float64{1, 2}, 2).SetRequiresGrad(true)
	n := 0
	w.RegisterGradReadyHook(func(w *tensor.Tensor) {
		n++
		if fmt.Sprint(w.Grad().Values()) != "[3 4]" {
			t.Errorf("hook saw %v", w.Grad())
		}
	})
	if r := w.ReachableLeaves(); len(r) != 1 || r[0] != w {
		t.Fatalf("ReachableLeaves of a leaf %v", r)
	}
	w.BackwardWith(tensor.FromFloat64([]float64{3, 4}, 2))
	if n != 1 {
		t.Fatalf("fired %d times, want 1", n)
	}
	if r := tensor.Ones(tensor.Float64, 2).ReachableLeaves(); r != nil {
		t.Fatalf("ReachableLeaves of data %v", r)
	}
}

func TestGradReadyMisuse(t *testing.T) {
	w := tensor.Ones(tensor.Float32, 2).SetRequiresGrad(true)
	mustPanic(t, "non-leaf tensor (output of Exp)", func() { w.Exp().RegisterGradReadyHook(func(*tensor.Tensor) {}) })
	mustPanic(t, "does not require grad", func() { tensor.Ones(tensor.Float32, 2).RegisterGradReadyHook(func(*tensor.Tensor) {}) })
	mustPanic(t, "does not require grad", func() { w.NoGrad().RegisterGradReadyHook(func(*tensor.Tensor) {}) })
	mustPanic(t, "nil function", func() { w.RegisterGradReadyHook(nil) })
}

// TestGradReadyConcurrentInference runs inference forward passes of a
// model with hooks from several goroutines while training steps run; under
// -race it checks that hooks add no data race on shared parameters.
func TestGradReadyConcurrentInference(t *testing.T) {
	m := newMLP(11)
	x := tensor.NewRNG(12).Uniform(tensor.Float64, -1, 1, 6, 5)
	var mu sync.Mutex
	fired := 0
	for _, p := range m.params {
		p.RegisterGradReadyHook(func(*tensor.Tensor) { mu.Lock(); fired++; mu.Unlock() })
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if m.loss(x.NoGrad()).RequiresGrad() {
					t.Error("an inference forward pass recorded a graph")
					return
				}
			}
		}()
	}
	for range 20 {
		m.loss(x).Backward()
	}
	wg.Wait()
	if fired != 20*len(m.params) {
		t.Fatalf("fired %d times, want %d", fired, 20*len(m.params))
	}
}

// TestGradReadyNoAllocation checks that hooks cost a training step no
// allocation of the engine's own: a step with no-op hooks on every
// parameter allocates as much as one without.
func TestGradReadyNoAllocation(t *testing.T) {
	m := newMLP(13)
	x := tensor.NewRNG(14).Uniform(tensor.Float64, -1, 1, 6, 5)
	step := func() {
		m.loss(x).Backward()
		for _, p := range m.params {
			p.ZeroGrad()
		}
	}
	plain := testing.AllocsPerRun(50, step)
	noop := func(*tensor.Tensor) {}
	for _, p := range m.params {
		p.RegisterGradReadyHook(noop)
	}
	hooked := testing.AllocsPerRun(50, step)
	if hooked > plain {
		t.Fatalf("a step with hooks allocates %v times, without %v", hooked, plain)
	}
}

// TestGradReadyOverlap does what data-parallel training does: each hook
// hands its gradient to another goroutine, which scales it in place (as
// an all-reduce averages it) while Backward goes on with earlier layers.
// Under -race it checks that Backward no longer touches a gradient once
// its hook has run.
func TestGradReadyOverlap(t *testing.T) {
	x := tensor.NewRNG(15).Uniform(tensor.Float64, -1, 1, 6, 5)
	ref := newMLP(16)
	ref.loss(x).Backward()

	m := newMLP(16)
	var wg sync.WaitGroup
	for _, p := range m.params {
		p.RegisterGradReadyHook(func(p *tensor.Tensor) {
			g := p.Grad()
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.MulScalarInPlace(0.5)
			}()
		})
	}
	m.loss(x).Backward()
	wg.Wait()
	for _, name := range m.names {
		if want := ref.params[name].Grad().MulScalar(0.5); !sameValues(m.params[name].Grad(), want, 1e-15) {
			t.Errorf("%s: grad %v, want %v", name, m.params[name].Grad(), want)
		}
	}
}

// BenchmarkMLPStepGradReady is BenchmarkMLPStep with a no-op grad-ready
// hook on every parameter: what counting uses and firing hooks costs.
func BenchmarkMLPStepGradReady(b *testing.B) { benchMLPStep(b, true) }

// BenchmarkBackwardSmallGraph runs Backward through a graph of small
// tensors (16 parameters, each used twice, about 100 nodes), where the
// engine's own bookkeeping rather than arithmetic dominates, without and
// with a no-op grad-ready hook on every parameter.
func BenchmarkBackwardSmallGraph(b *testing.B) {
	for _, hooks := range []bool{false, true} {
		name := "no hooks"
		if hooks {
			name = "hooks"
		}
		b.Run(name, func(b *testing.B) {
			rng := tensor.NewRNG(17)
			params := make([]*tensor.Tensor, 16)
			for i := range params {
				params[i] = rng.Normal(tensor.Float32, 0, 1, 8).SetRequiresGrad(true)
				if hooks {
					params[i].RegisterGradReadyHook(func(*tensor.Tensor) {})
				}
			}
			x := rng.Normal(tensor.Float32, 0, 1, 8)
			b.ReportAllocs()
			for b.Loop() {
				h := x
				for _, p := range params {
					h = h.Mul(p).Tanh().Add(p)
				}
				h.SumAll().Backward()
				for _, p := range params {
					p.ZeroGrad()
				}
			}
		})
	}
}
