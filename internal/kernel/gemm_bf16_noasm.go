//go:build purego || !amd64

package kernel

func sbgemmAsmVariants() []*sbgemmVariant { return nil }
