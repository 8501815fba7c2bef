package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Accuracy returns the fraction of predicted classes equal to the true
// ones (NaN for no examples).
func Accuracy(pred, truth []int64) float64 {
	if len(truth) == 0 {
		return math.NaN()
	}
	n := 0
	for i, y := range truth {
		if pred[i] == y {
			n++
		}
	}
	return float64(n) / float64(len(truth))
}

// ConfusionMatrix counts examples by true class (row) and predicted class
// (column), as sklearn.metrics.confusion_matrix. Class indices outside
// [0, classes) are an error.
func ConfusionMatrix(pred, truth []int64, classes int) ([][]int, error) {
	if len(pred) != len(truth) {
		return nil, fmt.Errorf("metrics: %d predictions for %d labels", len(pred), len(truth))
	}
	m := make([][]int, classes)
	for i := range m {
		m[i] = make([]int, classes)
	}
	for i, y := range truth {
		p := pred[i]
		if y < 0 || y >= int64(classes) || p < 0 || p >= int64(classes) {
			return nil, fmt.Errorf("metrics: example %d: class %d or %d outside [0, %d)", i, y, p, classes)
		}
		m[y][p]++
	}
	return m, nil
}

// ClassScore holds the precision, recall and F1 score of one class and
// its support (the number of examples of the class).
type ClassScore struct {
	Precision, Recall, F1 float64
	Support               int
}

// PerClass returns the precision, recall and F1 score of every class from
// a confusion matrix (true class by row). A ratio whose denominator is
// zero is 0, as scikit-learn's zero_division default.
func PerClass(confusion [][]int) []ClassScore {
	c := len(confusion)
	out := make([]ClassScore, c)
	for k := range c {
		tp := confusion[k][k]
		predicted, actual := 0, 0
		for j := range c {
			predicted += confusion[j][k]
			actual += confusion[k][j]
		}
		s := ClassScore{Support: actual}
		if predicted > 0 {
			s.Precision = float64(tp) / float64(predicted)
		}
		if actual > 0 {
			s.Recall = float64(tp) / float64(actual)
		}
		if s.Precision+s.Recall > 0 {
			s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
		}
		out[k] = s
	}
	return out
}

// Macro returns the unweighted mean of the per-class scores (scikit-learn's
// average="macro") and the total support.
func Macro(scores []ClassScore) ClassScore {
	var m ClassScore
	for _, s := range scores {
		m.Precision += s.Precision
		m.Recall += s.Recall
		m.F1 += s.F1
		m.Support += s.Support
	}
	if n := float64(len(scores)); n > 0 {
		m.Precision /= n
		m.Recall /= n
		m.F1 /= n
	}
	return m
}

// LogLoss returns the mean negative log-likelihood of the true classes
// under probabilities probs [len(labels), classes] (sklearn.metrics.log_loss
// for rows that sum to one). Probabilities are clipped to [eps, 1−eps]
// with eps the float64 machine epsilon, so a zero probability gives a large
// finite loss.
func LogLoss(probs []float64, classes int, labels []int64) (float64, error) {
	if len(probs) != len(labels)*classes {
		return 0, fmt.Errorf("metrics: %d probabilities for %d examples of %d classes", len(probs), len(labels), classes)
	}
	if len(labels) == 0 {
		return math.NaN(), nil
	}
	const eps = 0x1p-52
	sum := 0.0
	for i, y := range labels {
		if y < 0 || y >= int64(classes) {
			return 0, fmt.Errorf("metrics: example %d: class %d outside [0, %d)", i, y, classes)
		}
		p := min(max(probs[i*classes+int(y)], eps), 1-eps)
		sum -= math.Log(p)
	}
	return sum / float64(len(labels)), nil
}

// ErrOneClass is returned by ROCAUC when the labels hold only one class,
// where the area is undefined.
var ErrOneClass = errors.New("metrics: ROC AUC needs both positive and negative examples")

// ROCAUC returns the area under the ROC curve of scores against binary
// labels (true: positive), as sklearn.metrics.roc_auc_score: the curve has
// one point per distinct score (tied scores move the true- and
// false-positive rates together, a diagonal segment) and the area is
// summed by the trapezoid rule. It equals the probability that a random
// positive scores above a random negative, ties counting one half.
func ROCAUC(scores []float64, positive []bool) (float64, error) {
	if len(scores) != len(positive) {
		return 0, fmt.Errorf("metrics: %d scores for %d labels", len(scores), len(positive))
	}
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	// Descending score; the order within ties does not matter.
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	var tp, fp, prevTP, prevFP, area float64
	for k, i := range idx {
		if positive[i] {
			tp++
		} else {
			fp++
		}
		if k+1 < len(idx) && scores[idx[k+1]] == scores[i] {
			continue // a threshold between distinct scores only
		}
		area += (fp - prevFP) * (tp + prevTP) / 2
		prevTP, prevFP = tp, fp
	}
	if tp == 0 || fp == 0 {
		return math.NaN(), ErrOneClass
	}
	return area / (tp * fp), nil
}
