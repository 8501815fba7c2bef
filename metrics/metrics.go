package metrics

import (
	"encoding/json"
	"math"
)

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

// Accumulator adds up the sums behind Metrics batch by batch, without
// allocating: the streaming form the training loop and the evaluation
// loop use. Its fields are plain sums, so accumulators of data shards
// combine with Merge (or an all-reduce of the fields) and a checkpoint
// can store them.
type Accumulator struct {
	Task    Task
	LossSum float64 // Σ per-batch mean loss × batch size
	Correct int     // examples whose arg-max class is the label
	SqErr   float64 // Σ squared error of the predictions
	N       int     // examples seen
}

// AddLoss records a batch of n examples with the given mean loss.
func (a *Accumulator) AddLoss(meanLoss float64, n int) {
	a.LossSum += meanLoss * float64(n)
	a.N += n
}

// AddLogits counts the rows of logits [len(labels), classes] whose
// arg-max (the first maximum, as torch.argmax) is the label.
func (a *Accumulator) AddLogits(logits []float32, classes int, labels []int64) {
	a.Correct += countCorrect(logits, classes, labels)
}

// AddValues adds the squared errors of predictions against targets.
func (a *Accumulator) AddValues(pred, target []float32) {
	for i, y := range target {
		d := float64(pred[i]) - float64(y)
		a.SqErr += d * d
	}
}

// Merge adds the sums of b (another shard of the same pass).
func (a *Accumulator) Merge(b Accumulator) {
	a.LossSum += b.LossSum
	a.Correct += b.Correct
	a.SqErr += b.SqErr
	a.N += b.N
}

// Metrics returns the summary of what was added: the mean loss and the
// task's metric (NaN where it does not apply or nothing was added).
func (a Accumulator) Metrics() Metrics {
	r := Metrics{Loss: math.NaN(), Accuracy: math.NaN(), RMSE: math.NaN(), Samples: a.N}
	if a.N == 0 {
		return r
	}
	r.Loss = a.LossSum / float64(a.N)
	switch a.Task {
	case Classification:
		r.Accuracy = float64(a.Correct) / float64(a.N)
	case Regression:
		r.RMSE = math.Sqrt(a.SqErr / float64(a.N))
	}
	return r
}

// countCorrect counts rows of logits [n, c] whose arg-max (first maximum,
// as torch.argmax) equals the label.
func countCorrect(logits []float32, c int, labels []int64) int {
	correct := 0
	for i, y := range labels {
		if int64(Argmax(logits[i*c:(i+1)*c])) == y {
			correct++
		}
	}
	return correct
}

// Argmax returns the index of the first largest value of v (as
// torch.argmax), or 0 for an empty slice.
func Argmax(v []float32) int {
	best := 0
	for j := 1; j < len(v); j++ {
		if v[j] > v[best] {
			best = j
		}
	}
	return best
}

// metricsJSON is Metrics with the metrics that do not apply left out
// (JSON has no NaN).
type metricsJSON struct {
	Loss     *float64 `json:"loss,omitempty"`
	Accuracy *float64 `json:"accuracy,omitempty"`
	RMSE     *float64 `json:"rmse,omitempty"`
	Samples  int      `json:"samples"`
}

// Finite returns a pointer to v, or nil when v is NaN or infinite: the
// form of a number that JSON can hold (nil marshals as null or, with
// omitempty, not at all).
func Finite(v float64) *float64 {
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
	return json.Marshal(metricsJSON{Finite(m.Loss), Finite(m.Accuracy), Finite(m.RMSE), m.Samples})
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
