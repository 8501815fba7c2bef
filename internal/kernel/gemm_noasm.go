//go:build purego || !amd64

package kernel

func sgemmAsmVariants() []*gemmVariant[float32] { return nil }

func dgemmAsmVariants() []*gemmVariant[float64] { return nil }
