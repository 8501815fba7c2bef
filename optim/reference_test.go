package optim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

// The update rules written out once more, plainly, in float64, straight
// from PyTorch 1.13's documentation, to check the fused (and, on large
// parameters, parallel and vectorized) float32 steps element by element.

func refAdam(p, g, m, v []float64, lr, b1, b2, eps, wd float64, decoupled bool, step int) {
	t := float64(step)
	for i := range p {
		gi := g[i]
		if decoupled {
			p[i] *= 1 - lr*wd
		} else {
			gi += wd * p[i]
		}
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		mhat := m[i] / (1 - math.Pow(b1, t))
		vhat := v[i] / (1 - math.Pow(b2, t))
		p[i] -= lr * mhat / (math.Sqrt(vhat) + eps)
	}
}

func refSGD(p, g, b []float64, lr, mu, damp, wd float64, nesterov bool, step int) {
	for i := range p {
		d := g[i] + wd*p[i]
		if mu != 0 {
			if step == 1 {
				b[i] = d
			} else {
				b[i] = mu*b[i] + (1-damp)*d
			}
			if nesterov {
				d += mu * b[i]
			} else {
				d = b[i]
			}
		}
		p[i] -= lr * d
	}
}

// TestLargeParamsMatchReference steps float32 parameters big enough to be
// split over cores (sizes not multiples of the vector width) and compares
// with the float64 formulas above.
func TestLargeParamsMatchReference(t *testing.T) {
	sizes := []int{70001, 3, 65536 + 17}
	for _, c := range []struct {
		name string
		make func([]*tensor.Tensor) (Optimizer, error)
		ref  func(p, g, s1, s2 []float64, step int)
	}{
		{"Adam", func(ps []*tensor.Tensor) (Optimizer, error) { return NewAdam(ps, AdamOptions{LR: 0.01}) },
			func(p, g, m, v []float64, step int) { refAdam(p, g, m, v, 0.01, 0.9, 0.999, 1e-8, 0, false, step) }},
		{"AdamL2", func(ps []*tensor.Tensor) (Optimizer, error) {
			return NewAdam(ps, AdamOptions{LR: 0.01, Beta1: 0.8, Beta2: 0.99, WeightDecay: 0.1})
		}, func(p, g, m, v []float64, step int) { refAdam(p, g, m, v, 0.01, 0.8, 0.99, 1e-8, 0.1, false, step) }},
		{"AdamW", func(ps []*tensor.Tensor) (Optimizer, error) { return NewAdamW(ps, DefaultAdamW()) },
			func(p, g, m, v []float64, step int) { refAdam(p, g, m, v, 1e-3, 0.9, 0.999, 1e-8, 0.01, true, step) }},
		{"SGD", func(ps []*tensor.Tensor) (Optimizer, error) { return NewSGD(ps, SGDOptions{LR: 0.1}) },
			func(p, g, b, _ []float64, step int) { refSGD(p, g, b, 0.1, 0, 0, 0, false, step) }},
		{"SGDMomentum", func(ps []*tensor.Tensor) (Optimizer, error) {
			return NewSGD(ps, SGDOptions{LR: 0.1, Momentum: 0.9, Dampening: 0.1})
		}, func(p, g, b, _ []float64, step int) { refSGD(p, g, b, 0.1, 0.9, 0.1, 0, false, step) }},
		{"SGDNesterov", func(ps []*tensor.Tensor) (Optimizer, error) {
			return NewSGD(ps, SGDOptions{LR: 0.1, Momentum: 0.9, Nesterov: true, WeightDecay: 1e-3})
		}, func(p, g, b, _ []float64, step int) { refSGD(p, g, b, 0.1, 0.9, 0, 1e-3, true, step) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 12))
			var ps []*tensor.Tensor
			var ref [][4][]float64 // p, g, state1, state2 per parameter
			for _, n := range sizes {
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				ps = append(ps, tensor.FromFloat32(v, n).SetRequiresGrad(true))
				ref = append(ref, [4][]float64{widen(v), make([]float64, n), make([]float64, n), make([]float64, n)})
			}
			o, err := c.make(ps)
			if err != nil {
				t.Fatal(err)
			}
			for step := 1; step <= 5; step++ {
				for k, p := range ps {
					g := make([]float32, p.Numel())
					for i := range g {
						g[i] = float32(r.NormFloat64() * 0.1)
					}
					p.SetGrad(tensor.FromFloat32(g, len(g)))
					copy(ref[k][1], widen(g))
					c.ref(ref[k][0], ref[k][1], ref[k][2], ref[k][3], step)
				}
				if err := o.Step(); err != nil {
					t.Fatal(err)
				}
				for k, p := range ps {
					got := p.Float32s()
					for i, w := range ref[k][0] {
						if math.Abs(float64(got[i])-w) > 1e-5*math.Max(1, math.Abs(w)) {
							t.Fatalf("step %d param %d element %d: %v, reference %v", step, k, i, got[i], w)
						}
					}
				}
			}
		})
	}
}

// TestOptimizersConverge trains a small linear regression through
// autograd with every optimizer and checks that the loss falls to the
// noise floor.
func TestOptimizersConverge(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n, d = 128, 5
	xs, ys := make([]float32, n*d), make([]float32, n)
	wTrue := []float32{1, -2, 0.5, 3, -1}
	for i := range n {
		s := float32(0.7)
		for j := range d {
			xs[i*d+j] = float32(r.NormFloat64())
			s += wTrue[j] * xs[i*d+j]
		}
		ys[i] = s + float32(0.01*r.NormFloat64())
	}
	x, y := tensor.FromFloat32(xs, n, d), tensor.FromFloat32(ys, n, 1)
	for _, c := range []struct {
		name  string
		steps int
		make  func([]*tensor.Tensor) (Optimizer, error)
	}{
		{"SGD", 300, func(ps []*tensor.Tensor) (Optimizer, error) { return NewSGD(ps, SGDOptions{LR: 0.1}) }},
		{"SGDNesterov", 200, func(ps []*tensor.Tensor) (Optimizer, error) {
			return NewSGD(ps, SGDOptions{LR: 0.05, Momentum: 0.9, Nesterov: true})
		}},
		{"Adam", 500, func(ps []*tensor.Tensor) (Optimizer, error) { return NewAdam(ps, AdamOptions{LR: 0.05}) }},
		{"AdamW", 500, func(ps []*tensor.Tensor) (Optimizer, error) {
			return NewAdamW(ps, AdamOptions{LR: 0.05, WeightDecay: 1e-4})
		}},
		{"RMSprop", 500, func(ps []*tensor.Tensor) (Optimizer, error) {
			return NewRMSprop(ps, RMSpropOptions{LR: 0.01, Centered: true, Momentum: 0.5})
		}},
		{"Adagrad", 500, func(ps []*tensor.Tensor) (Optimizer, error) { return NewAdagrad(ps, AdagradOptions{LR: 0.5}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := tensor.Zeros(tensor.Float32, d, 1).SetRequiresGrad(true)
			b := tensor.Zeros(tensor.Float32, 1).SetRequiresGrad(true)
			o, err := c.make([]*tensor.Tensor{w, b})
			if err != nil {
				t.Fatal(err)
			}
			var loss float64
			for range c.steps {
				o.ZeroGrad()
				l := x.MatMul(w).Add(b).Sub(y).Square().MeanAll()
				l.Backward()
				loss = l.Item()
				if err := o.Step(); err != nil {
					t.Fatal(err)
				}
			}
			if loss > 1e-3 {
				t.Errorf("loss %v after %d steps", loss, c.steps)
			}
			for j, wt := range wTrue {
				if got := w.Values()[j]; math.Abs(got-float64(wt)) > 0.05 {
					t.Errorf("w[%d] = %v, want %v", j, got, wt)
				}
			}
		})
	}
}

func TestConstructorErrors(t *testing.T) {
	p := tensor.Zeros(tensor.Float32, 3).SetRequiresGrad(true)
	ints := tensor.FromInt64([]int64{1, 2}, 2)
	for name, err := range map[string]error{
		"SGD no LR":        func() error { _, err := NewSGD([]*tensor.Tensor{p}, SGDOptions{}); return err }(),
		"SGD empty":        func() error { _, err := NewSGD(nil, SGDOptions{LR: 1}); return err }(),
		"SGD nesterov":     func() error { _, err := NewSGD([]*tensor.Tensor{p}, SGDOptions{LR: 1, Nesterov: true}); return err }(),
		"SGD duplicate":    func() error { _, err := NewSGD([]*tensor.Tensor{p, p}, SGDOptions{LR: 1}); return err }(),
		"SGD int param":    func() error { _, err := NewSGD([]*tensor.Tensor{ints}, SGDOptions{LR: 1}); return err }(),
		"SGD nil param":    func() error { _, err := NewSGD([]*tensor.Tensor{nil}, SGDOptions{LR: 1}); return err }(),
		"Adam beta 1":      func() error { _, err := NewAdam([]*tensor.Tensor{p}, AdamOptions{Beta1: 1, Beta2: 0.9}); return err }(),
		"Adam negative wd": func() error { _, err := NewAdam([]*tensor.Tensor{p}, AdamOptions{WeightDecay: -1}); return err }(),
		"RMSprop alpha":    func() error { _, err := NewRMSprop([]*tensor.Tensor{p}, RMSpropOptions{Alpha: 2}); return err }(),
		"Adagrad lr decay": func() error { _, err := NewAdagrad([]*tensor.Tensor{p}, AdagradOptions{LRDecay: -1}); return err }(),
		"LBFGS history":    func() error { _, err := NewLBFGS([]*tensor.Tensor{p}, LBFGSOptions{HistorySize: -1}); return err }(),
		"group negative LR": func() error {
			_, err := NewSGDGroups([]ParamGroup{{Params: []*tensor.Tensor{p}, LR: -1}}, SGDOptions{LR: 1})
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A gradient that does not match its parameter is refused before any
	// state changes.
	o, _ := NewAdam([]*tensor.Tensor{p}, AdamOptions{})
	p.SetGrad(tensor.Zeros(tensor.Float32, 3))
	q := tensor.Zeros(tensor.Float32, 4).SetRequiresGrad(true)
	q.SetGrad(tensor.Zeros(tensor.Float64, 4))
	o2, _ := NewAdam([]*tensor.Tensor{p, q}, AdamOptions{})
	if err := o2.Step(); err == nil {
		t.Error("float64 gradient of a float32 parameter accepted")
	}
	if st := o2.State(); len(st.Tensors) != 0 {
		t.Error("a refused step created state")
	}
	if err := o.Step(); err != nil {
		t.Error(err)
	}
}

// TestParamGroups checks per-group LR and weight decay resolution.
func TestParamGroups(t *testing.T) {
	a := tensor.Zeros(tensor.Float32, 2).SetRequiresGrad(true)
	b := tensor.Zeros(tensor.Float32, 2).SetRequiresGrad(true)
	c := tensor.Zeros(tensor.Float32, 2).SetRequiresGrad(true)
	o, err := NewAdamWGroups([]ParamGroup{
		{Params: []*tensor.Tensor{a}},
		{Params: []*tensor.Tensor{b}, LR: 0.5, NoWeightDecay: true},
		{Params: []*tensor.Tensor{c}, WeightDecay: 0.2},
	}, DefaultAdamW())
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][2]float64{{1e-3, 0.01}, {0.5, 0}, {1e-3, 0.2}} {
		if o.LR(i) != want[0] || o.WeightDecay(i) != want[1] {
			t.Errorf("group %d: lr %v wd %v, want %v", i, o.LR(i), o.WeightDecay(i), want)
		}
	}
	if len(o.Params()) != 3 || o.NumGroups() != 3 {
		t.Errorf("%d params in %d groups", len(o.Params()), o.NumGroups())
	}
}
