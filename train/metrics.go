package train

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/tensor"
)

// Task says what a model predicts, which picks the default loss and the
// metrics the trainer reports.
type Task int

const (
	// Classification predicts a class: the model outputs one logit per
	// class, targets are class indices, and accuracy is reported.
	Classification Task = iota
	// Regression predicts a number: the model outputs one value, targets
	// are numbers, and the root-mean-square error is reported.
	Regression
)

func (t Task) String() string {
	switch t {
	case Classification:
		return "classification"
	case Regression:
		return "regression"
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// ParseTask maps "classification" and "regression" to a Task.
func ParseTask(s string) (Task, error) {
	switch strings.ToLower(s) {
	case "classification", "classify", "class":
		return Classification, nil
	case "regression", "regress":
		return Regression, nil
	}
	return 0, fmt.Errorf("unknown task %q (want classification or regression)", s)
}

// Metrics summarises a pass over a data set.
type Metrics struct {
	// Loss is the mean loss per example.
	Loss float64 `json:"loss"`
	// Accuracy is the fraction of examples whose highest-scoring class is
	// the label (classification only; NaN otherwise).
	Accuracy float64 `json:"accuracy"`
	// RMSE is the root-mean-square error of the predictions (regression
	// only; NaN otherwise).
	RMSE float64 `json:"rmse"`
	// Samples is the number of examples seen.
	Samples int `json:"samples"`
}

// Get returns a metric by name: "loss", "accuracy" or "rmse".
func (m Metrics) Get(name string) (float64, bool) {
	switch name {
	case "loss":
		return m.Loss, true
	case "accuracy", "acc":
		return m.Accuracy, true
	case "rmse":
		return m.RMSE, true
	}
	return 0, false
}

// meter accumulates the sums behind Metrics without allocating.
type meter struct {
	task    Task
	lossSum float64 // Σ per-batch mean loss × batch size
	correct int
	sqErr   float64
	n       int
}

// add records a batch: its mean loss and the model's output.
func (m *meter) add(meanLoss float64, out *tensor.Tensor, b *data.Batch) {
	n := b.Size
	m.lossSum += meanLoss * float64(n)
	m.n += n
	switch m.task {
	case Classification:
		if b.Labels != nil && out.Dim() == 2 && out.DType() == tensor.Float32 {
			m.correct += countCorrect(out.Float32s(), out.Size(1), b.Labels.Int64s())
		}
	case Regression:
		if b.Targets != nil && out.Numel() == n {
			pred := out.Float32s()
			for i, y := range b.Targets.Float32s() {
				d := float64(pred[i]) - float64(y)
				m.sqErr += d * d
			}
		}
	}
}

// countCorrect counts rows of logits [n, c] whose arg-max (first maximum,
// as torch.argmax) equals the label.
func countCorrect(logits []float32, c int, labels []int64) int {
	correct := 0
	for i, y := range labels {
		row := logits[i*c : (i+1)*c]
		best := 0
		for j := 1; j < c; j++ {
			if row[j] > row[best] {
				best = j
			}
		}
		if int64(best) == y {
			correct++
		}
	}
	return correct
}

func (m *meter) metrics() Metrics {
	r := Metrics{Loss: math.NaN(), Accuracy: math.NaN(), RMSE: math.NaN(), Samples: m.n}
	if m.n == 0 {
		return r
	}
	r.Loss = m.lossSum / float64(m.n)
	switch m.task {
	case Classification:
		r.Accuracy = float64(m.correct) / float64(m.n)
	case Regression:
		r.RMSE = math.Sqrt(m.sqErr / float64(m.n))
	}
	return r
}

// EpochResult is what one epoch of Fit produced.
type EpochResult struct {
	// Epoch counts from 1.
	Epoch int `json:"epoch"`
	// Train holds the metrics of the training batches, measured during the
	// epoch (with the weights changing, as PyTorch scripts report them).
	Train Metrics `json:"train"`
	// Eval holds the metrics on the evaluation data after the epoch, or is
	// nil when there is no evaluation loader.
	Eval *Metrics `json:"eval,omitempty"`
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
func (r EpochResult) Monitored(name string) (float64, error) {
	prefix, metric, ok := strings.Cut(name, "_")
	if !ok {
		return 0, fmt.Errorf("monitored metric %q: want train_<metric> or val_<metric>", name)
	}
	var m *Metrics
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

// higherIsBetter reports whether a larger value of the named metric is
// an improvement (accuracy) rather than a smaller one (loss, rmse).
func higherIsBetter(name string) bool {
	return strings.HasSuffix(name, "accuracy") || strings.HasSuffix(name, "acc")
}

// EarlyStopping stops training when a monitored metric has not improved
// for Patience epochs in a row.
type EarlyStopping struct {
	// Monitor names the metric, e.g. "val_loss" (the default when Patience
	// is set) or "val_accuracy". Loss and RMSE improve downwards, accuracy
	// upwards.
	Monitor string
	// Patience is the number of epochs without improvement tolerated; 0
	// turns early stopping off.
	Patience int
	// MinDelta is the smallest change that counts as an improvement.
	MinDelta float64
}

// metricsJSON is Metrics with the metrics that do not apply left out
// (JSON has no NaN).
type metricsJSON struct {
	Loss     *float64 `json:"loss,omitempty"`
	Accuracy *float64 `json:"accuracy,omitempty"`
	RMSE     *float64 `json:"rmse,omitempty"`
	Samples  int      `json:"samples"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes the metrics that apply (a NaN metric is left out).
func (m Metrics) MarshalJSON() ([]byte, error) {
	return json.Marshal(metricsJSON{finite(m.Loss), finite(m.Accuracy), finite(m.RMSE), m.Samples})
}

// UnmarshalJSON reads what MarshalJSON writes; absent metrics are NaN.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var j metricsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Metrics{Loss: orNaN(j.Loss), Accuracy: orNaN(j.Accuracy), RMSE: orNaN(j.RMSE), Samples: j.Samples}
	return nil
}
