package modelfile

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Model is a trained network with what prediction needs around it: the
// spec it was built from, the task, class and column names and the input
// standardization. Save writes it as a model file; Load rebuilds it from
// one without any Go code for the network.
type Model struct {
	Net  *nn.Sequential
	Spec nn.Spec
	Task metrics.Task
	// Classes names the classes in logit order (classification).
	Classes []string
	// Columns names the feature columns in input order, if known.
	Columns []string
	// Label names the target column of the training data.
	Label string
	// Impute fills missing feature values, column by column, when the
	// model was trained with mean imputation (nil: missing values are
	// errors).
	Impute []float64
	// Scaler standardizes inputs before Net, or is nil.
	Scaler *data.Standardizer
	// TrainedOn records the training data and split, or is nil.
	TrainedOn *TrainingData
	// Info is free-form information about the training run.
	Info map[string]any
}

// Architecture returns the model's description for a model file.
func (m *Model) Architecture() (*Architecture, error) {
	spec, err := json.Marshal(m.Spec)
	if err != nil {
		return nil, fmt.Errorf("model spec: %w", err)
	}
	a := &Architecture{Format: ModelFormat, Model: spec, Task: m.Task.String(),
		Classes: m.Classes, Columns: m.Columns, Label: m.Label, Info: m.Info,
		Features: numel(m.Spec.Input), TrainedOn: m.TrainedOn}
	if m.Impute != nil {
		a.Impute = &Imputation{Mean: m.Impute}
	}
	if m.Scaler != nil {
		a.Standardize = &Standardization{Mean: m.Scaler.Mean, Std: m.Scaler.Std}
	}
	return a, nil
}

// Save writes the model file at path (atomically).
func (m *Model) Save(path string) error {
	a, err := m.Architecture()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	entries, meta := SparseEntries(StateEntries(m.Net))
	return WriteModel(path, a, entries, meta)
}

// Load reads a model file, rebuilds the network from its spec and
// loads the weights. A file that is truncated, corrupted, not a model, or
// whose weights do not fit its architecture gives an error naming it.
//
// Paths with an extension registered by RegisterFormat (".onnx" when
// package onnx is linked in) are read by that format's loader.
func Load(path string) (*Model, error) {
	if load := formatLoader(path); load != nil {
		return load(path)
	}
	a, f, err := ReadModel(path)
	if err != nil {
		return nil, err
	}
	tensors, err := DenseEntries(f.Tensors, f.Metadata)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	spec, err := nn.DecodeSpecJSON(a.Model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	task, err := metrics.ParseTask(a.Task)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The weights overwrite the initialization, so any seed will do. The
	// architecture may hold no more values than the file stores: a spec
	// declaring layers far larger than its weights fails before they are
	// allocated.
	stored := int64(0)
	for _, e := range tensors {
		stored += int64(numel(e.Shape))
	}
	net, out, err := spec.BuildWithin(tensor.NewRNG(0), max(stored, 1))
	if err != nil {
		return nil, fmt.Errorf("%s: architecture: %w", path, err)
	}
	m := &Model{Net: net, Spec: spec, Task: task, Classes: a.Classes, Columns: a.Columns, Label: a.Label, Info: a.Info,
		TrainedOn: a.TrainedOn}
	if err := m.CheckOutput(out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n := numel(spec.Input); a.Features != 0 && a.Features != n {
		return nil, fmt.Errorf("%s: the file records %d features, the model's input %v reads %d", path, a.Features, spec.Input, n)
	}
	if im := a.Impute; im != nil {
		if n := numel(spec.Input); len(im.Mean) != n {
			return nil, fmt.Errorf("%s: imputation covers %d columns, the model reads %d values", path, len(im.Mean), n)
		}
		m.Impute = im.Mean
	}
	if s := a.Standardize; s != nil {
		if n := numel(spec.Input); len(s.Mean) != n {
			return nil, fmt.Errorf("%s: standardization covers %d columns, the model reads %d values", path, len(s.Mean), n)
		}
		m.Scaler = &data.Standardizer{Mean: s.Mean, Std: s.Std}
	}
	if err := LoadEntries(net, tensors); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	net.Eval()
	return m, nil
}

// CheckOutput checks a network's output shape per example (as
// nn.Spec.Build returns it) against the task: one logit per class, or one
// value for regression.
func (m *Model) CheckOutput(out []int) error {
	switch m.Task {
	case metrics.Classification:
		if len(out) != 1 || out[0] != len(m.Classes) {
			return fmt.Errorf("the model outputs %v per example, but the data has %d classes: the last layer needs out: %d", out, len(m.Classes), len(m.Classes))
		}
	case metrics.Regression:
		if len(out) != 1 || out[0] != 1 {
			return fmt.Errorf("the model outputs %v per example, but regression needs one value: the last layer needs out: 1", out)
		}
	}
	return nil
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// PrepareInput checks that t has the model's feature columns (reordering
// them by name when both sides have names) and returns a standardized
// copy ready for the network (see Features.Table).
func (m *Model) PrepareInput(t *data.Table) (*data.Table, error) {
	return m.Features().Table(t)
}

// Predict runs the model over the rows of t in batches of batchSize (in
// evaluation mode, no graph). The table holds raw features; the model
// standardizes them itself. A model in evaluation mode (as Load leaves
// it) serves concurrent Predicts: each only reads the model.
func (m *Model) Predict(t *data.Table, batchSize int) (*Predictions, error) {
	in, err := m.PrepareInput(t)
	if err != nil {
		return nil, err
	}
	ds, err := data.NewDataset(&data.Table{Rows: in.Rows, Cols: in.Cols, X: in.X}, data.DatasetOptions{Shape: m.Spec.Input})
	if err != nil {
		return nil, err
	}
	l, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: max(batchSize, 1), Prefetch: -1})
	if err != nil {
		return nil, err
	}
	if m.Net.Training() {
		m.Net.Eval() // once: afterwards concurrent calls only read the model
	}
	p := &Predictions{Task: m.Task, Classes: m.Classes}
	c := len(m.Classes)
	for _, b := range l.Epoch(0) {
		out := m.Net.Forward(b.X.NoGrad())
		if m.Task == metrics.Regression {
			p.Values = append(p.Values, out.Float32s()...)
			continue
		}
		probs := out.Softmax(1).Float32s()
		p.Probs = append(p.Probs, probs...)
		for i := range b.Size {
			p.Class = append(p.Class, int64(metrics.Argmax(probs[i*c:(i+1)*c])))
		}
	}
	return p, nil
}

// PredictRows runs the model over rows of raw features given row-major in
// x (rows × the model's input size, in the model's column order), without
// a data.Table: the entry point for serving. It standardizes a copy of x
// as Predict does and runs all rows in one batch.
func (m *Model) PredictRows(x []float32, rows int) (*Predictions, error) {
	n := numel(m.Spec.Input)
	if rows < 0 || len(x) != rows*n {
		return nil, fmt.Errorf("predict: %d values for %d rows of %d features", len(x), rows, n)
	}
	if rows == 0 {
		return m.Predict(&data.Table{Cols: n}, 1)
	}
	// One batch: the network runs over the (standardized) rows in place,
	// without the copy a data loader's batch would make.
	in, err := m.PrepareInput(&data.Table{Rows: rows, Cols: n, X: x})
	if err != nil {
		return nil, err
	}
	if m.Net.Training() {
		m.Net.Eval()
	}
	out := m.Net.Forward(tensor.FromFloat32(in.X, append([]int{rows}, m.Spec.Input...)...).NoGrad())
	p := &Predictions{Task: m.Task, Classes: m.Classes}
	if m.Task == metrics.Regression {
		p.Values = slices.Clone(out.Float32s()) // not a view of x
		return p, nil
	}
	c := len(m.Classes)
	p.Probs = out.Softmax(1).Float32s()
	p.Class = make([]int64, rows)
	for i := range p.Class {
		p.Class[i] = int64(metrics.Argmax(p.Probs[i*c : (i+1)*c]))
	}
	return p, nil
}

// Evaluate scores the model on a labelled table of raw features.
func (m *Model) Evaluate(t *data.Table, batchSize int) (metrics.Metrics, error) {
	if m.Task == metrics.Classification {
		if t.Labels == nil {
			return metrics.Metrics{}, fmt.Errorf("evaluate: the data has no class labels")
		}
		if !slices.Equal(t.Classes, m.Classes) {
			// Renumber the labels into the model's class order.
			remap := make([]int64, len(t.Classes))
			for i, name := range t.Classes {
				k := slices.Index(m.Classes, name)
				if k < 0 {
					return metrics.Metrics{}, fmt.Errorf("evaluate: the data has class %q, which the model does not know (its classes: %v)", name, m.Classes)
				}
				remap[i] = int64(k)
			}
			labels := make([]int64, len(t.Labels))
			for i, l := range t.Labels {
				labels[i] = remap[l]
			}
			c := *t
			c.Labels, c.Classes = labels, m.Classes
			t = &c
		}
	}
	in, err := m.PrepareInput(t)
	if err != nil {
		return metrics.Metrics{}, err
	}
	ds, err := data.NewDataset(in, data.DatasetOptions{Shape: m.Spec.Input})
	if err != nil {
		return metrics.Metrics{}, err
	}
	l, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: max(batchSize, 1)})
	if err != nil {
		return metrics.Metrics{}, err
	}
	return Evaluate(m.Net, l, m.Task, nil)
}
