//go:build !purego

package kernel

import "golang.org/x/sys/cpu"

// CPU features, read once at start-up. Kernels pick their variant from these;
// tests may flip them to force a fallback. x/sys/cpu already accounts for the
// operating system saving the wider register state (XSAVE/XCR0).
var (
	// hasAVX512 reports AVX-512 F, BW, DQ and VL (the Skylake-SP subset).
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
	// hasAVX2FMA reports AVX2 together with FMA3.
	hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
)
