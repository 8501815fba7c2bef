package optim

import "math"

// Line search for L-BFGS: find a step t along a descent direction d that
// satisfies the strong Wolfe conditions
//
//	f(x+t·d) ≤ f(x) + c1·t·∇f(x)ᵀd            (sufficient decrease)
//	|∇f(x+t·d)ᵀd| ≤ c2·|∇f(x)ᵀd|              (curvature)
//
// following Nocedal & Wright, Numerical Optimization (2nd ed., 2006),
// Algorithm 3.5 (bracketing) and Algorithm 3.6 (zoom), with trial steps
// from the minimizer of the cubic that interpolates two function values and
// slopes (eq. 3.59). The safeguards (extrapolation bounds, the
// insufficient-progress rule) are those of PyTorch 1.13's _strong_wolfe,
// itself after M. Schmidt's minFunc, so that trajectories match PyTorch's.

const (
	wolfeC1    = 1e-4 // sufficient-decrease constant
	wolfeC2    = 0.9  // curvature constant (quasi-Newton methods use 0.9)
	wolfeMaxLS = 25   // evaluations per line search
)

// cubicMin returns the minimizer of the cubic through (x1, f1) and (x2,
// f2) with slopes g1 and g2 (Nocedal & Wright eq. 3.59), clamped to [lo,
// hi]. When the cubic has no minimizer, or the data are not finite, it
// returns the midpoint of [lo, hi].
func cubicMin(x1, f1, g1, x2, f2, g2, lo, hi float64) float64 {
	d1 := g1 + g2 - 3*(f1-f2)/(x1-x2)
	disc := d1*d1 - g1*g2
	if disc >= 0 {
		d2 := math.Sqrt(disc)
		var t float64
		if x1 <= x2 {
			t = x2 - (x2-x1)*((g2+d2-d1)/(g2-g1+2*d2))
		} else {
			t = x1 - (x1-x2)*((g1+d2-d1)/(g1-g2+2*d2))
		}
		if !math.IsNaN(t) {
			return min(max(t, lo), hi)
		}
	}
	return (lo + hi) / 2
}

// cubicMinBetween is cubicMin bounded by the interval of its two points.
func cubicMinBetween(x1, f1, g1, x2, f2, g2 float64) float64 {
	return cubicMin(x1, f1, g1, x2, f2, g2, min(x1, x2), max(x1, x2))
}

// lsPoint is one evaluated step of a line search.
type lsPoint struct {
	t, f, gtd float64
	g         []float64
}

// strongWolfe searches along d from x (where the loss is f, the gradient
// g and the slope gtd = gᵀd < 0), starting with step t. It returns the
// accepted point (its loss, gradient — a new slice — and step) and the
// number of evaluations. eval(t, grad) returns the loss at x+t·d and
// writes the gradient into grad.
func strongWolfe(eval func(t float64, grad []float64) float64, d []float64, t, f float64, g []float64, gtd, tolChange float64) (lsPoint, int) {
	dNorm := maxAbs(d)
	n := len(g)
	at := func(t float64) lsPoint {
		p := lsPoint{t: t, g: make([]float64, n)}
		p.f = eval(t, p.g)
		if math.IsNaN(p.f) {
			p.f = math.Inf(1) // a failed evaluation counts as too far
		}
		p.gtd = dot(p.g, d)
		return p
	}
	start := lsPoint{t: 0, f: f, gtd: gtd, g: append([]float64(nil), g...)}
	cur := at(t)
	evals := 1
	prev := start

	// Bracketing phase (Algorithm 3.5): grow the step until an interval is
	// known to contain acceptable steps, or the step is acceptable.
	var lo, hi lsPoint // the bracket; lo has the lower loss
	bracketed, done := false, false
	iter := 0
	for iter < wolfeMaxLS {
		if cur.f > f+wolfeC1*cur.t*gtd || (iter > 1 && cur.f >= prev.f) {
			lo, hi, bracketed = prev, cur, true
			break
		}
		if math.Abs(cur.gtd) <= -wolfeC2*gtd {
			lo, done = cur, true
			break
		}
		if cur.gtd >= 0 {
			lo, hi, bracketed = prev, cur, true
			break
		}
		// Extrapolate: the cubic's minimizer within [t+0.01(t−t_prev), 10t].
		next := cubicMin(prev.t, prev.f, prev.gtd, cur.t, cur.f, cur.gtd,
			cur.t+0.01*(cur.t-prev.t), cur.t*10)
		prev = cur
		cur = at(next)
		evals++
		iter++
	}
	if !bracketed && !done {
		// Out of evaluations while extrapolating: settle for the better of
		// the start and the last point.
		lo, hi = start, cur
	}
	if !done && hi.f < lo.f {
		lo, hi = hi, lo
	}

	// Zoom phase (Algorithm 3.6): shrink the bracket [lo, hi] until a
	// point satisfies both conditions.
	insufficient := false
	for !done && iter < wolfeMaxLS {
		if math.Abs(hi.t-lo.t)*dNorm < tolChange {
			break
		}
		a, b := min(lo.t, hi.t), max(lo.t, hi.t)
		// Eq. 3.59 is symmetric in its two points, so the order does not
		// matter.
		tn := cubicMinBetween(lo.t, lo.f, lo.gtd, hi.t, hi.f, hi.gtd)
		// Keep trial points away from the ends: if the last trial also
		// made little progress (or the point is at an end), move it to
		// 10% of the bracket inside.
		eps := 0.1 * (b - a)
		if min(b-tn, tn-a) < eps {
			if insufficient || tn >= b || tn <= a {
				if math.Abs(tn-b) < math.Abs(tn-a) {
					tn = b - eps
				} else {
					tn = a + eps
				}
				insufficient = false
			} else {
				insufficient = true
			}
		} else {
			insufficient = false
		}
		cur = at(tn)
		evals++
		iter++
		if cur.f > f+wolfeC1*cur.t*gtd || cur.f >= lo.f {
			hi = cur // the minimizer lies between lo and cur
			if hi.f < lo.f {
				lo, hi = hi, lo
			}
			continue
		}
		if math.Abs(cur.gtd) <= -wolfeC2*gtd {
			done = true
		} else if cur.gtd*(hi.t-lo.t) >= 0 {
			hi = lo // the slope at cur points away from hi: keep lo's side
		}
		lo = cur
	}
	return lo, evals
}

func maxAbs(s []float64) float64 {
	m := 0.0
	for _, v := range s {
		m = max(m, math.Abs(v))
	}
	return m
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
