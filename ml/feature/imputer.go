package feature

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// The values of Imputer's strategy.
const (
	StrategyMean   = "mean"
	StrategyMedian = "median"
	StrategyMode   = "mode"
)

// Imputer replaces missing values in numeric columns by the mean, the
// median or the mode (most frequent value) of each column, as Spark ML's
// Imputer. Missing means null, NaN, or equal to missingValue (default
// NaN) when fitting; at transform time null and missingValue are
// replaced (NaN too when missingValue is NaN, the default). The output
// columns are float64.
//
// The median is exact: the value of rank ⌈n/2⌉ among the n present
// values (the lower median when n is even), which is what Spark's
// approxQuantile(0.5) returns with no approximation error.
// scikit-learn's SimpleImputer averages the two middle values instead;
// for odd n both agree. Over several ranks every rank's present values
// are gathered (AllGatherBytes, 8 bytes a value) and the median is taken
// of them all, so the result equals the single-process one exactly.
// relativeError is accepted for Spark configs and not used.
//
// The mode is the most frequent value, the smallest among equally
// frequent ones (Spark's and scikit-learn's rule); ranks gather their
// value counts.
type Imputer struct {
	InputCol      string   `json:"inputCol,omitempty" yaml:"inputCol"`
	OutputCol     string   `json:"outputCol,omitempty" yaml:"outputCol"`
	InputCols     []string `json:"inputCols,omitempty" yaml:"inputCols"`
	OutputCols    []string `json:"outputCols,omitempty" yaml:"outputCols"`
	Strategy      string   `json:"strategy" yaml:"strategy"`
	MissingValue  float64  `json:"-" yaml:"missingValue"`
	RelativeError float64  `json:"relativeError" yaml:"relativeError"`
}

// NewImputer returns an Imputer with Spark's defaults (strategy "mean",
// missingValue NaN, relativeError 0.001) and no columns.
func NewImputer() *Imputer {
	return &Imputer{Strategy: StrategyMean, MissingValue: math.NaN(), RelativeError: 0.001}
}

// Type returns "Imputer".
func (p *Imputer) Type() string { return "Imputer" }

// Copy returns a copy of p.
func (p *Imputer) Copy() ml.Estimator {
	c := *p
	c.InputCols, c.OutputCols = slices.Clone(p.InputCols), slices.Clone(p.OutputCols)
	return &c
}

// isMissing is the fitting rule: null, NaN or missingValue.
func isMissing(x float64, null bool, missing float64) bool {
	return null || math.IsNaN(x) || x == missing
}

// Fit computes each column's surrogate over every rank.
func (p *Imputer) Fit(d ml.Data) (ml.Model, error) {
	const stage = "Imputer"
	if err := ml.CheckChoice(stage, "strategy", p.Strategy, StrategyMean, StrategyMedian, StrategyMode); err != nil {
		return nil, err
	}
	if math.IsInf(p.MissingValue, 0) {
		return nil, fmt.Errorf("%s: missingValue must be a number or NaN, got %g", stage, p.MissingValue)
	}
	in, out, err := columnPairs(stage, p.InputCol, p.OutputCol, p.InputCols, p.OutputCols)
	if err != nil {
		return nil, err
	}
	present := make([][]float64, len(in))
	for k, col := range in {
		v, null, err := scalars(stage, d.Frame, col)
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			if !isMissing(x, null != nil && null[i], p.MissingValue) {
				present[k] = append(present[k], x)
			}
		}
	}
	var sur []float64
	switch p.Strategy {
	case StrategyMean:
		sur, err = imputeMean(d.C(), present)
	case StrategyMedian:
		sur, err = imputeMedian(d.C(), present)
	default:
		sur, err = imputeMode(d.C(), present)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stage, err)
	}
	for k, s := range sur {
		if math.IsNaN(s) {
			return nil, fmt.Errorf("%s: column %q has no value that is not missing (null, NaN or %g): its surrogate cannot be computed", stage, in[k], p.MissingValue)
		}
	}
	return &ImputerModel{InputCols: in, OutputCols: out, MissingValue: p.MissingValue, Surrogates: sur}, nil
}

// imputeMean all-reduces the sums and counts of the present values.
func imputeMean(c ml.Comm, present [][]float64) ([]float64, error) {
	k := len(present)
	s := make([]float64, 2*k)
	for j, v := range present {
		for _, x := range v {
			s[j] += x
		}
		s[k+j] = float64(len(v))
	}
	if err := c.AllReduce(s, ml.OpSum); err != nil {
		return nil, err
	}
	out := make([]float64, k)
	for j := range out {
		out[j] = math.NaN()
		if s[k+j] > 0 {
			out[j] = s[j] / s[k+j]
		}
	}
	return out, nil
}

// gatherFloats gathers every rank's cols (each column's values prefixed
// by its count) and returns, per column, the values of all ranks.
func gatherFloats(c ml.Comm, cols [][]float64) ([][]float64, error) {
	var v []float64
	for _, col := range cols {
		v = append(v, float64(len(col)))
		v = append(v, col...)
	}
	all, err := ml.AllGatherFloats(c, v)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(cols))
	for r, v := range all {
		for j := range cols {
			if len(v) < 1 {
				return nil, fmt.Errorf("rank %d sent %d columns' values, want %d", r, j, len(cols))
			}
			n := int(v[0])
			v = v[1:]
			if n < 0 || len(v) < n {
				return nil, fmt.Errorf("rank %d sent a short column %d", r, j)
			}
			out[j] = append(out[j], v[:n]...)
			v = v[n:]
		}
	}
	return out, nil
}

// imputeMedian gathers the present values and takes the value of rank
// ⌈n/2⌉ of each column.
func imputeMedian(c ml.Comm, present [][]float64) ([]float64, error) {
	all, err := gatherFloats(c, present)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(all))
	for j, v := range all {
		out[j] = math.NaN()
		if len(v) > 0 {
			slices.Sort(v)
			out[j] = quantile(v, 0.5)
		}
	}
	return out, nil
}

// imputeMode gathers each rank's distinct values and their counts and
// takes the most frequent value, the smallest of a tie.
func imputeMode(c ml.Comm, present [][]float64) ([]float64, error) {
	distinct := make([][]float64, 2*len(present))
	for j, v := range present {
		counts := map[float64]float64{}
		for _, x := range v {
			counts[x]++
		}
		for x, n := range counts {
			distinct[2*j] = append(distinct[2*j], x)
			distinct[2*j+1] = append(distinct[2*j+1], n)
		}
	}
	all, err := gatherFloats(c, distinct)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(present))
	for j := range out {
		counts := map[float64]float64{}
		for i, x := range all[2*j] {
			counts[x] += all[2*j+1][i]
		}
		best, bestN := math.NaN(), 0.0
		for x, n := range counts {
			if n > bestN || (n == bestN && x < best) {
				best, bestN = x, n
			}
		}
		out[j] = best
	}
	return out, nil
}

// ImputerModel is a fitted Imputer.
type ImputerModel struct {
	InputCols, OutputCols []string
	MissingValue          float64
	// Surrogates holds each input column's replacement value.
	Surrogates []float64
}

// Type returns "ImputerModel".
func (m *ImputerModel) Type() string { return "ImputerModel" }

// Transform adds the float64 output columns: the input with nulls and
// missingValue replaced by the surrogate.
func (m *ImputerModel) Transform(f *data.Frame) (*data.Frame, error) {
	cols := make([]data.Column, len(m.InputCols))
	for k, col := range m.InputCols {
		v, null, err := scalars("ImputerModel", f, col)
		if err != nil {
			return nil, err
		}
		for i, x := range v {
			if (null != nil && null[i]) || x == m.MissingValue || (math.IsNaN(m.MissingValue) && math.IsNaN(x)) {
				v[i] = m.Surrogates[k]
			}
		}
		cols[k] = ml.ScalarOut(m.OutputCols[k], v)
	}
	return ml.WithColumns(f, cols...)
}

type imputerParams struct {
	InputCols  []string `json:"inputCols"`
	OutputCols []string `json:"outputCols"`
}

// Encode keeps the columns, and the arrays "surrogates" and
// "missingValue" (an array, as JSON has no NaN).
func (m *ImputerModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: imputerParams{m.InputCols, m.OutputCols},
		Arrays: map[string]ml.Array{"surrogates": ml.Vec(m.Surrogates), "missingValue": ml.Vec([]float64{m.MissingValue})},
	}, nil
}

func decodeImputerModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p imputerParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if len(p.InputCols) == 0 || len(p.OutputCols) != len(p.InputCols) {
		return nil, fmt.Errorf("%d inputCols and %d outputCols: want the same positive number", len(p.InputCols), len(p.OutputCols))
	}
	sur, err := ml.Need(arrays, "surrogates", len(p.InputCols))
	if err != nil {
		return nil, err
	}
	mv, err := ml.Need(arrays, "missingValue", 1)
	if err != nil {
		return nil, err
	}
	return &ImputerModel{InputCols: p.InputCols, OutputCols: p.OutputCols, MissingValue: mv.Data[0], Surrogates: sur.Data}, nil
}

func init() {
	ml.RegisterStage("Imputer", func() ml.Stage { return NewImputer() })
	ml.RegisterModel("ImputerModel", decodeImputerModel)
}
