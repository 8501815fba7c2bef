//go:build purego || !amd64

package cpufeat

// Without assembly (the purego build tag or a target other than amd64) no
// feature is reported, so every kernel uses its Go reference.
const (
	hasAVX512     = false
	hasAVX2FMA    = false
	hasAVX512BF16 = false
)
