package optim

import (
	"errors"
	"fmt"
	"math"
)

// MinimizeOptions are the settings of MinimizeLBFGS. Zero fields take the
// defaults in brackets.
type MinimizeOptions struct {
	MaxIter int // iterations [100, as Spark ML's maxIter]
	MaxEval int // function evaluations, line searches included [3·MaxIter]
	History int // correction pairs kept [10, as Spark/Breeze and SciPy]
	// GradTol stops when max |∇f| ≤ GradTol [1e-7].
	GradTol float64
	// FuncTol stops when |f_k − f_{k−1}| ≤ FuncTol·max(|f_k|, |f_{k−1}|, 1)
	// [1e-9; Spark ML's "tol" plays this role, 1e-6 by default there].
	FuncTol float64
	// StepTol stops when max |x_{k+1} − x_k| ≤ StepTol [1e-12].
	StepTol float64
	// FixedStep turns the line search off and takes steps of this length
	// (as PyTorch's LBFGS without line_search_fn); 0 uses the strong-Wolfe
	// line search.
	FixedStep float64
	// Iteration, if set, is called after each iteration with its number
	// (from 1) and the objective's value at the new point (as far as the
	// iteration evaluated it): a progress report, which must not keep the
	// minimizer waiting.
	Iteration func(iter int, f float64)
}

func (o MinimizeOptions) withDefaults() MinimizeOptions {
	if o.MaxIter == 0 {
		o.MaxIter = 100
	}
	if o.MaxEval == 0 {
		o.MaxEval = 3 * o.MaxIter
	}
	if o.History == 0 {
		o.History = 10
	}
	if o.GradTol == 0 {
		o.GradTol = 1e-7
	}
	if o.FuncTol == 0 {
		o.FuncTol = 1e-9
	}
	if o.StepTol == 0 {
		o.StepTol = 1e-12
	}
	return o
}

// Result is the outcome of MinimizeLBFGS.
type Result struct {
	X           []float64 // the final point
	F           float64   // f(X)
	Grad        []float64 // ∇f(X)
	Iterations  int
	Evaluations int // calls of f
	Reason      StopReason
}

// Converged reports whether a convergence test (not a limit) stopped the
// run.
func (r Result) Converged() bool { return r.Reason.Converged() }

// ErrBadStart is returned when MinimizeLBFGS is given an empty starting
// point or a function that is not finite there.
var ErrBadStart = errors.New("optim: bad starting point")

// MinimizeLBFGS minimizes a smooth function of a float64 vector with
// L-BFGS and a strong-Wolfe line search (see LBFGS for the method and its
// sources). f returns f(x) and writes ∇f(x) into grad; it must not keep x
// or grad. x0 is not modified. This is the solver behind the classic-ML
// models that Spark ML fits with L-BFGS (logistic regression, the MLP
// classifier, ...): no tensors, no autograd.
//
// Hitting MaxIter or MaxEval is not an error: Result.Reason says why the
// run stopped. Errors are for a bad start (ErrBadStart) and a non-finite
// final value (ErrNonFinite).
func MinimizeLBFGS(f func(x, grad []float64) float64, x0 []float64, opt MinimizeOptions) (Result, error) {
	opt = opt.withDefaults()
	if opt.MaxIter < 1 || opt.MaxEval < 1 || opt.History < 1 || opt.GradTol < 0 || opt.FuncTol < 0 || opt.StepTol < 0 || opt.FixedStep < 0 {
		return Result{}, fmt.Errorf("optim: MinimizeLBFGS: invalid options %+v", opt)
	}
	if len(x0) == 0 {
		return Result{}, fmt.Errorf("optim: MinimizeLBFGS: empty starting point: %w", ErrBadStart)
	}
	obj := &sliceObjective{f: f, x: append([]float64(nil), x0...), tmp: make([]float64, len(x0))}
	g := make([]float64, len(x0))
	loss := obj.eval(0, nil, g)
	if !finite(loss) || !allFinite(g) {
		return Result{}, fmt.Errorf("optim: MinimizeLBFGS: f = %g at the starting point (or its gradient is not finite): %w", loss, ErrBadStart)
	}
	// Unlike PyTorch, the descent test is exact (gᵀd ≥ 0 only) and the
	// function-change test relative, so that accuracy does not depend on
	// the scale of f.
	cfg := lbfgsConfig{lr: 1, maxIter: opt.MaxIter, maxEval: opt.MaxEval, tolGrad: opt.GradTol,
		tolStep: opt.StepTol, relTol: opt.FuncTol, lsTol: opt.StepTol, history: opt.History, lineSearch: StrongWolfe,
		onIter: opt.Iteration}
	if opt.FixedStep > 0 {
		cfg.lr, cfg.lineSearch = opt.FixedStep, NoLineSearch
	}
	var st lbfgsState
	loss, reason := st.run(obj, loss, g, cfg)
	if cfg.lineSearch == NoLineSearch && reason == StopIterations {
		// The last fixed step was not evaluated: evaluate the final point.
		loss = obj.eval(0, nil, g)
	}
	res := Result{X: obj.x, F: loss, Grad: g, Iterations: st.nIter, Evaluations: obj.calls, Reason: reason}
	if !finite(loss) || !allFinite(obj.x) {
		return res, fmt.Errorf("optim: MinimizeLBFGS: f = %g after %d iterations: %w", loss, st.nIter, ErrNonFinite)
	}
	return res, nil
}

// sliceObjective adapts f to the L-BFGS iteration.
type sliceObjective struct {
	f      func(x, grad []float64) float64
	x, tmp []float64
	calls  int
}

func (o *sliceObjective) eval(t float64, d, grad []float64) float64 {
	o.calls++
	if d == nil {
		copy(o.tmp, o.x)
	} else {
		for i := range o.x {
			o.tmp[i] = math.FMA(t, d[i], o.x[i])
		}
	}
	return o.f(o.tmp, grad)
}

func (o *sliceObjective) move(t float64, d []float64) { axpy(t, d, o.x) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func allFinite(s []float64) bool {
	for _, v := range s {
		if !finite(v) {
			return false
		}
	}
	return true
}
