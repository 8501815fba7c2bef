package tensor

import "fmt"

// numelOf returns the product of the sizes in shape (1 for a 0-d shape).
func numelOf(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// contiguousStrides writes row-major strides for shape into strides.
func contiguousStrides(shape, strides []int) {
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		strides[i] = n
		n *= shape[i]
	}
}

// normDim maps a possibly negative dim into [0, nd) or panics naming op.
func normDim(d, nd int, op string) int {
	if d < 0 {
		d += nd
	}
	if d < 0 || d >= nd {
		panic(fmt.Sprintf("tensor: %s dim out of range for a %d-d tensor", op, nd))
	}
	return d
}

func (t *Tensor) dim(d int, op string) int { return normDim(d, len(t.shape), op) }

// broadcastShapes returns the NumPy broadcast of a and b, or panics naming op.
func broadcastShapes(op string, a, b []int) []int {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		x, y := 1, 1
		if j := len(a) - n + i; j >= 0 {
			x = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			y = b[j]
		}
		switch {
		case x == y || y == 1:
			out[i] = x
		case x == 1:
			out[i] = y
		default:
			panic(fmt.Sprintf("tensor: %s: shapes %v and %v do not broadcast", op, a, b))
		}
	}
	return out
}

// broadcastStrides returns t's strides for viewing it with shape (a shape t
// broadcasts to): leading new dims and expanded size-1 dims get stride 0.
func broadcastStrides(op string, t *Tensor, shape []int) []int {
	st := make([]int, len(shape))
	k := len(shape) - len(t.shape)
	if k < 0 {
		panic(fmt.Sprintf("tensor: %s: shape %v does not broadcast to %v", op, t.shape, shape))
	}
	for i, s := range t.shape {
		switch {
		case s == shape[k+i]:
			st[k+i] = t.strides[i]
		case s == 1:
			st[k+i] = 0
		default:
			panic(fmt.Sprintf("tensor: %s: shape %v does not broadcast to %v", op, t.shape, shape))
		}
	}
	return st
}

// normDims normalizes a dim list; nil or empty means all dims. The result
// is a mask of reduced dims.
func normDims(dims []int, nd int, op string) []bool {
	mask := make([]bool, nd)
	if len(dims) == 0 {
		for i := range mask {
			mask[i] = true
		}
		return mask
	}
	for _, d := range dims {
		d = normDim(d, nd, op)
		if mask[d] {
			panic(fmt.Sprintf("tensor: %s: dim %d repeated", op, d))
		}
		mask[d] = true
	}
	return mask
}
