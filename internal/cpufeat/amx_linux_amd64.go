//go:build !purego

package cpufeat

import (
	"sync"
	"syscall"

	"golang.org/x/sys/cpu"
)

// Linux hands out the 8 KiB of AMX tile state per process on request
// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, Linux 5.16+,
// Documentation/arch/x86/xstate.rst); without it the first tile
// instruction faults.
const (
	archReqXcompPerm  = 0x1023
	xfeatureXtiledata = 18
)

var amxOnce = sync.OnceValue(func() bool {
	if !hasAVX512 || !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 {
		return false
	}
	_, _, errno := syscall.Syscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
})

// HasAMXBF16 reports whether this CPU, operating system and build can run
// AMX bfloat16 tile kernels (TDPBF16PS, Sapphire Rapids and later). The
// first call asks Linux for permission to use the tile state.
func HasAMXBF16() bool { return amxOnce() }
