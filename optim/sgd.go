package optim

import (
	"fmt"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// SGDOptions are the hyperparameters of SGD (torch.optim.SGD's arguments).
type SGDOptions struct {
	LR          float64 // learning rate (required, > 0)
	Momentum    float64 // momentum factor μ (0: plain SGD)
	Dampening   float64 // dampening τ for momentum
	WeightDecay float64 // L2 penalty λ added to the gradient
	Nesterov    bool    // Nesterov momentum (needs Momentum > 0 and Dampening 0)
	Maximize    bool    // maximize the objective instead of minimizing it
}

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and weight decay, with the update rule of PyTorch 1.13
// (Sutskever et al., "On the importance of initialization and momentum in
// deep learning", ICML 2013, in PyTorch's formulation):
//
//	g ← ∇ + λ·p
//	b ← μ·b + (1−τ)·g        (b ← g on the first step)
//	g ← g + μ·b if Nesterov, else g ← b
//	p ← p − lr·g
type SGD struct {
	base
	opt   SGDOptions
	buf   []*tensor.Tensor // momentum buffers by parameter index (nil until used)
	items []sgdItem        // this step's work, reused
	fan   *fanout
}

// sgdItem is one parameter's update in a step.
type sgdItem struct {
	f32           bool
	p32, g32, b32 []float32
	p64, g64, b64 []float64
	a             kernel.SGDArgs
	c             [3]float32
}

func (it *sgdItem) size() int { return len(it.p32) + len(it.p64) }

func (it *sgdItem) update(lo, hi int) {
	if it.f32 {
		kernel.SGDF32(it.p32[lo:hi], it.g32[lo:hi], sub(it.b32, lo, hi), it.a, &it.c)
		return
	}
	kernel.SGDUpdate(it.p64[lo:hi], it.g64[lo:hi], sub(it.b64, lo, hi), it.a)
}

// NewSGD returns SGD over params, one group.
func NewSGD(params []*tensor.Tensor, opt SGDOptions) (*SGD, error) {
	return NewSGDGroups(oneGroup(params), opt)
}

// NewSGDGroups returns SGD over parameter groups.
func NewSGDGroups(groups []ParamGroup, opt SGDOptions) (*SGD, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	b, err := newBase("SGD", groups, opt.LR, opt.WeightDecay)
	if err != nil {
		return nil, err
	}
	o := &SGD{base: b, opt: opt, buf: make([]*tensor.Tensor, len(b.params))}
	o.fan = newFanout(func(lo, hi int) { runSpans(o.items, lo, hi) })
	return o, nil
}

func (o SGDOptions) validate() error {
	switch {
	case !(o.LR > 0):
		return fmt.Errorf("optim: SGD: LR must be positive, got %g", o.LR)
	case o.Momentum < 0:
		return fmt.Errorf("optim: SGD: invalid momentum %g", o.Momentum)
	case o.WeightDecay < 0:
		return fmt.Errorf("optim: SGD: invalid weight decay %g", o.WeightDecay)
	case o.Nesterov && (o.Momentum <= 0 || o.Dampening != 0):
		return fmt.Errorf("optim: SGD: Nesterov momentum needs a positive momentum and zero dampening (got %g, %g)", o.Momentum, o.Dampening)
	}
	return nil
}

// Step updates every parameter that has a gradient.
func (o *SGD) Step() error {
	if err := o.checkGrads(); err != nil {
		return err
	}
	o.items = o.items[:0]
	for _, g := range o.groups {
		a := kernel.SGDArgs{LR: g.lr, WeightDecay: g.weightDecay, Momentum: o.opt.Momentum,
			Dampening: o.opt.Dampening, Nesterov: o.opt.Nesterov, Maximize: o.opt.Maximize}
		for _, i := range g.idx {
			p := o.params[i]
			grad := p.Grad()
			if grad == nil {
				continue
			}
			a.First = false
			if a.Momentum != 0 && o.buf[i] == nil {
				o.buf[i] = newBuffer(p)
				a.First = true
			}
			it := sgdItem{a: a, c: a.Consts()}
			if p.DType() == tensor.Float32 {
				it.f32, it.p32, it.g32, it.b32 = true, p.Float32s(), grad.Float32s(), f32s(o.buf[i])
			} else {
				it.p64, it.g64, it.b64 = p.Float64s(), grad.Float64s(), f64s(o.buf[i])
			}
			o.items = append(o.items, it)
		}
	}
	o.fan.run(totalSize(o.items))
	return nil
}

// State returns a snapshot of the momentum buffers and hyperparameters.
func (o *SGD) State() *StateDict {
	s := newStateDict(o.name)
	o.saveGroups(s, map[string]float64{
		"momentum": o.opt.Momentum, "dampening": o.opt.Dampening,
		"nesterov": bool01(o.opt.Nesterov), "maximize": bool01(o.opt.Maximize),
	})
	for i, b := range o.buf {
		s.putTensor(paramKey(i, "momentum_buffer"), b)
	}
	return s
}

// LoadState restores a state saved by State.
func (o *SGD) LoadState(s *StateDict) error {
	h, err := o.loadGroups(s)
	if err != nil {
		return err
	}
	o.opt.Momentum = hyperValue(h, "momentum", o.opt.Momentum)
	o.opt.Dampening = hyperValue(h, "dampening", o.opt.Dampening)
	o.opt.Nesterov = hyperValue(h, "nesterov", bool01(o.opt.Nesterov)) != 0
	o.opt.Maximize = hyperValue(h, "maximize", bool01(o.opt.Maximize)) != 0
	for i := range o.buf {
		o.buf[i] = o.paramBuffer(s, i, "momentum_buffer")
	}
	return nil
}

// f32s returns t's float32 storage, or nil for a nil tensor.
func f32s(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

// f64s returns t's float64 storage, or nil for a nil tensor.
func f64s(t *tensor.Tensor) []float64 {
	if t == nil {
		return nil
	}
	return t.Float64s()
}
