//go:build purego || !amd64

package kernel

// gemvVariants lists the assembly drivers; without assembly there are none.
func gemvVariants() map[string]func(y, w, x, bias []float32) { return nil }
