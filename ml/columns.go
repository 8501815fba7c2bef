package ml

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/parallel"
)

// Default column names, Spark ML's.
const (
	FeaturesCol      = "features"
	LabelCol         = "label"
	PredictionCol    = "prediction"
	ProbabilityCol   = "probability"
	RawPredictionCol = "rawPrediction"
)

// Matrix is a dense row-major float64 matrix: the rows of a features
// column, one row a sample.
type Matrix struct {
	Rows, Cols int
	Data       []float64
}

// Row returns row i (a view).
func (m Matrix) Row(i int) []float64 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// Features returns the vector column col of f as a dense float64 matrix
// (float32 elements are widened). A scalar numeric column is a matrix of
// one column. A null row or element is an error naming the column and the
// row (1-based): impute or drop them first.
func Features(f *data.Frame, col string) (Matrix, error) {
	c := f.Col(col)
	if c == nil {
		return Matrix{}, fmt.Errorf("no column %q (the frame has %v)", col, f.Names())
	}
	if c.Kind() != data.Vector {
		v, err := Numbers(f, col)
		if err != nil {
			return Matrix{}, err
		}
		return Matrix{Rows: len(v), Cols: 1, Data: v}, nil
	}
	vc := c.(*data.VectorColumn)
	n, w := vc.Len(), vc.Width()
	if vc.NullCount() > 0 || vc.ElemValid() != nil {
		for i := range n {
			if vc.IsNull(i) {
				return Matrix{}, fmt.Errorf("column %q, row %d: missing vector", col, i+1)
			}
			for e := range w {
				if vc.ElemNull(i, e) {
					return Matrix{}, fmt.Errorf("column %q, row %d, element %d: missing value", col, i+1, e+1)
				}
			}
		}
	}
	out := make([]float64, n*w)
	// Copy (widen) and check in parallel chunks: a wide column is hundreds
	// of megabytes, which one core converts at a fraction of the memory's
	// speed.
	f64, f32 := vc.Float64s(), vc.Float32s()
	var bad atomic.Bool
	parallel.For(len(out), 1<<16, func(lo, hi int) {
		if f64 != nil {
			copy(out[lo:hi], f64[lo:hi])
		} else {
			for i, x := range f32[lo:hi] {
				out[lo+i] = float64(x)
			}
		}
		for _, x := range out[lo:hi] {
			if x-x != 0 { // NaN or ±Inf
				bad.Store(true)
				return
			}
		}
	})
	if bad.Load() { // find the first bad element, for the error
		for i, x := range out {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return Matrix{}, fmt.Errorf("column %q, row %d, element %d: %g is not a finite number", col, i/max(w, 1)+1, i%max(w, 1)+1, x)
			}
		}
	}
	return Matrix{Rows: n, Cols: w, Data: out}, nil
}

// Numbers returns a numeric scalar column (float64, float32, int64 or bool)
// as float64s. Nulls and non-finite values are errors naming the row.
func Numbers(f *data.Frame, col string) ([]float64, error) {
	c := f.Col(col)
	if c == nil {
		return nil, fmt.Errorf("no column %q (the frame has %v)", col, f.Names())
	}
	out := make([]float64, c.Len())
	switch c := c.(type) {
	case *data.ScalarColumn[float64]:
		copy(out, c.Values())
	case *data.ScalarColumn[float32]:
		for i, v := range c.Values() {
			out[i] = float64(v)
		}
	case *data.ScalarColumn[int64]:
		for i, v := range c.Values() {
			out[i] = float64(v)
		}
	case *data.ScalarColumn[bool]:
		for i, v := range c.Values() {
			if v {
				out[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("column %q is %s, not numeric (index strings with StringIndexer)", col, c.Kind())
	}
	for i, v := range out {
		if c.IsNull(i) {
			return nil, fmt.Errorf("column %q, row %d: missing value", col, i+1)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("column %q, row %d: %g is not a finite number", col, i+1, v)
		}
	}
	return out, nil
}

// Classes returns a label column of class indices 0, 1, ..., K−1 (as Spark
// wants them, see StringIndexer) and K, the number of classes over every
// rank: one more than the largest label anywhere. A label that is not a
// non-negative integer is an error naming the row.
func Classes(d Data, col string) (labels []int, k int, err error) {
	labels, top, err := localClasses(d.Frame, col)
	// Every rank takes part in the reduction, a rank with bad labels too,
	// so that none is left waiting in it: the flag says one failed.
	t := []float64{top, 0}
	if err != nil {
		t[1] = 1
	}
	if rerr := d.C().AllReduce(t, OpMax); rerr != nil {
		return nil, 0, errors.Join(err, rerr)
	}
	switch {
	case err != nil:
		return nil, 0, err
	case t[1] != 0:
		return nil, 0, ErrOtherRank
	}
	return labels, int(t[0]) + 1, nil
}

// ErrOtherRank is returned on the ranks whose own data was fine when
// another rank's was not (that rank's error says what and where).
var ErrOtherRank = errors.New("another rank's data is invalid (its error names the column and row)")

func localClasses(f *data.Frame, col string) ([]int, float64, error) {
	v, err := Numbers(f, col)
	if err != nil {
		return nil, -1, err
	}
	labels := make([]int, len(v))
	top := -1.0
	for i, x := range v {
		if x < 0 || x != math.Trunc(x) || x > 1<<30 {
			return nil, -1, fmt.Errorf("column %q, row %d: label %g is not a class index 0, 1, 2, ... (index string labels with StringIndexer)", col, i+1, x)
		}
		labels[i] = int(x)
		top = max(top, x)
	}
	return labels, top, nil
}

// Weights returns the weight column col, or nil (every weight 1) when col
// is "". A negative weight is an error naming the row.
func Weights(f *data.Frame, col string) ([]float64, error) {
	if col == "" {
		return nil, nil
	}
	w, err := Numbers(f, col)
	if err != nil {
		return nil, err
	}
	for i, v := range w {
		if v < 0 {
			return nil, fmt.Errorf("column %q, row %d: weight %g is negative", col, i+1, v)
		}
	}
	return w, nil
}

// WithColumns returns f with the given columns added (or replaced).
func WithColumns(f *data.Frame, cols ...data.Column) (*data.Frame, error) {
	for _, c := range cols {
		var err error
		if f, err = f.With(c); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// ScalarOut is a float64 output column.
func ScalarOut(name string, v []float64) data.Column { return data.NewColumn(name, v, nil) }

// VectorOut is a float64 vector output column of rows × width values.
func VectorOut(name string, width int, v []float64) data.Column {
	return data.NewVectorColumn(name, width, v, nil, nil)
}

// TableFrame returns a dense data.Table as a frame for the ml stages: its
// features as a float32 vector column FeaturesCol (a view of t.X, not a
// copy) and its class labels (or numeric targets) as a float64 column
// LabelCol.
func TableFrame(t *data.Table) (*data.Frame, error) {
	y := make([]float64, t.Rows)
	switch {
	case t.Labels != nil:
		for i, l := range t.Labels {
			y[i] = float64(l)
		}
	case t.Y != nil:
		for i, v := range t.Y {
			y[i] = float64(v)
		}
	default:
		return nil, fmt.Errorf("table has neither class labels nor targets")
	}
	return data.NewFrame(data.NewVectorColumn32(FeaturesCol, t.Cols, t.X, nil, nil), data.NewColumn(LabelCol, y, nil))
}
