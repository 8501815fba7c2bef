package optim

import (
	"fmt"
	"math"
)

// OWL-QN, the orthant-wise limited-memory quasi-Newton method of Andrew &
// Gao, "Scalable Training of L1-Regularized Log-Linear Models" (ICML 2007),
// minimizes F(x) = f(x) + Σ λ_i |x_i| for a smooth f. Within an orthant
// (a fixed sign pattern of x) the L1 term is linear, so L-BFGS applies;
// the method keeps every step inside one orthant:
//
//   - the pseudo-gradient ◇F replaces ∇f: for x_i ≠ 0 it is
//     ∂_i f + λ_i sign(x_i); at x_i = 0 it is the one-sided derivative
//     that points downhill (∂_i f + λ_i if that is < 0, ∂_i f − λ_i if
//     that is > 0), and 0 otherwise;
//   - the L-BFGS direction d = −H·◇F (two-loop recursion, Nocedal &
//     Wright, Algorithm 7.4; H built from s = Δx, y = Δ∇f of the smooth
//     part only) is projected onto the sign of −◇F: a component that
//     disagrees in sign is set to 0;
//   - the line search backtracks along x + t·d, projecting each trial
//     point onto the orthant ξ of the current point (ξ_i = sign(x_i), or
//     sign(−◇F_i) at x_i = 0): a coordinate that would cross zero stops at
//     zero. A trial is accepted under the sufficient-decrease condition
//     F(x_t) ≤ F(x) + c₁·◇Fᵀ(x_t − x).

const (
	owlqnC1      = 1e-4 // sufficient-decrease constant
	owlqnShrink  = 0.5  // step factor per backtracking trial
	owlqnMaxBack = 40   // trials per line search
)

// MinimizeOWLQN minimizes f(x) + Σ l1[i]·|x[i]| with OWL-QN (see above).
// f returns the smooth part f(x) and writes ∇f(x) into grad; it must not
// keep x or grad. l1 holds one penalty λ_i ≥ 0 per coordinate (nil: no
// penalty, and the method is L-BFGS with a backtracking line search).
// x0 is not modified.
//
// The options are MinimizeLBFGS's (FixedStep is not supported). Result.F
// is the full objective f(X) + Σ λ_i|X_i| and Result.Grad the
// pseudo-gradient at X, which is zero at a minimizer; GradTol applies to
// it. As with MinimizeLBFGS, reaching a limit is not an error.
func MinimizeOWLQN(f func(x, grad []float64) float64, x0, l1 []float64, opt MinimizeOptions) (Result, error) {
	opt = opt.withDefaults()
	l1, err := checkOWLQN(opt, x0, l1)
	if err != nil {
		return Result{}, err
	}
	n := len(x0)
	penalty := func(x []float64) float64 {
		s := 0.0
		for i, v := range x {
			s += l1[i] * math.Abs(v)
		}
		return s
	}

	x := append([]float64(nil), x0...)
	g := make([]float64, n)
	evals := 1
	fx := f(x, g)
	F := fx + penalty(x)
	if !finite(F) || !allFinite(g) {
		return Result{}, fmt.Errorf("optim: MinimizeOWLQN: f = %g at the starting point (or its gradient is not finite): %w", fx, ErrBadStart)
	}
	pg := make([]float64, n)
	pseudoGradient(pg, x, g, l1)

	var (
		h      qnHistory
		d      = make([]float64, n)
		xt     = make([]float64, n)
		gt     = make([]float64, n)
		orth   = make([]float64, n)
		iter   int
		reason StopReason
	)
	h.init(n, opt.History)
	for {
		if maxAbs(pg) <= opt.GradTol {
			reason = StopGradient
			break
		}
		if iter >= opt.MaxIter {
			reason = StopIterations
			break
		}
		if evals >= opt.MaxEval {
			reason = StopEvaluations
			break
		}
		iter++
		orthantDirection(&h, d, pg)
		chooseOrthant(orth, x, pg)
		t := 1.0
		if h.len() == 0 {
			// No curvature yet: a first step of unit length in max norm,
			// as far as f allows.
			t = min(1, 1/maxAbs(d))
		}
		var Ft, ft float64
		accepted := false
		for back := 0; back < owlqnMaxBack && evals < opt.MaxEval; back++ {
			projectStep(xt, x, d, orth, t)
			ft = f(xt, gt)
			evals++
			Ft = ft + penalty(xt)
			if finite(Ft) && Ft <= F+owlqnC1*dotDiff(pg, xt, x) {
				accepted = true
				break
			}
			t *= owlqnShrink
		}
		if !accepted {
			if evals >= opt.MaxEval {
				reason = StopEvaluations
			} else {
				reason = StopNoDescent
			}
			break
		}
		step := 0.0
		for i := range xt {
			step = max(step, math.Abs(xt[i]-x[i]))
		}
		h.push(x, xt, g, gt)
		Fprev := F
		copy(x, xt)
		copy(g, gt)
		fx, F = ft, Ft
		if opt.Iteration != nil {
			opt.Iteration(iter, F)
		}
		pseudoGradient(pg, x, g, l1)
		if maxAbs(pg) <= opt.GradTol {
			reason = StopGradient
			break
		}
		if step <= opt.StepTol {
			reason = StopStep
			break
		}
		if math.Abs(F-Fprev) <= opt.FuncTol*max(math.Abs(F), math.Abs(Fprev), 1) {
			reason = StopRelativeChange
			break
		}
	}
	res := Result{X: x, F: F, Grad: pg, Iterations: iter, Evaluations: evals, Reason: reason}
	if !finite(F) || !allFinite(x) {
		return res, fmt.Errorf("optim: MinimizeOWLQN: F = %g after %d iterations: %w", F, iter, ErrNonFinite)
	}
	return res, nil
}

// checkOWLQN checks MinimizeOWLQN's options, starting point and
// penalties, and returns the penalties (zeros for nil).
func checkOWLQN(opt MinimizeOptions, x0, l1 []float64) ([]float64, error) {
	if opt.MaxIter < 1 || opt.MaxEval < 1 || opt.History < 1 || opt.GradTol < 0 || opt.FuncTol < 0 || opt.StepTol < 0 || opt.FixedStep != 0 {
		return nil, fmt.Errorf("optim: MinimizeOWLQN: invalid options %+v", opt)
	}
	n := len(x0)
	if n == 0 {
		return nil, fmt.Errorf("optim: MinimizeOWLQN: empty starting point: %w", ErrBadStart)
	}
	if l1 == nil {
		l1 = make([]float64, n)
	}
	if len(l1) != n {
		return nil, fmt.Errorf("optim: MinimizeOWLQN: %d L1 penalties for %d coordinates", len(l1), n)
	}
	for i, v := range l1 {
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("optim: MinimizeOWLQN: L1 penalty %d is %g, want a finite value ≥ 0", i, v)
		}
	}
	return l1, nil
}

// orthantDirection writes the quasi-Newton direction for the
// pseudo-gradient pg into d, kept in the orthant that −pg points to; where
// that leaves no descent, the history is dropped and d is −pg.
func orthantDirection(h *qnHistory, d, pg []float64) {
	h.direction(d, pg)
	for i := range d {
		if d[i]*pg[i] >= 0 {
			d[i] = 0
		}
	}
	if !(dot(pg, d) < 0) {
		h.reset()
		for i := range d {
			d[i] = -pg[i]
		}
	}
}

// chooseOrthant writes the orthant of the step into orth: the sign of x,
// or where x is 0 the sign of −pg.
func chooseOrthant(orth, x, pg []float64) {
	for i := range orth {
		switch {
		case x[i] > 0:
			orth[i] = 1
		case x[i] < 0:
			orth[i] = -1
		case pg[i] < 0:
			orth[i] = 1
		case pg[i] > 0:
			orth[i] = -1
		default:
			orth[i] = 0
		}
	}
}

// projectStep writes x + t·d into xt, with every coordinate that leaves
// the orthant orth set to 0.
func projectStep(xt, x, d, orth []float64, t float64) {
	for i := range xt {
		v := x[i] + t*d[i]
		if v*orth[i] <= 0 {
			v = 0
		}
		xt[i] = v
	}
}

// dotDiff returns Σ a[i]·(b[i] − c[i]).
func dotDiff(a, b, c []float64) float64 {
	s := 0.0
	for i := range b {
		s += a[i] * (b[i] - c[i])
	}
	return s
}

// pseudoGradient writes the pseudo-gradient of f + Σλ|x| at x into pg
// (Andrew & Gao 2007, eq. 4).
func pseudoGradient(pg, x, g, l1 []float64) {
	for i, xi := range x {
		lam := l1[i]
		switch {
		case xi > 0:
			pg[i] = g[i] + lam
		case xi < 0:
			pg[i] = g[i] - lam
		case g[i]+lam < 0:
			pg[i] = g[i] + lam
		case g[i]-lam > 0:
			pg[i] = g[i] - lam
		default:
			pg[i] = 0
		}
	}
}

// qnHistory is the L-BFGS memory of OWL-QN: the last pairs s = Δx and
// y = Δ∇f in a ring, and the scale γ = sᵀy/yᵀy of H₀.
type qnHistory struct {
	s, y   [][]float64
	ts, ty []float64 // the candidate pair, swapped in when accepted
	rho    []float64
	alpha  []float64
	start  int // ring index of the oldest pair
	count  int
	gamma  float64
}

func (h *qnHistory) init(n, m int) {
	h.s, h.y = make([][]float64, m), make([][]float64, m)
	for i := range m {
		h.s[i], h.y[i] = make([]float64, n), make([]float64, n)
	}
	h.ts, h.ty = make([]float64, n), make([]float64, n)
	h.rho, h.alpha = make([]float64, m), make([]float64, m)
	h.reset()
}

func (h *qnHistory) reset() { h.start, h.count, h.gamma = 0, 0, 1 }

func (h *qnHistory) len() int { return h.count }

// push adds the pair of the step from x (gradient g) to xt (gradient gt),
// if it has positive curvature, dropping the oldest past the memory.
func (h *qnHistory) push(x, xt, g, gt []float64) {
	s, y := h.ts, h.ty
	ys, yy := 0.0, 0.0
	for i := range x {
		s[i] = xt[i] - x[i]
		y[i] = gt[i] - g[i]
		ys += y[i] * s[i]
		yy += y[i] * y[i]
	}
	if ys <= 1e-10*math.Sqrt(yy*dot(s, s)) || ys <= 0 {
		return // no positive curvature along the step: keep H as it is
	}
	m := len(h.s)
	slot := (h.start + h.count) % m
	if h.count == m {
		slot = h.start
	}
	h.s[slot], h.ts = h.ts, h.s[slot]
	h.y[slot], h.ty = h.ty, h.y[slot]
	h.rho[slot] = 1 / ys
	h.gamma = ys / yy
	if h.count == m {
		h.start = (h.start + 1) % m
	} else {
		h.count++
	}
}

// direction sets d = −H·g (two-loop recursion).
func (h *qnHistory) direction(d, g []float64) {
	m := len(h.s)
	for i := range d {
		d[i] = -g[i]
	}
	for j := h.count - 1; j >= 0; j-- {
		k := (h.start + j) % m
		h.alpha[k] = dot(h.s[k], d) * h.rho[k]
		axpy(-h.alpha[k], h.y[k], d)
	}
	for i := range d {
		d[i] *= h.gamma
	}
	for j := 0; j < h.count; j++ {
		k := (h.start + j) % m
		b := dot(h.y[k], d) * h.rho[k]
		axpy(h.alpha[k]-b, h.s[k], d)
	}
}
