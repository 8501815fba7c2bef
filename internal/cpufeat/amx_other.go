//go:build purego || !amd64 || !linux

package cpufeat

// HasAMXBF16 reports whether AMX bfloat16 tile kernels can run: only on
// linux/amd64 without the purego tag.
func HasAMXBF16() bool { return false }
