package optim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// lassoData is a small regression problem with a sparse truth.
func lassoData(n, p int, seed uint64) (x [][]float64, y []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	truth := make([]float64, p)
	for j := range p {
		if j%3 == 0 {
			truth[j] = float64(j%5) - 2
		}
	}
	x = make([][]float64, n)
	y = make([]float64, n)
	for i := range n {
		x[i] = make([]float64, p)
		for j := range p {
			x[i][j] = r.NormFloat64()
			y[i] += truth[j] * x[i][j]
		}
		y[i] += 0.5 * r.NormFloat64()
	}
	return x, y
}

// lassoCD solves min 1/(2n)‖y − Xw‖² + λ‖w‖₁ by cyclic coordinate descent
// to a tiny change (Friedman, Hastie & Tibshirani 2010): the reference.
func lassoCD(x [][]float64, y []float64, lam float64) []float64 {
	n, p := len(x), len(x[0])
	w := make([]float64, p)
	r := append([]float64(nil), y...)
	for sweep := 0; sweep < 100000; sweep++ {
		change := 0.0
		for j := range p {
			var rho, sq float64
			for i := range n {
				rho += x[i][j] * (r[i] + x[i][j]*w[j])
				sq += x[i][j] * x[i][j]
			}
			rho /= float64(n)
			sq /= float64(n)
			nw := math.Copysign(max(math.Abs(rho)-lam, 0), rho) / sq
			if d := nw - w[j]; d != 0 {
				for i := range n {
					r[i] -= x[i][j] * d
				}
				change = max(change, math.Abs(d))
				w[j] = nw
			}
		}
		if change < 1e-15 {
			break
		}
	}
	return w
}

func leastSquares(x [][]float64, y []float64) func(w, g []float64) float64 {
	n := float64(len(x))
	return func(w, g []float64) float64 {
		clear(g)
		loss := 0.0
		for i, row := range x {
			r := -y[i]
			for j, v := range row {
				r += v * w[j]
			}
			loss += r * r / 2
			for j, v := range row {
				g[j] += r * v / n
			}
		}
		return loss / n
	}
}

func TestOWLQNLassoMatchesCoordinateDescent(t *testing.T) {
	x, y := lassoData(80, 12, 7)
	for _, lam := range []float64{0.01, 0.1, 0.5, 5} {
		want := lassoCD(x, y, lam)
		l1 := make([]float64, 12)
		for i := range l1 {
			l1[i] = lam
		}
		res, err := MinimizeOWLQN(leastSquares(x, y), make([]float64, 12), l1, MinimizeOptions{MaxIter: 1000, GradTol: 1e-12, FuncTol: 1e-16})
		if err != nil {
			t.Fatal(err)
		}
		zeros := 0
		for j := range want {
			if math.Abs(res.X[j]-want[j]) > 1e-7*max(1, math.Abs(want[j])) {
				t.Errorf("λ=%g: w[%d] = %.10g, coordinate descent %.10g (%v after %d iterations)", lam, j, res.X[j], want[j], res.Reason, res.Iterations)
			}
			if want[j] == 0 {
				zeros++
				if res.X[j] != 0 {
					t.Errorf("λ=%g: w[%d] = %g, want exactly 0", lam, j, res.X[j])
				}
			}
		}
		if lam == 5 && zeros != 12 {
			t.Errorf("λ=5: %d zero coefficients, want all 12", zeros)
		}
	}
}

// With no penalty OWL-QN reaches L-BFGS's minimizer (logistic regression
// with a small ridge, a strictly convex problem).
func TestOWLQNNoPenaltyIsLBFGS(t *testing.T) {
	x, y := lassoData(100, 6, 3)
	f := func(w, g []float64) float64 {
		clear(g)
		loss := 0.0
		for i, row := range x {
			m := 0.0
			for j, v := range row {
				m += v * w[j]
			}
			lab := 0.0
			if y[i] > 0 {
				lab = 1
			}
			loss += math.Log1p(math.Exp(-math.Abs(m))) + max(m, 0) - lab*m
			p := 1 / (1 + math.Exp(-m))
			for j, v := range row {
				g[j] += (p - lab) * v
			}
		}
		for j := range w {
			loss += 0.05 * w[j] * w[j]
			g[j] += 0.1 * w[j]
		}
		return loss
	}
	opt := MinimizeOptions{MaxIter: 500, GradTol: 1e-10, FuncTol: 1e-16}
	a, err := MinimizeLBFGS(f, make([]float64, 6), opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MinimizeOWLQN(f, make([]float64, 6), nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	for j := range a.X {
		// f is flat to rounding within ~1e-8 of the minimizer: a stop on
		// no function change lands there.
		if math.Abs(a.X[j]-b.X[j]) > 1e-7*max(1, math.Abs(a.X[j])) {
			t.Errorf("w[%d]: OWL-QN %.12g (%v, %d iterations), L-BFGS %.12g (%v, %d iterations)", j, b.X[j], b.Reason, b.Iterations, a.X[j], a.Reason, a.Iterations)
		}
	}
	if math.Abs(a.F-b.F) > 1e-14*math.Abs(a.F) {
		t.Errorf("F: OWL-QN %.15g, L-BFGS %.15g", b.F, a.F)
	}
}

func TestOWLQNPseudoGradient(t *testing.T) {
	for _, c := range []struct{ x, g, lam, want float64 }{
		{1, 0.5, 1, 1.5}, {-1, 0.5, 1, -0.5},
		{0, 0.5, 1, 0}, {0, -0.5, 1, 0}, // inside the subdifferential
		{0, -2, 1, -1}, {0, 2, 1, 1},
	} {
		pg := make([]float64, 1)
		pseudoGradient(pg, []float64{c.x}, []float64{c.g}, []float64{c.lam})
		if pg[0] != c.want {
			t.Errorf("x=%g g=%g λ=%g: ◇F = %g, want %g", c.x, c.g, c.lam, pg[0], c.want)
		}
	}
}

func TestOWLQNBadInput(t *testing.T) {
	f := func(x, g []float64) float64 { g[0] = 2 * x[0]; return x[0] * x[0] }
	if _, err := MinimizeOWLQN(f, []float64{1}, []float64{-1}, MinimizeOptions{}); err == nil {
		t.Error("negative penalty: no error")
	}
	if _, err := MinimizeOWLQN(f, []float64{1}, []float64{1, 2}, MinimizeOptions{}); err == nil {
		t.Error("penalties of the wrong length: no error")
	}
	if _, err := MinimizeOWLQN(f, nil, nil, MinimizeOptions{}); err == nil {
		t.Error("empty start: no error")
	}
	res, err := MinimizeOWLQN(f, []float64{3}, []float64{1}, MinimizeOptions{})
	if err != nil || res.X[0] != 0 {
		t.Errorf("x² + |x|: x = %v (err %v), want exactly 0", res.X, err)
	}
}

// Minimize (x−3)² + (y+1)² + 2|x| + 5|y|: the L1 term moves x from 3 to
// 2 and holds y at exactly 0.
func ExampleMinimizeOWLQN() {
	f := func(p, g []float64) float64 {
		g[0], g[1] = 2*(p[0]-3), 2*(p[1]+1)
		return (p[0]-3)*(p[0]-3) + (p[1]+1)*(p[1]+1)
	}
	res, err := MinimizeOWLQN(f, []float64{0, 0}, []float64{2, 5}, MinimizeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("x = %.6f, y = %g, F = %.6f (%v)\n", res.X[0], res.X[1], res.F, res.Reason)
	// Output: x = 2.000000, y = 0, F = 6.000000 (gradient below tolerance)
}
