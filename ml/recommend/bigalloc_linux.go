package recommend

import (
	"syscall"
	"unsafe"
)

// hugeMin is the size from which arrays are mapped with transparent huge
// pages: the rating rows and the factors are read and written at random
// over hundreds of MiB, and with 4 KiB pages nearly every access would
// also miss the TLB.
var hugeMin = 16 << 20

// arena hands out large arrays mapped outside the Go heap with
// MADV_HUGEPAGE, and smaller ones from the heap; free unmaps them all.
type arena struct{ maps [][]byte }

func arenaMake[T any](a *arena, n int) []T {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if size < hugeMin || a == nil {
		return make([]T, n)
	}
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]T, n)
	}
	_ = syscall.Madvise(mem, 14) // MADV_HUGEPAGE; a refusal only costs speed
	a.maps = append(a.maps, mem)
	return unsafe.Slice((*T)(unsafe.Pointer(&mem[0])), n)
}

func (a *arena) free() {
	for _, m := range a.maps {
		_ = syscall.Munmap(m)
	}
	a.maps = nil
}
