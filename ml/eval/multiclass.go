package eval

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// The metrics of MulticlassClassificationEvaluator (Spark's names).
const (
	F1                        = "f1"
	Accuracy                  = "accuracy"
	WeightedPrecision         = "weightedPrecision"
	WeightedRecall            = "weightedRecall"
	WeightedTruePositiveRate  = "weightedTruePositiveRate"
	WeightedFalsePositiveRate = "weightedFalsePositiveRate"
	WeightedFMeasure          = "weightedFMeasure"
	TruePositiveRateByLabel   = "truePositiveRateByLabel"
	FalsePositiveRateByLabel  = "falsePositiveRateByLabel"
	PrecisionByLabel          = "precisionByLabel"
	RecallByLabel             = "recallByLabel"
	FMeasureByLabel           = "fMeasureByLabel"
	LogLoss                   = "logLoss"
	HammingLoss               = "hammingLoss"
)

var multiclassMetrics = []string{F1, Accuracy, WeightedPrecision, WeightedRecall, WeightedTruePositiveRate,
	WeightedFalsePositiveRate, WeightedFMeasure, TruePositiveRateByLabel, FalsePositiveRateByLabel,
	PrecisionByLabel, RecallByLabel, FMeasureByLabel, LogLoss, HammingLoss}

// MulticlassClassificationEvaluator scores classifiers as Spark ML's
// evaluator of that name (Spark's MulticlassMetrics): labels and
// predictions are class indices 0, 1, 2, ...; weightCol, if set, weighs
// each row.
//
// The weighted metrics average the per-class ones weighted by each
// class's (weighted) count among the true labels, over the classes that
// occur as labels: "f1" (the default) is the weighted F1 (scikit-learn's
// f1_score(average="weighted")), "weightedFMeasure" uses beta, and the
// precision of a class never predicted is 0. "accuracy" and
// "hammingLoss" (1 − accuracy) count every row. The "...ByLabel" metrics
// are those of the class metricLabel. "logLoss" reads probabilityCol (a
// vector column) instead of the predictions: the weighted mean of
// −log(p), p the probability of the true class clipped to [eps, 1−eps]
// (eps 1e-15, Spark's and scikit-learn's).
//
// Over several ranks the weighted confusion matrix (or the log-loss sums)
// is all-reduced.
type MulticlassClassificationEvaluator struct {
	PredictionCol  string  `json:"predictionCol" yaml:"predictionCol"`
	LabelCol       string  `json:"labelCol" yaml:"labelCol"`
	WeightCol      string  `json:"weightCol,omitempty" yaml:"weightCol"`
	ProbabilityCol string  `json:"probabilityCol" yaml:"probabilityCol"`
	MetricName     string  `json:"metricName" yaml:"metricName"`
	MetricLabel    float64 `json:"metricLabel" yaml:"metricLabel"`
	Beta           float64 `json:"beta" yaml:"beta"`
	Eps            float64 `json:"eps" yaml:"eps"`
}

// NewMulticlassClassificationEvaluator returns the evaluator with Spark's
// defaults: f1 of ml.PredictionCol against ml.LabelCol, metricLabel 0,
// beta 1, eps 1e-15, probabilities in ml.ProbabilityCol.
func NewMulticlassClassificationEvaluator() *MulticlassClassificationEvaluator {
	return &MulticlassClassificationEvaluator{
		PredictionCol: ml.PredictionCol, LabelCol: ml.LabelCol, ProbabilityCol: ml.ProbabilityCol,
		MetricName: F1, Beta: 1, Eps: 1e-15,
	}
}

// Metric returns MetricName.
func (e *MulticlassClassificationEvaluator) Metric() string { return e.MetricName }

// LargerBetter is false for the rates and losses that fall with quality:
// weightedFalsePositiveRate, falsePositiveRateByLabel, logLoss and
// hammingLoss.
func (e *MulticlassClassificationEvaluator) LargerBetter() bool {
	switch e.MetricName {
	case WeightedFalsePositiveRate, FalsePositiveRateByLabel, LogLoss, HammingLoss:
		return false
	}
	return true
}

// Evaluate returns the metric over every rank's rows of f.
func (e *MulticlassClassificationEvaluator) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	const who = "MulticlassClassificationEvaluator"
	if err := ml.CheckChoice(who, "metricName", e.MetricName, multiclassMetrics...); err != nil {
		return 0, err
	}
	if !(e.Beta >= 0) {
		return 0, fmt.Errorf("%s: beta must be ≥ 0, got %g", who, e.Beta)
	}
	if !(e.Eps > 0 && e.Eps < 0.5) {
		return 0, fmt.Errorf("%s: eps must be in (0, 0.5), got %g", who, e.Eps)
	}
	if e.MetricLabel < 0 || e.MetricLabel != math.Trunc(e.MetricLabel) {
		return 0, fmt.Errorf("%s: metricLabel must be a class index 0, 1, 2, ..., got %g", who, e.MetricLabel)
	}
	if c == nil {
		c = ml.Single
	}
	label, err := numbers(who, f, e.LabelCol)
	if err != nil {
		return 0, err
	}
	w, err := weights(who, f, e.WeightCol)
	if err != nil {
		return 0, err
	}
	if e.MetricName == LogLoss {
		return e.logLoss(f, c, label, w)
	}
	pred, err := numbers(who, f, e.PredictionCol)
	if err != nil {
		return 0, err
	}
	// The number of classes over every rank, then the confusion matrix.
	top := -1.0
	for i := range label {
		if _, err := classIndex(who, e.LabelCol, i, label[i]); err != nil {
			return 0, err
		}
		if _, err := classIndex(who, e.PredictionCol, i, pred[i]); err != nil {
			return 0, err
		}
		top = max(top, label[i], pred[i])
	}
	t := []float64{top}
	if err := c.AllReduce(t, ml.OpMax); err != nil {
		return 0, err
	}
	k := int(t[0]) + 1
	if k == 0 {
		return 0, fmt.Errorf("%s: %w", who, errNoRows)
	}
	conf := make([]float64, k*k) // conf[label*k + prediction]
	for i := range label {
		conf[int(label[i])*k+int(pred[i])] += weight(w, i)
	}
	if err := c.AllReduce(conf, ml.OpSum); err != nil {
		return 0, err
	}
	v, err := confusionMetric(conf, k, e.MetricName, int(e.MetricLabel), e.Beta)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", who, err)
	}
	return v, nil
}

// confusionMetric computes a metric from a k×k weighted confusion matrix
// (rows: labels, columns: predictions) as Spark's MulticlassMetrics.
func confusionMetric(conf []float64, k int, metric string, metricLabel int, beta float64) (float64, error) {
	labelCount := make([]float64, k) // weighted count of each true label
	predCount := make([]float64, k)
	total := 0.0
	for l := range k {
		for p := range k {
			labelCount[l] += conf[l*k+p]
			predCount[p] += conf[l*k+p]
			total += conf[l*k+p]
		}
	}
	if total == 0 {
		return 0, errNoRows
	}
	tp := func(c int) float64 { return conf[c*k+c] }
	fp := func(c int) float64 { return predCount[c] - tp(c) }
	precision := func(c int) float64 {
		if c >= k || predCount[c] == 0 {
			return 0
		}
		return tp(c) / predCount[c]
	}
	recall := func(c int) float64 {
		if c >= k || labelCount[c] == 0 {
			return 0
		}
		return tp(c) / labelCount[c]
	}
	fpr := func(c int) float64 {
		if c >= k || total == labelCount[c] {
			return 0
		}
		return fp(c) / (total - labelCount[c])
	}
	fmeasure := func(c int, beta float64) float64 {
		p, r := precision(c), recall(c)
		b2 := beta * beta
		if p+r == 0 {
			return 0
		}
		return (1 + b2) * p * r / (b2*p + r)
	}
	weighted := func(per func(int) float64) float64 {
		s := 0.0
		for c := range k {
			if labelCount[c] > 0 {
				s += per(c) * labelCount[c] / total
			}
		}
		return s
	}
	switch metric {
	case F1:
		return weighted(func(c int) float64 { return fmeasure(c, 1) }), nil
	case WeightedFMeasure:
		return weighted(func(c int) float64 { return fmeasure(c, beta) }), nil
	case Accuracy, HammingLoss:
		correct := 0.0
		for c := range k {
			correct += tp(c)
		}
		if metric == HammingLoss {
			return (total - correct) / total, nil
		}
		return correct / total, nil
	case WeightedPrecision:
		return weighted(precision), nil
	case WeightedRecall, WeightedTruePositiveRate:
		return weighted(recall), nil
	case WeightedFalsePositiveRate:
		return weighted(fpr), nil
	case TruePositiveRateByLabel, RecallByLabel:
		return recall(metricLabel), nil
	case FalsePositiveRateByLabel:
		return fpr(metricLabel), nil
	case PrecisionByLabel:
		return precision(metricLabel), nil
	case FMeasureByLabel:
		return fmeasure(metricLabel, beta), nil
	}
	return 0, fmt.Errorf("unknown metric %q", metric)
}

// logLoss all-reduces Σ w·(−log p) and Σ w.
func (e *MulticlassClassificationEvaluator) logLoss(f *data.Frame, c ml.Comm, label, w []float64) (float64, error) {
	const who = "MulticlassClassificationEvaluator"
	if f.Col(e.ProbabilityCol) == nil {
		return 0, fmt.Errorf("%s: logLoss needs the probabilities: no column %q (the frame has %v)", who, e.ProbabilityCol, f.Names())
	}
	p, err := ml.Features(f, e.ProbabilityCol)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", who, err)
	}
	s := []float64{0, 0}
	for i := range label {
		l, err := classIndex(who, e.LabelCol, i, label[i])
		if err != nil {
			return 0, err
		}
		if l >= p.Cols {
			return 0, fmt.Errorf("%s: column %q, row %d: label %d, but the probabilities in %q are for %d classes", who, e.LabelCol, i+1, l, e.ProbabilityCol, p.Cols)
		}
		q := min(max(p.Data[i*p.Cols+l], e.Eps), 1-e.Eps)
		wi := weight(w, i)
		s[0] -= wi * math.Log(q)
		s[1] += wi
	}
	if err := c.AllReduce(s, ml.OpSum); err != nil {
		return 0, err
	}
	if s[1] == 0 {
		return 0, fmt.Errorf("%s: %w", who, errNoRows)
	}
	return s[0] / s[1], nil
}
