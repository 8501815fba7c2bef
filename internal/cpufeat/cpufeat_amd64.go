//go:build !purego

package cpufeat

import "golang.org/x/sys/cpu"

// Read once at start-up.
var (
	hasAVX512  = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL
	hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	// hasAVX512BF16 adds VDPBF16PS and VCVTNE(2)PS2BF16 (Cooper Lake, Sapphire Rapids).
	hasAVX512BF16 = hasAVX512 && cpu.X86.HasAVX512BF16
)
