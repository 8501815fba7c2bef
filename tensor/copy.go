package tensor

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/internal/parallel"
)

// copyRaw copies src (broadcast to dst's shape, same dtype) into dst.
func copyRaw(dst, src *Tensor) {
	if dst.dtype != src.dtype {
		panic(fmt.Sprintf("tensor: internal copy between %v and %v", src.dtype, dst.dtype))
	}
	switch dst.st.(type) {
	case *buffer[float32]:
		copyRows[float32](dst, src)
	case *buffer[float64]:
		copyRows[float64](dst, src)
	case *buffer[int64]:
		copyRows[int64](dst, src)
	case *buffer[int32]:
		copyRows[int32](dst, src)
	case *buffer[uint8]:
		copyRows[uint8](dst, src)
	case *buffer[int8]:
		copyRows[int8](dst, src)
	case *buffer[uint16]:
		copyRows[uint16](dst, src)
	}
}

func copyRows[T elem](dst, src *Tensor) {
	d, s := data[T](dst), data[T](src)
	if dst.IsContiguous() && src.IsContiguous() && slices.Equal(dst.shape, src.shape) {
		n := dst.Numel()
		copy(d[dst.offset:dst.offset+n], s[src.offset:src.offset+n])
		return
	}
	p := plan2("copy", dst, src)
	n, sd, ss := p.n, p.inner[0], p.inner[1]
	if nd := len(p.shape); nd >= 2 && sd == 1 && ss != 1 && ss != 0 && p.st[1][nd-2] == 1 && p.shape[nd-2] >= 8 {
		copyTiled(d, s, p)
		return
	}
	p.run(true, func(o *[maxOperands]int) {
		a, b := o[0], o[1]
		switch {
		case sd == 1 && ss == 1:
			copy(d[a:a+n], s[b:b+n])
		case ss == 0:
			v := s[b]
			for i := 0; i < n; i++ {
				d[a+i*sd] = v
			}
		default:
			for i := 0; i < n; i++ {
				d[a+i*sd] = s[b+i*ss]
			}
		}
	})
}

// contiguousRaw returns t if it is contiguous, else a contiguous copy.
func (t *Tensor) contiguousRaw() *Tensor {
	if t.IsContiguous() {
		return t
	}
	out := emptyUninit(t.dtype, t.shape)
	copyRaw(out, t)
	return out
}

// cloneRaw returns a contiguous copy of t that shares nothing with it.
func (t *Tensor) cloneRaw() *Tensor {
	out := emptyUninit(t.dtype, t.shape)
	copyRaw(out, t)
	return out
}

// castRaw returns t converted to dt: t itself when the dtype matches, else
// a new contiguous tensor.
func (t *Tensor) castRaw(dt DType) *Tensor {
	if t.dtype == dt {
		return t
	}
	if t.dtype.IsHalf() {
		f := empty(Float32, t.shape)
		halfToF32(t.dtype, data[float32](f), contiguousData[uint16](t))
		return f.castRaw(dt)
	}
	out := emptyUninit(dt, t.shape)
	if dt.IsHalf() {
		f := t.castRaw(Float32)
		f32ToHalf(dt, data[uint16](out), contiguousData[float32](f))
		return out
	}
	switch dt {
	case Float32:
		castTo[float32](out, t)
	case Float64:
		castTo[float64](out, t)
	case Int64:
		castTo[int64](out, t)
	case Int32:
		castTo[int32](out, t)
	case Uint8:
		castTo[uint8](out, t)
	case Int8:
		castTo[int8](out, t)
	case Bool:
		switch t.st.(type) {
		case *buffer[float32]:
			toBool[float32](out, t)
		case *buffer[float64]:
			toBool[float64](out, t)
		case *buffer[int64]:
			toBool[int64](out, t)
		case *buffer[int32]:
			toBool[int32](out, t)
		case *buffer[uint8]:
			toBool[uint8](out, t)
		case *buffer[int8]:
			toBool[int8](out, t)
		}
	}
	return out
}

func castTo[D number](dst, src *Tensor) {
	switch src.st.(type) {
	case *buffer[float32]:
		convertRows[float32, D](dst, src)
	case *buffer[float64]:
		convertRows[float64, D](dst, src)
	case *buffer[int64]:
		convertRows[int64, D](dst, src)
	case *buffer[int32]:
		convertRows[int32, D](dst, src)
	case *buffer[uint8]:
		convertRows[uint8, D](dst, src)
	case *buffer[int8]:
		convertRows[int8, D](dst, src)
	}
}

func convertRows[S, D number](dst, src *Tensor) {
	d, s := data[D](dst), data[S](src)
	p := plan2("cast", dst, src)
	n, sd, ss := p.n, p.inner[0], p.inner[1]
	p.run(true, func(o *[maxOperands]int) {
		a, b := o[0], o[1]
		if sd == 1 && ss == 1 {
			dd, sr := d[a:a+n], s[b:b+n]
			for i := range dd {
				dd[i] = D(sr[i])
			}
			return
		}
		for i := 0; i < n; i++ {
			d[a+i*sd] = D(s[b+i*ss])
		}
	})
}

func toBool[S number](dst, src *Tensor) {
	d, s := data[uint8](dst), data[S](src)
	p := plan2("cast", dst, src)
	n, sd, ss := p.n, p.inner[0], p.inner[1]
	p.run(true, func(o *[maxOperands]int) {
		a, b := o[0], o[1]
		for i := 0; i < n; i++ {
			if s[b+i*ss] != 0 {
				d[a+i*sd] = 1
			} else {
				d[a+i*sd] = 0
			}
		}
	})
}

// fillRaw sets every element of t to v (converted to t's dtype).
func (t *Tensor) fillRaw(v float64) {
	switch t.dtype {
	case Float32:
		fillRows(t, float32(v))
	case Float64:
		fillRows(t, v)
	case Int64:
		fillRows(t, int64(v))
	case Int32:
		fillRows(t, int32(v))
	case Uint8:
		fillRows(t, uint8(v))
	case Int8:
		fillRows(t, int8(v))
	case Bool:
		var b uint8
		if v != 0 {
			b = 1
		}
		fillRows(t, b)
	case Float16:
		fillRows(t, Float32ToFloat16(float32(v)))
	case BFloat16:
		fillRows(t, Float32ToBFloat16(float32(v)))
	}
}

func fillRows[T elem](t *Tensor, v T) {
	d := data[T](t)
	if t.IsContiguous() {
		s := flat[T](t)
		if v == 0 {
			clear(s)
			return
		}
		for i := range s {
			s[i] = v
		}
		return
	}
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0], off[0] = t.strides, t.offset
	p := newPlan(t.shape, 1, &st, &off)
	n, sd := p.n, p.inner[0]
	p.run(true, func(o *[maxOperands]int) {
		for i := 0; i < n; i++ {
			d[o[0]+i*sd] = v
		}
	})
}

// copyTiled copies when the source is transposed in the last two dims of
// the plan (stride 1 along rows, ss along columns): walking it row by row
// would touch a new cache line per element, so the R×C matrix is copied in
// square tiles that stay in L1.
func copyTiled[T elem](d, s []T, p *plan) {
	const tile = 32
	nd := len(p.shape)
	R, C := p.shape[nd-2], p.shape[nd-1]
	dr, ss := p.st[0][nd-2], p.st[1][nd-1]
	var st [maxOperands][]int
	var off [maxOperands]int
	st[0], st[1] = p.st[0][:nd-2], p.st[1][:nd-2]
	off = p.off
	outer := newPlan(p.shape[:nd-2], 2, &st, &off)
	outer.run(false, func(o *[maxOperands]int) {
		for e := 0; e < outer.n; e++ {
			od, os := o[0]+e*outer.inner[0], o[1]+e*outer.inner[1]
			tileRows := (R + tile - 1) / tile
			work := func(lo, hi int) {
				for tr := lo; tr < hi; tr++ {
					i0 := tr * tile
					for j0 := 0; j0 < C; j0 += tile {
						for i := i0; i < min(i0+tile, R); i++ {
							drow := d[od+i*dr:]
							for j := j0; j < min(j0+tile, C); j++ {
								drow[j] = s[os+i+j*ss]
							}
						}
					}
				}
			}
			if R*C < 2*grainElems {
				work(0, tileRows)
			} else {
				parallel.For(tileRows, max(1, grainElems/(tile*C)), work)
			}
		}
	})
}
