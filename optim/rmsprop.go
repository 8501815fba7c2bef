package optim

import (
	"fmt"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// RMSpropOptions are the hyperparameters of RMSprop (torch.optim.RMSprop's
// arguments). Zero LR, Alpha and Eps take PyTorch's defaults: 1e-2, 0.99,
// 1e-8.
type RMSpropOptions struct {
	LR          float64
	Alpha       float64 // smoothing constant of the squared-gradient average
	Eps         float64
	WeightDecay float64
	Momentum    float64
	Centered    bool // normalize by the estimated variance instead of the raw second moment
	Maximize    bool
}

// RMSprop divides the gradient by a running root mean square of recent
// gradients (Hinton, Srivastava & Swersky, "Neural Networks for Machine
// Learning", lecture 6e, 2012; centered form after Graves, "Generating
// Sequences With Recurrent Neural Networks", 2013, eq. 38–45), with PyTorch
// 1.13's update rule:
//
//	g ← ∇ + λ·p
//	s ← α·s + (1−α)·g²
//	ḡ ← α·ḡ + (1−α)·g,  a ← √(s − ḡ²) + ε   (centered; else a ← √s + ε)
//	b ← μ·b + g/a,  p ← p − lr·b            (momentum > 0; else p ← p − lr·g/a)
type RMSprop struct {
	base
	opt            RMSpropOptions
	steps          []int64
	sq, gavg, mbuf []*tensor.Tensor
	items          []rmspropItem
	fan            *fanout
}

// rmspropItem is one parameter's update in a step.
type rmspropItem struct {
	f32                     bool
	p32, g32, s32, a32, b32 []float32
	p64, g64, s64, a64, b64 []float64
	a                       kernel.RMSpropArgs
}

func (it *rmspropItem) size() int { return len(it.p32) + len(it.p64) }

func (it *rmspropItem) update(lo, hi int) {
	if it.f32 {
		kernel.RMSpropF32(it.p32[lo:hi], it.g32[lo:hi], it.s32[lo:hi], sub(it.a32, lo, hi), sub(it.b32, lo, hi), it.a)
		return
	}
	kernel.RMSpropUpdate(it.p64[lo:hi], it.g64[lo:hi], it.s64[lo:hi], sub(it.a64, lo, hi), sub(it.b64, lo, hi), it.a)
}

// NewRMSprop returns RMSprop over params, one group.
func NewRMSprop(params []*tensor.Tensor, opt RMSpropOptions) (*RMSprop, error) {
	return NewRMSpropGroups(oneGroup(params), opt)
}

// NewRMSpropGroups returns RMSprop over parameter groups.
func NewRMSpropGroups(groups []ParamGroup, opt RMSpropOptions) (*RMSprop, error) {
	if opt.LR == 0 {
		opt.LR = 1e-2
	}
	if opt.Alpha == 0 {
		opt.Alpha = 0.99
	}
	if opt.Eps == 0 {
		opt.Eps = 1e-8
	}
	switch {
	case !(opt.LR > 0), !(opt.Eps >= 0), !(opt.Momentum >= 0), !(opt.WeightDecay >= 0), !(opt.Alpha >= 0 && opt.Alpha <= 1):
		return nil, fmt.Errorf("optim: RMSprop: invalid options %+v", opt)
	}
	b, err := newBase("RMSprop", groups, opt.LR, opt.WeightDecay)
	if err != nil {
		return nil, err
	}
	n := len(b.params)
	o := &RMSprop{base: b, opt: opt, steps: make([]int64, n),
		sq: make([]*tensor.Tensor, n), gavg: make([]*tensor.Tensor, n), mbuf: make([]*tensor.Tensor, n)}
	o.fan = newFanout(func(lo, hi int) { runSpans(o.items, lo, hi) })
	return o, nil
}

// Step updates every parameter that has a gradient.
func (o *RMSprop) Step() error {
	if err := o.checkGrads(); err != nil {
		return err
	}
	o.items = o.items[:0]
	for _, g := range o.groups {
		a := kernel.RMSpropArgs{LR: g.lr, Alpha: o.opt.Alpha, Eps: o.opt.Eps, WeightDecay: g.weightDecay,
			Momentum: o.opt.Momentum, Centered: o.opt.Centered, Maximize: o.opt.Maximize}
		for _, i := range g.idx {
			p := o.params[i]
			grad := p.Grad()
			if grad == nil {
				continue
			}
			if o.sq[i] == nil {
				o.sq[i] = newBuffer(p)
			}
			if a.Centered && o.gavg[i] == nil {
				o.gavg[i] = newBuffer(p)
			}
			if a.Momentum > 0 && o.mbuf[i] == nil {
				o.mbuf[i] = newBuffer(p)
			}
			o.steps[i]++
			it := rmspropItem{a: a}
			if p.DType() == tensor.Float32 {
				it.f32, it.p32, it.g32 = true, p.Float32s(), grad.Float32s()
				it.s32, it.a32, it.b32 = o.sq[i].Float32s(), f32s(o.gavg[i]), f32s(o.mbuf[i])
			} else {
				it.p64, it.g64 = p.Float64s(), grad.Float64s()
				it.s64, it.a64, it.b64 = o.sq[i].Float64s(), f64s(o.gavg[i]), f64s(o.mbuf[i])
			}
			o.items = append(o.items, it)
		}
	}
	o.fan.run(totalSize(o.items))
	return nil
}

// State returns a snapshot of the running averages and hyperparameters.
func (o *RMSprop) State() *StateDict {
	s := newStateDict(o.name)
	o.saveGroups(s, map[string]float64{
		"alpha": o.opt.Alpha, "eps": o.opt.Eps, "momentum": o.opt.Momentum,
		"centered": bool01(o.opt.Centered), "maximize": bool01(o.opt.Maximize),
	})
	for i := range o.params {
		if o.sq[i] == nil {
			continue
		}
		s.Scalars[paramKey(i, "step")] = float64(o.steps[i])
		s.putTensor(paramKey(i, "square_avg"), o.sq[i])
		s.putTensor(paramKey(i, "grad_avg"), o.gavg[i])
		s.putTensor(paramKey(i, "momentum_buffer"), o.mbuf[i])
	}
	return s
}

// LoadState restores a state saved by State.
func (o *RMSprop) LoadState(s *StateDict) error {
	h, err := o.loadGroups(s)
	if err != nil {
		return err
	}
	o.opt.Alpha = hyperValue(h, "alpha", o.opt.Alpha)
	o.opt.Eps = hyperValue(h, "eps", o.opt.Eps)
	o.opt.Momentum = hyperValue(h, "momentum", o.opt.Momentum)
	o.opt.Centered = hyperValue(h, "centered", bool01(o.opt.Centered)) != 0
	o.opt.Maximize = hyperValue(h, "maximize", bool01(o.opt.Maximize)) != 0
	for i, p := range o.params {
		o.sq[i] = o.paramBuffer(s, i, "square_avg")
		o.gavg[i] = o.paramBuffer(s, i, "grad_avg")
		o.mbuf[i] = o.paramBuffer(s, i, "momentum_buffer")
		o.steps[i] = int64(s.Scalars[paramKey(i, "step")])
		if o.sq[i] == nil {
			o.gavg[i], o.mbuf[i], o.steps[i] = nil, nil, 0
			continue
		}
		// Buffers a state without centering or momentum lacks start at zero,
		// as PyTorch creates them on a parameter's first step.
		if o.opt.Centered && o.gavg[i] == nil {
			o.gavg[i] = newBuffer(p)
		}
		if o.opt.Momentum > 0 && o.mbuf[i] == nil {
			o.mbuf[i] = newBuffer(p)
		}
	}
	return nil
}
