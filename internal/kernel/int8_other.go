//go:build purego || !amd64

package kernel

// Without assembly only the Go int8 micro-kernel exists.
func asmI8Variants() []*i8Variant { return nil }

// Int8PeakOps returns 0: there is no VNNI kernel in this build.
func Int8PeakOps(iters int) float64 { return 0 }

var quantU8 = quantU8Go

var minMaxF32 = minMaxF32Go

// prefetchF32 does nothing without assembly.
func prefetchF32(x []float32) {}
