package modelfile

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
)

// Features turns input rows into a trained model's input: the one path
// from a Table (eval, predict), a Frame (batch predict) or raw rows (an
// OIP request, a Parquet matrix) to the network's feature matrix. It
// knows the model's columns and their order, which elements of a vector
// column v the features v[0], v[1], ... are, the imputation means and
// the standardization.
//
// Every path standardizes the same way, as data.Standardizer.Apply does
// when training standardizes its data: in float64,
// float32((float64(v) − mean) · (1/std)). The network thus sees the
// values it was trained on bit for bit, and every user gets the same
// matrix for the same rows.
//
// A Features only reads its fields: one serves concurrent calls.
type Features struct {
	// Columns are the model's feature names in input order, or nil.
	Columns []string
	// Inputs are the source columns the features come from (a vector
	// column once for all its elements), or nil.
	Inputs []string
	// Width is the number of feature values per row.
	Width int
	// Shape is the network's input shape per row.
	Shape  []int
	src    []source
	mean   []float64 // standardization, or nil
	inv    []float64
	impute []float64 // imputation means, or nil
}

// source locates a feature value: column col of the batch (by its index
// in Inputs), element elem of a vector column (−1 for a scalar).
type source struct{ col, elem int }

// Features returns the model's input preparation.
func (m *Model) Features() *Features {
	f := &Features{Columns: m.Columns, Width: numel(m.Spec.Input), Shape: m.Spec.Input, impute: m.Impute}
	// v[e] names element e of vector column v.
	idx := map[string]int{}
	for _, name := range m.Columns {
		col, elem := name, -1
		if b, rest, ok := strings.Cut(name, "["); ok && strings.HasSuffix(rest, "]") {
			if e, err := strconv.Atoi(strings.TrimSuffix(rest, "]")); err == nil && e >= 0 {
				col, elem = b, e
			}
		}
		k, ok := idx[col]
		if !ok {
			k = len(f.Inputs)
			idx[col] = k
			f.Inputs = append(f.Inputs, col)
		}
		f.src = append(f.src, source{k, elem})
	}
	if s := m.Scaler; s != nil {
		f.mean = s.Mean
		f.inv = make([]float64, len(s.Std))
		for j, sd := range s.Std {
			f.inv[j] = 1
			if sd > 0 {
				f.inv[j] = 1 / sd
			}
		}
	}
	return f
}

// Table checks that t has the model's feature columns (reordering them
// by name when both sides have names) and returns a standardized copy
// ready for the network.
func (f *Features) Table(t *data.Table) (*data.Table, error) {
	in := t
	if f.Columns != nil && t.Columns != nil && !slices.Equal(f.Columns, t.Columns) {
		idx := make([]int, len(f.Columns))
		for j, name := range f.Columns {
			idx[j] = t.Column(name)
			if idx[j] < 0 {
				return nil, fmt.Errorf("the input has no column %q (the model reads %v)", name, f.Columns)
			}
		}
		sel := &data.Table{Rows: t.Rows, Cols: len(idx), X: make([]float32, t.Rows*len(idx)), Columns: f.Columns,
			LabelName: t.LabelName, Labels: t.Labels, Classes: t.Classes, Y: t.Y}
		for i := range t.Rows {
			row := t.Row(i)
			for j, k := range idx {
				sel.X[i*len(idx)+j] = row[k]
			}
		}
		in = sel
	}
	if in.Cols != f.Width {
		return nil, fmt.Errorf("the input has %d feature columns, the model reads %d (shape %v)", in.Cols, f.Width, f.Shape)
	}
	if f.mean != nil {
		if in == t {
			in = t.Clone()
		}
		f.Standardize(in.X, in.Rows)
	}
	return in, nil
}

// Standardize standardizes the n rows of x (row-major, Width values a
// row) in place; a model without standardization leaves them.
func (f *Features) Standardize(x []float32, n int) {
	if f.mean == nil {
		return
	}
	w := f.Width
	for i := range n {
		row := x[i*w : (i+1)*w]
		for j, v := range row {
			row[j] = float32((float64(v) - f.mean[j]) * f.inv[j])
		}
	}
}

// StandardizeColumns standardizes the n rows of the column-major x
// (feature j of row i at x[j*ld+i]) in place.
func (f *Features) StandardizeColumns(x []float32, n, ld int) {
	if f.mean == nil {
		return
	}
	for j := range f.Width {
		m, inv := f.mean[j], f.inv[j]
		col := x[j*ld : j*ld+n]
		for i, v := range col {
			col[i] = float32((float64(v) - m) * inv)
		}
	}
}

// Name is the name of element elem of column col (col itself for a
// scalar, elem < 0).
func (f *Features) Name(col string, elem int) string {
	if elem < 0 {
		return col
	}
	return col + "[" + strconv.Itoa(elem) + "]"
}

// faults collects the rows of a batch that cannot be scored.
type faults struct {
	ok     []bool
	reason map[int]string
}

// newFaults returns the faults of a batch of n rows: none yet.
func newFaults(n int) *faults {
	ok := make([]bool, n)
	for i := range ok {
		ok[i] = true
	}
	return &faults{ok: ok, reason: map[int]string{}}
}

// mark records that row i cannot be scored, and why (the first reason
// given stays).
func (b *faults) mark(i int, why string) {
	if b.ok[i] {
		b.ok[i] = false
		b.reason[i] = why
	}
}

// missing fills in feature j of row i of x, which is missing: the mean
// the model was trained to impute, or the row cannot be scored.
func (f *Features) missing(x []float32, i, j int, name string, bad *faults) {
	if f.impute != nil {
		x[i*f.Width+j] = float32(f.impute[j])
		return
	}
	bad.mark(i, fmt.Sprintf("column %q is missing (the model was trained without impute: mean)", name))
}

// Rows finishes n raw rows of features (row-major in x, in the model's
// column order): the missing cells listed in nulls are imputed (or their
// rows reported), rows with a value that is not finite are reported, and
// the rest are standardized and compacted to the front of x. finite says
// the values are known to be finite (a reader summed them); name names
// feature j in reports. It returns the rows that can be scored, which
// input rows those are, and the others.
func (f *Features) Rows(x []float32, n int, nulls []data.NullCell, name func(j int) string, finite bool) ([]float32, []int, []data.BadRow, error) {
	if len(x) < n*f.Width {
		return nil, nil, nil, fmt.Errorf("%d values for %d rows of %d features", len(x), n, f.Width)
	}
	bad := newFaults(n)
	for _, c := range nulls {
		f.missing(x, c.Row, c.Col, name(c.Col), bad)
	}
	return f.finish(x[:n*f.Width], n, bad, name, finite)
}

// finish checks that the n rows of x are finite, standardizes them and
// compacts the rows that can be scored.
func (f *Features) finish(x []float32, n int, bad *faults, name func(j int) string, finite bool) ([]float32, []int, []data.BadRow, error) {
	w := f.Width
	if !finite {
		finite = kernel.FiniteF32(x[:n*w])
	}
	if !finite {
		for i := range n {
			for j, v := range x[i*w : (i+1)*w] {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					bad.mark(i, fmt.Sprintf("feature %d (%s) is %v", j, name(j), v))
					break
				}
			}
		}
	}
	f.Standardize(x, n)
	var rows []int
	if len(bad.reason) == 0 {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return x, rows, nil, nil
	}
	// Compact the good rows.
	var errs []data.BadRow
	k := 0
	for i := range n {
		if !bad.ok[i] {
			errs = append(errs, data.BadRow{Row: i, Reason: bad.reason[i]})
			continue
		}
		copy(x[k*w:(k+1)*w], x[i*w:(i+1)*w])
		rows = append(rows, i)
		k++
	}
	return x[:k*w], rows, errs, nil
}

// MatrixColumns says which columns data.ParquetMatrix reads for this
// model: its input columns when each feature is a column of its own, in
// order, or one vector column of every feature; nil with ok when the
// model does not name its columns (every column but the kept and key
// ones). ok is false for other layouts.
func (f *Features) MatrixColumns() (cols []string, ok bool) {
	if f.Inputs == nil {
		return nil, true
	}
	vector := len(f.Inputs) == 1 && f.src[0].elem >= 0
	for j, s := range f.src {
		if vector && s.elem != j || !vector && (s.elem >= 0 || s.col != j) {
			return nil, false
		}
	}
	return f.Inputs, true
}
