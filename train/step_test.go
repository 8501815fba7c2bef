package train

import (
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// TestNewRefusesWhatCannotWork: New is the one place that refuses the
// combinations of a step with options it cannot honour.
func TestNewRefusesWhatCannotWork(t *testing.T) {
	trainT, _ := irisSplits(t, 5)
	full := loader(t, trainT, data.LoaderOptions{BatchSize: trainT.Rows})
	batches := loader(t, trainT, data.LoaderOptions{BatchSize: 16})
	m := irisMLP(t, 9, false)
	lbfgs, err := optim.NewLBFGS(m.Parameters(), optim.LBFGSOptions{LR: 1, MaxIter: 5})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := optim.NewStepLR(adam(t, m, 0.01), 1, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Pipeline{}
	for _, test := range []struct {
		name string
		o    Options
		want string
	}{
		{"full batch and optimizer", Options{FullBatch: lbfgs, Optimizer: adam(t, m, 0.01), Train: full}, "both an optimizer and a full-batch optimizer"},
		{"full batch over mini-batches", Options{FullBatch: lbfgs, Train: batches}, "needs the training set as one batch"},
		{"full batch with a schedule", Options{FullBatch: lbfgs, Train: full, Schedule: sched}, "no schedule or gradient clipping"},
		{"full batch with clipping", Options{FullBatch: lbfgs, Train: full, ClipGradNorm: 1}, "no schedule or gradient clipping"},
		{"full batch with micro-shards", Options{FullBatch: lbfgs, Train: full, MicroShards: 2}, "without micro-shards"},
		{"full batch over processes", Options{FullBatch: lbfgs, Train: full, Strategy: pl}, "in one process"},
		{"penalty without full batch", Options{Optimizer: adam(t, m, 0.01), Train: full, Penalty: func() *tensor.Tensor { return m.Parameters()[0].Sum(nil, false) }}, "needs a full-batch optimizer"},
		{"stepper with micro-shards", Options{Optimizer: adam(t, m, 0.01), Train: batches, Strategy: pl, MicroShards: 2}, "Stepper"},
	} {
		test.o.Model, test.o.Epochs = m, 1
		if _, err := New(test.o); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: %v, want an error saying %q", test.name, err, test.want)
		}
	}
}
