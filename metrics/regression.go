package metrics

import "math"

// RMSE returns the root-mean-square error of pred against truth (NaN for
// no examples).
func RMSE(pred, truth []float64) float64 {
	if len(truth) == 0 {
		return math.NaN()
	}
	s := 0.0
	for i, y := range truth {
		d := pred[i] - y
		s += d * d
	}
	return math.Sqrt(s / float64(len(truth)))
}

// MAE returns the mean absolute error of pred against truth (NaN for no
// examples).
func MAE(pred, truth []float64) float64 {
	if len(truth) == 0 {
		return math.NaN()
	}
	s := 0.0
	for i, y := range truth {
		s += math.Abs(pred[i] - y)
	}
	return s / float64(len(truth))
}

// R2 returns the coefficient of determination 1 − SS_res/SS_tot
// (sklearn.metrics.r2_score): 1 for perfect predictions, 0 for predicting
// the mean, negative for worse. Constant truth gives 1 when the
// predictions are exact and 0 otherwise, as scikit-learn does.
func R2(pred, truth []float64) float64 {
	if len(truth) == 0 {
		return math.NaN()
	}
	mean := 0.0
	for _, y := range truth {
		mean += y
	}
	mean /= float64(len(truth))
	var res, tot float64
	for i, y := range truth {
		d := pred[i] - y
		res += d * d
		e := y - mean
		tot += e * e
	}
	if tot == 0 {
		if res == 0 {
			return 1
		}
		return 0
	}
	return 1 - res/tot
}
