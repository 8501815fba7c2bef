package feature

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// ScaledFeaturesCol is the scalers' default output column.
const ScaledFeaturesCol = "scaledFeatures"

// StandardScaler standardizes each element of a vector column, as Spark
// ML's StandardScaler: x − mean when withMean (default false), divided by
// the standard deviation when withStd (default true). The standard
// deviation is the unbiased sample one (divisor n − 1), as Spark's; note
// that scikit-learn's StandardScaler divides by the population one
// (divisor n). A constant element (std 0) scales to 0, as in Spark.
type StandardScaler struct {
	InputCol  string `json:"inputCol" yaml:"inputCol"`
	OutputCol string `json:"outputCol" yaml:"outputCol"`
	WithMean  bool   `json:"withMean" yaml:"withMean"`
	WithStd   bool   `json:"withStd" yaml:"withStd"`
}

// NewStandardScaler returns a StandardScaler with Spark's defaults,
// reading ml.FeaturesCol and writing ScaledFeaturesCol.
func NewStandardScaler() *StandardScaler {
	return &StandardScaler{InputCol: ml.FeaturesCol, OutputCol: ScaledFeaturesCol, WithStd: true}
}

// Type returns "StandardScaler".
func (s *StandardScaler) Type() string { return "StandardScaler" }

// Copy returns a copy of s.
func (s *StandardScaler) Copy() ml.Estimator { c := *s; return &c }

// Fit computes the mean and the sample standard deviation of every
// element over all ranks (two all-reduces: the sums, then the squared
// deviations from the global mean).
func (s *StandardScaler) Fit(d ml.Data) (ml.Model, error) {
	const stage = "StandardScaler"
	if s.InputCol == "" || s.OutputCol == "" {
		return nil, fmt.Errorf("%s: inputCol and outputCol must be set", stage)
	}
	x, err := matrix(stage, d, s.InputCol)
	if err != nil {
		return nil, err
	}
	w := x.Cols
	sums := make([]float64, w+1)
	for i := range x.Rows {
		for j, v := range x.Row(i) {
			sums[j] += v
		}
	}
	sums[w] = float64(x.Rows)
	if err := d.C().AllReduce(sums, ml.OpSum); err != nil {
		return nil, err
	}
	n := sums[w]
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows to fit on", stage)
	}
	mean := make([]float64, w)
	for j := range mean {
		mean[j] = sums[j] / n
	}
	sq := make([]float64, w)
	for i := range x.Rows {
		for j, v := range x.Row(i) {
			dv := v - mean[j]
			sq[j] += dv * dv
		}
	}
	if err := d.C().AllReduce(sq, ml.OpSum); err != nil {
		return nil, err
	}
	std := make([]float64, w)
	if n > 1 {
		for j := range std {
			std[j] = math.Sqrt(sq[j] / (n - 1))
		}
	}
	return &StandardScalerModel{InputCol: s.InputCol, OutputCol: s.OutputCol, WithMean: s.WithMean, WithStd: s.WithStd, Mean: mean, Std: std}, nil
}

// StandardScalerModel is a fitted StandardScaler.
type StandardScalerModel struct {
	InputCol, OutputCol string
	WithMean, WithStd   bool
	// Mean and Std are each element's mean and sample standard deviation.
	Mean, Std []float64
}

// Type returns "StandardScalerModel".
func (m *StandardScalerModel) Type() string { return "StandardScalerModel" }

// Transform adds OutputCol: (x − mean)/std per element, as the flags say.
func (m *StandardScalerModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := transformMatrix("StandardScalerModel", f, m.InputCol, len(m.Mean))
	if err != nil {
		return nil, err
	}
	scale := make([]float64, len(m.Std))
	for j, s := range m.Std {
		if s != 0 {
			scale[j] = 1 / s
		}
	}
	out := x.Data
	for i := range x.Rows {
		row := out[i*x.Cols : (i+1)*x.Cols]
		for j := range row {
			if m.WithMean {
				row[j] -= m.Mean[j]
			}
			if m.WithStd {
				row[j] *= scale[j]
			}
		}
	}
	return f.With(ml.VectorOut(m.OutputCol, x.Cols, out))
}

type scalerParams struct {
	InputCol  string  `json:"inputCol"`
	OutputCol string  `json:"outputCol"`
	WithMean  bool    `json:"withMean,omitempty"`
	WithStd   bool    `json:"withStd,omitempty"`
	Min       float64 `json:"min,omitempty"`
	Max       float64 `json:"max,omitempty"`
}

// Encode keeps the columns and flags, and the arrays "mean" and "std".
func (m *StandardScalerModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: scalerParams{InputCol: m.InputCol, OutputCol: m.OutputCol, WithMean: m.WithMean, WithStd: m.WithStd},
		Arrays: map[string]ml.Array{"mean": ml.Vec(m.Mean), "std": ml.Vec(m.Std)},
	}, nil
}

func decodeStandardScalerModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	p, mean, std, err := decodeScaler(raw, arrays, "mean", "std")
	if err != nil {
		return nil, err
	}
	return &StandardScalerModel{InputCol: p.InputCol, OutputCol: p.OutputCol, WithMean: p.WithMean, WithStd: p.WithStd, Mean: mean, Std: std}, nil
}

// decodeScaler reads a scaler model's params and its two per-element
// arrays a and b, of one length.
func decodeScaler(raw json.RawMessage, arrays map[string]ml.Array, a, b string) (scalerParams, []float64, []float64, error) {
	var p scalerParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return p, nil, nil, err
	}
	x, err := ml.Need(arrays, a, -1)
	if err != nil {
		return p, nil, nil, err
	}
	y, err := ml.Need(arrays, b, len(x.Data))
	if err != nil {
		return p, nil, nil, err
	}
	return p, x.Data, y.Data, nil
}

// MinMaxScaler rescales each element of a vector column to [min, max]
// (default [0, 1]) from its range in the data, as Spark ML's
// MinMaxScaler: (x − Emin)/(Emax − Emin)·(max − min) + min. A constant
// element (Emax = Emin) becomes 0.5·(max + min), as in Spark (scikit-learn
// gives min instead).
type MinMaxScaler struct {
	InputCol  string  `json:"inputCol" yaml:"inputCol"`
	OutputCol string  `json:"outputCol" yaml:"outputCol"`
	Min       float64 `json:"min" yaml:"min"`
	Max       float64 `json:"max" yaml:"max"`
}

// NewMinMaxScaler returns a MinMaxScaler with Spark's defaults (min 0,
// max 1), reading ml.FeaturesCol and writing ScaledFeaturesCol.
func NewMinMaxScaler() *MinMaxScaler {
	return &MinMaxScaler{InputCol: ml.FeaturesCol, OutputCol: ScaledFeaturesCol, Min: 0, Max: 1}
}

// Type returns "MinMaxScaler".
func (s *MinMaxScaler) Type() string { return "MinMaxScaler" }

// Copy returns a copy of s.
func (s *MinMaxScaler) Copy() ml.Estimator { c := *s; return &c }

// Fit finds each element's minimum and maximum over all ranks.
func (s *MinMaxScaler) Fit(d ml.Data) (ml.Model, error) {
	const stage = "MinMaxScaler"
	if !(s.Min < s.Max) {
		return nil, fmt.Errorf("%s: min must be < max, got min %g, max %g", stage, s.Min, s.Max)
	}
	if s.InputCol == "" || s.OutputCol == "" {
		return nil, fmt.Errorf("%s: inputCol and outputCol must be set", stage)
	}
	lo, hi, n, err := ranges(stage, d, s.InputCol)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows to fit on", stage)
	}
	return &MinMaxScalerModel{InputCol: s.InputCol, OutputCol: s.OutputCol, Min: s.Min, Max: s.Max, OriginalMin: lo, OriginalMax: hi}, nil
}

// ranges returns the elementwise minimum and maximum of col over every
// rank, and the number of rows.
func ranges(stage string, d ml.Data, col string) (lo, hi []float64, n int, err error) {
	x, err := matrix(stage, d, col)
	if err != nil {
		return nil, nil, 0, err
	}
	lo = make([]float64, x.Cols)
	hi = make([]float64, x.Cols)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i := range x.Rows {
		for j, v := range x.Row(i) {
			lo[j] = min(lo[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	if err := d.C().AllReduce(lo, ml.OpMin); err != nil {
		return nil, nil, 0, err
	}
	if err := d.C().AllReduce(hi, ml.OpMax); err != nil {
		return nil, nil, 0, err
	}
	n, err = ml.SumCount(d.C(), x.Rows)
	return lo, hi, n, err
}

// MinMaxScalerModel is a fitted MinMaxScaler.
type MinMaxScalerModel struct {
	InputCol, OutputCol string
	// Min and Max are the target range.
	Min, Max float64
	// OriginalMin and OriginalMax are each element's range in the data.
	OriginalMin, OriginalMax []float64
}

// Type returns "MinMaxScalerModel".
func (m *MinMaxScalerModel) Type() string { return "MinMaxScalerModel" }

// Transform adds OutputCol.
func (m *MinMaxScalerModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := transformMatrix("MinMaxScalerModel", f, m.InputCol, len(m.OriginalMin))
	if err != nil {
		return nil, err
	}
	scale := m.Max - m.Min
	out := x.Data
	for i := range x.Rows {
		row := out[i*x.Cols : (i+1)*x.Cols]
		for j, v := range row {
			if r := m.OriginalMax[j] - m.OriginalMin[j]; r != 0 {
				row[j] = (v-m.OriginalMin[j])/r*scale + m.Min
			} else {
				row[j] = 0.5*scale + m.Min
			}
		}
	}
	return f.With(ml.VectorOut(m.OutputCol, x.Cols, out))
}

// Encode keeps the columns and range, and the arrays "originalMin" and
// "originalMax".
func (m *MinMaxScalerModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: scalerParams{InputCol: m.InputCol, OutputCol: m.OutputCol, Min: m.Min, Max: m.Max},
		Arrays: map[string]ml.Array{"originalMin": ml.Vec(m.OriginalMin), "originalMax": ml.Vec(m.OriginalMax)},
	}, nil
}

func decodeMinMaxScalerModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	p, lo, hi, err := decodeScaler(raw, arrays, "originalMin", "originalMax")
	if err != nil {
		return nil, err
	}
	return &MinMaxScalerModel{InputCol: p.InputCol, OutputCol: p.OutputCol, Min: p.Min, Max: p.Max, OriginalMin: lo, OriginalMax: hi}, nil
}

// MaxAbsScaler divides each element of a vector column by its largest
// absolute value in the data, mapping it to [−1, 1] without shifting it,
// as Spark ML's MaxAbsScaler. An element that is 0 everywhere stays 0.
type MaxAbsScaler struct {
	InputCol  string `json:"inputCol" yaml:"inputCol"`
	OutputCol string `json:"outputCol" yaml:"outputCol"`
}

// NewMaxAbsScaler returns a MaxAbsScaler reading ml.FeaturesCol and
// writing ScaledFeaturesCol.
func NewMaxAbsScaler() *MaxAbsScaler {
	return &MaxAbsScaler{InputCol: ml.FeaturesCol, OutputCol: ScaledFeaturesCol}
}

// Type returns "MaxAbsScaler".
func (s *MaxAbsScaler) Type() string { return "MaxAbsScaler" }

// Copy returns a copy of s.
func (s *MaxAbsScaler) Copy() ml.Estimator { c := *s; return &c }

// Fit finds each element's largest absolute value over all ranks.
func (s *MaxAbsScaler) Fit(d ml.Data) (ml.Model, error) {
	const stage = "MaxAbsScaler"
	if s.InputCol == "" || s.OutputCol == "" {
		return nil, fmt.Errorf("%s: inputCol and outputCol must be set", stage)
	}
	lo, hi, n, err := ranges(stage, d, s.InputCol)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows to fit on", stage)
	}
	abs := make([]float64, len(lo))
	for j := range abs {
		abs[j] = max(math.Abs(lo[j]), math.Abs(hi[j]))
	}
	return &MaxAbsScalerModel{InputCol: s.InputCol, OutputCol: s.OutputCol, MaxAbs: abs}, nil
}

// MaxAbsScalerModel is a fitted MaxAbsScaler.
type MaxAbsScalerModel struct {
	InputCol, OutputCol string
	// MaxAbs is each element's largest absolute value.
	MaxAbs []float64
}

// Type returns "MaxAbsScalerModel".
func (m *MaxAbsScalerModel) Type() string { return "MaxAbsScalerModel" }

// Transform adds OutputCol: x·(1/maxAbs) per element (maxAbs 0: x).
func (m *MaxAbsScalerModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := transformMatrix("MaxAbsScalerModel", f, m.InputCol, len(m.MaxAbs))
	if err != nil {
		return nil, err
	}
	scale := make([]float64, len(m.MaxAbs))
	for j, a := range m.MaxAbs {
		scale[j] = 1
		if a != 0 {
			scale[j] = 1 / a
		}
	}
	out := x.Data
	for i := range out {
		out[i] *= scale[i%x.Cols]
	}
	return f.With(ml.VectorOut(m.OutputCol, x.Cols, out))
}

// Encode keeps the columns and the array "maxAbs".
func (m *MaxAbsScalerModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: scalerParams{InputCol: m.InputCol, OutputCol: m.OutputCol},
		Arrays: map[string]ml.Array{"maxAbs": ml.Vec(m.MaxAbs)},
	}, nil
}

func decodeMaxAbsScalerModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p scalerParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	a, err := ml.Need(arrays, "maxAbs", -1)
	if err != nil {
		return nil, err
	}
	return &MaxAbsScalerModel{InputCol: p.InputCol, OutputCol: p.OutputCol, MaxAbs: a.Data}, nil
}

func init() {
	ml.RegisterStage("StandardScaler", func() ml.Stage { return NewStandardScaler() })
	ml.RegisterModel("StandardScalerModel", decodeStandardScalerModel)
	ml.RegisterStage("MinMaxScaler", func() ml.Stage { return NewMinMaxScaler() })
	ml.RegisterModel("MinMaxScalerModel", decodeMinMaxScalerModel)
	ml.RegisterStage("MaxAbsScaler", func() ml.Stage { return NewMaxAbsScaler() })
	ml.RegisterModel("MaxAbsScalerModel", decodeMaxAbsScalerModel)
}
