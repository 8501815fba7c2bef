package optim

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// AdamOptions are the hyperparameters of Adam and AdamW (the arguments of
// torch.optim.Adam and torch.optim.AdamW). Zero LR, zero Betas (both) and
// zero Eps take PyTorch's defaults: 1e-3, (0.9, 0.999), 1e-8.
type AdamOptions struct {
	LR           float64
	Beta1, Beta2 float64 // decay rates of the first and second moment estimates
	Eps          float64 // added to the denominator for numerical stability
	// WeightDecay is the L2 penalty added to the gradient for Adam, and the
	// decoupled decay rate for AdamW (PyTorch's AdamW default is 0.01; see
	// DefaultAdamW).
	WeightDecay float64
	AMSGrad     bool // use the maximum of past second moments (Reddi et al., 2018)
	Maximize    bool
}

// DefaultAdamW returns PyTorch's AdamW defaults: lr 1e-3, betas (0.9,
// 0.999), eps 1e-8, weight decay 0.01.
func DefaultAdamW() AdamOptions {
	return AdamOptions{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
}

func (o AdamOptions) withDefaults() AdamOptions {
	if o.LR == 0 {
		o.LR = 1e-3
	}
	if o.Beta1 == 0 && o.Beta2 == 0 {
		o.Beta1, o.Beta2 = 0.9, 0.999
	}
	if o.Eps == 0 {
		o.Eps = 1e-8
	}
	return o
}

func (o AdamOptions) validate(name string) error {
	switch {
	case !(o.LR > 0):
		return fmt.Errorf("optim: %s: invalid learning rate %g", name, o.LR)
	case !(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1):
		return fmt.Errorf("optim: %s: betas must be in [0, 1), got (%g, %g)", name, o.Beta1, o.Beta2)
	case !(o.Eps >= 0):
		return fmt.Errorf("optim: %s: invalid epsilon %g", name, o.Eps)
	case !(o.WeightDecay >= 0):
		return fmt.Errorf("optim: %s: invalid weight decay %g", name, o.WeightDecay)
	}
	return nil
}

// Adam is the Adam optimizer (Kingma & Ba, "Adam: A Method for Stochastic
// Optimization", ICLR 2015, Algorithm 1), optionally with AMSGrad (Reddi,
// Kale & Kumar, "On the Convergence of Adam and Beyond", ICLR 2018), with
// PyTorch 1.13's update rule: for step t of a parameter p with gradient ∇,
//
//	g ← ∇ + λ·p                      (Adam; AdamW instead sets p ← (1−lr·λ)·p)
//	m ← β1·m + (1−β1)·g
//	v ← β2·v + (1−β2)·g²             (v̂ ← max(v̂, v) with AMSGrad; v̂ replaces v below)
//	p ← p − lr/(1−β1^t) · m / (√v/√(1−β2^t) + ε)
//
// NewAdamW returns the AdamW variant (Loshchilov & Hutter, "Decoupled
// Weight Decay Regularization", ICLR 2019).
type Adam struct {
	base
	opt       AdamOptions
	decoupled bool
	steps     []int64 // per-parameter step count
	m, v      []*tensor.Tensor
	vmax      []*tensor.Tensor // AMSGrad only
	items     []adamItem       // this step's work, reused
	fan       *fanout
}

// adamItem is one parameter's update in a step.
type adamItem struct {
	f32                bool
	p32, g32, m32, v32 []float32
	x32                []float32 // AMSGrad maximum
	p64, g64, m64, v64 []float64
	x64                []float64
	a                  kernel.AdamArgs
	c                  [9]float32
}

func (it *adamItem) size() int { return len(it.p32) + len(it.p64) }

func (it *adamItem) update(lo, hi int) {
	if it.f32 {
		kernel.AdamF32(it.p32[lo:hi], it.g32[lo:hi], it.m32[lo:hi], it.v32[lo:hi], sub(it.x32, lo, hi), it.a, &it.c)
		return
	}
	kernel.AdamUpdate(it.p64[lo:hi], it.g64[lo:hi], it.m64[lo:hi], it.v64[lo:hi], sub(it.x64, lo, hi), it.a)
}

// NewAdam returns Adam over params, one group.
func NewAdam(params []*tensor.Tensor, opt AdamOptions) (*Adam, error) {
	return newAdam("Adam", oneGroup(params), opt, false)
}

// NewAdamGroups returns Adam over parameter groups.
func NewAdamGroups(groups []ParamGroup, opt AdamOptions) (*Adam, error) {
	return newAdam("Adam", groups, opt, false)
}

// NewAdamW returns AdamW (decoupled weight decay) over params, one group.
func NewAdamW(params []*tensor.Tensor, opt AdamOptions) (*Adam, error) {
	return newAdam("AdamW", oneGroup(params), opt, true)
}

// NewAdamWGroups returns AdamW over parameter groups.
func NewAdamWGroups(groups []ParamGroup, opt AdamOptions) (*Adam, error) {
	return newAdam("AdamW", groups, opt, true)
}

func newAdam(name string, groups []ParamGroup, opt AdamOptions, decoupled bool) (*Adam, error) {
	opt = opt.withDefaults()
	if err := opt.validate(name); err != nil {
		return nil, err
	}
	b, err := newBase(name, groups, opt.LR, opt.WeightDecay)
	if err != nil {
		return nil, err
	}
	n := len(b.params)
	o := &Adam{base: b, opt: opt, decoupled: decoupled, steps: make([]int64, n),
		m: make([]*tensor.Tensor, n), v: make([]*tensor.Tensor, n), vmax: make([]*tensor.Tensor, n)}
	o.fan = newFanout(func(lo, hi int) { runSpans(o.items, lo, hi) })
	return o, nil
}

// Step updates every parameter that has a gradient.
func (o *Adam) Step() error {
	if err := o.checkGrads(); err != nil {
		return err
	}
	o.items = o.items[:0]
	for _, g := range o.groups {
		for _, i := range g.idx {
			p := o.params[i]
			grad := p.Grad()
			if grad == nil {
				continue
			}
			if o.m[i] == nil {
				o.m[i], o.v[i] = newBuffer(p), newBuffer(p)
			}
			if o.opt.AMSGrad && o.vmax[i] == nil {
				o.vmax[i] = newBuffer(p)
			}
			o.steps[i]++
			t := float64(o.steps[i])
			a := kernel.AdamArgs{
				Beta1: o.opt.Beta1, Beta2: o.opt.Beta2, Eps: o.opt.Eps,
				WeightDecay: g.weightDecay, Decay: 1,
				StepSize: g.lr / (1 - math.Pow(o.opt.Beta1, t)),
				BC2Sqrt:  math.Sqrt(1 - math.Pow(o.opt.Beta2, t)),
				AMSGrad:  o.opt.AMSGrad, Maximize: o.opt.Maximize,
			}
			if o.decoupled {
				a.WeightDecay, a.Decay = 0, 1-g.lr*g.weightDecay
			}
			it := adamItem{a: a, c: a.Consts()}
			if p.DType() == tensor.Float32 {
				it.f32, it.p32, it.g32 = true, p.Float32s(), grad.Float32s()
				it.m32, it.v32, it.x32 = o.m[i].Float32s(), o.v[i].Float32s(), f32s(o.vmax[i])
			} else {
				it.p64, it.g64 = p.Float64s(), grad.Float64s()
				it.m64, it.v64, it.x64 = o.m[i].Float64s(), o.v[i].Float64s(), f64s(o.vmax[i])
			}
			o.items = append(o.items, it)
		}
	}
	o.fan.run(totalSize(o.items))
	return nil
}

// State returns a snapshot of the moment estimates, step counts and
// hyperparameters.
func (o *Adam) State() *StateDict {
	s := newStateDict(o.name)
	o.saveGroups(s, map[string]float64{
		"beta1": o.opt.Beta1, "beta2": o.opt.Beta2, "eps": o.opt.Eps,
		"amsgrad": bool01(o.opt.AMSGrad), "maximize": bool01(o.opt.Maximize),
	})
	for i := range o.params {
		if o.m[i] == nil {
			continue
		}
		s.Scalars[paramKey(i, "step")] = float64(o.steps[i])
		s.putTensor(paramKey(i, "exp_avg"), o.m[i])
		s.putTensor(paramKey(i, "exp_avg_sq"), o.v[i])
		s.putTensor(paramKey(i, "max_exp_avg_sq"), o.vmax[i])
	}
	return s
}

// LoadState restores a state saved by State.
func (o *Adam) LoadState(s *StateDict) error {
	h, err := o.loadGroups(s)
	if err != nil {
		return err
	}
	for i := range o.params {
		m, v := o.paramBuffer(s, i, "exp_avg"), o.paramBuffer(s, i, "exp_avg_sq")
		if (m == nil) != (v == nil) {
			return fmt.Errorf("optim: %s: LoadState: parameter %d has only one of exp_avg and exp_avg_sq", o.name, i)
		}
		step := s.Scalars[paramKey(i, "step")]
		if m != nil && !(step >= 1 && step == math.Trunc(step)) {
			return fmt.Errorf("optim: %s: LoadState: parameter %d has invalid step %g", o.name, i, step)
		}
	}
	o.opt.Beta1 = hyperValue(h, "beta1", o.opt.Beta1)
	o.opt.Beta2 = hyperValue(h, "beta2", o.opt.Beta2)
	o.opt.Eps = hyperValue(h, "eps", o.opt.Eps)
	o.opt.AMSGrad = hyperValue(h, "amsgrad", bool01(o.opt.AMSGrad)) != 0
	o.opt.Maximize = hyperValue(h, "maximize", bool01(o.opt.Maximize)) != 0
	for i := range o.params {
		o.m[i], o.v[i] = o.paramBuffer(s, i, "exp_avg"), o.paramBuffer(s, i, "exp_avg_sq")
		o.vmax[i] = o.paramBuffer(s, i, "max_exp_avg_sq")
		o.steps[i] = 0
		if o.m[i] != nil {
			o.steps[i] = int64(s.Scalars[paramKey(i, "step")])
		}
		if o.opt.AMSGrad && o.m[i] != nil && o.vmax[i] == nil {
			// A state saved without AMSGrad: start the maximum at zero.
			o.vmax[i] = newBuffer(o.params[i])
		}
	}
	return nil
}
