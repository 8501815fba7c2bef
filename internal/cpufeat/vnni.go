package cpufeat

// HasVNNI reports whether this CPU and build can run the AVX512-VNNI int8
// kernels (VPDPBUSD on zmm registers, with the AVX512 level). It is a
// feature beside the Levels, not a level of its own: only the int8 GEMM
// uses it, and a CPU with AVX512 but no VNNI runs the float kernels at the
// AVX512 level and the int8 GEMM on its AVX2 kernel.
func HasVNNI() bool { return hasVNNI }
