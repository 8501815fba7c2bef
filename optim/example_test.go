package optim_test

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// Fit y = 2x + 1 with Adam and a cosine schedule.
func Example() {
	x := tensor.FromFloat32([]float32{0, 1, 2, 3}, 4, 1)
	y := tensor.FromFloat32([]float32{1, 3, 5, 7}, 4, 1)
	w := tensor.Zeros(tensor.Float32, 1, 1).SetRequiresGrad(true)
	b := tensor.Zeros(tensor.Float32, 1).SetRequiresGrad(true)

	opt, err := optim.NewAdam([]*tensor.Tensor{w, b}, optim.AdamOptions{LR: 0.1})
	if err != nil {
		panic(err)
	}
	sched, _ := optim.NewCosineAnnealingLR(opt, 500, 0.001)
	for range 500 {
		opt.ZeroGrad()
		loss := x.MatMul(w).Add(b).Sub(y).Square().MeanAll()
		loss.Backward()
		if err := opt.Step(); err != nil {
			panic(err)
		}
		sched.Step()
	}
	fmt.Printf("w = %.2f, b = %.2f\n", w.Item(), b.Item())
	// Output: w = 2.00, b = 1.00
}

// Minimize the Rosenbrock function without tensors.
func ExampleMinimizeLBFGS() {
	f := func(x, g []float64) float64 {
		a, b := x[0], x[1]
		g[0] = -2*(1-a) - 400*a*(b-a*a)
		g[1] = 200 * (b - a*a)
		return (1-a)*(1-a) + 100*(b-a*a)*(b-a*a)
	}
	res, err := optim.MinimizeLBFGS(f, []float64{-1.2, 1}, optim.MinimizeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("x = (%.4f, %.4f), converged: %v\n", res.X[0], res.X[1], res.Converged())
	// Output: x = (1.0000, 1.0000), converged: true
}

// Clip gradients to a total Euclidean norm of 1.
func ExampleClipGradNorm() {
	p := tensor.Zeros(tensor.Float32, 2).SetRequiresGrad(true)
	p.SetGrad(tensor.FromFloat32([]float32{3, 4}, 2))
	total, err := optim.ClipGradNorm([]*tensor.Tensor{p}, 1, 2)
	if err != nil {
		panic(err)
	}
	g := p.Grad().Values()
	fmt.Printf("norm before %.1f, after %.3f\n", total, math.Hypot(g[0], g[1]))
	// Output: norm before 5.0, after 1.000
}
