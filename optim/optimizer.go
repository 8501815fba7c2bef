package optim

import (
	"errors"
	"fmt"

	"github.com/fathom-ml/fathom/tensor"
)

// Optimizer is what a training loop needs from a first-order optimizer:
// update the parameters from their gradients, clear the gradients, read
// and set the learning rate of each parameter group, and save and restore
// its state for checkpoints. SGD, Adam, AdamW, RMSprop and Adagrad
// implement it.
type Optimizer interface {
	// Step applies one update to every parameter that has a gradient.
	// Parameters whose Grad is nil are skipped (their state is untouched).
	Step() error
	// ZeroGrad sets every parameter's gradient to zero in place (keeping
	// the buffers, as PyTorch's zero_grad(set_to_none=False)).
	ZeroGrad()
	LRController
	// State returns a snapshot of the optimizer's state (buffers are
	// copied, so later steps do not change it).
	State() *StateDict
	// LoadState restores a state saved by State of an optimizer of the same
	// kind over parameters of the same shapes, in the same group layout.
	LoadState(*StateDict) error
}

// LRController is the part of an optimizer a learning-rate schedule drives:
// the learning rate of each parameter group.
type LRController interface {
	NumGroups() int
	LR(group int) float64
	SetLR(group int, lr float64)
}

// ParamGroup is a set of parameters with its own learning rate or weight
// decay, as a PyTorch param group. Fields left zero take the optimizer's
// options.
type ParamGroup struct {
	Params []*tensor.Tensor
	// LR overrides the optimizer's learning rate when positive.
	LR float64
	// WeightDecay overrides the optimizer's weight decay when positive.
	WeightDecay float64
	// NoWeightDecay turns weight decay off for this group (the usual
	// treatment of biases and normalization weights).
	NoWeightDecay bool
}

// ErrNoParams is returned by constructors given no parameter to optimize.
var ErrNoParams = errors.New("optim: empty parameter list")

// group is a resolved parameter group: global parameter indices and the
// hyperparameters that may differ between groups.
type group struct {
	idx         []int // indices into base.params
	lr          float64
	weightDecay float64
}

// base holds what every optimizer shares: the parameters (in group order,
// which defines their index in a state dict) and the groups.
type base struct {
	name   string
	params []*tensor.Tensor
	groups []group
}

// newBase validates and resolves the groups. defLR and defWD are the
// optimizer's options.
func newBase(name string, groups []ParamGroup, defLR, defWD float64) (base, error) {
	b := base{name: name}
	seen := make(map[*tensor.Tensor]bool)
	for gi, pg := range groups {
		g := group{lr: defLR, weightDecay: defWD}
		if pg.LR > 0 {
			g.lr = pg.LR
		}
		if pg.WeightDecay > 0 {
			g.weightDecay = pg.WeightDecay
		}
		if pg.NoWeightDecay {
			g.weightDecay = 0
		}
		if pg.LR < 0 || pg.WeightDecay < 0 {
			return base{}, fmt.Errorf("optim: %s: group %d: negative LR %g or weight decay %g", name, gi, pg.LR, pg.WeightDecay)
		}
		for pi, p := range pg.Params {
			if p == nil {
				return base{}, fmt.Errorf("optim: %s: group %d: parameter %d is nil", name, gi, pi)
			}
			if dt := p.DType(); dt != tensor.Float32 && dt != tensor.Float64 {
				return base{}, fmt.Errorf("optim: %s: group %d: parameter %d is %v (float32 and float64 are supported)", name, gi, pi, dt)
			}
			if !p.IsContiguous() {
				return base{}, fmt.Errorf("optim: %s: group %d: parameter %d (shape %v) is not contiguous", name, gi, pi, p.Shape())
			}
			if seen[p] {
				return base{}, fmt.Errorf("optim: %s: group %d: parameter %d appears more than once", name, gi, pi)
			}
			seen[p] = true
			g.idx = append(g.idx, len(b.params))
			b.params = append(b.params, p)
		}
		b.groups = append(b.groups, g)
	}
	if len(b.params) == 0 {
		return base{}, fmt.Errorf("optim: %s: %w", name, ErrNoParams)
	}
	return b, nil
}

// oneGroup wraps a plain parameter list.
func oneGroup(params []*tensor.Tensor) []ParamGroup {
	return []ParamGroup{{Params: params}}
}

// ZeroGrad zeroes every parameter's gradient in place.
func (b *base) ZeroGrad() {
	for _, p := range b.params {
		p.ZeroGrad()
	}
}

// NumGroups returns the number of parameter groups.
func (b *base) NumGroups() int { return len(b.groups) }

// LR returns the learning rate of group i.
func (b *base) LR(i int) float64 { return b.groups[i].lr }

// SetLR sets the learning rate of group i.
func (b *base) SetLR(i int, lr float64) { b.groups[i].lr = lr }

// WeightDecay returns the weight decay of group i.
func (b *base) WeightDecay(i int) float64 { return b.groups[i].weightDecay }

// Params returns the optimized parameters in state-dict order.
func (b *base) Params() []*tensor.Tensor { return append([]*tensor.Tensor(nil), b.params...) }

// checkGrads verifies, before a step changes anything, that every
// gradient matches its parameter's dtype and size and is contiguous.
func (b *base) checkGrads() error {
	for i, p := range b.params {
		g := p.Grad()
		if g == nil {
			continue
		}
		if g.DType() != p.DType() || g.Numel() != p.Numel() || !g.IsContiguous() || !p.IsContiguous() {
			return fmt.Errorf("optim: %s: parameter %d: gradient %v %v does not match parameter %v %v (or one is not contiguous)",
				b.name, i, g.DType(), g.Shape(), p.DType(), p.Shape())
		}
	}
	return nil
}

// newBuffer returns a zero tensor shaped and typed like p.
func newBuffer(p *tensor.Tensor) *tensor.Tensor { return tensor.ZerosLike(p) }
