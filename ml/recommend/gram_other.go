//go:build !amd64 || purego

package recommend

// haveAsm is false: there are no kernels for this build.
var haveAsm = false

func gramAsm(ld int, y []float64, idx []int32, val []float32, wa, wb, a, b []float64) {
	panic("recommend: no assembly kernels in this build")
}
