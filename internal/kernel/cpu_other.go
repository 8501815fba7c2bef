//go:build purego || !amd64

package kernel

// Without assembly (purego build tag or a non-amd64 target) every kernel uses
// its pure-Go implementation.
var (
	hasAVX512  = false
	hasAVX2FMA = false
)
