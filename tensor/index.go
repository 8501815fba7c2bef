package tensor

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// Indexing ops: IndexSelect (and Embedding, its most common use), Gather,
// Scatter, ScatterAdd and MaskedSelect. They follow torch's semantics.
// Index tensors are Int64 (Int32 is accepted and converted); an index
// outside its dim is a programmer error and panics with the op, the index
// and the dim's size, as PyTorch raises. Negative indices are not wrapped
// (torch.gather and torch.index_select reject them too).

// pickElem returns the entry of fns that matches t's storage type, in the
// order float32, float64, int64, int32, uint8 (Uint8 and Bool), uint16
// (Float16 and BFloat16). Ops that only move elements use it to run one
// generic instantiation per storage type.
func pickElem[F any](t *Tensor, f32, f64, i64, i32, u8, u16 F) F {
	switch t.st.(type) {
	case *buffer[float32]:
		return f32
	case *buffer[float64]:
		return f64
	case *buffer[int64]:
		return i64
	case *buffer[int32]:
		return i32
	case *buffer[uint8]:
		return u8
	case *buffer[uint16]:
		return u16
	}
	panic("tensor: unknown storage")
}

// trackAll is track1..track3 for any number of inputs (nil entries are
// skipped): it reports whether the op records a node and marks out as
// inference when an input is.
func trackAll(out *Tensor, ins ...*Tensor) bool {
	rg := false
	for _, t := range ins {
		if t == nil {
			continue
		}
		if t.inference {
			out.inference = true
			return false
		}
		rg = rg || t.requiresGrad
	}
	return rg
}

// indexTensor returns idx as an Int64 tensor (Int32 is converted) or
// panics naming op.
func indexTensor(op string, idx *Tensor) *Tensor {
	switch idx.dtype {
	case Int64:
		return idx
	case Int32:
		return idx.castRaw(Int64)
	}
	panic(fmt.Sprintf("tensor: %s needs an Int64 or Int32 index tensor, got %v", op, idx.dtype))
}

// indexPanic reports an out-of-range index.
func indexPanic(op string, v int64, d, size int) {
	panic(fmt.Sprintf("tensor: %s index %d out of range for dim %d of size %d", op, v, d, size))
}

// ---- IndexSelect and Embedding ----

// outerInner returns the products of the sizes before and after dim d.
func outerInner(shape []int, d int) (outer, inner int) {
	return numelOf(shape[:d]), numelOf(shape[d+1:])
}

// indexSelectRaw is IndexSelect without autograd; ix is already checked.
func indexSelectRaw(t *Tensor, d int, ix []int64) *Tensor {
	shape := append([]int(nil), t.shape...)
	shape[d] = len(ix)
	out := empty(t.dtype, shape)
	src := t.contiguousRaw()
	outer, inner := outerInner(t.shape, d)
	pickElem(src, selectRows[float32], selectRows[float64], selectRows[int64], selectRows[int32], selectRows[uint8], selectRows[uint16])(out, src, ix, outer, t.shape[d], inner)
	return out
}

// selectRows copies rows of inner elements: out[o, j, :] = src[o, ix[j], :].
func selectRows[T elem](out, src *Tensor, ix []int64, outer, n, inner int) {
	o, s := flat[T](out), flat[T](src)
	k := len(ix)
	rows := outer * k
	fn := func(lo, hi int) {
		for r := lo; r < hi; r++ {
			oi, j := r/k, r%k
			from := (oi*n + int(ix[j])) * inner
			copy(o[r*inner:(r+1)*inner], s[from:from+inner])
		}
	}
	if rows*inner >= 2*grainElems && rows > 1 {
		parallel.For(rows, max(1, grainElems/max(inner, 1)), fn)
		return
	}
	fn(0, rows)
}

// indexAddRaw returns zeros of shape with g's rows added at the rows ix
// selects along dim d: the adjoint of IndexSelect. Repeated indices
// accumulate. Work is split over the outer dims, or over column ranges of
// the rows when d is 0 (an embedding table), so no two goroutines touch the
// same element.
func indexAddRaw(g *Tensor, shape []int, d int, ix []int64) *Tensor {
	if g.dtype.IsHalf() {
		return indexAddRaw(g.castRaw(Float32), shape, d, ix).castRaw(g.dtype)
	}
	out := empty(g.dtype, shape)
	g = g.contiguousRaw()
	outer, inner := outerInner(shape, d)
	switch g.dtype {
	case Float32:
		addRowsF32(flat[float32](out), flat[float32](g), ix, outer, shape[d], inner)
	case Float64:
		addRows(flat[float64](out), flat[float64](g), ix, outer, shape[d], inner)
	default:
		panic(fmt.Sprintf("tensor: index-add backward on %v", g.dtype))
	}
	return out
}

// addRows sets dst[o, ix[j], :] += g[o, j, :] for every o and j.
func addRows[T float](dst, g []T, ix []int64, outer, n, inner int) {
	k := len(ix)
	work := func(o0, o1, c0, c1 int) {
		for o := o0; o < o1; o++ {
			for j, i := range ix {
				dr := dst[(o*n+int(i))*inner+c0 : (o*n+int(i))*inner+c1]
				gr := g[(o*k+j)*inner+c0 : (o*k+j)*inner+c1]
				for c := range dr {
					dr[c] += gr[c]
				}
			}
		}
	}
	splitAddRows(outer, k, inner, work)
}

// addRowsF32 is addRows for float32 with the vector axpy kernel on long rows.
func addRowsF32(dst, g []float32, ix []int64, outer, n, inner int) {
	if inner < 16 {
		addRows(dst, g, ix, outer, n, inner)
		return
	}
	k := len(ix)
	work := func(o0, o1, c0, c1 int) {
		for o := o0; o < o1; o++ {
			for j, i := range ix {
				kernel.AxpyF32(1, g[(o*k+j)*inner+c0:(o*k+j)*inner+c1], dst[(o*n+int(i))*inner+c0:(o*n+int(i))*inner+c1])
			}
		}
	}
	splitAddRows(outer, k, inner, work)
}

// splitAddRows runs work over all of [0, outer) × [0, inner), split over
// cores by outer index when there are several, else by column range.
func splitAddRows(outer, k, inner int, work func(o0, o1, c0, c1 int)) {
	total := outer * k * inner
	switch {
	case total < 2*grainElems:
		work(0, outer, 0, inner)
	case outer > 1:
		parallel.For(outer, max(1, grainElems/max(k*inner, 1)), func(lo, hi int) { work(lo, hi, 0, inner) })
	default:
		grain := max(64, grainElems/max(k, 1))
		parallel.For(inner, grain, func(lo, hi int) { work(0, 1, lo, hi) })
	}
}

// checkedIndices returns the values of a 0-d or 1-D index tensor after
// checking them against size.
func checkedIndices(op string, idx *Tensor, d, size int) []int64 {
	if len(idx.shape) > 1 {
		panic(fmt.Sprintf("tensor: %s needs a 0-d or 1-D index tensor, got shape %v", op, idx.shape))
	}
	ix := indexTensor(op, idx).Int64s()
	for _, v := range ix {
		if v < 0 || v >= int64(size) {
			indexPanic(op, v, d, size)
		}
	}
	return ix
}

// IndexSelect returns the entries of t at positions idx along dim: for a
// t of shape [A, n, B] and dim 1, the result has shape [A, len(idx), B] and
// out[a, j, b] = t[a, idx[j], b]. idx is a 0-d or 1-D Int64 (or Int32)
// tensor; indices may repeat. The gradient adds each output row back at
// the row it came from (an index-add), which is the backward of an
// embedding lookup.
func (t *Tensor) IndexSelect(dim int, idx *Tensor) *Tensor {
	d := t.dim(dim, "IndexSelect")
	ix := checkedIndices("IndexSelect", idx, d, t.shape[d])
	out := indexSelectRaw(t, d, ix)
	if track1(out, t) {
		out.attach("IndexSelect", func(g *Tensor) []*Tensor {
			return []*Tensor{indexAddRaw(g, t.shape, d, ix)}
		}, t)
	}
	return out
}

// Embedding looks up rows of a table: weight is [num, dim] and idx an
// Int64 (or Int32) tensor of any shape; the result has shape
// idx.Shape()+[dim] and holds weight[idx[...], :]. It is IndexSelect on
// dim 0, and its gradient is a scatter-add of the output gradient's rows
// into a [num, dim] table (repeated indices accumulate).
func Embedding(weight, idx *Tensor) *Tensor {
	if len(weight.shape) != 2 {
		panic(fmt.Sprintf("tensor: Embedding needs a 2-D weight [num, dim], got %v", weight.shape))
	}
	flatIdx := idx
	if len(idx.shape) != 1 {
		flatIdx = idx.reshapeRaw([]int{-1})
	}
	out := weight.IndexSelect(0, flatIdx)
	if len(idx.shape) == 1 {
		return out
	}
	return out.Reshape(append(append([]int(nil), idx.shape...), weight.shape[1])...)
}

// ---- Gather, Scatter, ScatterAdd ----

// checkScatterShapes checks torch.gather/scatter's shape rules: idx has
// t's number of dims, fits inside t along every dim but dim, and (for
// scatter) fits inside src along every dim.
func checkScatterShapes(op string, t *Tensor, d int, idx, src *Tensor) {
	if len(idx.shape) != len(t.shape) {
		panic(fmt.Sprintf("tensor: %s: index of shape %v needs as many dims as the input %v", op, idx.shape, t.shape))
	}
	for i, s := range idx.shape {
		if i != d && s > t.shape[i] {
			panic(fmt.Sprintf("tensor: %s: index of shape %v is larger than the input %v outside dim %d", op, idx.shape, t.shape, d))
		}
		if src != nil && (len(src.shape) != len(idx.shape) || s > src.shape[i]) {
			panic(fmt.Sprintf("tensor: %s: index of shape %v does not fit inside the source %v", op, idx.shape, src.shape))
		}
	}
}

// scatterPlan builds a walk over idx's shape with operands: 0 the index
// (contiguous Int64), 1 the tensor indexed along d (t, with its dim-d
// stride zeroed: the index supplies that coordinate) and 2 the other data
// operand o (its strides at idx's shape). It returns the plan and t's
// stride along d.
func scatterPlan(op string, ix, t *Tensor, d int, o *Tensor) (*plan, int) {
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0], off[0] = ix.strides, ix.offset
	ts := append([]int(nil), t.strides...)
	ts[d] = 0
	st[1], off[1] = ts, t.offset
	st[2], off[2] = o.strides, o.offset
	return newPlan(ix.shape, 3, &st, &off), t.strides[d]
}

// gatherRaw returns out[..] = t[.., idx[..] along d, ..], shaped like idx.
func gatherRaw(op string, t *Tensor, d int, ix *Tensor) *Tensor {
	out := empty(t.dtype, ix.shape)
	pickElem(t, gatherTyped[float32], gatherTyped[float64], gatherTyped[int64], gatherTyped[int32], gatherTyped[uint8], gatherTyped[uint16])(op, out, t, d, ix)
	return out
}

func gatherTyped[T elem](op string, out, t *Tensor, d int, ix *Tensor) {
	o, x, iv := data[T](out), data[T](t), data[int64](ix)
	p, sd := scatterPlan(op, ix, t, d, out)
	n, si, st, so := p.n, p.inner[0], p.inner[1], p.inner[2]
	size := int64(t.shape[d])
	p.run(true, func(off *[maxOperands]int) {
		for e := 0; e < n; e++ {
			v := iv[off[0]+e*si]
			if v < 0 || v >= size {
				indexPanic(op, v, d, int(size))
			}
			o[off[2]+e*so] = x[off[1]+e*st+int(v)*sd]
		}
	})
}

// scatterIntoRaw writes src into dst in place at the positions idx
// selects along d (add: accumulate instead of overwrite). It runs on one
// goroutine: indices may repeat.
func scatterIntoRaw(op string, dst *Tensor, d int, ix, src *Tensor, add bool) {
	src = src.castRaw(dst.dtype)
	if add && dst.dtype.IsHalf() {
		f := dst.castRaw(Float32)
		scatterIntoRaw(op, f, d, ix, src.castRaw(Float32), true)
		copyRaw(dst, f.castRaw(dst.dtype))
		return
	}
	if add {
		pickElem(dst, scatterAddTyped[float32], scatterAddTyped[float64], scatterAddTyped[int64], scatterAddTyped[int32], scatterAddTyped[uint8], nil)(op, dst, d, ix, src)
		return
	}
	pickElem(dst, scatterTyped[float32], scatterTyped[float64], scatterTyped[int64], scatterTyped[int32], scatterTyped[uint8], scatterTyped[uint16])(op, dst, d, ix, src)
}

func scatterTyped[T elem](op string, dst *Tensor, d int, ix, src *Tensor) {
	o, s, iv := data[T](dst), data[T](src), data[int64](ix)
	p, sd := scatterPlan(op, ix, dst, d, src)
	n, si, so, ss := p.n, p.inner[0], p.inner[1], p.inner[2]
	size := int64(dst.shape[d])
	p.run(false, func(off *[maxOperands]int) {
		for e := 0; e < n; e++ {
			v := iv[off[0]+e*si]
			if v < 0 || v >= size {
				indexPanic(op, v, d, int(size))
			}
			o[off[1]+e*so+int(v)*sd] = s[off[2]+e*ss]
		}
	})
}

func scatterAddTyped[T number](op string, dst *Tensor, d int, ix, src *Tensor) {
	o, s, iv := data[T](dst), data[T](src), data[int64](ix)
	p, sd := scatterPlan(op, ix, dst, d, src)
	n, si, so, ss := p.n, p.inner[0], p.inner[1], p.inner[2]
	size := int64(dst.shape[d])
	p.run(false, func(off *[maxOperands]int) {
		for e := 0; e < n; e++ {
			v := iv[off[0]+e*si]
			if v < 0 || v >= size {
				indexPanic(op, v, d, int(size))
			}
			o[off[1]+e*so+int(v)*sd] += s[off[2]+e*ss]
		}
	})
}

// gatherGradToSrc returns the gradient of a scatter's source: g gathered
// at idx, placed in the leading idx-shaped block of zeros of src's shape
// (source elements outside that block were not used).
func gatherGradToSrc(op string, g *Tensor, d int, ix *Tensor, srcShape []int) *Tensor {
	gs := gatherRaw(op, g, d, ix)
	if slices.Equal(gs.shape, srcShape) {
		return gs
	}
	z := empty(g.dtype, srcShape)
	v := z
	for i, s := range ix.shape {
		v = v.sliceRaw(i, 0, s, 1)
	}
	copyRaw(v, gs)
	return z
}

// Gather returns the elements of t picked along dim by idx, shaped like
// idx: for a 3-D t and dim 1, out[i][j][k] = t[i][idx[i][j][k]][k]
// (torch.gather). idx must have t's number of dims and, along every other
// dim, be no larger than t. The gradient scatter-adds into zeros of t's
// shape.
func (t *Tensor) Gather(dim int, idx *Tensor) *Tensor {
	d := t.dim(dim, "Gather")
	checkScatterShapes("Gather", t, d, idx, nil)
	ix := indexTensor("Gather", idx)
	out := gatherRaw("Gather", t, d, ix)
	if track1(out, t) {
		out.attach("Gather", func(g *Tensor) []*Tensor {
			z := empty(g.dtype, t.shape)
			scatterIntoRaw("Gather backward", z, d, ix, g, true)
			return []*Tensor{z}
		}, t)
	}
	return out
}

// Scatter returns a copy of t with src's elements written at the positions
// idx picks along dim: for a 3-D t and dim 1, out[i][idx[i][j][k]][k] =
// src[i][j][k] for every position of idx (torch.scatter). src has t's
// number of dims and is at least as large as idx along every dim; extra
// source elements are ignored. When idx repeats a position the last write
// wins (in row-major order of idx), and the gradient for src is only
// meaningful for unique positions, as in PyTorch. t's gradient is zero at
// the overwritten positions.
func (t *Tensor) Scatter(dim int, idx, src *Tensor) *Tensor {
	return t.scatterOp("Scatter", dim, idx, src, false)
}

// ScatterAdd returns a copy of t with src's elements added at the
// positions idx picks along dim (torch.scatter_add); repeated positions
// accumulate. Shapes follow Scatter.
func (t *Tensor) ScatterAdd(dim int, idx, src *Tensor) *Tensor {
	return t.scatterOp("ScatterAdd", dim, idx, src, true)
}

func (t *Tensor) scatterOp(op string, dim int, idx, src *Tensor, add bool) *Tensor {
	d := t.dim(dim, op)
	checkScatterShapes(op, t, d, idx, src)
	ix := indexTensor(op, idx)
	dt := PromoteTypes(t.dtype, src.dtype)
	out := t.castRaw(dt).cloneRaw()
	scatterIntoRaw(op, out, d, ix, src.castRaw(dt), add)
	if track2(out, t, src) {
		out.attach(op, func(g *Tensor) []*Tensor {
			var gt, gs *Tensor
			if needs(t) {
				gt = g
				if !add { // overwritten positions do not depend on t
					gt = g.cloneRaw()
					scatterIntoRaw(op, gt, d, ix, Scalar(0, g.dtype).expandRaw(ix.shape), false)
				}
			}
			if needs(src) {
				gs = gatherGradToSrc(op, g, d, ix, src.shape)
			}
			return []*Tensor{gt, gs}
		}, t, src)
	}
	return out
}

// ScatterInPlace is Scatter that writes into t itself and returns it. Like
// every in-place op it records nothing (see the package documentation).
func (t *Tensor) ScatterInPlace(dim int, idx, src *Tensor) *Tensor {
	t.checkInPlace("ScatterInPlace")
	d := t.dim(dim, "ScatterInPlace")
	checkScatterShapes("ScatterInPlace", t, d, idx, src)
	scatterIntoRaw("ScatterInPlace", t, d, indexTensor("ScatterInPlace", idx), src, false)
	return t
}

// ScatterAddInPlace is ScatterAdd that accumulates into t itself and
// returns it; it records nothing.
func (t *Tensor) ScatterAddInPlace(dim int, idx, src *Tensor) *Tensor {
	t.checkInPlace("ScatterAddInPlace")
	d := t.dim(dim, "ScatterAddInPlace")
	checkScatterShapes("ScatterAddInPlace", t, d, idx, src)
	if t.dtype == Bool {
		panic("tensor: ScatterAddInPlace on a bool tensor")
	}
	scatterIntoRaw("ScatterAddInPlace", t, d, indexTensor("ScatterAddInPlace", idx), src, true)
	return t
}

// ---- MaskedSelect ----

// MaskedSelect returns, as a 1-D tensor, the elements of t where mask is
// true, in row-major order (torch.masked_select). t and mask broadcast
// together. The gradient places each output gradient back at its position.
func (t *Tensor) MaskedSelect(mask *Tensor) *Tensor {
	shape := broadcastShapes("MaskedSelect", t.shape, mask.shape)
	m := mask.castRaw(Bool).expandRaw(shape).contiguousRaw()
	mv := flat[uint8](m)
	var pos []int
	for i, v := range mv {
		if v != 0 {
			pos = append(pos, i)
		}
	}
	x := t.expandRaw(shape).contiguousRaw()
	out := empty(t.dtype, []int{len(pos)})
	pickElem(x, takeFlat[float32], takeFlat[float64], takeFlat[int64], takeFlat[int32], takeFlat[uint8], takeFlat[uint16])(out, x, pos)
	if track2(out, t, mask) {
		out.attach("MaskedSelect", func(g *Tensor) []*Tensor {
			z := empty(g.dtype, shape)
			g = g.contiguousRaw()
			pickElem(g, putFlat[float32], putFlat[float64], putFlat[int64], putFlat[int32], putFlat[uint8], putFlat[uint16])(z, g, pos)
			return []*Tensor{z} // the engine sums broadcast dims back to t's shape
		}, t)
	}
	return out
}

// takeFlat sets out[i] = x[pos[i]] for contiguous tensors.
func takeFlat[T elem](out, x *Tensor, pos []int) {
	o, s := flat[T](out), flat[T](x)
	for i, p := range pos {
		o[i] = s[p]
	}
}

// putFlat sets z[pos[i]] = g[i] for contiguous tensors.
func putFlat[T elem](z, g *Tensor, pos []int) {
	o, s := flat[T](z), flat[T](g)
	for i, p := range pos {
		o[p] = s[i]
	}
}
