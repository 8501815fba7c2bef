package optim

import (
	"fmt"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/tensor"
)

// AdagradOptions are the hyperparameters of Adagrad (torch.optim.Adagrad's
// arguments). Zero LR and Eps take PyTorch's defaults: 1e-2 and 1e-10.
type AdagradOptions struct {
	LR                      float64
	LRDecay                 float64 // step t uses lr/(1+(t−1)·LRDecay)
	WeightDecay             float64
	InitialAccumulatorValue float64 // starting value of the sum of squared gradients
	Eps                     float64
	Maximize                bool
}

// Adagrad adapts each coordinate's step to the sum of its past squared
// gradients (Duchi, Hazan & Singer, "Adaptive Subgradient Methods for
// Online Learning and Stochastic Optimization", JMLR 2011), with PyTorch
// 1.13's update rule: at step t,
//
//	g ← ∇ + λ·p
//	s ← s + g²
//	p ← p − lr/(1+(t−1)·η) · g/(√s + ε)
//
// The accumulators exist from construction, filled with
// InitialAccumulatorValue, as in PyTorch.
type Adagrad struct {
	base
	opt   AdagradOptions
	steps []int64
	sum   []*tensor.Tensor
	items []adagradItem
	fan   *fanout
}

// adagradItem is one parameter's update in a step.
type adagradItem struct {
	f32                   bool
	p32, g32, s32         []float32
	p64, g64, s64         []float64
	clr, eps, weightDecay float64
	maximize              bool
}

func (it *adagradItem) size() int { return len(it.p32) + len(it.p64) }

func (it *adagradItem) update(lo, hi int) {
	if it.f32 {
		kernel.AdagradF32(it.p32[lo:hi], it.g32[lo:hi], it.s32[lo:hi], it.clr, it.eps, it.weightDecay, it.maximize)
		return
	}
	kernel.AdagradUpdate(it.p64[lo:hi], it.g64[lo:hi], it.s64[lo:hi], it.clr, it.eps, it.weightDecay, it.maximize)
}

// NewAdagrad returns Adagrad over params, one group.
func NewAdagrad(params []*tensor.Tensor, opt AdagradOptions) (*Adagrad, error) {
	return NewAdagradGroups(oneGroup(params), opt)
}

// NewAdagradGroups returns Adagrad over parameter groups.
func NewAdagradGroups(groups []ParamGroup, opt AdagradOptions) (*Adagrad, error) {
	if opt.LR == 0 {
		opt.LR = 1e-2
	}
	if opt.Eps == 0 {
		opt.Eps = 1e-10
	}
	switch {
	case !(opt.LR > 0), !(opt.LRDecay >= 0), !(opt.WeightDecay >= 0), !(opt.InitialAccumulatorValue >= 0), !(opt.Eps >= 0):
		return nil, fmt.Errorf("optim: Adagrad: invalid options %+v", opt)
	}
	b, err := newBase("Adagrad", groups, opt.LR, opt.WeightDecay)
	if err != nil {
		return nil, err
	}
	o := &Adagrad{base: b, opt: opt, steps: make([]int64, len(b.params)), sum: make([]*tensor.Tensor, len(b.params))}
	for i, p := range b.params {
		o.sum[i] = tensor.FullLike(p, opt.InitialAccumulatorValue)
	}
	o.fan = newFanout(func(lo, hi int) { runSpans(o.items, lo, hi) })
	return o, nil
}

// Step updates every parameter that has a gradient.
func (o *Adagrad) Step() error {
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
			o.steps[i]++
			clr := g.lr / (1 + float64(o.steps[i]-1)*o.opt.LRDecay)
			it := adagradItem{clr: clr, eps: o.opt.Eps, weightDecay: g.weightDecay, maximize: o.opt.Maximize}
			if p.DType() == tensor.Float32 {
				it.f32, it.p32, it.g32, it.s32 = true, p.Float32s(), grad.Float32s(), o.sum[i].Float32s()
			} else {
				it.p64, it.g64, it.s64 = p.Float64s(), grad.Float64s(), o.sum[i].Float64s()
			}
			o.items = append(o.items, it)
		}
	}
	o.fan.run(totalSize(o.items))
	return nil
}

// State returns a snapshot of the accumulators, step counts and
// hyperparameters.
func (o *Adagrad) State() *StateDict {
	s := newStateDict(o.name)
	o.saveGroups(s, map[string]float64{
		"lr_decay": o.opt.LRDecay, "eps": o.opt.Eps,
		"initial_accumulator_value": o.opt.InitialAccumulatorValue, "maximize": bool01(o.opt.Maximize),
	})
	for i := range o.params {
		s.Scalars[paramKey(i, "step")] = float64(o.steps[i])
		s.putTensor(paramKey(i, "sum"), o.sum[i])
	}
	return s
}

// LoadState restores a state saved by State.
func (o *Adagrad) LoadState(s *StateDict) error {
	h, err := o.loadGroups(s)
	if err != nil {
		return err
	}
	for i := range o.params {
		if _, ok := s.Tensors[paramKey(i, "sum")]; !ok {
			return fmt.Errorf("optim: Adagrad: LoadState: no accumulator for parameter %d", i)
		}
	}
	o.opt.LRDecay = hyperValue(h, "lr_decay", o.opt.LRDecay)
	o.opt.Eps = hyperValue(h, "eps", o.opt.Eps)
	o.opt.InitialAccumulatorValue = hyperValue(h, "initial_accumulator_value", o.opt.InitialAccumulatorValue)
	o.opt.Maximize = hyperValue(h, "maximize", bool01(o.opt.Maximize)) != 0
	for i := range o.params {
		o.sum[i] = o.paramBuffer(s, i, "sum")
		o.steps[i] = int64(s.Scalars[paramKey(i, "step")])
	}
	return nil
}
