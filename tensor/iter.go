package tensor

import "github.com/fathom-ml/fathom/internal/parallel"

// maxOperands is the most tensors one strided loop walks together.
const maxOperands = 4

// grainElems is the smallest amount of elementwise work (in elements) worth
// handing to another goroutine.
const grainElems = 1 << 15

// plan walks an n-d index space for up to maxOperands operands that each
// have their own strides and offset (stride 0 for broadcast dims). Dims of
// size 1 are dropped and adjacent dims that are laid out contiguously in
// every operand are merged, so a plan over contiguous tensors has one dim
// and a broadcast bias add has two. The innermost dim is walked by the
// caller's row function in a tight loop: nothing per element is computed
// here.
type plan struct {
	nop   int
	shape []int              // coalesced sizes, at least one dim
	st    [maxOperands][]int // coalesced strides per operand
	off   [maxOperands]int   // starting offsets
	inner [maxOperands]int   // innermost strides
	n     int                // innermost size
	rows  int                // number of rows (product of outer sizes)
}

// newPlan builds a plan over shape. strides[k] must have len(shape) entries.
func newPlan(shape []int, nop int, strides *[maxOperands][]int, offs *[maxOperands]int) *plan {
	nd := len(shape)
	p := &plan{nop: nop, off: *offs}
	buf := make([]int, (nop+1)*max(nd, 1))
	p.shape = buf[:0:max(nd, 1)]
	for k := 0; k < nop; k++ {
		p.st[k] = buf[(k+1)*max(nd, 1) : (k+1)*max(nd, 1) : (k+2)*max(nd, 1)]
	}
	for d := 0; d < nd; d++ {
		s := shape[d]
		if s == 0 {
			p.rows = 0
			p.n = 0
			p.shape = append(p.shape, 0)
			for k := 0; k < nop; k++ {
				p.st[k] = append(p.st[k], 0)
			}
			return p
		}
		if s == 1 {
			continue
		}
		if last := len(p.shape) - 1; last >= 0 {
			merge := true
			for k := 0; k < nop; k++ {
				if p.st[k][last] != strides[k][d]*s {
					merge = false
					break
				}
			}
			if merge {
				p.shape[last] *= s
				for k := 0; k < nop; k++ {
					p.st[k][last] = strides[k][d]
				}
				continue
			}
		}
		p.shape = append(p.shape, s)
		for k := 0; k < nop; k++ {
			p.st[k] = append(p.st[k], strides[k][d])
		}
	}
	if len(p.shape) == 0 {
		p.shape = append(p.shape, 1)
		for k := 0; k < nop; k++ {
			p.st[k] = append(p.st[k], 0)
		}
	}
	last := len(p.shape) - 1
	p.n = p.shape[last]
	for k := 0; k < nop; k++ {
		p.inner[k] = p.st[k][last]
	}
	p.rows = 1
	for _, s := range p.shape[:last] {
		p.rows *= s
	}
	return p
}

// run calls fn once per row with the offsets of the row's first element in
// each operand; the row has p.n elements at strides p.inner. With
// parallel set, rows are split over goroutines (fn must then write only
// disjoint elements per row).
func (p *plan) run(parallelOK bool, fn func(off *[maxOperands]int)) {
	if p.rows == 0 || p.n == 0 {
		return
	}
	if !parallelOK || p.rows*p.n < 2*grainElems || p.rows == 1 {
		p.runRange(0, p.rows, fn)
		return
	}
	grain := max(1, grainElems/p.n)
	parallel.For(p.rows, grain, func(lo, hi int) { p.runRange(lo, hi, fn) })
}

// runRange walks rows [lo, hi).
func (p *plan) runRange(lo, hi int, fn func(off *[maxOperands]int)) {
	outer := len(p.shape) - 1
	var idxBuf [8]int
	var idx []int
	if outer <= len(idxBuf) {
		idx = idxBuf[:outer]
	} else {
		idx = make([]int, outer)
	}
	off := p.off
	// Decompose lo into an index over the outer dims.
	r := lo
	for d := outer - 1; d >= 0; d-- {
		idx[d] = r % p.shape[d]
		r /= p.shape[d]
		for k := 0; k < p.nop; k++ {
			off[k] += idx[d] * p.st[k][d]
		}
	}
	for row := lo; row < hi; row++ {
		fn(&off)
		// Increment the outer index with carry.
		for d := outer - 1; d >= 0; d-- {
			idx[d]++
			for k := 0; k < p.nop; k++ {
				off[k] += p.st[k][d]
			}
			if idx[d] < p.shape[d] {
				break
			}
			for k := 0; k < p.nop; k++ {
				off[k] -= idx[d] * p.st[k][d]
			}
			idx[d] = 0
		}
	}
}

// plan2 is newPlan for a destination and one source broadcast to dst's shape.
func plan2(op string, dst, src *Tensor) *plan {
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0], off[0] = dst.strides, dst.offset
	st[1], off[1] = broadcastStrides(op, src, dst.shape), src.offset
	return newPlan(dst.shape, 2, &st, &off)
}

// plan3 is newPlan for a destination and two sources broadcast to it.
func plan3(op string, dst, a, b *Tensor) *plan {
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0], off[0] = dst.strides, dst.offset
	st[1], off[1] = broadcastStrides(op, a, dst.shape), a.offset
	st[2], off[2] = broadcastStrides(op, b, dst.shape), b.offset
	return newPlan(dst.shape, 3, &st, &off)
}

// plan4 is newPlan for a destination and three sources broadcast to it.
func plan4(op string, dst, a, b, c *Tensor) *plan {
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0], off[0] = dst.strides, dst.offset
	st[1], off[1] = broadcastStrides(op, a, dst.shape), a.offset
	st[2], off[2] = broadcastStrides(op, b, dst.shape), b.offset
	st[3], off[3] = broadcastStrides(op, c, dst.shape), c.offset
	return newPlan(dst.shape, 4, &st, &off)
}

// flat returns the elements of a contiguous tensor as a slice.
func flat[T elem](t *Tensor) []T {
	n := t.Numel()
	return data[T](t)[t.offset : t.offset+n : t.offset+n]
}

// parallelChunks runs fn over [0, n) in chunks, on several goroutines when
// n is large.
func parallelChunks(n int, fn func(lo, hi int)) {
	if n < 2*grainElems {
		fn(0, n)
		return
	}
	parallel.For(n, grainElems, fn)
}
