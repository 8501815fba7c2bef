package prune

import (
	"errors"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
)

// Method is unstructured (magnitude) or structured pruning.
type Method int

const (
	// MagnitudeMethod prunes single weights (Magnitude).
	MagnitudeMethod Method = iota
	// StructuredMethod prunes neurons and channels (Structured).
	StructuredMethod
)

// Schedule says when and how much to prune during training. The masks
// are computed at step Begin (0: before the first step) and again every
// Every steps up to End, the sparsity rising from 0 to Sparsity along
// s(t) = Sparsity·(1 − (1 − (t − Begin)/(End − Begin))³); with End ≤
// Begin the model is pruned once, at Begin, to Sparsity.
type Schedule struct {
	Method   Method
	Sparsity float64
	Scope    Scope // of MagnitudeMethod
	Norm     Norm  // of StructuredMethod
	Begin    int
	End      int
	Every    int // default 1
}

// At returns the sparsity the schedule prescribes at step t (0 before Begin).
func (s Schedule) At(t int) float64 {
	switch {
	case t < s.Begin:
		return 0
	case s.End <= s.Begin || t >= s.End:
		return s.Sparsity
	}
	f := 1 - float64(t-s.Begin)/float64(s.End-s.Begin)
	return s.Sparsity * (1 - f*f*f)
}

// due reports whether the masks are recomputed after step t.
func (s Schedule) due(t int) bool {
	if t < s.Begin || (s.End > s.Begin && t > s.End) || (s.End <= s.Begin && t != s.Begin) {
		return false
	}
	return (t-s.Begin)%max(s.Every, 1) == 0 || t == s.End
}

// Optimizer is an optim.Optimizer that prunes net on a Schedule and
// re-applies the masks after every step, so pruned weights stay zero
// whatever their gradients and optimizer state say.
type Optimizer struct {
	optim.Optimizer
	net   *nn.Sequential
	sched Schedule
	step  int
	masks *Masks
}

// NewOptimizer wraps inner. With Begin 0 it prunes net at once.
func NewOptimizer(inner optim.Optimizer, net *nn.Sequential, s Schedule) (*Optimizer, error) {
	if !(s.Sparsity >= 0 && s.Sparsity < 1) {
		return nil, fmt.Errorf("%w, got %g", ErrSparsity, s.Sparsity)
	}
	if s.Begin < 0 || s.Every < 0 {
		return nil, errors.New("prune: schedule steps must not be negative")
	}
	if s.Method == StructuredMethod {
		if _, err := chain(net); err != nil {
			return nil, err
		}
	}
	o := &Optimizer{Optimizer: inner, net: net, sched: s}
	if s.due(0) {
		if err := o.prune(0); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Step runs the inner step, then prunes if the schedule says so and
// re-applies the masks.
func (o *Optimizer) Step() error {
	if err := o.Optimizer.Step(); err != nil {
		return err
	}
	o.step++
	if o.sched.due(o.step) {
		return o.prune(o.step)
	}
	o.masks.Apply()
	return nil
}

func (o *Optimizer) prune(t int) error {
	s := o.sched.At(t)
	var err error
	if o.sched.Method == StructuredMethod {
		o.masks, err = Structured(o.net, s, o.sched.Norm)
	} else {
		o.masks, err = Magnitude(o.net, s, o.sched.Scope)
	}
	return err
}

// Masks returns the current masks (nil before the first pruning).
func (o *Optimizer) Masks() *Masks { return o.masks }

// Sparsity is the fraction of zeros among the weights of the Linear and
// Conv2d layers of net.
func Sparsity(net *nn.Sequential) float64 {
	ts, err := targets(net)
	if err != nil {
		return math.NaN()
	}
	var n, z int
	for _, t := range ts {
		for _, x := range t.w.Float32s() {
			n++
			if x == 0 {
				z++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(z) / float64(n)
}
