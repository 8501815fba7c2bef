//go:build !amd64 || purego

package kernel

// Without assembly the float32 loops are the Go loops of optim.go.

// AdamF32 is AdamUpdate for float32.
func AdamF32(p, g, m, v, vmax []float32, a AdamArgs, c *[9]float32) {
	AdamUpdate(p, g, m, v, vmax, a)
}

// SGDF32 is SGDUpdate for float32.
func SGDF32(p, g, buf []float32, a SGDArgs, c *[3]float32) {
	SGDUpdate(p, g, buf, a)
}

// RMSpropF32 is RMSpropUpdate for float32.
func RMSpropF32(p, g, sq, gavg, buf []float32, a RMSpropArgs) {
	RMSpropUpdate(p, g, sq, gavg, buf, a)
}

// AdagradF32 is AdagradUpdate for float32.
func AdagradF32(p, g, sum []float32, clr, eps, weightDecay float64, maximize bool) {
	AdagradUpdate(p, g, sum, clr, eps, weightDecay, maximize)
}
