package tensor

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// Sorting ops: Sort, Argsort, TopK and Unique. Sorting is stable (equal
// elements keep their order) and puts NaN after every number in ascending
// order and before every number in descending order, as torch.sort does.
// The values Sort and TopK return are t.Gather(dim, indices), so their
// gradient flows back to the picked elements.

// lessNaN orders x before y in ascending order with NaN largest.
func lessNaN[T number](x, y T) int {
	xn, yn := x != x, y != y
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return cmp.Compare(x, y)
}

// sortIndexRows writes, for each of rows rows of cols elements of x, the
// stable sorting permutation of the row into idx (first k entries only
// when k < cols). Rows are sorted on several cores when there are many.
func sortIndexRows[T number](x []T, idx []int64, rows, cols, k int, descending bool) {
	fn := func(lo, hi int) {
		perm := make([]int64, cols)
		for r := lo; r < hi; r++ {
			row := x[r*cols : (r+1)*cols]
			for i := range perm {
				perm[i] = int64(i)
			}
			slices.SortStableFunc(perm, func(a, b int64) int {
				c := lessNaN(row[a], row[b])
				if descending {
					return -c
				}
				return c
			})
			copy(idx[r*k:(r+1)*k], perm[:k])
		}
	}
	if rows > 1 && rows*cols >= grainElems {
		parallel.For(rows, max(1, grainElems/(8*max(cols, 1))), fn)
		return
	}
	fn(0, rows)
}

// sortIndices returns the Int64 indices that sort t along d (the first k
// of them per row), shaped like t with dim d of size k.
func sortIndices(op string, t *Tensor, d, k int, descending bool) *Tensor {
	x := t
	if x.dtype.IsHalf() {
		x = x.castRaw(Float32)
	}
	xr, rows, cols := rowsAlong(x, d)
	shape := append([]int(nil), xr.shape...)
	shape[len(shape)-1] = k
	idx := empty(Int64, shape)
	iv := flat[int64](idx)
	switch xr.st.(type) {
	case *buffer[float32]:
		sortIndexRows(flat[float32](xr), iv, rows, cols, k, descending)
	case *buffer[float64]:
		sortIndexRows(flat[float64](xr), iv, rows, cols, k, descending)
	case *buffer[int64]:
		sortIndexRows(flat[int64](xr), iv, rows, cols, k, descending)
	case *buffer[int32]:
		sortIndexRows(flat[int32](xr), iv, rows, cols, k, descending)
	case *buffer[uint8]:
		sortIndexRows(flat[uint8](xr), iv, rows, cols, k, descending)
	default:
		panic(fmt.Sprintf("tensor: %s on %v", op, t.dtype))
	}
	return fromRows(idx, d)
}

// Sort sorts t along dim, ascending or descending, stably, and returns
// the sorted values and the Int64 indices of the values in t (both shaped
// like t), as torch.sort(stable=True). 0-d tensors are returned as they
// are with index 0.
func (t *Tensor) Sort(dim int, descending bool) (values, indices *Tensor) {
	if len(t.shape) == 0 {
		return t.Reshape(), empty(Int64, nil)
	}
	d := t.dim(dim, "Sort")
	indices = sortIndices("Sort", t, d, t.shape[d], descending)
	return t.Gather(d, indices), indices
}

// Argsort returns the Int64 indices that sort t along dim (stable); see Sort.
func (t *Tensor) Argsort(dim int, descending bool) *Tensor {
	if len(t.shape) == 0 {
		return empty(Int64, nil)
	}
	d := t.dim(dim, "Argsort")
	return sortIndices("Argsort", t, d, t.shape[d], descending)
}

// TopK returns the k largest (or, with largest false, smallest) elements
// of t along dim and their Int64 indices; dim then has size k. The result
// is always in sorted order (largest first, or smallest first), ties in
// index order, so sorted=false only permits what is delivered anyway. It
// panics if k exceeds the dim's size.
func (t *Tensor) TopK(k, dim int, largest, sorted bool) (values, indices *Tensor) {
	_ = sorted
	if len(t.shape) == 0 {
		if k > 1 || k < 0 {
			panic(fmt.Sprintf("tensor: TopK k=%d on a 0-d tensor", k))
		}
		return t.Reshape(), empty(Int64, nil)
	}
	d := t.dim(dim, "TopK")
	if k < 0 || k > t.shape[d] {
		panic(fmt.Sprintf("tensor: TopK k=%d out of range for dim %d of shape %v", k, d, t.shape))
	}
	indices = sortIndices("TopK", t, d, k, largest)
	return t.Gather(d, indices), indices
}

// Unique returns the distinct elements of t (flattened) as a 1-D tensor,
// the Int64 inverse (shaped like t: position of each element of t in
// values) and the Int64 count of each value (torch.unique with
// return_inverse and return_counts). With sorted the values are
// ascending; otherwise they are in order of first appearance. NaNs are
// all distinct from each other, as in torch. Not differentiable.
func (t *Tensor) Unique(sorted bool) (values, inverse, counts *Tensor) {
	x := t
	if x.dtype.IsHalf() {
		x = x.castRaw(Float32)
	}
	x = x.contiguousRaw()
	var order []int64
	var inv []int64
	var cnt []int64
	switch x.st.(type) {
	case *buffer[float32]:
		order, inv, cnt = uniqueFlat(flat[float32](x), sorted)
	case *buffer[float64]:
		order, inv, cnt = uniqueFlat(flat[float64](x), sorted)
	case *buffer[int64]:
		order, inv, cnt = uniqueFlat(flat[int64](x), sorted)
	case *buffer[int32]:
		order, inv, cnt = uniqueFlat(flat[int32](x), sorted)
	case *buffer[uint8]:
		order, inv, cnt = uniqueFlat(flat[uint8](x), sorted)
	}
	xf := x.contiguousView([]int{x.Numel()})
	values = indexSelectRaw(xf, 0, order).castRaw(t.dtype)
	inverse = FromInt64(inv, t.shape...)
	if len(t.shape) == 0 {
		inverse = fromSlice(Int64, inv, []int{1}).contiguousView(nil)
	}
	counts = FromInt64(cnt, len(cnt))
	return values, inverse, counts
}

// uniqueFlat returns, for the distinct values of x, the position of a
// representative in x (in the output order), the inverse map and the
// counts.
func uniqueFlat[T number](x []T, sorted bool) (order, inv, cnt []int64) {
	n := len(x)
	perm := make([]int64, n)
	for i := range perm {
		perm[i] = int64(i)
	}
	slices.SortStableFunc(perm, func(a, b int64) int { return lessNaN(x[a], x[b]) })
	inv = make([]int64, n)
	group := make([]int64, n) // group number of each sorted position
	var first []int64         // representative (first occurrence) per group
	for i, p := range perm {
		if i == 0 || x[p] != x[perm[i-1]] { // NaN != NaN: each NaN is its own group
			first = append(first, p)
		}
		group[i] = int64(len(first) - 1)
	}
	ng := len(first)
	cnt = make([]int64, ng)
	for i := range perm {
		cnt[group[i]]++
	}
	if sorted {
		for i, p := range perm {
			inv[p] = group[i]
		}
		return first, inv, cnt
	}
	// Renumber groups by first appearance.
	rank := make([]int64, ng)
	byFirst := make([]int64, ng)
	for g := range byFirst {
		byFirst[g] = int64(g)
	}
	slices.SortFunc(byFirst, func(a, b int64) int { return cmp.Compare(first[a], first[b]) })
	order = make([]int64, ng)
	counts := make([]int64, ng)
	for r, g := range byFirst {
		rank[g] = int64(r)
		order[r] = first[g]
		counts[r] = cnt[g]
	}
	for i, p := range perm {
		inv[p] = rank[group[i]]
	}
	return order, inv, counts
}
