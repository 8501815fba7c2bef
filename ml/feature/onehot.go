package feature

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// OneHotEncoder maps columns of category indices 0, 1, ..., K−1 (as
// StringIndexer makes them) to one-hot float64 vectors, as Spark 3 ML's
// OneHotEncoder (an Estimator: fitting finds K, one more than the largest
// index in the data, over every rank).
//
// With dropLast (the default) the last category is dropped, so the
// vectors are K−1 wide and the last category is all zeros (the vectors of
// a full set of categories are linearly dependent otherwise). With
// handleInvalid "keep" an index outside 0..K−1 (or a null or NaN) is one
// more category after the K; with "error" (the default) it is an error
// naming the column, the row and the value.
//
// The output vectors are dense: data.Frame has no sparse vectors (Spark's
// are sparse; the values are the same).
type OneHotEncoder struct {
	InputCol      string   `json:"inputCol,omitempty" yaml:"inputCol"`
	OutputCol     string   `json:"outputCol,omitempty" yaml:"outputCol"`
	InputCols     []string `json:"inputCols,omitempty" yaml:"inputCols"`
	OutputCols    []string `json:"outputCols,omitempty" yaml:"outputCols"`
	DropLast      bool     `json:"dropLast" yaml:"dropLast"`
	HandleInvalid string   `json:"handleInvalid" yaml:"handleInvalid"`
}

// NewOneHotEncoder returns a OneHotEncoder with Spark's defaults (dropLast
// true, handleInvalid "error") and no columns.
func NewOneHotEncoder() *OneHotEncoder {
	return &OneHotEncoder{DropLast: true, HandleInvalid: InvalidError}
}

// Type returns "OneHotEncoder".
func (o *OneHotEncoder) Type() string { return "OneHotEncoder" }

// Copy returns a copy of o.
func (o *OneHotEncoder) Copy() ml.Estimator {
	c := *o
	c.InputCols, c.OutputCols = slices.Clone(o.InputCols), slices.Clone(o.OutputCols)
	return &c
}

// Fit finds the number of categories of each input column: one more than
// its largest index over every rank (an all-reduce of the maxima).
func (o *OneHotEncoder) Fit(d ml.Data) (ml.Model, error) {
	const stage = "OneHotEncoder"
	if err := ml.CheckChoice(stage, "handleInvalid", o.HandleInvalid, InvalidError, InvalidKeep); err != nil {
		return nil, err
	}
	in, out, err := columnPairs(stage, o.InputCol, o.OutputCol, o.InputCols, o.OutputCols)
	if err != nil {
		return nil, err
	}
	top := make([]float64, len(in))
	for k, col := range in {
		v, null, err := scalars(stage, d.Frame, col)
		if err != nil {
			return nil, err
		}
		top[k] = -1
		for i, x := range v {
			if null != nil && null[i] {
				return nil, fmt.Errorf("%s: column %q, row %d: null category index", stage, col, i+1)
			}
			if !isIndex(x) {
				return nil, fmt.Errorf("%s: column %q, row %d: %g is not a category index 0, 1, 2, ... (index values with StringIndexer)", stage, col, i+1, x)
			}
			top[k] = max(top[k], x)
		}
	}
	if err := d.C().AllReduce(top, ml.OpMax); err != nil {
		return nil, err
	}
	sizes := make([]float64, len(in))
	for k, t := range top {
		sizes[k] = t + 1
		if sizes[k] == 0 {
			return nil, fmt.Errorf("%s: column %q has no rows to fit on", stage, in[k])
		}
	}
	m := &OneHotEncoderModel{InputCols: in, OutputCols: out, DropLast: o.DropLast, HandleInvalid: o.HandleInvalid, CategorySizes: sizes}
	for k := range in {
		if m.Width(k) == 0 {
			return nil, fmt.Errorf("%s: column %q has one category and dropLast is set: its vectors would be empty, which a frame cannot hold", stage, in[k])
		}
	}
	return m, nil
}

// isIndex reports whether x is a category index: a non-negative integer
// (below 2^30, so that vectors stay a sane size).
func isIndex(x float64) bool { return x >= 0 && x == math.Trunc(x) && x < 1<<30 }

// OneHotEncoderModel is a fitted OneHotEncoder.
type OneHotEncoderModel struct {
	InputCols, OutputCols []string
	DropLast              bool
	HandleInvalid         string
	// CategorySizes is each input column's number of categories.
	CategorySizes []float64
}

// Type returns "OneHotEncoderModel".
func (m *OneHotEncoderModel) Type() string { return "OneHotEncoderModel" }

// Width returns the width of output column k: its categories, one less
// with dropLast, one more with handleInvalid "keep" (Spark's rule).
func (m *OneHotEncoderModel) Width(k int) int {
	w := int(m.CategorySizes[k])
	if m.DropLast {
		w--
	}
	if m.HandleInvalid == InvalidKeep {
		w++
	}
	return w
}

// Transform adds one dense one-hot vector column per input column.
func (m *OneHotEncoderModel) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "OneHotEncoderModel"
	if err := ml.CheckChoice(stage, "handleInvalid", m.HandleInvalid, InvalidError, InvalidKeep); err != nil {
		return nil, err
	}
	cols := make([]data.Column, len(m.InputCols))
	for k, col := range m.InputCols {
		v, null, err := scalars(stage, f, col)
		if err != nil {
			return nil, err
		}
		size := int(m.CategorySizes[k])
		w := m.Width(k)
		out := make([]float64, len(v)*w)
		for i, x := range v {
			isNull := null != nil && null[i]
			idx := -1
			if !isNull && isIndex(x) && x < float64(size) {
				idx = int(x)
			} else if m.HandleInvalid == InvalidKeep {
				idx = size
			} else if isNull {
				return nil, fmt.Errorf("%s: column %q, row %d: null category index (set handleInvalid to \"keep\")", stage, col, i+1)
			} else {
				return nil, fmt.Errorf("%s: column %q, row %d: category index %g is not one of the %d seen when fitting (0 to %d; set handleInvalid to \"keep\")", stage, col, i+1, x, size, size-1)
			}
			if idx < w {
				out[i*w+idx] = 1
			}
		}
		cols[k] = ml.VectorOut(m.OutputCols[k], w, out)
	}
	return ml.WithColumns(f, cols...)
}

type oneHotParams struct {
	InputCols     []string `json:"inputCols"`
	OutputCols    []string `json:"outputCols"`
	DropLast      bool     `json:"dropLast"`
	HandleInvalid string   `json:"handleInvalid"`
}

// Encode keeps the columns and flags, and the array "categorySizes".
func (m *OneHotEncoderModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: oneHotParams{m.InputCols, m.OutputCols, m.DropLast, m.HandleInvalid},
		Arrays: map[string]ml.Array{"categorySizes": ml.Vec(m.CategorySizes)},
	}, nil
}

func decodeOneHotEncoderModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p oneHotParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if len(p.InputCols) == 0 || len(p.OutputCols) != len(p.InputCols) {
		return nil, fmt.Errorf("%d inputCols and %d outputCols: want the same positive number", len(p.InputCols), len(p.OutputCols))
	}
	sizes, err := ml.Need(arrays, "categorySizes", len(p.InputCols))
	if err != nil {
		return nil, err
	}
	for k, s := range sizes.Data {
		if !isIndex(s) || s == 0 {
			return nil, fmt.Errorf("categorySizes[%d] = %g is not a positive integer", k, s)
		}
	}
	return &OneHotEncoderModel{InputCols: p.InputCols, OutputCols: p.OutputCols, DropLast: p.DropLast, HandleInvalid: p.HandleInvalid, CategorySizes: sizes.Data}, nil
}

func init() {
	ml.RegisterStage("OneHotEncoder", func() ml.Stage { return NewOneHotEncoder() })
	ml.RegisterModel("OneHotEncoderModel", decodeOneHotEncoderModel)
}
