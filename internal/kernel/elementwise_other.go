//go:build purego || !amd64

package kernel

// Without assembly only the reference kernels exist.
func asmElemVariants() []*elemKernels { return nil }
