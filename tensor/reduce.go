package tensor

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// redOp names a reduction.
type redOp uint8

const (
	redSum redOp = iota
	redMax
	redMin
	redProd
)

var redNames = [...]string{"Sum", "Max", "Min", "Prod"}

func (op redOp) String() string { return redNames[op] }

// keepShape returns shape with the masked dims set to 1.
func keepShape(shape []int, mask []bool) []int {
	ks := append([]int(nil), shape...)
	for i, m := range mask {
		if m {
			ks[i] = 1
		}
	}
	return ks
}

// dropShape returns shape without the masked dims.
func dropShape(shape []int, mask []bool) []int {
	var ds []int
	for i, m := range mask {
		if !m {
			ds = append(ds, shape[i])
		}
	}
	return ds
}

// reduceRaw reduces t over dims (all dims when empty) without autograd.
// Sums and products of integer or Bool tensors are Int64.
func reduceRaw(op redOp, t *Tensor, dims []int, keep bool) *Tensor {
	dt := t.dtype
	switch {
	case dt.IsHalf():
		return reduceRaw(op, t.castRaw(Float32), dims, keep).castRaw(dt)
	case (op == redSum || op == redProd) && !dt.IsFloat() && dt != Int64:
		t, dt = t.castRaw(Int64), Int64
	}
	mask := normDims(dims, len(t.shape), op.String())
	out := empty(dt, keepShape(t.shape, mask))
	if t.Numel() == 0 {
		switch op {
		case redProd:
			out.fillRaw(1)
		case redMax, redMin:
			if out.Numel() > 0 {
				panic(fmt.Sprintf("tensor: %s over an empty dim of shape %v", op, t.shape))
			}
		}
	} else {
		switch t.st.(type) {
		case *buffer[float32]:
			reduceTyped(op, out, t, mask, redF32)
		case *buffer[float64]:
			reduceTyped(op, out, t, mask, redF64)
		case *buffer[int64]:
			reduceTyped[int64](op, out, t, mask, nil)
		case *buffer[int32]:
			reduceTyped[int32](op, out, t, mask, nil)
		case *buffer[uint8]:
			reduceTyped[uint8](op, out, t, mask, nil)
		}
	}
	if !keep {
		out = out.contiguousView(dropShape(t.shape, mask))
	}
	return out
}

// redKernels are package kernel's whole-slice reductions for a type.
type redKernels[T number] struct {
	sum, max, min func([]T) T
	add           func(dst, a, b []T)
}

var (
	redF32 = &redKernels[float32]{sum: kernel.SumF32, max: kernel.MaxF32, min: kernel.MinF32, add: kernel.AddF32}
	redF64 = &redKernels[float64]{sum: kernel.SumF64, max: kernel.MaxF64, min: kernel.MinF64, add: kernel.AddF64}
)

// foldRow reduces n elements of x starting at i with stride s.
func foldRow[T number](op redOp, x []T, i, s, n int, k *redKernels[T]) T {
	if s == 1 && k != nil {
		switch op {
		case redSum:
			return k.sum(x[i : i+n])
		case redMax:
			return k.max(x[i : i+n])
		case redMin:
			return k.min(x[i : i+n])
		}
	}
	switch op {
	case redSum:
		if isIntType[T]() {
			var acc T
			for e := 0; e < n; e++ {
				acc += x[i+e*s]
			}
			return acc
		}
		var acc float64 // float32 sums accumulate in float64
		for e := 0; e < n; e++ {
			acc += float64(x[i+e*s])
		}
		return T(acc)
	case redProd:
		acc := T(1)
		for e := 0; e < n; e++ {
			acc *= x[i+e*s]
		}
		return acc
	case redMax:
		acc := x[i]
		for e := 1; e < n; e++ {
			acc = maxNaN(acc, x[i+e*s])
		}
		return acc
	default:
		acc := x[i]
		for e := 1; e < n; e++ {
			acc = minNaN(acc, x[i+e*s])
		}
		return acc
	}
}

func combine[T number](op redOp, a, b T) T {
	switch op {
	case redSum:
		return a + b
	case redProd:
		return a * b
	case redMax:
		return maxNaN(a, b)
	default:
		return minNaN(a, b)
	}
}

// reduceTyped writes the reduction of t over the masked dims into out
// (shape of t with those dims 1).
func reduceTyped[T number](op redOp, out, t *Tensor, mask []bool, k *redKernels[T]) {
	o, x := data[T](out), data[T](t)
	// Fast path: contiguous input reduced over a suffix of its dims, so
	// every output element folds one contiguous row.
	if t.IsContiguous() {
		split := len(t.shape)
		for split > 0 && (mask[split-1] || t.shape[split-1] == 1) {
			split--
		}
		suffix := true
		for d := 0; d < split; d++ {
			if mask[d] && t.shape[d] != 1 {
				suffix = false
			}
		}
		if suffix {
			cols := numelOf(t.shape[split:])
			rows := numelOf(t.shape[:split])
			base := t.offset
			fold := func(lo, hi int) {
				for r := lo; r < hi; r++ {
					o[r] = foldRow(op, x, base+r*cols, 1, cols, k)
				}
			}
			if rows > 1 && rows*cols >= 2*grainElems {
				parallel.For(rows, max(1, grainElems/cols), fold)
			} else {
				fold(0, rows)
			}
			return
		}
	}
	// General path: walk t with out viewed at t's shape (stride 0 along
	// reduced dims). Rows that map to one output element are folded first.
	ost := make([]int, len(t.shape))
	copy(ost, out.strides)
	for i, m := range mask {
		if m {
			ost[i] = 0
		}
	}
	ov := out.viewAs(t.shape, ost, 0)
	if op == redMax || op == redMin {
		// Seed with the first element along the reduced dims.
		first := t
		for d := len(mask) - 1; d >= 0; d-- {
			if mask[d] {
				first = first.sliceRaw(d, 0, 1, 1)
			}
		}
		copyRaw(out, first)
	} else if op == redProd {
		out.fillRaw(1)
	}
	p := plan2(op.String(), ov, t)
	n, so, sx := p.n, p.inner[0], p.inner[1]
	p.run(false, func(off *[maxOperands]int) {
		i, j := off[0], off[1]
		if so == 0 {
			o[i] = combine(op, o[i], foldRow(op, x, j, sx, n, k))
			return
		}
		if op == redSum && sx == 1 && so == 1 {
			dd, xx := o[i:i+n], x[j:j+n]
			if k != nil {
				k.add(dd, dd, xx)
				return
			}
			for e := range dd {
				dd[e] += xx[e]
			}
			return
		}
		for e := 0; e < n; e++ {
			o[i+e*so] = combine(op, o[i+e*so], x[j+e*sx])
		}
	})
}

// expandGrad broadcasts the gradient of a reduction (shape with reduced
// dims removed unless keep) back to the input shape, as a stride-0 view.
func expandGrad(g *Tensor, shape []int, mask []bool, keep bool) *Tensor {
	if !keep {
		g = g.reshapeRaw(keepShape(shape, mask))
	}
	return g.expandRaw(shape)
}

// Sum returns the sum over dims (all dims when dims is empty), keeping the
// reduced dims as size 1 when keepDim. Integer and Bool sums are Int64.
func (t *Tensor) Sum(dims []int, keepDim bool) *Tensor {
	out := reduceRaw(redSum, t, dims, keepDim)
	if track1(out, t) {
		mask := normDims(dims, len(t.shape), "Sum")
		out.attach("Sum", func(g *Tensor) []*Tensor {
			return []*Tensor{expandGrad(g, t.shape, mask, keepDim)}
		}, t)
	}
	return out
}

// SumAll returns the sum of all elements as a 0-d tensor.
func (t *Tensor) SumAll() *Tensor { return t.Sum(nil, false) }

// reducedCount returns how many elements each output of a reduction folds.
func reducedCount(t *Tensor, dims []int) int {
	mask := normDims(dims, len(t.shape), "Mean")
	n := 1
	for i, m := range mask {
		if m {
			n *= t.shape[i]
		}
	}
	return n
}

// Mean returns the mean over dims (all when empty). Integer tensors are
// averaged as Float32.
func (t *Tensor) Mean(dims []int, keepDim bool) *Tensor {
	if !t.dtype.IsFloat() {
		t = t.To(Float32)
	}
	return t.Sum(dims, keepDim).MulScalar(1 / float64(reducedCount(t, dims)))
}

// MeanAll returns the mean of all elements as a 0-d tensor.
func (t *Tensor) MeanAll() *Tensor { return t.Mean(nil, false) }

// extremum is Max or Min over dims; the gradient is shared equally by the
// elements that attain the extremum (PyTorch's amax/amin rule), and where
// the extremum is NaN by the NaNs (torch.max()'s rule; torch 1.13's amax
// gives the whole slice a NaN gradient instead).
func (t *Tensor) extremum(op redOp, dims []int, keepDim bool) *Tensor {
	out := reduceRaw(op, t, dims, keepDim)
	if track1(out, t) {
		mask := normDims(dims, len(t.shape), op.String())
		out.attach(op.String(), func(g *Tensor) []*Tensor {
			o := expandGrad(out, t.shape, mask, keepDim)
			bothNaN := binaryRaw(opAnd, binaryRaw(opNe, t, t), binaryRaw(opNe, o, o))
			hit := binaryRaw(opOr, binaryRaw(opEq, t, o), bothNaN).castRaw(g.dtype)
			count := reduceRaw(redSum, hit, dims, true)
			share := binaryRaw(opDiv, expandGrad(g, t.shape, mask, keepDim), count)
			return []*Tensor{binaryRaw(opMul, share, hit)}
		}, t)
	}
	return out
}

// Max returns the largest values over dims (all when empty); NaN wins.
func (t *Tensor) Max(dims []int, keepDim bool) *Tensor { return t.extremum(redMax, dims, keepDim) }

// Min returns the smallest values over dims (all when empty); NaN wins.
func (t *Tensor) Min(dims []int, keepDim bool) *Tensor { return t.extremum(redMin, dims, keepDim) }

// MaxAll returns the largest element as a 0-d tensor.
func (t *Tensor) MaxAll() *Tensor { return t.Max(nil, false) }

// MinAll returns the smallest element as a 0-d tensor.
func (t *Tensor) MinAll() *Tensor { return t.Min(nil, false) }

// moveDimsLast returns t permuted so the masked dims come last (in order),
// made contiguous and viewed as [groups, reduced], plus the permutation.
func moveDimsLast(t *Tensor, mask []bool) (rows *Tensor, perm []int) {
	for i, m := range mask {
		if !m {
			perm = append(perm, i)
		}
	}
	r := 1
	for i, m := range mask {
		if m {
			perm = append(perm, i)
			r *= t.shape[i]
		}
	}
	x := t.permuteRaw(perm).contiguousRaw()
	g := 1
	if r > 0 {
		g = t.Numel() / r
	}
	return x.contiguousView([]int{g, r}), perm
}

// Prod returns the product over dims (all when empty). Its gradient is
// exact in the presence of zeros (products of the other elements).
func (t *Tensor) Prod(dims []int, keepDim bool) *Tensor {
	out := reduceRaw(redProd, t, dims, keepDim)
	if track1(out, t) {
		mask := normDims(dims, len(t.shape), "Prod")
		out.attach("Prod", func(g *Tensor) []*Tensor {
			x := t
			if x.dtype.IsHalf() {
				x = x.castRaw(Float32)
			}
			rows, perm := moveDimsLast(x, mask)
			gr := g.castRaw(x.dtype).contiguousRaw()
			grad := empty(x.dtype, rows.shape)
			switch x.dtype {
			case Float32:
				prodGradRows(flat[float32](grad), flat[float32](rows), flat[float32](gr), rows.shape[1])
			case Float64:
				prodGradRows(flat[float64](grad), flat[float64](rows), flat[float64](gr), rows.shape[1])
			}
			// Undo the permutation.
			pshape := make([]int, len(perm))
			for i, p := range perm {
				pshape[i] = t.shape[p]
			}
			inv := make([]int, len(perm))
			for i, p := range perm {
				inv[p] = i
			}
			return []*Tensor{grad.contiguousView(pshape).permuteRaw(inv).castRaw(t.dtype)}
		}, t)
	}
	return out
}

// prodGradRows sets d[r,i] = g[r]·Π_{j≠i} x[r,j] with prefix and suffix
// products, so zeros need no division.
func prodGradRows[T float](d, x, g []T, cols int) {
	for r := range g {
		xr, dr := x[r*cols:(r+1)*cols], d[r*cols:(r+1)*cols]
		acc := T(1)
		for i := range xr {
			dr[i] = acc
			acc *= xr[i]
		}
		acc = 1
		for i := len(xr) - 1; i >= 0; i-- {
			dr[i] *= acc * g[r]
			acc *= xr[i]
		}
	}
}

// argReduceRaw returns the values and Int64 indices of the max (or min)
// along dim, both with dim kept as size 1. Ties give the first index; NaN
// counts as the extremum.
func argReduceRaw(t *Tensor, dim int, isMax bool) (vals, idx *Tensor) {
	d := t.dim(dim, "ArgMax")
	if t.shape[d] == 0 {
		panic(fmt.Sprintf("tensor: ArgMax/ArgMin over an empty dim of shape %v", t.shape))
	}
	x := t
	if x.dtype.IsHalf() {
		x = x.castRaw(Float32)
	}
	last := len(t.shape) - 1
	x = x.transposeRaw(d, last).contiguousRaw()
	cols := x.shape[last]
	rs := append([]int(nil), x.shape...)
	rs[last] = 1
	vals, idx = empty(x.dtype, rs), empty(Int64, rs)
	switch x.st.(type) {
	case *buffer[float32]:
		argRows(flat[float32](vals), flat[int64](idx), flat[float32](x), cols, isMax)
	case *buffer[float64]:
		argRows(flat[float64](vals), flat[int64](idx), flat[float64](x), cols, isMax)
	case *buffer[int64]:
		argRows(flat[int64](vals), flat[int64](idx), flat[int64](x), cols, isMax)
	case *buffer[int32]:
		argRows(flat[int32](vals), flat[int64](idx), flat[int32](x), cols, isMax)
	case *buffer[uint8]:
		argRows(flat[uint8](vals), flat[int64](idx), flat[uint8](x), cols, isMax)
	}
	vals = vals.transposeRaw(d, last).contiguousRaw().castRaw(t.dtype)
	idx = idx.transposeRaw(d, last).contiguousRaw()
	return vals, idx
}

func argRows[T number](vals []T, idx []int64, x []T, cols int, isMax bool) {
	for r := range vals {
		xr := x[r*cols : (r+1)*cols]
		best, bi := xr[0], 0
		if best == best {
			for i := 1; i < len(xr); i++ {
				v := xr[i]
				if v != v {
					best, bi = v, i
					break
				}
				if (isMax && v > best) || (!isMax && v < best) {
					best, bi = v, i
				}
			}
		}
		vals[r], idx[r] = best, int64(bi)
	}
}

// squeezeKept drops dim d (size 1) from a contiguous tensor unless keep.
func squeezeKept(t *Tensor, d int, keep bool) *Tensor {
	if keep {
		return t
	}
	mask := make([]bool, len(t.shape))
	mask[d] = true
	return t.contiguousView(dropShape(t.shape, mask))
}

// ArgMax returns the Int64 indices of the largest values along dim (the
// first one on ties).
func (t *Tensor) ArgMax(dim int, keepDim bool) *Tensor {
	_, idx := argReduceRaw(t, dim, true)
	return inherit(squeezeKept(idx, t.dim(dim, "ArgMax"), keepDim), t)
}

// ArgMin returns the Int64 indices of the smallest values along dim.
func (t *Tensor) ArgMin(dim int, keepDim bool) *Tensor {
	_, idx := argReduceRaw(t, dim, false)
	return inherit(squeezeKept(idx, t.dim(dim, "ArgMin"), keepDim), t)
}

// MaxDim returns the largest values along dim and their Int64 indices
// (torch.max(t, dim)). The gradient goes to the selected elements only.
func (t *Tensor) MaxDim(dim int, keepDim bool) (values, indices *Tensor) {
	return t.selectDim(dim, keepDim, true)
}

// MinDim is MaxDim for the smallest values.
func (t *Tensor) MinDim(dim int, keepDim bool) (values, indices *Tensor) {
	return t.selectDim(dim, keepDim, false)
}

func (t *Tensor) selectDim(dim int, keepDim, isMax bool) (*Tensor, *Tensor) {
	d := t.dim(dim, "MaxDim")
	vals, idx := argReduceRaw(t, d, isMax)
	out := squeezeKept(vals, d, keepDim)
	if track1(out, t) {
		name := "MaxDim"
		if !isMax {
			name = "MinDim"
		}
		out.attach(name, func(g *Tensor) []*Tensor {
			g = g.castRaw(t.dtype).reshapeRaw(idx.shape)
			return []*Tensor{scatterDimRaw(t.shape, d, idx, g)}
		}, t)
	}
	return out, inherit(squeezeKept(idx, d, keepDim), t)
}

// scatterDimRaw returns zeros of shape with src[..., 0, ...] added at
// position idx[..., 0, ...] along dim d; idx and src have shape with dim d
// of size 1.
func scatterDimRaw(shape []int, d int, idx, src *Tensor) *Tensor {
	if src.dtype.IsHalf() {
		return scatterDimRaw(shape, d, idx, src.castRaw(Float32)).castRaw(src.dtype)
	}
	out := empty(src.dtype, shape)
	outer, r, inner := numelOf(shape[:d]), shape[d], numelOf(shape[d+1:])
	ix := idx.Int64s()
	switch src.dtype {
	case Float32:
		scatterRows(flat[float32](out), contiguousData[float32](src), ix, outer, r, inner)
	case Float64:
		scatterRows(flat[float64](out), contiguousData[float64](src), ix, outer, r, inner)
	default:
		panic("tensor: gradient scatter on " + src.dtype.String())
	}
	return out
}

func scatterRows[T float](out, src []T, ix []int64, outer, r, inner int) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			k := o*inner + i
			out[(o*r+int(ix[k]))*inner+i] += src[k]
		}
	}
}

// Var returns the variance over dims (all when empty) with the given
// correction: the divisor is N − correction (1 gives the unbiased
// estimator, torch's default; 0 the population variance).
func (t *Tensor) Var(dims []int, correction int, keepDim bool) *Tensor {
	if !t.dtype.IsFloat() {
		t = t.To(Float32)
	}
	n := reducedCount(t, dims)
	d := t.Sub(t.Mean(dims, true))
	return d.Mul(d).Sum(dims, keepDim).MulScalar(1 / float64(max(n-correction, 0)))
}

// Std returns the standard deviation, √Var.
func (t *Tensor) Std(dims []int, correction int, keepDim bool) *Tensor {
	return t.Var(dims, correction, keepDim).Sqrt()
}

// LogSumExp returns ln Σ exp(t) over dims, computed stably by subtracting
// the maximum first.
func (t *Tensor) LogSumExp(dims []int, keepDim bool) *Tensor {
	if !t.dtype.IsFloat() {
		t = t.To(Float32)
	}
	m := reduceRaw(redMax, t, dims, true)
	// An infinite maximum would give inf−inf; shift by 0 there instead.
	m = whereRaw(unaryRaw(opAbs, m, 0, 0).EqScalar(math.Inf(1)), Scalar(0, m.dtype), m)
	r := t.Sub(m).Exp().Sum(dims, true).Log().Add(m)
	if !keepDim {
		mask := normDims(dims, len(t.shape), "LogSumExp")
		r = r.Reshape(dropShape(t.shape, mask)...)
	}
	return r
}

// Norm returns the Euclidean (L2) norm of all elements as a 0-d tensor.
func (t *Tensor) Norm() *Tensor { return t.Square().SumAll().Sqrt() }
