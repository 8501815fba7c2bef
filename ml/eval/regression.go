package eval

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// The metrics of RegressionEvaluator.
const (
	RMSE = "rmse"
	MSE  = "mse"
	R2   = "r2"
	MAE  = "mae"
	Var  = "var"
)

// RegressionEvaluator scores regressions as Spark ML's evaluator of that
// name (Spark's RegressionMetrics), with weights if weightCol is set:
//
//   - "rmse" (the default) √(Σw·r²/W), r = label − prediction, W = Σw;
//   - "mse" Σw·r²/W and "mae" Σw·|r|/W;
//   - "r2" 1 − Σw·r²/SStot, SStot = Σw·(y − ȳ)² for unit weights (with
//     weights, Spark's: the unbiased weighted variance times W − 1);
//     with throughOrigin, 1 − Σw·r²/Σw·y²;
//   - "var", the explained variance Σw·(prediction − ȳ)²/W.
//
// Over several ranks the eight sums these need (W, Σw², Σwy, Σwy², Σwr²,
// Σw|r|, Σwp, Σwp²) are all-reduced at once. The variances come from sums
// of squares, so they lose digits when the labels' mean is large against
// their spread (more than about 1e6 times it); center such labels first.
type RegressionEvaluator struct {
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	LabelCol      string `json:"labelCol" yaml:"labelCol"`
	WeightCol     string `json:"weightCol,omitempty" yaml:"weightCol"`
	MetricName    string `json:"metricName" yaml:"metricName"`
	ThroughOrigin bool   `json:"throughOrigin" yaml:"throughOrigin"`
}

// NewRegressionEvaluator returns the evaluator with Spark's defaults: rmse
// of ml.PredictionCol against ml.LabelCol.
func NewRegressionEvaluator() *RegressionEvaluator {
	return &RegressionEvaluator{PredictionCol: ml.PredictionCol, LabelCol: ml.LabelCol, MetricName: RMSE}
}

// Metric returns MetricName.
func (e *RegressionEvaluator) Metric() string { return e.MetricName }

// LargerBetter is true for r2 and var, false for the errors.
func (e *RegressionEvaluator) LargerBetter() bool { return e.MetricName == R2 || e.MetricName == Var }

// Evaluate returns the metric over every rank's rows of f.
func (e *RegressionEvaluator) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	const who = "RegressionEvaluator"
	if err := ml.CheckChoice(who, "metricName", e.MetricName, RMSE, MSE, R2, MAE, Var); err != nil {
		return 0, err
	}
	if c == nil {
		c = ml.Single
	}
	y, err := numbers(who, f, e.LabelCol)
	if err != nil {
		return 0, err
	}
	p, err := numbers(who, f, e.PredictionCol)
	if err != nil {
		return 0, err
	}
	w, err := weights(who, f, e.WeightCol)
	if err != nil {
		return 0, err
	}
	var s [8]float64 // W, Σw², Σwy, Σwy², Σwr², Σw|r|, Σwp, Σwp²
	for i := range y {
		wi, r := weight(w, i), y[i]-p[i]
		s[0] += wi
		s[1] += wi * wi
		s[2] += wi * y[i]
		s[3] += wi * y[i] * y[i]
		s[4] += wi * r * r
		s[5] += wi * math.Abs(r)
		s[6] += wi * p[i]
		s[7] += wi * p[i] * p[i]
	}
	if err := c.AllReduce(s[:], ml.OpSum); err != nil {
		return 0, err
	}
	W := s[0]
	if W == 0 {
		return 0, fmt.Errorf("%s: %w", who, errNoRows)
	}
	mean := s[2] / W
	switch e.MetricName {
	case RMSE:
		return math.Sqrt(s[4] / W), nil
	case MSE:
		return s[4] / W, nil
	case MAE:
		return s[5] / W, nil
	case Var:
		return (s[7] - 2*mean*s[6] + mean*mean*W) / W, nil
	}
	if e.ThroughOrigin {
		if s[3] == 0 {
			return 0, fmt.Errorf("%s: r2 through the origin: every label is 0", who)
		}
		return 1 - s[4]/s[3], nil
	}
	// Spark: SStot = variance·(W − 1), the variance unbiased for
	// frequency-like weights: Σw(y−ȳ)² / (W − Σw²/W).
	ss := s[3] - s[2]*mean
	if d := W - s[1]/W; d > 0 && s[1] != W {
		ss = ss / d * (W - 1)
	}
	if !(ss > 0) {
		return 0, fmt.Errorf("%s: r2 needs labels that vary (they are all %g)", who, mean)
	}
	return 1 - s[4]/ss, nil
}
