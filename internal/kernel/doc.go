// Package kernel holds fathom's hot loops: GEMM, elementwise maps and
// reductions over flat slices.
//
// Every kernel has a plain Go reference implementation that always compiles.
// Faster variants (Go assembly for AVX-512 and AVX2+FMA) are chosen once at
// start-up from the CPU's features (package internal/cpufeat); the purego
// build tag turns them off.
// Tests run every registered variant against the reference.
//
// The int8 GEMM (int8.go: PackI8, GemmU8I8, GemmU8I8F32) multiplies uint8
// activations by int8 weights into int32, on AVX512-VNNI (VPDPBUSD) where
// the CPU has it, with a fused dequantization epilogue; it backs the
// quantized layers (see docs/compression.md).
//
// All matrices are row-major. Slices are not bounds-checked beyond what Go
// does; callers (package tensor) validate shapes.
package kernel
