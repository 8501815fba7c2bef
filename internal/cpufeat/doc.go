// Package cpufeat is the one place fathom asks the CPU what it can run.
//
// The assembly kernels of internal/kernel and optim come in two instruction
// sets: AVX-512 (F, BW, DQ and VL, the Skylake-SP subset) and AVX2 with FMA3.
// Each package builds its dispatch from the Level values this package
// reports, once at start-up:
//
//	switch {
//	case cpufeat.Has(cpufeat.AVX512):
//		// use the AVX-512 kernels
//	case cpufeat.Has(cpufeat.AVX2FMA):
//		// use the AVX2+FMA kernels
//	}
//
// The purego build tag, or a target other than amd64, reports no feature at
// all, so every kernel falls back to its Go reference. Tests force each
// variant in turn by ranging over Levels (the levels this CPU can run) and
// setting their package's dispatch to each one.
//
// x/sys/cpu already accounts for the operating system saving the wider
// register state (XSAVE/XCR0).
package cpufeat

// Level is a set of instruction-set extensions a kernel variant needs.
type Level int

const (
	// Generic is plain Go: no assembly.
	Generic Level = iota
	// AVX2FMA is AVX2 together with FMA3 (Haswell and later).
	AVX2FMA
	// AVX512 is AVX-512 F, BW, DQ and VL (Skylake-SP and later).
	AVX512
)

// String returns the name the kernels use for the level's variant.
func (l Level) String() string {
	switch l {
	case Generic:
		return "go"
	case AVX2FMA:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "unknown"
}

// Has reports whether this CPU and build can run kernels of level l.
// Generic is always available.
func Has(l Level) bool {
	switch l {
	case Generic:
		return true
	case AVX2FMA:
		return hasAVX2FMA
	case AVX512:
		return hasAVX512
	}
	return false
}

// Best returns the fastest level this CPU and build can run.
func Best() Level {
	switch {
	case hasAVX512:
		return AVX512
	case hasAVX2FMA:
		return AVX2FMA
	}
	return Generic
}

// Levels lists every level this CPU and build can run, Generic first: the
// variants a test runs against the reference.
func Levels() []Level {
	ls := []Level{Generic}
	for _, l := range []Level{AVX2FMA, AVX512} {
		if Has(l) {
			ls = append(ls, l)
		}
	}
	return ls
}

// HasAVX512BF16 reports whether this CPU and build can run the bfloat16
// kernels: AVX-512 with the BF16 extension (VDPBF16PS, VCVTNEPS2BF16). It is
// not a Level of its own: only the bf16 GEMM of internal/kernel needs it.
func HasAVX512BF16() bool { return hasAVX512BF16 }
