package optim

import (
	"errors"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/tensor"
)

// L-BFGS (Liu & Nocedal, "On the limited memory BFGS method for large
// scale optimization", Math. Programming 45, 1989): the search direction
// is −H·g, where H is the BFGS inverse-Hessian approximation built from the
// last m pairs s = x_{k+1}−x_k, y = g_{k+1}−g_k and applied by the two-loop
// recursion of Nocedal & Wright, Numerical Optimization (2nd ed.),
// Algorithm 7.4, with H₀ = (sᵀy/yᵀy)·I (eq. 7.20). Steps come from the
// strong-Wolfe line search of linesearch.go, or are fixed (lr) as PyTorch
// allows. The iteration and its stopping rules are those of PyTorch 1.13's
// torch.optim.LBFGS, so trajectories match it.

// LineSearch selects how L-BFGS chooses its step length.
type LineSearch int

const (
	// NoLineSearch takes the step lr (times min(1, 1/‖g‖₁) on the very
	// first iteration), as torch.optim.LBFGS with line_search_fn=None.
	NoLineSearch LineSearch = iota
	// StrongWolfe searches for a step satisfying the strong Wolfe
	// conditions (line_search_fn="strong_wolfe").
	StrongWolfe
)

// StopReason says why an L-BFGS run stopped.
type StopReason int

const (
	StopNone           StopReason = iota
	StopGradient                  // max |g| ≤ gradient tolerance: converged
	StopNoDescent                 // gᵀd ≥ −change tolerance: no descent direction left
	StopStep                      // max |t·d| ≤ change tolerance
	StopChange                    // |f_k − f_{k−1}| below the change tolerance
	StopRelativeChange            // relative function change below FuncTol
	StopIterations                // iteration limit
	StopEvaluations               // evaluation limit
)

func (r StopReason) String() string {
	switch r {
	case StopGradient:
		return "gradient below tolerance"
	case StopNoDescent:
		return "no descent direction"
	case StopStep:
		return "step below tolerance"
	case StopChange:
		return "function change below tolerance"
	case StopRelativeChange:
		return "relative function change below tolerance"
	case StopIterations:
		return "iteration limit"
	case StopEvaluations:
		return "evaluation limit"
	}
	return "none"
}

// Converged reports whether the reason is a convergence test rather than
// a limit.
func (r StopReason) Converged() bool {
	return r != StopNone && r != StopIterations && r != StopEvaluations
}

// ErrNonFinite is returned when a loss or gradient that an optimizer must
// use is NaN or infinite.
var ErrNonFinite = errors.New("optim: non-finite value")

// lbfgsConfig holds the limits and tolerances of one run. PyTorch uses its
// tolerance_change for tolDescent, tolStep, tolLoss and lsTol alike.
type lbfgsConfig struct {
	lr               float64
	maxIter, maxEval int
	tolGrad          float64 // stop when max |g| ≤ tolGrad
	tolDescent       float64 // stop when gᵀd > −tolDescent
	tolStep          float64 // stop when max |t·d| ≤ tolStep
	tolLoss          float64 // stop when |f_k − f_{k−1}| < tolLoss
	relTol           float64 // stop on a relative function change ≤ relTol (0: off)
	lsTol            float64 // line search: stop when the bracket is this narrow
	history          int
	lineSearch       LineSearch
	onIter           func(iter int, loss float64) // after each iteration (MinimizeOptions.Iteration)
}

// torchConfig returns the configuration PyTorch's LBFGS options describe.
func torchConfig(o LBFGSOptions) lbfgsConfig {
	return lbfgsConfig{lr: o.LR, maxIter: o.MaxIter, maxEval: o.MaxEval, tolGrad: o.TolGrad,
		tolDescent: o.TolChange, tolStep: o.TolChange, tolLoss: o.TolChange, lsTol: o.TolChange,
		history: o.HistorySize, lineSearch: o.LineSearch}
}

// lbfgsState is what L-BFGS carries from one call to the next (PyTorch's
// optimizer state for the first parameter).
type lbfgsState struct {
	d        []float64   // last direction
	t        float64     // last step length
	s, y     [][]float64 // correction pairs, oldest first
	rho      []float64   // 1/(yᵀs)
	hDiag    float64     // γ of H₀ = γI
	prevGrad []float64
	prevLoss float64
	nIter    int // iterations over all calls
	evals    int // evaluations over all calls
	alpha    []float64
}

// objective is the function L-BFGS minimizes, seen from the current point
// x: eval returns the loss at x + t·d (at x when d is nil) and writes the
// gradient there into grad; move sets x ← x + t·d.
type objective interface {
	eval(t float64, d, grad []float64) float64
	move(t float64, d []float64)
}

// run performs up to cfg.maxIter iterations from the current point, where
// the loss is loss and the gradient g (g is overwritten). It returns the
// loss at the final point as far as it was evaluated, and why it stopped.
func (st *lbfgsState) run(obj objective, loss float64, g []float64, cfg lbfgsConfig) (float64, StopReason) {
	currentEvals := 1
	if maxAbs(g) <= cfg.tolGrad {
		return loss, StopGradient
	}
	n := len(g)
	reason := StopNone
	for it := 1; ; it++ {
		st.nIter++
		if st.nIter == 1 {
			st.d = make([]float64, n)
			for i := range g {
				st.d[i] = -g[i]
			}
			st.s, st.y, st.rho = nil, nil, nil
			st.hDiag = 1
		} else {
			st.update(g, cfg.history)
			st.direction(g)
		}
		if st.prevGrad == nil {
			st.prevGrad = make([]float64, n)
		}
		copy(st.prevGrad, g)
		st.prevLoss = loss

		if st.nIter == 1 {
			sum := 0.0
			for _, v := range g {
				sum += math.Abs(v)
			}
			st.t = min(1, 1/sum) * cfg.lr
		} else {
			st.t = cfg.lr
		}
		gtd := dot(g, st.d)
		if gtd > -cfg.tolDescent {
			reason = StopNoDescent
			break
		}

		lsEvals := 0
		gradConverged := false
		if cfg.lineSearch == StrongWolfe {
			eval := func(t float64, grad []float64) float64 { return obj.eval(t, st.d, grad) }
			p, k := strongWolfe(eval, st.d, st.t, loss, g, gtd, cfg.lsTol)
			loss, st.t, lsEvals = p.f, p.t, k
			copy(g, p.g)
			obj.move(st.t, st.d)
			gradConverged = maxAbs(g) <= cfg.tolGrad
		} else {
			obj.move(st.t, st.d)
			if it != cfg.maxIter {
				loss = obj.eval(0, nil, g)
				gradConverged = maxAbs(g) <= cfg.tolGrad
				lsEvals = 1
			}
		}
		currentEvals += lsEvals
		st.evals += lsEvals
		if cfg.onIter != nil {
			cfg.onIter(st.nIter, loss)
		}

		switch {
		case it == cfg.maxIter:
			reason = StopIterations
		case currentEvals >= cfg.maxEval:
			reason = StopEvaluations
		case gradConverged:
			reason = StopGradient
		case maxAbs(st.d)*math.Abs(st.t) <= cfg.tolStep:
			reason = StopStep
		case math.Abs(loss-st.prevLoss) < cfg.tolLoss:
			reason = StopChange
		case cfg.relTol > 0 && math.Abs(loss-st.prevLoss) <= cfg.relTol*max(math.Abs(loss), math.Abs(st.prevLoss), 1):
			reason = StopRelativeChange
		}
		if reason != StopNone {
			break
		}
	}
	return loss, reason
}

// update adds the pair (s, y) of the last step to the history when it
// keeps H positive definite (yᵀs > 1e-10), dropping the oldest pair past
// the history size, and sets H₀'s scale γ = sᵀy/yᵀy.
func (st *lbfgsState) update(g []float64, history int) {
	n := len(g)
	var s, y []float64
	if len(st.s) == history && history > 0 {
		// Reuse the oldest pair's storage.
		s, y = st.s[0], st.y[0]
	} else {
		s, y = make([]float64, n), make([]float64, n)
	}
	ys := 0.0
	for i := range g {
		y[i] = g[i] - st.prevGrad[i]
		s[i] = st.d[i] * st.t
		ys += y[i] * s[i]
	}
	if ys <= 1e-10 {
		return
	}
	if len(st.s) == history {
		if history == 0 {
			return
		}
		copy(st.s, st.s[1:])
		copy(st.y, st.y[1:])
		copy(st.rho, st.rho[1:])
		st.s, st.y, st.rho = st.s[:history-1], st.y[:history-1], st.rho[:history-1]
	}
	st.s = append(st.s, s)
	st.y = append(st.y, y)
	st.rho = append(st.rho, 1/ys)
	st.hDiag = ys / dot(y, y)
}

// direction sets d = −H·g by the two-loop recursion (Nocedal & Wright,
// Algorithm 7.4).
func (st *lbfgsState) direction(g []float64) {
	k := len(st.s)
	if cap(st.alpha) < k {
		st.alpha = make([]float64, k)
	}
	al := st.alpha[:k]
	q := st.d // reuse: the old direction is no longer needed
	for i := range g {
		q[i] = -g[i]
	}
	for i := k - 1; i >= 0; i-- {
		al[i] = dot(st.s[i], q) * st.rho[i]
		axpy(-al[i], st.y[i], q)
	}
	for i := range q {
		q[i] *= st.hDiag
	}
	for i := 0; i < k; i++ {
		be := dot(st.y[i], q) * st.rho[i]
		axpy(al[i]-be, st.s[i], q)
	}
}

// axpy sets y += a·x, with one rounding per element (as PyTorch's
// vectorized add with alpha, which L-BFGS's iterates are compared with).
func axpy(a float64, x, y []float64) {
	for i := range y {
		y[i] = math.FMA(a, x[i], y[i])
	}
}

// LBFGSOptions are the settings of the LBFGS optimizer (torch.optim.LBFGS's
// arguments). Zero fields take PyTorch's defaults.
type LBFGSOptions struct {
	LR          float64    // step scale (default 1)
	MaxIter     int        // iterations per Step (default 20)
	MaxEval     int        // function evaluations per Step (default MaxIter·5/4)
	TolGrad     float64    // stop when max |g| ≤ TolGrad (default 1e-7)
	TolChange   float64    // stop on smaller loss or parameter changes (default 1e-9)
	HistorySize int        // correction pairs kept (default 100)
	LineSearch  LineSearch // NoLineSearch (default) or StrongWolfe
}

func (o LBFGSOptions) withDefaults() LBFGSOptions {
	if o.LR == 0 {
		o.LR = 1
	}
	if o.MaxIter == 0 {
		o.MaxIter = 20
	}
	if o.MaxEval == 0 {
		o.MaxEval = o.MaxIter * 5 / 4
	}
	if o.TolGrad == 0 {
		o.TolGrad = 1e-7
	}
	if o.TolChange == 0 {
		o.TolChange = 1e-9
	}
	if o.HistorySize == 0 {
		o.HistorySize = 100
	}
	return o
}

// LBFGS is the L-BFGS optimizer over tensors, after torch.optim.LBFGS: each
// Step runs up to MaxIter iterations, calling the closure to re-evaluate
// the loss and gradients as often as the iteration needs. Parameters form
// one group; their values are gathered into one float64 vector (so float32
// parameters get a float64 direction and history), and a parameter whose
// Grad is nil counts as a zero gradient. LBFGS is not an Optimizer (its
// Step takes a closure) but is an LRController, so schedules can drive it.
type LBFGS struct {
	params []*tensor.Tensor
	opt    LBFGSOptions
	st     lbfgsState
	x      []float64 // the parameters' values, flattened
}

// NewLBFGS returns L-BFGS over params.
func NewLBFGS(params []*tensor.Tensor, opt LBFGSOptions) (*LBFGS, error) {
	opt = opt.withDefaults()
	if !(opt.LR > 0) || opt.MaxIter < 1 || opt.MaxEval < 1 || opt.HistorySize < 1 || opt.TolGrad < 0 || opt.TolChange < 0 {
		return nil, fmt.Errorf("optim: LBFGS: invalid options %+v", opt)
	}
	b, err := newBase("LBFGS", oneGroup(params), opt.LR, 0)
	if err != nil {
		return nil, err
	}
	return &LBFGS{params: b.params, opt: opt}, nil
}

// Step runs one L-BFGS step. closure must zero the gradients, compute the
// loss, run Backward and return the loss (as the closure passed to
// PyTorch's LBFGS.step). Step returns the loss the first evaluation gave,
// as PyTorch does. It fails with ErrNonFinite if that loss or the final
// parameters are not finite.
func (o *LBFGS) Step(closure func() float64) (float64, error) {
	obj := &tensorObjective{params: o.params, closure: closure}
	o.x = obj.gather(o.x)
	obj.x = o.x
	g := make([]float64, len(o.x))
	loss := obj.eval(0, nil, g)
	o.st.evals++
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("optim: LBFGS: loss %g at the start of a step: %w", loss, ErrNonFinite)
	}
	o.st.run(obj, loss, g, torchConfig(o.opt))
	for _, v := range o.x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return loss, fmt.Errorf("optim: LBFGS: parameters became non-finite: %w", ErrNonFinite)
		}
	}
	return loss, nil
}

// ZeroGrad zeroes every parameter's gradient in place.
func (o *LBFGS) ZeroGrad() {
	for _, p := range o.params {
		p.ZeroGrad()
	}
}

// NumGroups returns 1: L-BFGS has one parameter group.
func (o *LBFGS) NumGroups() int { return 1 }

// LR returns the step scale.
func (o *LBFGS) LR(int) float64 { return o.opt.LR }

// SetLR sets the step scale.
func (o *LBFGS) SetLR(_ int, lr float64) { o.opt.LR = lr }

// Iterations returns the number of iterations run over all steps, and
// Evaluations the number of closure calls.
func (o *LBFGS) Iterations() int { return o.st.nIter }

// Evaluations returns the number of closure calls over all steps.
func (o *LBFGS) Evaluations() int { return o.st.evals }

// State returns a snapshot of the L-BFGS history: direction, step, the
// correction pairs (tensors "old_dirs.<k>" = y and "old_stps.<k>" = s,
// oldest first), the previous gradient and loss, and the counters.
func (o *LBFGS) State() *StateDict {
	s := newStateDict("LBFGS")
	s.Groups = []GroupState{{Params: seq(len(o.params)), Hyper: map[string]float64{
		"lr": o.opt.LR, "weight_decay": 0, "max_iter": float64(o.opt.MaxIter), "max_eval": float64(o.opt.MaxEval),
		"tolerance_grad": o.opt.TolGrad, "tolerance_change": o.opt.TolChange,
		"history_size": float64(o.opt.HistorySize), "strong_wolfe": bool01(o.opt.LineSearch == StrongWolfe),
	}}}
	st := &o.st
	s.Scalars["n_iter"] = float64(st.nIter)
	s.Scalars["func_evals"] = float64(st.evals)
	s.Scalars["t"] = st.t
	s.Scalars["H_diag"] = st.hDiag
	s.Scalars["prev_loss"] = st.prevLoss
	s.Scalars["num_old"] = float64(len(st.s))
	vec := func(v []float64) *tensor.Tensor { return tensor.FromFloat64(append([]float64(nil), v...), len(v)) }
	if st.d != nil {
		s.Tensors["d"] = vec(st.d)
	}
	if st.prevGrad != nil {
		s.Tensors["prev_flat_grad"] = vec(st.prevGrad)
	}
	for k := range st.s {
		s.Tensors[fmt.Sprintf("old_dirs.%d", k)] = vec(st.y[k])
		s.Tensors[fmt.Sprintf("old_stps.%d", k)] = vec(st.s[k])
	}
	return s
}

// LoadState restores a state saved by State over parameters of the same
// total size.
func (o *LBFGS) LoadState(s *StateDict) error {
	if s == nil || s.Optimizer != "LBFGS" || len(s.Groups) != 1 {
		return fmt.Errorf("optim: LBFGS: LoadState with a state that is not one L-BFGS group")
	}
	n := 0
	for _, p := range o.params {
		n += p.Numel()
	}
	vec := func(name string, required bool) ([]float64, error) {
		t, ok := s.Tensors[name]
		if !ok || t == nil {
			if required {
				return nil, fmt.Errorf("optim: LBFGS: LoadState: missing tensor %q", name)
			}
			return nil, nil
		}
		if t.Numel() != n {
			return nil, fmt.Errorf("optim: LBFGS: LoadState: tensor %q has %d elements, parameters have %d", name, t.Numel(), n)
		}
		return t.Values(), nil
	}
	var st lbfgsState
	st.nIter, st.evals = int(s.Scalars["n_iter"]), int(s.Scalars["func_evals"])
	st.t, st.hDiag, st.prevLoss = s.Scalars["t"], s.Scalars["H_diag"], s.Scalars["prev_loss"]
	var err error
	if st.d, err = vec("d", st.nIter > 0); err != nil {
		return err
	}
	if st.prevGrad, err = vec("prev_flat_grad", st.nIter > 0); err != nil {
		return err
	}
	numOld := int(s.Scalars["num_old"])
	for k := range numOld {
		y, err := vec(fmt.Sprintf("old_dirs.%d", k), true)
		if err != nil {
			return err
		}
		sv, err := vec(fmt.Sprintf("old_stps.%d", k), true)
		if err != nil {
			return err
		}
		st.y, st.s, st.rho = append(st.y, y), append(st.s, sv), append(st.rho, 1/dot(y, sv))
	}
	h := s.Groups[0].Hyper
	o.opt.LR = hyperValue(h, "lr", o.opt.LR)
	o.opt.MaxIter = int(hyperValue(h, "max_iter", float64(o.opt.MaxIter)))
	o.opt.MaxEval = int(hyperValue(h, "max_eval", float64(o.opt.MaxEval)))
	o.opt.TolGrad = hyperValue(h, "tolerance_grad", o.opt.TolGrad)
	o.opt.TolChange = hyperValue(h, "tolerance_change", o.opt.TolChange)
	o.opt.HistorySize = int(hyperValue(h, "history_size", float64(o.opt.HistorySize)))
	if hyperValue(h, "strong_wolfe", bool01(o.opt.LineSearch == StrongWolfe)) != 0 {
		o.opt.LineSearch = StrongWolfe
	} else {
		o.opt.LineSearch = NoLineSearch
	}
	o.st = st
	return nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// tensorObjective evaluates a closure over parameter tensors for L-BFGS.
type tensorObjective struct {
	params  []*tensor.Tensor
	closure func() float64
	x       []float64 // current point (the parameters' values)
	tmp     []float64
}

// gather reads the parameters into x (reusing its storage).
func (o *tensorObjective) gather(x []float64) []float64 {
	x = x[:0]
	for _, p := range o.params {
		if p.DType() == tensor.Float64 {
			x = append(x, p.Float64s()...)
		} else {
			for _, v := range p.Float32s() {
				x = append(x, float64(v))
			}
		}
	}
	return x
}

// scatter writes v into the parameters (rounding to their dtype).
func (o *tensorObjective) scatter(v []float64) {
	off := 0
	for _, p := range o.params {
		n := p.Numel()
		if p.DType() == tensor.Float64 {
			copy(p.Float64s(), v[off:off+n])
		} else {
			d := p.Float32s()
			for i := range d {
				d[i] = float32(v[off+i])
			}
		}
		off += n
	}
}

func (o *tensorObjective) eval(t float64, d, grad []float64) float64 {
	if d != nil {
		if o.tmp == nil {
			o.tmp = make([]float64, len(o.x))
		}
		for i := range o.x {
			o.tmp[i] = math.FMA(t, d[i], o.x[i])
		}
		o.scatter(o.tmp)
	}
	loss := o.closure()
	off := 0
	for _, p := range o.params {
		n := p.Numel()
		g := p.Grad()
		switch {
		case g == nil:
			clear(grad[off : off+n])
		case g.DType() == tensor.Float64:
			copy(grad[off:off+n], g.Contiguous().Float64s())
		default:
			for i, v := range g.Contiguous().Float32s() {
				grad[off+i] = float64(v)
			}
		}
		off += n
	}
	if d != nil {
		o.scatter(o.x)
	}
	return loss
}

func (o *tensorObjective) move(t float64, d []float64) {
	axpy(t, d, o.x)
	o.scatter(o.x)
	o.x = o.gather(o.x) // the point is what the parameters hold, rounded to their dtype
}
