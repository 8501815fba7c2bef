//go:build !linux

package recommend

// arena hands out arrays from the Go heap (huge pages are a Linux detail).
type arena struct{}

func arenaMake[T any](a *arena, n int) []T { return make([]T, n) }

func (a *arena) free() {}

// hugeMin is unused without huge pages (tests set it).
var hugeMin = 16 << 20
