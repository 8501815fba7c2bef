package optim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-ml/fathom/tensor"
)

func rosenbrock(x, g []float64) float64 {
	a, b := x[0], x[1]
	if g != nil {
		g[0] = -2*(1-a) - 400*a*(b-a*a)
		g[1] = 200 * (b - a*a)
	}
	return (1-a)*(1-a) + 100*(b-a*a)*(b-a*a)
}

// TestLBFGSMatchesTorch replays PyTorch's LBFGS on the Rosenbrock function
// (testdata/gen_torch.py): the iterates, evaluation and iteration counts
// after every step, with and without the strong-Wolfe line search.
func TestLBFGSMatchesTorch(t *testing.T) {
	ref := loadTorchReference(t)
	if len(ref.LBFGS) == 0 {
		t.Fatal("no L-BFGS cases in the reference")
	}
	for _, c := range ref.LBFGS {
		t.Run(fmt.Sprintf("%s-hist%d", c.LineSearch, c.HistorySize), func(t *testing.T) {
			x := tensor.FromFloat64([]float64{-1.2, 1}, 2).SetRequiresGrad(true)
			opt := LBFGSOptions{LR: c.LR, MaxIter: c.MaxIter, HistorySize: c.HistorySize}
			if c.LineSearch == "strong_wolfe" {
				opt.LineSearch = StrongWolfe
			}
			o, err := NewLBFGS([]*tensor.Tensor{x}, opt)
			if err != nil {
				t.Fatal(err)
			}
			evals := 0
			closure := func() float64 {
				evals++
				g := make([]float64, 2)
				f := rosenbrock(x.Float64s(), g)
				x.SetGrad(tensor.FromFloat64(g, 2))
				return f
			}
			for k, want := range c.Traj {
				loss, err := o.Step(closure)
				if err != nil {
					t.Fatal(err)
				}
				got := x.Values()
				for i := range got {
					if math.Abs(got[i]-want.X[i]) > 1e-9*math.Max(1, math.Abs(want.X[i])) {
						t.Fatalf("step %d: x = %v, PyTorch %v", k, got, want.X)
					}
				}
				if math.Abs(loss-want.Loss) > 1e-9*math.Max(1, math.Abs(want.Loss)) {
					t.Fatalf("step %d: loss %v, PyTorch %v", k, loss, want.Loss)
				}
				if evals != want.Evals || o.Iterations() != want.NIter {
					t.Fatalf("step %d: %d evaluations, %d iterations; PyTorch %d, %d", k, evals, o.Iterations(), want.Evals, want.NIter)
				}
			}
		})
	}
}

func TestMinimizeLBFGSRosenbrock(t *testing.T) {
	for _, x0 := range [][]float64{{-1.2, 1}, {2, 2}, {0, 0}, {-3, -4}} {
		res, err := MinimizeLBFGS(rosenbrock, x0, MinimizeOptions{MaxIter: 500, GradTol: 1e-10, FuncTol: 1e-16})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.X[0]-1) > 1e-6 || math.Abs(res.X[1]-1) > 1e-6 || !res.Converged() {
			t.Errorf("from %v: x = %v after %d iterations (%v), want (1, 1)", x0, res.X, res.Iterations, res.Reason)
		}
		if x0[0] == res.X[0] && x0[1] == res.X[1] {
			t.Errorf("x0 %v was modified or not used", x0)
		}
	}
}

// TestMinimizeLBFGSQuadratic minimizes ½xᵀAx − bᵀx for a random
// well-conditioned SPD A and compares with the solution of Ax = b by
// Gaussian elimination.
func TestMinimizeLBFGSQuadratic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 10, 50} {
		// A = MᵀM + n·I.
		m := make([]float64, n*n)
		for i := range m {
			m[i] = r.NormFloat64()
		}
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				for k := range n {
					a[i*n+j] += m[k*n+i] * m[k*n+j]
				}
			}
			a[i*n+i] += float64(n)
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		want := solve(a, b)
		f := func(x, g []float64) float64 {
			v := 0.0
			for i := range n {
				ax := 0.0
				for j := range n {
					ax += a[i*n+j] * x[j]
				}
				g[i] = ax - b[i]
				v += 0.5*x[i]*ax - b[i]*x[i]
			}
			return v
		}
		res, err := MinimizeLBFGS(f, make([]float64, n), MinimizeOptions{GradTol: 1e-12, FuncTol: 1e-16})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(res.X[i]-want[i]) > 1e-8 {
				t.Fatalf("n=%d: x[%d] = %v, want %v (%v after %d iterations)", n, i, res.X[i], want[i], res.Reason, res.Iterations)
			}
		}
	}
}

// solve returns the solution of Ax = b by Gaussian elimination with
// partial pivoting (A is n×n row-major; both are copied).
func solve(a, b []float64) []float64 {
	n := len(b)
	a, x := append([]float64(nil), a...), append([]float64(nil), b...)
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		for k := range n {
			a[c*n+k], a[p*n+k] = a[p*n+k], a[c*n+k]
		}
		x[c], x[p] = x[p], x[c]
		for r := c + 1; r < n; r++ {
			f := a[r*n+c] / a[c*n+c]
			for k := c; k < n; k++ {
				a[r*n+k] -= f * a[c*n+k]
			}
			x[r] -= f * x[c]
		}
	}
	for c := n - 1; c >= 0; c-- {
		for k := c + 1; k < n; k++ {
			x[c] -= a[c*n+k] * x[k]
		}
		x[c] /= a[c*n+c]
	}
	return x
}

// logisticData returns a seeded binary classification problem: rows of
// d features plus an intercept column of ones, labels 0/1 drawn from a
// logistic model (so the classes overlap and the optimum is finite).
func logisticData(n, d int) (x [][]float64, y []float64) {
	r := rand.New(rand.NewPCG(7, 8))
	w := []float64{1.5, -2, 0.5, 1, -0.7}
	for range n {
		row := make([]float64, d+1)
		z := 0.3
		for j := range d {
			row[j] = r.NormFloat64()
			z += w[j%len(w)] * row[j]
		}
		row[d] = 1
		label := 0.0
		if r.Float64() < 1/(1+math.Exp(-z)) {
			label = 1
		}
		x, y = append(x, row), append(y, label)
	}
	return x, y
}

// logisticLoss is the mean log-loss plus (λ/2)‖w‖² (intercept included),
// with its gradient and, when hess is not nil, its Hessian.
func logisticLoss(x [][]float64, y []float64, lambda float64, w, g, hess []float64) float64 {
	k := len(w)
	clear(g)
	clear(hess)
	loss := 0.0
	for i, row := range x {
		z := dot(row, w)
		// log(1+e^z) − y·z, computed stably.
		loss += math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - y[i]*z
		p := 1 / (1 + math.Exp(-z))
		for j := range k {
			g[j] += (p - y[i]) * row[j]
			if hess != nil {
				for l := range k {
					hess[j*k+l] += p * (1 - p) * row[j] * row[l]
				}
			}
		}
	}
	n := float64(len(x))
	loss /= n
	for j := range k {
		g[j] = g[j]/n + lambda*w[j]
		loss += 0.5 * lambda * w[j] * w[j]
		if hess != nil {
			for l := range k {
				hess[j*k+l] /= n
			}
			hess[j*k+j] += lambda
		}
	}
	return loss
}

// TestMinimizeLBFGSLogisticRegression fits an L2-regularized logistic
// regression and compares with the optimum found by Newton's method
// (iteratively reweighted least squares), which converges quadratically to
// machine precision on this strictly convex problem.
func TestMinimizeLBFGSLogisticRegression(t *testing.T) {
	x, y := logisticData(400, 4)
	const lambda = 1e-3
	k := len(x[0])
	// Newton's method.
	want := make([]float64, k)
	g, h := make([]float64, k), make([]float64, k*k)
	for range 50 {
		logisticLoss(x, y, lambda, want, g, h)
		step := solve(h, g)
		for j := range want {
			want[j] -= step[j]
		}
		if maxAbs(step) < 1e-15 {
			break
		}
	}
	logisticLoss(x, y, lambda, want, g, nil)
	if maxAbs(g) > 1e-12 {
		t.Fatalf("Newton reference did not converge: gradient %v", g)
	}
	res, err := MinimizeLBFGS(func(w, grad []float64) float64 {
		return logisticLoss(x, y, lambda, w, grad, nil)
	}, make([]float64, k), MinimizeOptions{GradTol: 1e-10, FuncTol: 1e-16})
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if math.Abs(res.X[j]-want[j]) > 1e-7 {
			t.Fatalf("w[%d] = %v, Newton %v (%v after %d iterations, %d evaluations)", j, res.X[j], want[j], res.Reason, res.Iterations, res.Evaluations)
		}
	}
	if res.Evaluations > 3*res.Iterations+5 {
		t.Errorf("%d evaluations for %d iterations: the line search is doing too much work", res.Evaluations, res.Iterations)
	}
}

func TestMinimizeLBFGSErrors(t *testing.T) {
	f := func(x, g []float64) float64 { g[0] = 1; return math.NaN() }
	if _, err := MinimizeLBFGS(f, []float64{1}, MinimizeOptions{}); !errors.Is(err, ErrBadStart) {
		t.Errorf("NaN at the start: err = %v, want ErrBadStart", err)
	}
	if _, err := MinimizeLBFGS(rosenbrock, nil, MinimizeOptions{}); !errors.Is(err, ErrBadStart) {
		t.Errorf("empty start: err = %v, want ErrBadStart", err)
	}
	if _, err := MinimizeLBFGS(rosenbrock, []float64{0, 0}, MinimizeOptions{MaxIter: -1}); err == nil {
		t.Error("negative MaxIter accepted")
	}
	// A function that is finite only on x < 1: the line search must back
	// off from the non-finite region instead of failing.
	barrier := func(x, g []float64) float64 {
		if x[0] >= 1 {
			g[0] = math.NaN()
			return math.NaN()
		}
		g[0] = -1 + 1/(1-x[0])
		return -x[0] - math.Log(1-x[0])
	}
	res, err := MinimizeLBFGS(barrier, []float64{-5}, MinimizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.X[0]) > 1e-6 {
		t.Errorf("barrier minimum at %v, want 0", res.X[0])
	}
	// Limits are not errors.
	res, err = MinimizeLBFGS(rosenbrock, []float64{-1.2, 1}, MinimizeOptions{MaxIter: 3})
	if err != nil || res.Reason != StopIterations || res.Iterations != 3 {
		t.Errorf("MaxIter 3: %v, %v after %d iterations", err, res.Reason, res.Iterations)
	}
}

// TestLBFGSTensorLeastSquares fits float32 parameters of a linear model
// through autograd and compares with the normal equations.
func TestLBFGSTensorLeastSquares(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n, d = 64, 3
	xs, ys := make([]float32, n*d), make([]float32, n)
	for i := range n {
		for j := range d {
			xs[i*d+j] = float32(r.NormFloat64())
		}
		ys[i] = 2*xs[i*d] - xs[i*d+1] + 0.5*xs[i*d+2] + 1 + float32(0.1*r.NormFloat64())
	}
	x, y := tensor.FromFloat32(xs, n, d), tensor.FromFloat32(ys, n, 1)
	w := tensor.Zeros(tensor.Float32, d, 1).SetRequiresGrad(true)
	b := tensor.Zeros(tensor.Float32, 1).SetRequiresGrad(true)
	o, err := NewLBFGS([]*tensor.Tensor{w, b}, LBFGSOptions{LineSearch: StrongWolfe, MaxIter: 50})
	if err != nil {
		t.Fatal(err)
	}
	closure := func() float64 {
		o.ZeroGrad()
		loss := x.MatMul(w).Add(b).Sub(y).Square().MeanAll()
		loss.Backward()
		return loss.Item()
	}
	for range 3 {
		if _, err := o.Step(closure); err != nil {
			t.Fatal(err)
		}
	}
	// Normal equations over [x 1].
	k := d + 1
	ata, aty := make([]float64, k*k), make([]float64, k)
	for i := range n {
		row := []float64{float64(xs[i*d]), float64(xs[i*d+1]), float64(xs[i*d+2]), 1}
		for j := range k {
			aty[j] += row[j] * float64(ys[i])
			for l := range k {
				ata[j*k+l] += row[j] * row[l]
			}
		}
	}
	want := solve(ata, aty)
	got := append(w.Values(), b.Values()...)
	for j := range want {
		if math.Abs(got[j]-want[j]) > 1e-4 {
			t.Fatalf("coefficients %v, normal equations %v", got, want)
		}
	}
}

// TestLBFGSStateRoundTrip stops L-BFGS after two steps, saves its state,
// restores it into a new optimizer, and checks that both continue
// identically.
func TestLBFGSStateRoundTrip(t *testing.T) {
	newRun := func() (*LBFGS, *tensor.Tensor, func() float64) {
		x := tensor.FromFloat64([]float64{-1.2, 1}, 2).SetRequiresGrad(true)
		o, err := NewLBFGS([]*tensor.Tensor{x}, LBFGSOptions{MaxIter: 4, HistorySize: 3, LineSearch: StrongWolfe})
		if err != nil {
			t.Fatal(err)
		}
		return o, x, func() float64 {
			g := make([]float64, 2)
			f := rosenbrock(x.Float64s(), g)
			x.SetGrad(tensor.FromFloat64(g, 2))
			return f
		}
	}
	a, xa, ca := newRun()
	for range 2 {
		if _, err := a.Step(ca); err != nil {
			t.Fatal(err)
		}
	}
	saved := roundTripJSON(t, a.State())
	b, xb, cb := newRun()
	xb.CopyFrom(xa)
	if err := b.LoadState(saved); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		if _, err := a.Step(ca); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Step(cb); err != nil {
			t.Fatal(err)
		}
		if va, vb := xa.Values(), xb.Values(); va[0] != vb[0] || va[1] != vb[1] {
			t.Fatalf("step %d after restore: %v, uninterrupted run %v", k, vb, va)
		}
	}
	if a.Iterations() != b.Iterations() {
		t.Errorf("iterations %d after restore, %d uninterrupted", b.Iterations(), a.Iterations())
	}
}
