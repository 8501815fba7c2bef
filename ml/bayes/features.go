package bayes

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// rows is a features column read in place: the float32 or float64 values
// of a vector column (no copy), or a scalar numeric column as one column.
// Exactly one of f32 and f64 is set.
type rows struct {
	n, d int
	f32  []float32
	f64  []float64
}

// readRows returns the features column col of f without copying a vector
// column's values. A missing row or element is an error naming the row;
// non-finite values are found later, by the caller's pass over the data
// (see firstBad).
func readRows(f *data.Frame, col string) (rows, error) {
	c := f.Col(col)
	if c == nil {
		return rows{}, fmt.Errorf("no column %q (the frame has %v)", col, f.Names())
	}
	vc, ok := c.(*data.VectorColumn)
	if !ok {
		v, err := ml.Numbers(f, col)
		if err != nil {
			return rows{}, err
		}
		return rows{n: len(v), d: 1, f64: v}, nil
	}
	n, w := vc.Len(), vc.Width()
	if vc.NullCount() > 0 || vc.ElemValid() != nil {
		for i := range n {
			if vc.IsNull(i) {
				return rows{}, fmt.Errorf("column %q, row %d: missing vector", col, i+1)
			}
			for e := range w {
				if vc.ElemNull(i, e) {
					return rows{}, fmt.Errorf("column %q, row %d, element %d: missing value", col, i+1, e+1)
				}
			}
		}
	}
	r := rows{n: n, d: w}
	if v := vc.Float64s(); v != nil {
		r.f64 = v[:n*w]
	} else {
		r.f32 = vc.Float32s()[:n*w]
	}
	return r, nil
}

// at returns element j of row i.
func (r rows) at(i, j int) float64 {
	if r.f64 != nil {
		return r.f64[i*r.d+j]
	}
	return float64(r.f32[i*r.d+j])
}

// row copies row i into dst (len d).
func (r rows) row(i int, dst []float64) {
	if r.f64 != nil {
		copy(dst, r.f64[i*r.d:(i+1)*r.d])
		return
	}
	for j, x := range r.f32[i*r.d : (i+1)*r.d] {
		dst[j] = float64(x)
	}
}

// firstBad returns the first row and element (0-based) whose value ok
// rejects, or −1, −1.
func (r rows) firstBad(ok func(float64) bool) (int, int) {
	for i := range r.n {
		for j := range r.d {
			if !ok(r.at(i, j)) {
				return i, j
			}
		}
	}
	return -1, -1
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
