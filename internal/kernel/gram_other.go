//go:build !amd64 || purego

package kernel

// haveGramAsm is false: there are no Gram kernels for this build.
var haveGramAsm = false

func gramAsm(ld int, y []float64, idx []int32, val []float32, wa, wb, a, b []float64) {
	panic("kernel: no Gram assembly in this build")
}
