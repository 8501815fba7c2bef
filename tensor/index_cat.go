package tensor

import (
	"fmt"
	"slices"
)

// Joining and splitting along a dim: Cat, Stack, Split, SplitSizes, Chunk.

// Cat concatenates tensors along dim (torch.cat). All must have the same
// number of dims and equal sizes outside dim; dtypes are promoted like a
// binary op. For inputs [2, 3] and [4, 3] and dim 0 the result is [6, 3].
// The gradient of each input is its slice of the output gradient.
func Cat(tensors []*Tensor, dim int) *Tensor {
	if len(tensors) == 0 {
		panic("tensor: Cat of no tensors")
	}
	first := tensors[0]
	d := first.dim(dim, "Cat")
	shape := append([]int(nil), first.shape...)
	dt := first.dtype
	shape[d] = 0
	for i, t := range tensors {
		if len(t.shape) != len(first.shape) {
			panic(fmt.Sprintf("tensor: Cat: tensor %d has shape %v, tensor 0 has %v (dims differ)", i, t.shape, first.shape))
		}
		for j, s := range t.shape {
			if j != d && s != first.shape[j] {
				panic(fmt.Sprintf("tensor: Cat along dim %d: tensor %d has shape %v, tensor 0 has %v", d, i, t.shape, first.shape))
			}
		}
		shape[d] += t.shape[d]
		dt = PromoteTypes(dt, t.dtype)
	}
	out := empty(dt, shape)
	starts := make([]int, len(tensors)+1)
	for i, t := range tensors {
		starts[i+1] = starts[i] + t.shape[d]
		if t.shape[d] > 0 {
			copyRaw(out.sliceRaw(d, starts[i], starts[i+1], 1), t.castRaw(dt))
		}
	}
	if trackAll(out, tensors...) {
		out.attach("Cat", func(g *Tensor) []*Tensor {
			grads := make([]*Tensor, len(tensors))
			for i, t := range tensors {
				if needs(t) {
					grads[i] = g.sliceRaw(d, starts[i], starts[i+1], 1)
				}
			}
			return grads
		}, tensors...)
	}
	return out
}

// Stack joins tensors of identical shape along a new dim inserted at dim
// (in [-Dim()-1, Dim()]): n tensors of shape [2, 3] stacked at dim 1 give
// [2, n, 3] (torch.stack).
func Stack(tensors []*Tensor, dim int) *Tensor {
	if len(tensors) == 0 {
		panic("tensor: Stack of no tensors")
	}
	d := normDim(dim, len(tensors[0].shape)+1, "Stack")
	parts := make([]*Tensor, len(tensors))
	for i, t := range tensors {
		if !slices.Equal(t.shape, tensors[0].shape) {
			panic(fmt.Sprintf("tensor: Stack: tensor %d has shape %v, tensor 0 has %v", i, t.shape, tensors[0].shape))
		}
		parts[i] = t.Unsqueeze(d)
	}
	return Cat(parts, d)
}

// Split cuts t along dim into pieces of splitSize elements (the last may
// be smaller), as views (torch.split with an int).
func (t *Tensor) Split(splitSize, dim int) []*Tensor {
	d := t.dim(dim, "Split")
	if splitSize <= 0 {
		panic(fmt.Sprintf("tensor: Split size must be positive, got %d", splitSize))
	}
	n := t.shape[d]
	var sizes []int
	for s := 0; s < n; s += splitSize {
		sizes = append(sizes, min(splitSize, n-s))
	}
	if n == 0 {
		sizes = []int{0}
	}
	return t.SplitSizes(sizes, d)
}

// SplitSizes cuts t along dim into pieces of the given sizes, which must
// add up to the dim's size, as views (torch.split with a list).
func (t *Tensor) SplitSizes(sizes []int, dim int) []*Tensor {
	d := t.dim(dim, "SplitSizes")
	total := 0
	for _, s := range sizes {
		if s < 0 {
			panic(fmt.Sprintf("tensor: SplitSizes: negative size in %v", sizes))
		}
		total += s
	}
	if total != t.shape[d] {
		panic(fmt.Sprintf("tensor: SplitSizes: sizes %v add up to %d, dim %d of shape %v has %d", sizes, total, d, t.shape, t.shape[d]))
	}
	out := make([]*Tensor, len(sizes))
	start := 0
	for i, s := range sizes {
		out[i] = t.Narrow(d, start, s)
		start += s
	}
	return out
}

// Chunk cuts t along dim into n pieces of ⌈size/n⌉ elements (the last
// smaller, and fewer than n pieces when the size does not allow n), as
// views (torch.chunk).
func (t *Tensor) Chunk(n, dim int) []*Tensor {
	d := t.dim(dim, "Chunk")
	if n <= 0 {
		panic(fmt.Sprintf("tensor: Chunk count must be positive, got %d", n))
	}
	size := (t.shape[d] + n - 1) / n
	if size == 0 {
		size = 1
	}
	return t.Split(size, d)
}
