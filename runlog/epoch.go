package runlog

import (
	"fmt"
	"strings"

	"github.com/fathom-ml/fathom/metrics"
)

// Epoch is the record of one epoch of training.
type Epoch struct {
	// Epoch counts from 1.
	Epoch int `json:"epoch"`
	// Train holds the metrics of the training batches, measured during the
	// epoch (with the weights changing, as PyTorch scripts report them).
	Train metrics.Metrics `json:"train"`
	// Eval holds the metrics on the evaluation data after the epoch, or is
	// nil when there is no evaluation data.
	Eval *metrics.Metrics `json:"eval,omitempty"`
	// LR is the learning rate of the first parameter group in the epoch.
	LR float64 `json:"lr"`
	// Seconds is the wall time of the training pass (without evaluation).
	Seconds float64 `json:"seconds"`
	// EvalSeconds is the wall time of the evaluation pass.
	EvalSeconds float64 `json:"eval_seconds"`
	// Steps is the number of optimizer steps so far in the run.
	Steps int `json:"steps"`
}

// Monitored returns the value of a monitored metric such as "val_loss",
// "val_accuracy", "train_loss" or "train_rmse".
func (r Epoch) Monitored(name string) (float64, error) {
	prefix, metric, ok := strings.Cut(name, "_")
	if !ok {
		return 0, fmt.Errorf("monitored metric %q: want train_<metric> or val_<metric>", name)
	}
	var m *metrics.Metrics
	switch prefix {
	case "train":
		m = &r.Train
	case "val", "eval":
		if r.Eval == nil {
			return 0, fmt.Errorf("monitored metric %q: there is no evaluation data", name)
		}
		m = r.Eval
	default:
		return 0, fmt.Errorf("monitored metric %q: want train_<metric> or val_<metric>", name)
	}
	v, ok := m.Get(metric)
	if !ok {
		return 0, fmt.Errorf("monitored metric %q: unknown metric %q (want loss, accuracy or rmse)", name, metric)
	}
	return v, nil
}

// CheckMonitor reports whether name is a metric Monitored knows (with
// evaluation data present).
func CheckMonitor(name string) error {
	_, err := Epoch{Eval: &metrics.Metrics{}}.Monitored(name)
	return err
}

// HigherIsBetter reports whether a larger value of the named metric is
// an improvement (accuracy) rather than a smaller one (loss, rmse).
func HigherIsBetter(name string) bool {
	return strings.HasSuffix(name, "accuracy") || strings.HasSuffix(name, "acc")
}

// IsTrainMetric reports whether name is measured on the training data
// ("train_loss"), so it needs no evaluation data.
func IsTrainMetric(name string) bool { return len(name) > 6 && name[:6] == "train_" }
