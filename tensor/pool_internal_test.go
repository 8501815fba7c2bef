package tensor

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/internal/kernel"
)

// TestMaxPool2x2MatchesKernel compares the unrolled 2×2 path with the
// general kernel on planes full of ties and NaNs, odd sizes included.
func TestMaxPool2x2MatchesKernel(t *testing.T) {
	rng := NewRNG(1)
	for _, hw := range [][2]int{{2, 2}, {5, 7}, {8, 6}} {
		g := kernel.Window2d{H: hw[0], W: hw[1], KH: 2, KW: 2, StrideH: 2, StrideW: 2}
		planes := 3
		src := make([]float32, planes*g.H*g.W)
		for i := range src {
			src[i] = float32(rng.Intn(3))
			if rng.Intn(9) == 0 {
				src[i] = float32(math.NaN())
			}
		}
		n := planes * g.OutH() * g.OutW()
		want, got := make([]float32, n), make([]float32, n)
		wantIdx, gotIdx := make([]int32, n), make([]int32, n)
		code := make([]uint8, n)
		kernel.MaxPool2dForwardF32(want, wantIdx, src, planes, g)
		maxPool2x2(got, code, src, planes, g)
		for i, k := range code {
			gotIdx[i] = int32(window2x2Index(i, k, g.OutH(), g.OutW(), g.W))
		}
		if !slices.Equal(wantIdx, gotIdx) {
			t.Fatalf("%v: indices %v, want %v", hw, gotIdx, wantIdx)
		}
		for i := range want {
			if want[i] != got[i] && !(want[i] != want[i] && got[i] != got[i]) {
				t.Fatalf("%v: value %d = %v, want %v", hw, i, got[i], want[i])
			}
		}
	}
}

// TestMaxPool2x2BackwardMatchesKernel compares the one-pass 2×2 backward
// with the kernel's clear-and-scatter on odd and even planes.
func TestMaxPool2x2BackwardMatchesKernel(t *testing.T) {
	rng := NewRNG(2)
	for _, hw := range [][2]int{{2, 2}, {5, 7}, {8, 6}, {28, 28}} {
		g := kernel.Window2d{H: hw[0], W: hw[1], KH: 2, KW: 2, StrideH: 2, StrideW: 2}
		planes := 3
		src := make([]float32, planes*g.H*g.W)
		for i := range src {
			src[i] = float32(rng.Intn(4))
		}
		n := planes * g.OutH() * g.OutW()
		dy := make([]float32, n)
		for i := range dy {
			dy[i] = float32(rng.Normal(Float32, 0, 1, 1).Item())
		}
		out, idx, code := make([]float32, n), make([]int32, n), make([]uint8, n)
		kernel.MaxPool2dForwardF32(out, idx, src, planes, g)
		maxPool2x2(out, code, src, planes, g)
		want := make([]float32, len(src))
		got := make([]float32, len(src))
		for i := range got {
			got[i] = float32(math.NaN()) // every element must be written
		}
		kernel.MaxPool2dBackwardF32(want, dy, idx, planes, g)
		maxPool2x2Backward(got, dy, code, planes, g)
		if !slices.Equal(got, want) {
			t.Fatalf("%v: gradient %v, want %v", hw, got, want)
		}
	}
}
