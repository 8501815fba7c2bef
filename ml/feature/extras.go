package feature

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// Normalizer scales each row of a vector column to unit p-norm, as Spark
// ML's Normalizer: p ≥ 1 (default 2; +Inf is the max norm). A row of
// norm 0 stays 0. It needs no fitting.
type Normalizer struct {
	InputCol  string  `json:"inputCol" yaml:"inputCol"`
	OutputCol string  `json:"outputCol" yaml:"outputCol"`
	P         float64 `json:"-" yaml:"p"`
}

// NewNormalizer returns a Normalizer of p = 2 from inputCol to outputCol.
func NewNormalizer(inputCol, outputCol string) *Normalizer {
	return &Normalizer{InputCol: inputCol, OutputCol: outputCol, P: 2}
}

// Type returns "Normalizer".
func (n *Normalizer) Type() string { return "Normalizer" }

// Transform adds OutputCol.
func (n *Normalizer) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "Normalizer"
	if !(n.P >= 1) {
		return nil, fmt.Errorf("%s: p must be ≥ 1, got %g", stage, n.P)
	}
	x, err := transformMatrix(stage, f, n.InputCol, -1)
	if err != nil {
		return nil, err
	}
	out := x.Data
	for i := range x.Rows {
		row := out[i*x.Cols : (i+1)*x.Cols]
		norm := 0.0
		switch {
		case math.IsInf(n.P, 1):
			for _, v := range row {
				norm = max(norm, math.Abs(v))
			}
		case n.P == 1:
			for _, v := range row {
				norm += math.Abs(v)
			}
		case n.P == 2:
			for _, v := range row {
				norm += v * v
			}
			norm = math.Sqrt(norm)
		default:
			for _, v := range row {
				norm += math.Pow(math.Abs(v), n.P)
			}
			norm = math.Pow(norm, 1/n.P)
		}
		if norm != 0 {
			for j := range row {
				row[j] /= norm
			}
		}
	}
	return f.With(ml.VectorOut(n.OutputCol, x.Cols, out))
}

// Encode returns the parameters (p = +Inf is the string "Infinity").
func (n *Normalizer) Encode() (ml.Encoded, error) { return ml.Encoded{Params: n}, nil }

func decodeNormalizer(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
	n := &Normalizer{}
	if err := ml.DecodeParams(raw, n); err != nil {
		return nil, err
	}
	return n, nil
}

// Binarizer maps a numeric scalar or vector column to 1 where the value
// is above threshold (default 0) and 0 elsewhere, as Spark ML's
// Binarizer; the output has the input's shape (float64). It needs no
// fitting.
type Binarizer struct {
	InputCol  string  `json:"inputCol" yaml:"inputCol"`
	OutputCol string  `json:"outputCol" yaml:"outputCol"`
	Threshold float64 `json:"threshold" yaml:"threshold"`
}

// NewBinarizer returns a Binarizer of threshold 0 from inputCol to
// outputCol.
func NewBinarizer(inputCol, outputCol string) *Binarizer {
	return &Binarizer{InputCol: inputCol, OutputCol: outputCol}
}

// Type returns "Binarizer".
func (b *Binarizer) Type() string { return "Binarizer" }

// Encode returns the parameters (a Binarizer has no arrays).
func (b *Binarizer) Encode() (ml.Encoded, error) { return ml.Encoded{Params: b}, nil }

// Transform adds OutputCol.
func (b *Binarizer) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "Binarizer"
	c, err := column(stage, f, b.InputCol)
	if err != nil {
		return nil, err
	}
	x, err := transformMatrix(stage, f, b.InputCol, -1)
	if err != nil {
		return nil, err
	}
	out := x.Data
	for i, v := range out {
		out[i] = 0
		if v > b.Threshold {
			out[i] = 1
		}
	}
	if c.Kind() == data.Vector {
		return f.With(ml.VectorOut(b.OutputCol, x.Cols, out))
	}
	return f.With(ml.ScalarOut(b.OutputCol, out))
}

func decodeBinarizer(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
	b := &Binarizer{}
	if err := ml.DecodeParams(raw, b); err != nil {
		return nil, err
	}
	return b, nil
}

// Bucketizer maps a numeric scalar column to bucket indices by splits, as
// Spark ML's Bucketizer: splits s₀ < s₁ < ... < sₙ (at least three; ±Inf
// allowed) make the n buckets [sᵢ, sᵢ₊₁), the last one closed [sₙ₋₁, sₙ].
// A value outside [s₀, sₙ] is an error naming the row. NaN and null are
// handled as handleInvalid says: "error" (the default), "skip" (drop the
// row) or "keep" (the extra bucket n). It needs no fitting.
type Bucketizer struct {
	InputCol      string    `json:"inputCol" yaml:"inputCol"`
	OutputCol     string    `json:"outputCol" yaml:"outputCol"`
	Splits        []float64 `json:"-" yaml:"splits"`
	HandleInvalid string    `json:"handleInvalid" yaml:"handleInvalid"`
}

// NewBucketizer returns a Bucketizer of the given splits (handleInvalid
// "error").
func NewBucketizer(inputCol, outputCol string, splits ...float64) *Bucketizer {
	return &Bucketizer{InputCol: inputCol, OutputCol: outputCol, Splits: splits, HandleInvalid: InvalidError}
}

// Type returns "Bucketizer".
func (b *Bucketizer) Type() string { return "Bucketizer" }

type bucketizerParams struct {
	InputCol      string `json:"inputCol"`
	OutputCol     string `json:"outputCol"`
	HandleInvalid string `json:"handleInvalid"`
}

// Encode keeps the columns, and the splits as the array "splits" (so that
// the conformance suite compares a QuantileDiscretizer's splits).
func (b *Bucketizer) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: bucketizerParams{b.InputCol, b.OutputCol, b.HandleInvalid},
		Arrays: map[string]ml.Array{"splits": ml.Vec(b.Splits)},
	}, nil
}

// Transform adds OutputCol, a float64 column of bucket indices.
func (b *Bucketizer) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "Bucketizer"
	if err := ml.CheckChoice(stage, "handleInvalid", b.HandleInvalid, InvalidError, InvalidSkip, InvalidKeep); err != nil {
		return nil, err
	}
	s := b.Splits
	if len(s) < 3 {
		return nil, fmt.Errorf("%s: splits needs at least 3 values, got %d", stage, len(s))
	}
	for i := 1; i < len(s); i++ {
		if !(s[i-1] < s[i]) {
			return nil, fmt.Errorf("%s: splits must increase strictly, but splits[%d] = %g, splits[%d] = %g", stage, i-1, s[i-1], i, s[i])
		}
	}
	v, null, err := scalars(stage, f, b.InputCol)
	if err != nil {
		return nil, err
	}
	out := make([]float64, 0, len(v))
	keep := make([]bool, len(v))
	n := len(s) - 1
	for i, x := range v {
		keep[i] = true
		if (null != nil && null[i]) || math.IsNaN(x) {
			switch b.HandleInvalid {
			case InvalidKeep:
				out = append(out, float64(n))
			case InvalidSkip:
				keep[i] = false
			default:
				return nil, fmt.Errorf("%s: column %q, row %d: null or NaN value (set handleInvalid to \"skip\" or \"keep\")", stage, b.InputCol, i+1)
			}
			continue
		}
		if x < s[0] || x > s[n] {
			return nil, fmt.Errorf("%s: column %q, row %d: %g is outside the splits [%g, %g]", stage, b.InputCol, i+1, x, s[0], s[n])
		}
		// The first split above x, less one; x = sₙ goes in the last bucket.
		k := sort.SearchFloat64s(s, x)
		if k == len(s) || s[k] != x {
			k--
		}
		out = append(out, float64(min(k, n-1)))
	}
	return keepRows(f, keep).With(ml.ScalarOut(b.OutputCol, out))
}

func decodeBucketizer(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p bucketizerParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	s, err := ml.Need(arrays, "splits", -1)
	if err != nil {
		return nil, err
	}
	return &Bucketizer{InputCol: p.InputCol, OutputCol: p.OutputCol, HandleInvalid: p.HandleInvalid, Splits: s.Data}, nil
}

// PolynomialExpansion expands a vector column into every monomial of its
// elements of degree 1 to degree (default 2), as Spark ML's
// PolynomialExpansion and in its order: for (x, y) and degree 2,
// (x, x², y, xy, y²). It needs no fitting.
type PolynomialExpansion struct {
	InputCol  string `json:"inputCol" yaml:"inputCol"`
	OutputCol string `json:"outputCol" yaml:"outputCol"`
	Degree    int    `json:"degree" yaml:"degree"`
}

// NewPolynomialExpansion returns a PolynomialExpansion of degree 2 from
// inputCol to outputCol.
func NewPolynomialExpansion(inputCol, outputCol string) *PolynomialExpansion {
	return &PolynomialExpansion{InputCol: inputCol, OutputCol: outputCol, Degree: 2}
}

// Type returns "PolynomialExpansion".
func (p *PolynomialExpansion) Type() string { return "PolynomialExpansion" }

// Encode returns the parameters.
func (p *PolynomialExpansion) Encode() (ml.Encoded, error) { return ml.Encoded{Params: p}, nil }

// polySize is the number of monomials of n variables of degree ≤ d,
// C(n+d, d), the constant included.
func polySize(n, d int) int {
	r := 1
	for i := 1; i <= d; i++ {
		r = r * (n + i) / i
	}
	return r
}

// expand writes the monomials of v[0..last] of degree ≤ degree, times
// mult, from out index at (index −1 is the constant term, not written),
// and returns the index after them. The order is Spark's: the powers of
// the last variable outermost.
func expand(v []float64, last, degree int, mult float64, out []float64, at int) int {
	if degree == 0 || last < 0 {
		if at >= 0 {
			out[at] = mult
		}
	} else {
		cur, alpha := at, mult
		for i := 0; i <= degree; i++ {
			cur = expand(v, last-1, degree-i, alpha, out, cur)
			alpha *= v[last]
		}
	}
	return at + polySize(last+1, degree)
}

// Transform adds OutputCol.
func (p *PolynomialExpansion) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "PolynomialExpansion"
	if p.Degree < 1 {
		return nil, fmt.Errorf("%s: degree must be ≥ 1, got %d", stage, p.Degree)
	}
	x, err := transformMatrix(stage, f, p.InputCol, -1)
	if err != nil {
		return nil, err
	}
	w := polySize(x.Cols, p.Degree) - 1
	if w > 1<<20 {
		return nil, fmt.Errorf("%s: %d elements to degree %d make %d monomials, too many", stage, x.Cols, p.Degree, w)
	}
	out := make([]float64, x.Rows*w)
	for i := range x.Rows {
		expand(x.Row(i), x.Cols-1, p.Degree, 1, out[i*w:(i+1)*w], -1)
	}
	return f.With(ml.VectorOut(p.OutputCol, w, out))
}

func decodePolynomialExpansion(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
	p := &PolynomialExpansion{}
	if err := ml.DecodeParams(raw, p); err != nil {
		return nil, err
	}
	return p, nil
}

func init() {
	ml.RegisterStage("Normalizer", func() ml.Stage { return NewNormalizer(ml.FeaturesCol, "normFeatures") })
	ml.RegisterModel("Normalizer", decodeNormalizer)
	ml.RegisterStage("Binarizer", func() ml.Stage { return NewBinarizer("", "") })
	ml.RegisterModel("Binarizer", decodeBinarizer)
	ml.RegisterStage("Bucketizer", func() ml.Stage { return NewBucketizer("", "") })
	ml.RegisterModel("Bucketizer", decodeBucketizer)
	ml.RegisterStage("PolynomialExpansion", func() ml.Stage { return NewPolynomialExpansion(ml.FeaturesCol, "polyFeatures") })
	ml.RegisterModel("PolynomialExpansion", decodePolynomialExpansion)
}
