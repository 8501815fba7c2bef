//go:build !amd64 || purego

package optim

// Without assembly the float32 loops are the Go loops of fused.go.

func adamF32(p, g, m, v, vmax []float32, a adamArgs, c *[9]float32) {
	adamUpdate(p, g, m, v, vmax, a)
}

func sgdF32(p, g, buf []float32, a sgdArgs, c *[3]float32) {
	sgdUpdate(p, g, buf, a)
}

func rmspropF32(p, g, sq, gavg, buf []float32, a rmspropArgs) {
	rmspropUpdate(p, g, sq, gavg, buf, a)
}

func adagradF32(p, g, sum []float32, clr, eps, weightDecay float64, maximize bool) {
	adagradUpdate(p, g, sum, clr, eps, weightDecay, maximize)
}
