package feature

import (
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/ml"
)

// QuantileDiscretizer bins a numeric column into numBuckets buckets of
// about equal counts, as Spark ML's QuantileDiscretizer: fitting finds
// the quantiles i/numBuckets of the column (NaN and nulls left out) and
// returns a Bucketizer on those splits, the outer ones −Inf and +Inf.
// Equal quantiles merge, giving fewer buckets.
//
// The quantiles are exact: the value of rank ⌈q·n⌉ among the n values,
// which is what Spark's approxQuantile returns with no approximation
// error (relativeError is accepted for Spark configs and not used). Over
// several ranks every rank's values are gathered (AllGatherBytes, 8 bytes
// a value), so the splits equal the single-process ones.
type QuantileDiscretizer struct {
	InputCol      string  `json:"inputCol" yaml:"inputCol"`
	OutputCol     string  `json:"outputCol" yaml:"outputCol"`
	NumBuckets    int     `json:"numBuckets" yaml:"numBuckets"`
	RelativeError float64 `json:"relativeError" yaml:"relativeError"`
	HandleInvalid string  `json:"handleInvalid" yaml:"handleInvalid"`
}

// NewQuantileDiscretizer returns a QuantileDiscretizer with Spark's
// defaults (numBuckets 2, relativeError 0.001, handleInvalid "error").
func NewQuantileDiscretizer() *QuantileDiscretizer {
	return &QuantileDiscretizer{NumBuckets: 2, RelativeError: 0.001, HandleInvalid: InvalidError}
}

// Type returns "QuantileDiscretizer".
func (q *QuantileDiscretizer) Type() string { return "QuantileDiscretizer" }

// Copy returns a copy of q.
func (q *QuantileDiscretizer) Copy() ml.Estimator { c := *q; return &c }

// Fit finds the splits; the model is a Bucketizer.
func (q *QuantileDiscretizer) Fit(d ml.Data) (ml.Model, error) {
	const stage = "QuantileDiscretizer"
	if q.NumBuckets < 2 {
		return nil, fmt.Errorf("%s: numBuckets must be ≥ 2, got %d", stage, q.NumBuckets)
	}
	if err := ml.CheckChoice(stage, "handleInvalid", q.HandleInvalid, InvalidError, InvalidSkip, InvalidKeep); err != nil {
		return nil, err
	}
	if q.InputCol == "" || q.OutputCol == "" {
		return nil, fmt.Errorf("%s: inputCol and outputCol must be set", stage)
	}
	v, null, err := scalars(stage, d.Frame, q.InputCol)
	if err != nil {
		return nil, err
	}
	var present []float64
	for i, x := range v {
		if (null == nil || !null[i]) && !math.IsNaN(x) {
			present = append(present, x)
		}
	}
	all, err := gatherFloats(d.C(), [][]float64{present})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stage, err)
	}
	values := all[0]
	if len(values) == 0 {
		return nil, fmt.Errorf("%s: column %q has no value that is not null or NaN", stage, q.InputCol)
	}
	slices.Sort(values)
	splits := []float64{math.Inf(-1)}
	for i := 1; i < q.NumBuckets; i++ {
		x := quantile(values, float64(i)/float64(q.NumBuckets))
		if x == 0 {
			x = 0 // −0 and +0 are one split
		}
		if x > splits[len(splits)-1] {
			splits = append(splits, x)
		}
	}
	splits = append(splits, math.Inf(1))
	return &Bucketizer{InputCol: q.InputCol, OutputCol: q.OutputCol, Splits: splits, HandleInvalid: q.HandleInvalid}, nil
}

// quantile returns the value of rank ⌈p·n⌉ (at least 1) of sorted.
func quantile(sorted []float64, p float64) float64 {
	r := int(math.Ceil(p * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

func init() {
	ml.RegisterStage("QuantileDiscretizer", func() ml.Stage { return NewQuantileDiscretizer() })
}
