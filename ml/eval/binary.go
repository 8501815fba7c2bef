package eval

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/ml"
)

// The metrics of BinaryClassificationEvaluator.
const (
	AreaUnderROC = "areaUnderROC"
	AreaUnderPR  = "areaUnderPR"
)

// BinaryClassificationEvaluator scores binary classifiers by the area
// under the ROC curve (metricName "areaUnderROC", the default) or under
// the precision-recall curve ("areaUnderPR"), as Spark ML's evaluator of
// that name.
//
// The score of a row is element 1 of rawPredictionCol when it is a vector
// column (the positive class's raw score, as Spark), or the value itself
// when it is a numeric scalar column. Labels are 0 or 1; weightCol, if
// set, weighs each row.
//
// The curves have one point per distinct score, tied scores grouped
// (Spark's BinaryClassificationMetrics, computed exactly). When there are
// at least 2·numBins distinct scores, Spark down-samples the curves to
// about numBins points by keeping every ⌊distinct/numBins⌋-th point; so
// does this evaluator (as if the data were one partition: Spark groups
// within each partition). numBins 0 never down-samples.
//
// The ROC area is the trapezoid sum over (0,0), the (FPR, TPR) points and
// (1,1), as scikit-learn's roc_auc_score. The PR area is Spark's: the
// trapezoid sum over the (recall, precision) points preceded by (0, p₁),
// p₁ the precision at the highest score. It is not scikit-learn's
// average_precision_score, a step-wise sum Σ (Rₖ − Rₖ₋₁)·Pₖ.
//
// Labels of one class are an error (Spark returns a number): wrapping
// metrics.ErrOneClass for areaUnderROC, which needs both; for
// areaUnderPR when there is no positive.
//
// Over several ranks every rank's (score, label, weight) triples are
// gathered (AllGatherBytes, 24 bytes a row) and every rank computes the
// area of them all, equal to the single-process one.
type BinaryClassificationEvaluator struct {
	RawPredictionCol string `json:"rawPredictionCol" yaml:"rawPredictionCol"`
	LabelCol         string `json:"labelCol" yaml:"labelCol"`
	WeightCol        string `json:"weightCol,omitempty" yaml:"weightCol"`
	MetricName       string `json:"metricName" yaml:"metricName"`
	NumBins          int    `json:"numBins" yaml:"numBins"`
}

// NewBinaryClassificationEvaluator returns the evaluator with Spark's
// defaults: areaUnderROC of ml.RawPredictionCol against ml.LabelCol,
// numBins 1000.
func NewBinaryClassificationEvaluator() *BinaryClassificationEvaluator {
	return &BinaryClassificationEvaluator{RawPredictionCol: ml.RawPredictionCol, LabelCol: ml.LabelCol, MetricName: AreaUnderROC, NumBins: 1000}
}

// Metric returns MetricName.
func (e *BinaryClassificationEvaluator) Metric() string { return e.MetricName }

// LargerBetter returns true: both areas grow with quality.
func (e *BinaryClassificationEvaluator) LargerBetter() bool { return true }

// Evaluate returns the area over every rank's rows of f.
func (e *BinaryClassificationEvaluator) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	const who = "BinaryClassificationEvaluator"
	if err := ml.CheckChoice(who, "metricName", e.MetricName, AreaUnderROC, AreaUnderPR); err != nil {
		return 0, err
	}
	if e.NumBins < 0 {
		return 0, fmt.Errorf("%s: numBins must be ≥ 0, got %d", who, e.NumBins)
	}
	if c == nil {
		c = ml.Single
	}
	score, err := scores(who, f, e.RawPredictionCol)
	if err != nil {
		return 0, err
	}
	label, err := numbers(who, f, e.LabelCol)
	if err != nil {
		return 0, err
	}
	w, err := weights(who, f, e.WeightCol)
	if err != nil {
		return 0, err
	}
	triples := make([]float64, 0, 3*len(score))
	for i, s := range score {
		if label[i] != 0 && label[i] != 1 {
			return 0, fmt.Errorf("%s: column %q, row %d: label %g is not 0 or 1", who, e.LabelCol, i+1, label[i])
		}
		triples = append(triples, s, label[i], weight(w, i))
	}
	all, err := ml.AllGatherFloats(c, triples)
	if err != nil {
		return 0, err
	}
	var pts []scored
	for _, v := range all {
		for ; len(v) >= 3; v = v[3:] {
			pts = append(pts, scored{score: v[0], label: v[1], weight: v[2]})
		}
	}
	curve := cumulate(pts, e.NumBins)
	var area float64
	if e.MetricName == AreaUnderROC {
		area, err = rocArea(curve)
	} else {
		area, err = prArea(curve)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", who, e.MetricName, err)
	}
	return area, nil
}

// scores reads the score of each row: element 1 of a vector column, or a
// numeric scalar column.
func scores(who string, f *data.Frame, col string) ([]float64, error) {
	c := f.Col(col)
	if c == nil {
		return nil, fmt.Errorf("%s: no column %q (the frame has %v)", who, col, f.Names())
	}
	if c.Kind() != data.Vector {
		return numbers(who, f, col)
	}
	m, err := ml.Features(f, col)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if m.Cols < 2 {
		return nil, fmt.Errorf("%s: column %q is %d wide; a binary rawPrediction has 2 elements (the score is element 1)", who, col, m.Cols)
	}
	out := make([]float64, m.Rows)
	for i := range out {
		out[i] = m.Data[i*m.Cols+1]
	}
	return out, nil
}

type scored struct{ score, label, weight float64 }

// point is the cumulative weight of positives (tp) and negatives (fp)
// scoring at least score.
type point struct{ score, tp, fp float64 }

// cumulate sorts by descending score, groups ties and returns the
// cumulative counts at each distinct score, down-sampled as Spark when
// there are at least 2·numBins of them.
func cumulate(pts []scored, numBins int) []point {
	slices.SortStableFunc(pts, func(a, b scored) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var out []point
	var tp, fp float64
	for k, p := range pts {
		if p.label == 1 {
			tp += p.weight
		} else {
			fp += p.weight
		}
		if k+1 < len(pts) && pts[k+1].score == p.score {
			continue
		}
		out = append(out, point{p.score, tp, fp})
	}
	if numBins > 0 {
		if g := len(out) / numBins; g >= 2 {
			kept := out[:0]
			for j, p := range out {
				if (j+1)%g == 0 || j == len(out)-1 {
					kept = append(kept, p)
				}
			}
			out = kept
		}
	}
	return out
}

var (
	errNoRows     = errors.New("no rows to evaluate")
	errNoPositive = errors.New("no positive (label 1) rows: recall is undefined")
)

func rocArea(curve []point) (float64, error) {
	if len(curve) == 0 {
		return 0, errNoRows
	}
	pos, neg := curve[len(curve)-1].tp, curve[len(curve)-1].fp
	if pos == 0 || neg == 0 {
		return 0, metrics.ErrOneClass
	}
	area, x0, y0 := 0.0, 0.0, 0.0
	for _, p := range curve {
		x, y := p.fp/neg, p.tp/pos
		area += (x - x0) * (y + y0) / 2
		x0, y0 = x, y
	}
	return area + (1-x0)*(1+y0)/2, nil
}

func prArea(curve []point) (float64, error) {
	if len(curve) == 0 {
		return 0, errNoRows
	}
	pos := curve[len(curve)-1].tp
	if pos == 0 {
		return 0, errNoPositive
	}
	precision := func(p point) float64 {
		if p.tp+p.fp == 0 {
			return 1
		}
		return p.tp / (p.tp + p.fp)
	}
	area, x0, y0 := 0.0, 0.0, precision(curve[0])
	for _, p := range curve {
		x, y := p.tp/pos, precision(p)
		area += (x - x0) * (y + y0) / 2
		x0, y0 = x, y
	}
	return area, nil
}
