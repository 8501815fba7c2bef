package optim

import (
	"fmt"

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
	return o, nil
}

// Step updates every parameter that has a gradient.
func (o *Adagrad) Step() error {
	for _, g := range o.groups {
		for _, i := range g.idx {
			p := o.params[i]
			grad, err := o.gradOf(p)
			if err != nil {
				return err
			}
			if grad == nil {
				continue
			}
			o.steps[i]++
			clr := g.lr / (1 + float64(o.steps[i]-1)*o.opt.LRDecay)
			switch p.DType() {
			case tensor.Float32:
				adagradUpdate(p.Float32s(), grad.Float32s(), o.sum[i].Float32s(), clr, o.opt.Eps, g.weightDecay, o.opt.Maximize)
			case tensor.Float64:
				adagradUpdate(p.Float64s(), grad.Float64s(), o.sum[i].Float64s(), clr, o.opt.Eps, g.weightDecay, o.opt.Maximize)
			}
		}
	}
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
