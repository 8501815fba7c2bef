package tensor

import (
	"fmt"
	"slices"
)

// View ops return tensors that share storage with their input: no element
// is copied. Their gradients are views or scatters of the output gradient.

// viewAs returns a header over t's storage with the given shape, strides
// and offset (no autograd state).
func (t *Tensor) viewAs(shape, strides []int, offset int) *Tensor {
	u := header(t.dtype, len(shape))
	copy(u.shape, shape)
	copy(u.strides, strides)
	u.offset = offset
	u.st = t.st
	return u
}

// inferShape resolves one -1 entry of shape against numel.
func inferShape(op string, shape []int, numel int) []int {
	out := append([]int(nil), shape...)
	neg := -1
	n := 1
	for i, s := range out {
		switch {
		case s == -1 && neg < 0:
			neg = i
		case s < 0:
			panic(fmt.Sprintf("tensor: %s: invalid shape %v", op, shape))
		default:
			n *= s
		}
	}
	if neg >= 0 {
		if n == 0 || numel%n != 0 {
			panic(fmt.Sprintf("tensor: %s: shape %v is invalid for %d elements", op, shape, numel))
		}
		out[neg] = numel / n
		n = numel
	}
	if n != numel {
		panic(fmt.Sprintf("tensor: %s: shape %v is invalid for %d elements", op, shape, numel))
	}
	return out
}

// viewStrides computes strides that view t's elements with newShape, or
// returns nil when t's layout does not allow it. The old dims are grouped
// into chunks that are contiguous among themselves (each dim's stride equals
// the next one's stride times its size); the new dims must split every
// chunk exactly, and then inherit strides from it. This is the rule
// torch.Tensor.view documents.
func viewStrides(shape, strides, newShape []int) []int {
	out := make([]int, len(newShape))
	if len(shape) == 0 || numelOf(shape) == 0 {
		contiguousStrides(newShape, out)
		return out
	}
	nd := len(newShape) - 1 // next new dim to assign, from the innermost
	base := strides[len(strides)-1]
	chunk := 1 // elements in the current chunk of old dims
	for od := len(shape) - 1; od >= 0; od-- {
		chunk *= shape[od]
		endOfChunk := od == 0 || (shape[od-1] != 1 && strides[od-1] != chunk*base)
		if !endOfChunk {
			continue
		}
		filled := 1
		for nd >= 0 && (filled < chunk || newShape[nd] == 1) {
			out[nd] = filled * base
			filled *= newShape[nd]
			nd--
		}
		if filled != chunk {
			return nil
		}
		if od > 0 {
			base = strides[od-1]
			chunk = 1
		}
	}
	if nd != -1 {
		return nil
	}
	return out
}

// reshapeRaw is Reshape without autograd.
func (t *Tensor) reshapeRaw(shape []int) *Tensor {
	shape = inferShape("Reshape", shape, t.Numel())
	src := t
	if !t.IsContiguous() {
		if st := viewStrides(t.shape, t.strides, shape); st != nil {
			return t.viewAs(shape, st, t.offset)
		}
		src = t.cloneRaw()
	}
	return src.contiguousView(shape)
}

// contiguousView returns a row-major view of the contiguous tensor t with
// another shape of the same size.
func (t *Tensor) contiguousView(shape []int) *Tensor {
	u := header(t.dtype, len(shape))
	copy(u.shape, shape)
	contiguousStrides(u.shape, u.strides)
	u.offset = t.offset
	u.st = t.st
	return u
}

// recordReshape attaches the backward of every shape-changing view.
func recordReshape(op string, out, t *Tensor) *Tensor {
	if track1(out, t) {
		in := t.shape
		out.attach(op, func(g *Tensor) []*Tensor { return []*Tensor{g.reshapeRaw(in)} }, t)
	}
	return out
}

// Reshape returns a tensor with the same elements in the given shape (one
// entry may be -1 to infer it). It is a view when t's layout allows, else a
// copy, like torch.reshape.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	return recordReshape("Reshape", t.reshapeRaw(shape), t)
}

// View is Reshape that never copies: it panics when t's strides cannot
// express the new shape (call Contiguous first).
func (t *Tensor) View(shape ...int) *Tensor {
	shape = inferShape("View", shape, t.Numel())
	if t.IsContiguous() {
		return recordReshape("View", t.contiguousView(shape), t)
	}
	st := viewStrides(t.shape, t.strides, shape)
	if st == nil {
		panic(fmt.Sprintf("tensor: View: shape %v with strides %v cannot be viewed as %v; use Reshape or Contiguous", t.shape, t.strides, shape))
	}
	return recordReshape("View", t.viewAs(shape, st, t.offset), t)
}

// Flatten merges dims start..end (inclusive, negative allowed) into one.
func (t *Tensor) Flatten(start, end int) *Tensor {
	if len(t.shape) == 0 {
		return t.Reshape(1)
	}
	start, end = t.dim(start, "Flatten"), t.dim(end, "Flatten")
	if start > end {
		panic(fmt.Sprintf("tensor: Flatten start %d after end %d", start, end))
	}
	shape := append([]int(nil), t.shape[:start]...)
	shape = append(shape, numelOf(t.shape[start:end+1]))
	shape = append(shape, t.shape[end+1:]...)
	return recordReshape("Flatten", t.reshapeRaw(shape), t)
}

// Squeeze removes the given dims, which must have size 1 (dims of other
// sizes are left alone, as in PyTorch); with no dims it removes every
// size-1 dim.
func (t *Tensor) Squeeze(dims ...int) *Tensor {
	drop := make([]bool, len(t.shape))
	if len(dims) == 0 {
		for i, s := range t.shape {
			drop[i] = s == 1
		}
	} else {
		for _, d := range dims {
			d = t.dim(d, "Squeeze")
			drop[d] = t.shape[d] == 1
		}
	}
	var shape, st []int
	for i := range t.shape {
		if !drop[i] {
			shape = append(shape, t.shape[i])
			st = append(st, t.strides[i])
		}
	}
	return recordReshape("Squeeze", t.viewAs(shape, st, t.offset), t)
}

// Unsqueeze inserts a size-1 dim at position d (in [-Dim()-1, Dim()]).
func (t *Tensor) Unsqueeze(d int) *Tensor {
	d = normDim(d, len(t.shape)+1, "Unsqueeze")
	shape := slices.Insert(append([]int(nil), t.shape...), d, 1)
	inner := 1
	if d < len(t.shape) {
		inner = t.strides[d] * t.shape[d]
	}
	st := slices.Insert(append([]int(nil), t.strides...), d, inner)
	return recordReshape("Unsqueeze", t.viewAs(shape, st, t.offset), t)
}

// permuteRaw is Permute without autograd.
func (t *Tensor) permuteRaw(perm []int) *Tensor {
	if len(perm) != len(t.shape) {
		panic(fmt.Sprintf("tensor: Permute: %d dims given for a %d-d tensor", len(perm), len(t.shape)))
	}
	u := t.viewAs(t.shape, t.strides, t.offset)
	seen := make([]bool, len(perm))
	for i, p := range perm {
		p = t.dim(p, "Permute")
		if seen[p] {
			panic(fmt.Sprintf("tensor: Permute: dim %d repeated in %v", p, perm))
		}
		seen[p] = true
		u.shape[i], u.strides[i] = t.shape[p], t.strides[p]
	}
	return u
}

// Permute reorders the dims: dim i of the result is dim perm[i] of t.
func (t *Tensor) Permute(perm ...int) *Tensor {
	out := t.permuteRaw(perm)
	if track1(out, t) {
		inv := make([]int, len(perm))
		for i, p := range perm {
			inv[normDim(p, len(perm), "Permute")] = i
		}
		out.attach("Permute", func(g *Tensor) []*Tensor { return []*Tensor{g.permuteRaw(inv)} }, t)
	}
	return out
}

// transposeRaw swaps two dims without autograd.
func (t *Tensor) transposeRaw(d0, d1 int) *Tensor {
	d0, d1 = t.dim(d0, "Transpose"), t.dim(d1, "Transpose")
	u := t.viewAs(t.shape, t.strides, t.offset)
	u.shape[d0], u.shape[d1] = u.shape[d1], u.shape[d0]
	u.strides[d0], u.strides[d1] = u.strides[d1], u.strides[d0]
	return u
}

// Transpose swaps dims d0 and d1 (a view).
func (t *Tensor) Transpose(d0, d1 int) *Tensor {
	out := t.transposeRaw(d0, d1)
	if track1(out, t) {
		out.attach("Transpose", func(g *Tensor) []*Tensor { return []*Tensor{g.transposeRaw(d0, d1)} }, t)
	}
	return out
}

// T returns the transpose of a 2-D tensor (a view); 0-d and 1-D tensors are
// returned as they are.
func (t *Tensor) T() *Tensor {
	switch len(t.shape) {
	case 0, 1:
		return t
	case 2:
		return t.Transpose(0, 1)
	}
	panic(fmt.Sprintf("tensor: T on a %d-d tensor; use Transpose or Permute", len(t.shape)))
}

// sliceRaw is Slice without autograd.
func (t *Tensor) sliceRaw(d, start, end, step int) *Tensor {
	d = t.dim(d, "Slice")
	size := t.shape[d]
	if step <= 0 {
		panic(fmt.Sprintf("tensor: Slice step must be positive, got %d", step))
	}
	if start < 0 {
		start += size
	}
	if end < 0 {
		end += size
	}
	start = min(max(start, 0), size)
	end = min(max(end, start), size)
	u := t.viewAs(t.shape, t.strides, t.offset+start*t.strides[d])
	u.shape[d] = (end - start + step - 1) / step
	u.strides[d] = t.strides[d] * step
	return u
}

// recordSlice attaches the backward of a view that selects a subset of t's
// elements: the gradient is scattered into zeros of t's shape.
func recordSlice(op string, out, t *Tensor, view func(z *Tensor) *Tensor) *Tensor {
	if track1(out, t) {
		out.attach(op, func(g *Tensor) []*Tensor {
			z := empty(g.dtype, t.shape)
			copyRaw(view(z), g)
			return []*Tensor{z}
		}, t)
	}
	return out
}

// Slice returns elements start, start+step, ... before end along dim d (a
// view). Negative start/end count from the end; out-of-range bounds are
// clamped as in Python slicing; step must be positive.
func (t *Tensor) Slice(d, start, end, step int) *Tensor {
	out := t.sliceRaw(d, start, end, step)
	return recordSlice("Slice", out, t, func(z *Tensor) *Tensor { return z.sliceRaw(d, start, end, step) })
}

// Narrow returns length elements of dim d starting at start (a view). It
// panics if the range does not fit.
func (t *Tensor) Narrow(d, start, length int) *Tensor {
	dd := t.dim(d, "Narrow")
	if start < 0 {
		start += t.shape[dd]
	}
	if start < 0 || length < 0 || start+length > t.shape[dd] {
		panic(fmt.Sprintf("tensor: Narrow(%d, %d, %d) out of range for shape %v", d, start, length, t.shape))
	}
	out := t.sliceRaw(dd, start, start+length, 1)
	return recordSlice("Narrow", out, t, func(z *Tensor) *Tensor { return z.sliceRaw(dd, start, start+length, 1) })
}

// selectRaw is Select without autograd.
func (t *Tensor) selectRaw(d, i int) *Tensor {
	d = t.dim(d, "Select")
	if i < 0 {
		i += t.shape[d]
	}
	if i < 0 || i >= t.shape[d] {
		panic(fmt.Sprintf("tensor: Select index %d out of range for dim %d of shape %v", i, d, t.shape))
	}
	shape := slices.Delete(append([]int(nil), t.shape...), d, d+1)
	st := slices.Delete(append([]int(nil), t.strides...), d, d+1)
	return t.viewAs(shape, st, t.offset+i*t.strides[d])
}

// Select returns the slice at index i of dim d, with that dim removed (a view).
func (t *Tensor) Select(d, i int) *Tensor {
	out := t.selectRaw(d, i)
	return recordSlice("Select", out, t, func(z *Tensor) *Tensor { return z.selectRaw(d, i) })
}

// expandRaw is Expand without autograd.
func (t *Tensor) expandRaw(shape []int) *Tensor {
	if len(shape) < len(t.shape) {
		panic(fmt.Sprintf("tensor: Expand: shape %v has fewer dims than %v", shape, t.shape))
	}
	k := len(shape) - len(t.shape)
	full := append([]int(nil), shape...)
	for i := range full {
		if full[i] == -1 {
			if i < k {
				panic(fmt.Sprintf("tensor: Expand: -1 in a new leading dim of %v", shape))
			}
			full[i] = t.shape[i-k]
		}
	}
	return t.viewAs(full, broadcastStrides("Expand", t, full), t.offset)
}

// Expand returns a view of t broadcast to shape (size-1 dims repeated with
// stride 0; new leading dims allowed; -1 keeps a size). The result must not
// be written in place.
func (t *Tensor) Expand(shape ...int) *Tensor {
	out := t.expandRaw(shape)
	if track1(out, t) {
		out.attach("Expand", func(g *Tensor) []*Tensor { return []*Tensor{g} }, t) // the engine sums to t's shape
	}
	return out
}

// BroadcastTo is Expand with a NumPy-style name.
func (t *Tensor) BroadcastTo(shape ...int) *Tensor { return t.Expand(shape...) }

// Contiguous returns t if its elements are already dense row-major, else a
// contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	out := t.cloneRaw()
	if track1(out, t) {
		out.attach("Contiguous", func(g *Tensor) []*Tensor { return []*Tensor{g} }, t)
	}
	return out
}

// Clone returns a contiguous copy of t (gradients flow back to t).
func (t *Tensor) Clone() *Tensor {
	out := t.cloneRaw()
	if track1(out, t) {
		out.attach("Clone", func(g *Tensor) []*Tensor { return []*Tensor{g} }, t)
	}
	return out
}

// To returns t converted to dt (t itself if it already has that type).
// Casts between float types are differentiable.
func (t *Tensor) To(dt DType) *Tensor {
	if t.dtype == dt {
		return t
	}
	out := t.castRaw(dt)
	if track1(out, t) && t.dtype.IsFloat() {
		src := t.dtype
		out.attach("To", func(g *Tensor) []*Tensor { return []*Tensor{g.castRaw(src)} }, t)
	}
	return out
}
