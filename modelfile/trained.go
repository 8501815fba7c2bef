package train

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Model is a trained network with what prediction needs around it: the
// spec it was built from, the task, class and column names and the input
// standardization. Save writes it as a model file (package modelfile);
// LoadModel rebuilds it from one without any Go code for the network.
type Model struct {
	Net  *nn.Sequential
	Spec nn.Spec
	Task Task
	// Classes names the classes in logit order (classification).
	Classes []string
	// Columns names the feature columns in input order, if known.
	Columns []string
	// Label names the target column of the training data.
	Label string
	// Scaler standardizes inputs before Net, or is nil.
	Scaler *data.Standardizer
	// Info is free-form information about the training run.
	Info map[string]any
}

// Architecture returns the model's description for a model file.
func (m *Model) Architecture() (*modelfile.Architecture, error) {
	spec, err := json.Marshal(m.Spec)
	if err != nil {
		return nil, fmt.Errorf("model spec: %w", err)
	}
	a := &modelfile.Architecture{Format: modelfile.ModelFormat, Model: spec, Task: m.Task.String(),
		Classes: m.Classes, Columns: m.Columns, Label: m.Label, Info: m.Info}
	if m.Scaler != nil {
		a.Standardize = &modelfile.Standardization{Mean: m.Scaler.Mean, Std: m.Scaler.Std}
	}
	return a, nil
}

// Save writes the model file at path (atomically).
func (m *Model) Save(path string) error {
	a, err := m.Architecture()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return modelfile.WriteModel(path, a, modelfile.StateEntries(m.Net), nil)
}

// LoadModel reads a model file, rebuilds the network from its spec and
// loads the weights. A file that is truncated, corrupted, not a model, or
// whose weights do not fit its architecture gives an error naming it.
func LoadModel(path string) (*Model, error) {
	a, f, err := modelfile.ReadModel(path)
	if err != nil {
		return nil, err
	}
	spec, err := nn.DecodeSpecJSON(a.Model)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	task, err := ParseTask(a.Task)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The weights overwrite the initialization, so any seed will do.
	net, out, err := spec.Build(tensor.NewRNG(0))
	if err != nil {
		return nil, fmt.Errorf("%s: architecture: %w", path, err)
	}
	m := &Model{Net: net, Spec: spec, Task: task, Classes: a.Classes, Columns: a.Columns, Label: a.Label, Info: a.Info}
	if err := m.checkOutput(out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s := a.Standardize; s != nil {
		if n := numel(spec.Input); len(s.Mean) != n {
			return nil, fmt.Errorf("%s: standardization covers %d columns, the model reads %d values", path, len(s.Mean), n)
		}
		m.Scaler = &data.Standardizer{Mean: s.Mean, Std: s.Std}
	}
	if err := modelfile.LoadEntries(net, f.Tensors); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	net.Eval()
	return m, nil
}

// checkOutput checks the network's output shape against the task.
func (m *Model) checkOutput(out []int) error {
	switch m.Task {
	case Classification:
		if len(out) != 1 || out[0] != len(m.Classes) {
			return fmt.Errorf("the model outputs %v per example, but the data has %d classes: the last layer needs out: %d", out, len(m.Classes), len(m.Classes))
		}
	case Regression:
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

// Predictions are a model's outputs for a table's rows.
type Predictions struct {
	Task Task
	// Classes names the classes (classification).
	Classes []string
	// Class holds each row's predicted class index and Probs its class
	// probabilities, row-major [rows × len(Classes)] (classification).
	Class []int64
	Probs []float32
	// Values holds each row's predicted number (regression).
	Values []float32
}

// Rows returns the number of predicted rows.
func (p *Predictions) Rows() int {
	if p.Task == Regression {
		return len(p.Values)
	}
	return len(p.Class)
}

// Table returns the predictions as a table: for classification, one
// probability column per class ("prob_<class>") and the predicted class as
// the label column "prediction"; for regression, the prediction as the
// numeric target column "prediction".
func (p *Predictions) Table() *data.Table {
	if p.Task == Regression {
		return &data.Table{Rows: len(p.Values), Cols: 0, X: []float32{}, LabelName: "prediction", Y: p.Values}
	}
	cols := make([]string, len(p.Classes))
	for i, c := range p.Classes {
		cols[i] = "prob_" + c
	}
	return &data.Table{Rows: len(p.Class), Cols: len(p.Classes), X: p.Probs, Columns: cols,
		LabelName: "prediction", Labels: p.Class, Classes: p.Classes}
}

// PrepareInput checks that t has the model's feature columns (reordering
// them by name when both sides have names) and returns a standardized
// copy ready for the network.
func (m *Model) PrepareInput(t *data.Table) (*data.Table, error) {
	want := numel(m.Spec.Input)
	in := t
	if m.Columns != nil && t.Columns != nil && !slices.Equal(m.Columns, t.Columns) {
		idx := make([]int, len(m.Columns))
		for j, name := range m.Columns {
			idx[j] = t.Column(name)
			if idx[j] < 0 {
				return nil, fmt.Errorf("the input has no column %q (the model reads %v)", name, m.Columns)
			}
		}
		sel := &data.Table{Rows: t.Rows, Cols: len(idx), X: make([]float32, t.Rows*len(idx)), Columns: m.Columns,
			LabelName: t.LabelName, Labels: t.Labels, Classes: t.Classes, Y: t.Y}
		for i := range t.Rows {
			row := t.Row(i)
			for j, k := range idx {
				sel.X[i*len(idx)+j] = row[k]
			}
		}
		in = sel
	}
	if in.Cols != want {
		return nil, fmt.Errorf("the input has %d feature columns, the model reads %d (shape %v)", in.Cols, want, m.Spec.Input)
	}
	if m.Scaler != nil {
		if in == t {
			in = t.Clone()
		}
		if err := m.Scaler.Apply(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Predict runs the model over the rows of t in batches of batchSize (in
// evaluation mode, no graph). The table holds raw features; the model
// standardizes them itself.
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
	m.Net.Eval()
	p := &Predictions{Task: m.Task, Classes: m.Classes}
	c := len(m.Classes)
	for _, b := range l.Epoch(0) {
		out := m.Net.Forward(b.X.NoGrad())
		if m.Task == Regression {
			p.Values = append(p.Values, out.Float32s()...)
			continue
		}
		probs := out.Softmax(1).Float32s()
		p.Probs = append(p.Probs, probs...)
		for i := range b.Size {
			p.Class = append(p.Class, int64(argmax(probs[i*c:(i+1)*c])))
		}
	}
	return p, nil
}

func argmax(v []float32) int {
	best := 0
	for j := 1; j < len(v); j++ {
		if v[j] > v[best] {
			best = j
		}
	}
	return best
}

// Evaluate scores the model on a labelled table of raw features.
func (m *Model) Evaluate(t *data.Table, batchSize int) (Metrics, error) {
	if m.Task == Classification {
		if t.Labels == nil {
			return Metrics{}, fmt.Errorf("evaluate: the data has no class labels")
		}
		if !slices.Equal(t.Classes, m.Classes) {
			// Renumber the labels into the model's class order.
			remap := make([]int64, len(t.Classes))
			for i, name := range t.Classes {
				k := slices.Index(m.Classes, name)
				if k < 0 {
					return Metrics{}, fmt.Errorf("evaluate: the data has class %q, which the model does not know (its classes: %v)", name, m.Classes)
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
		return Metrics{}, err
	}
	ds, err := data.NewDataset(in, data.DatasetOptions{Shape: m.Spec.Input})
	if err != nil {
		return Metrics{}, err
	}
	l, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: max(batchSize, 1)})
	if err != nil {
		return Metrics{}, err
	}
	return Evaluate(m.Net, l, m.Task, nil)
}
