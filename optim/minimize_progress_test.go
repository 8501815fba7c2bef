package optim

import "testing"

// TestMinimizeReportsIterations: Iteration sees every iteration once, in
// order, with a value that never rises (both minimizers only accept
// decreasing steps) and ends at the result's.
func TestMinimizeReportsIterations(t *testing.T) {
	for _, name := range []string{"lbfgs", "owlqn"} {
		var iters []int
		var fs []float64
		opt := MinimizeOptions{MaxIter: 200, Iteration: func(i int, f float64) { iters = append(iters, i); fs = append(fs, f) }}
		var res Result
		var err error
		if name == "lbfgs" {
			res, err = MinimizeLBFGS(rosenbrock, []float64{-1.2, 1}, opt)
		} else {
			res, err = MinimizeOWLQN(rosenbrock, []float64{-1.2, 1}, []float64{0.01, 0.01}, opt)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(iters) != res.Iterations || res.Iterations < 10 {
			t.Fatalf("%s: %d reports for %d iterations", name, len(iters), res.Iterations)
		}
		for i, it := range iters {
			if it != i+1 {
				t.Fatalf("%s: report %d is iteration %d", name, i, it)
			}
			if i > 0 && fs[i] > fs[i-1] {
				t.Errorf("%s: f rose from %g to %g at iteration %d", name, fs[i-1], fs[i], it)
			}
		}
		if fs[len(fs)-1] != res.F {
			t.Errorf("%s: last report %g, result %g", name, fs[len(fs)-1], res.F)
		}
	}
}
