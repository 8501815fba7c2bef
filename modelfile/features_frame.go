package modelfile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
)

// frameCol is a source column of a Frame with its values by type.
type frameCol struct {
	c   data.Column
	f32 []float32
	f64 []float64
	i64 []int64
	str []string
	vec *data.VectorColumn
}

// Frame gathers the features of the rows of in that have all of them
// (row-major, imputed, standardized) and reports the others. buf is
// reused for the matrix when it is large enough (every value is
// written); the matrix returned may be a new one.
func (f *Features) Frame(in *data.Frame, buf []float32) (x []float32, rows []int, errs []data.BadRow, err error) {
	cols, feat, err := f.frameColumns(in)
	if err != nil {
		return nil, nil, nil, err
	}
	n, w := in.Len(), f.Width
	if cap(buf) < n*w {
		buf = make([]float32, n*w)
	}
	x = buf[:n*w]
	bad := newFaults(n)
	gatherFrame(x, w, n, cols, feat, bad)
	// Nulls: imputed when the model was trained with mean imputation,
	// otherwise the row cannot be scored.
	for j, s := range feat {
		c := cols[s.col]
		if c.c.NullCount() == 0 && (c.vec == nil || c.vec.ElemValid() == nil) {
			continue
		}
		for i := range n {
			if c.c.IsNull(i) || (c.vec != nil && c.vec.ElemNull(i, s.elem)) {
				f.missing(x, i, j, f.Name(c.c.Name(), s.elem), bad)
			}
		}
	}
	name := func(j int) string { return f.Name(cols[feat[j].col].c.Name(), feat[j].elem) }
	return f.finish(x, n, bad, name, false)
}

// ImputeFrame returns in with the missing values of the model's scalar
// feature columns filled with the imputation means (as float64 columns:
// a Table holds them as float32(mean), the value Frame and Rows impute);
// in itself without imputation.
func (f *Features) ImputeFrame(in *data.Frame) (*data.Frame, error) {
	if f.impute == nil {
		return in, nil
	}
	for j, name := range f.Columns {
		c := in.Col(name)
		if c == nil || c.NullCount() == 0 {
			continue
		}
		vals := make([]float64, c.Len())
		switch c := c.(type) {
		case *data.Float64Column:
			copy(vals, c.Values())
		case *data.Float32Column:
			for i, v := range c.Values() {
				vals[i] = float64(v)
			}
		case *data.Int64Column:
			for i, v := range c.Values() {
				vals[i] = float64(v)
			}
		default:
			return nil, fmt.Errorf("column %q is %s, not a number", name, c.Kind())
		}
		for i := range vals {
			if c.IsNull(i) {
				vals[i] = f.impute[j]
			}
		}
		var err error
		if in, err = in.With(data.NewColumn(name, vals, nil)); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// frameColumns finds the source columns of the features in in and checks
// that they fit the model.
func (f *Features) frameColumns(in *data.Frame) ([]frameCol, []source, error) {
	var feat []source
	var cols []frameCol
	if f.Inputs == nil {
		// No names: every column, scalars and vectors, in order.
		for k, c := range in.Columns() {
			cols = append(cols, frameCol{c: c})
			if v, ok := c.(*data.VectorColumn); ok {
				for e := range v.Width() {
					feat = append(feat, source{k, e})
				}
			} else {
				feat = append(feat, source{k, -1})
			}
		}
	} else {
		feat = f.src
		for _, name := range f.Inputs {
			c := in.Col(name)
			if c == nil {
				return nil, nil, fmt.Errorf("the input has no column %q (the model reads %s)", name, strings.Join(f.Inputs, ", "))
			}
			cols = append(cols, frameCol{c: c})
		}
	}
	if len(feat) != f.Width {
		return nil, nil, fmt.Errorf("the input has %d feature values per row, the model reads %d (shape %v)", len(feat), f.Width, f.Shape)
	}
	for k := range cols {
		c := &cols[k]
		switch v := c.c.(type) {
		case *data.ScalarColumn[float32]:
			c.f32 = v.Values()
		case *data.ScalarColumn[float64]:
			c.f64 = v.Values()
		case *data.ScalarColumn[int64]:
			c.i64 = v.Values()
		case *data.VectorColumn:
			c.vec = v
		case *data.ScalarColumn[string]:
			// Text (a CSV column whose first rows were not all numbers):
			// each cell is parsed, and a row whose cell is not a number
			// cannot be scored.
			c.str = v.Values()
		default:
			return nil, nil, fmt.Errorf("column %q is %s; features must be numbers", c.c.Name(), c.c.Kind())
		}
	}
	for _, s := range feat {
		c := cols[s.col]
		if (s.elem >= 0) != (c.vec != nil) {
			return nil, nil, fmt.Errorf("column %q: the model reads it as %s", c.c.Name(), map[bool]string{true: "a vector", false: "a number"}[s.elem >= 0])
		}
		if c.vec != nil && s.elem >= c.vec.Width() {
			return nil, nil, fmt.Errorf("column %q has %d elements, the model reads element %d", c.c.Name(), c.vec.Width(), s.elem)
		}
	}
	return cols, feat, nil
}

// gatherFrame writes the n rows of features feat of cols into x
// (row-major, w values a row), marking the text cells that are not
// numbers.
func gatherFrame(x []float32, w, n int, cols []frameCol, feat []source, bad *faults) {
	// The common layouts take a fast path: one float32 vector column
	// holding every feature in order, or float32 scalar columns.
	oneVec := len(cols) == 1 && cols[0].vec != nil && cols[0].vec.Elem() == data.Float32 && cols[0].vec.Width() == w
	if oneVec {
		for j, s := range feat {
			if s.elem != j {
				oneVec = false
			}
		}
	}
	if oneVec {
		copy(x, cols[0].vec.Float32s())
		return
	}
	// Float32 scalar columns, the usual layout of images and of tables
	// written by data.WriteParquet, are gathered eight columns at a time:
	// each row gets 32 contiguous bytes per step.
	var f32 [][]float32
	for _, s := range feat {
		c := cols[s.col]
		if c.f32 == nil {
			f32 = nil
			break
		}
		f32 = append(f32, c.f32)
	}
	if f32 != nil {
		gather32(x, f32, n)
		return
	}
	// Column to row order in tiles of rows, so that the rows being
	// written stay in cache while every column is visited.
	const tile = 128
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(i0+tile, n)
		for j, s := range feat {
			c := cols[s.col]
			switch {
			case c.f32 != nil:
				for i, v := range c.f32[i0:i1] {
					x[(i0+i)*w+j] = v
				}
			case c.f64 != nil:
				for i, v := range c.f64[i0:i1] {
					x[(i0+i)*w+j] = float32(v)
				}
			case c.i64 != nil:
				for i, v := range c.i64[i0:i1] {
					x[(i0+i)*w+j] = float32(v)
				}
			case c.vec != nil:
				for i := i0; i < i1; i++ {
					x[i*w+j] = float32(c.vec.At(i, s.elem))
				}
			case c.str != nil:
				for i := i0; i < i1; i++ {
					if c.c.IsNull(i) {
						continue
					}
					v, err := strconv.ParseFloat(c.str[i], 64)
					if err != nil {
						bad.mark(i, fmt.Sprintf("column %q: cannot parse %q as a number", c.c.Name(), c.str[i]))
					}
					x[i*w+j] = float32(v)
				}
			}
		}
	}
}

// gather32 writes the n rows of the columns cols into x, row-major.
func gather32(x []float32, cols [][]float32, n int) {
	w := len(cols)
	const tile = 256
	for i0 := 0; i0 < n; i0 += tile {
		i1 := min(i0+tile, n)
		j := 0
		for ; j+8 <= w; j += 8 {
			c0, c1, c2, c3 := cols[j][i0:i1], cols[j+1][i0:i1], cols[j+2][i0:i1], cols[j+3][i0:i1]
			c4, c5, c6, c7 := cols[j+4][i0:i1], cols[j+5][i0:i1], cols[j+6][i0:i1], cols[j+7][i0:i1]
			for i := range c0 {
				r := x[(i0+i)*w+j : (i0+i)*w+j+8 : (i0+i)*w+j+8]
				r[0], r[1], r[2], r[3] = c0[i], c1[i], c2[i], c3[i]
				r[4], r[5], r[6], r[7] = c4[i], c5[i], c6[i], c7[i]
			}
		}
		for ; j < w; j++ {
			for i, v := range cols[j][i0:i1] {
				x[(i0+i)*w+j] = v
			}
		}
	}
}
