// Package kernel holds fathom's hot loops: GEMM, elementwise maps and
// reductions over flat slices.
//
// Every kernel has a plain Go reference implementation that always compiles.
// Faster variants (Go assembly for AVX-512 and AVX2+FMA) are chosen once at
// start-up from the CPU's features (package internal/cpufeat); the purego
// build tag turns them off.
// Tests run every registered variant against the reference.
//
// All matrices are row-major. Slices are not bounds-checked beyond what Go
// does; callers (package tensor) validate shapes.
package kernel
