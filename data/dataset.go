package data

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/tensor"
)

// Dataset presents a Table as examples for a model: the features of row i
// as a float32 tensor of shape FeatureShape, and its target (a class index
// or a number). A Loader gathers examples into mini-batches.
//
// The dataset reads the table's slices; do not change the table while the
// dataset is in use.
type Dataset struct {
	t     *Table
	shape []int
}

// DatasetOptions configures NewDataset.
type DatasetOptions struct {
	// Shape is the shape of one example's features, for example [1 28 28]
	// for one-channel images a convolution reads. Its product must equal
	// the table's column count. Nil means a flat vector of Cols values.
	Shape []int
}

// NewDataset returns a dataset over t. It checks the table with
// Table.Validate and the example shape against the column count.
func NewDataset(t *Table, opts DatasetOptions) (*Dataset, error) {
	if t == nil {
		return nil, fmt.Errorf("dataset: nil table")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	shape := []int{t.Cols}
	if opts.Shape != nil {
		n := 1
		for _, d := range opts.Shape {
			if d <= 0 {
				return nil, fmt.Errorf("dataset: example shape %v has a non-positive dimension", opts.Shape)
			}
			n *= d
		}
		if n != t.Cols {
			return nil, fmt.Errorf("dataset: example shape %v holds %d values, but the table has %d feature columns", opts.Shape, n, t.Cols)
		}
		shape = slices.Clone(opts.Shape)
	}
	return &Dataset{t: t, shape: shape}, nil
}

// Len returns the number of examples.
func (d *Dataset) Len() int { return d.t.Rows }

// Table returns the table the dataset reads.
func (d *Dataset) Table() *Table { return d.t }

// FeatureShape returns the shape of one example's features.
func (d *Dataset) FeatureShape() []int { return slices.Clone(d.shape) }

// HasLabels reports whether examples carry class labels.
func (d *Dataset) HasLabels() bool { return d.t.Labels != nil }

// HasTargets reports whether examples carry numeric targets.
func (d *Dataset) HasTargets() bool { return d.t.Y != nil }

// Example is one row of a dataset.
type Example struct {
	// X holds the features, shaped FeatureShape. It views the table's
	// storage: writing to it changes the table.
	X *tensor.Tensor
	// Label is the class index, or -1 when the table has no labels.
	Label int64
	// Target is the numeric target (regression); 0 when there is none.
	Target float32
}

// Get returns example i, 0 ≤ i < Len().
func (d *Dataset) Get(i int) Example {
	if i < 0 || i >= d.t.Rows {
		panic(fmt.Sprintf("dataset: Get(%d) out of range [0, %d)", i, d.t.Rows))
	}
	e := Example{X: tensor.FromFloat32(d.t.Row(i), d.shape...), Label: -1}
	if d.t.Labels != nil {
		e.Label = d.t.Labels[i]
	}
	if d.t.Y != nil {
		e.Target = d.t.Y[i]
	}
	return e
}

// Batch is a mini-batch of examples in reusable buffers.
//
// X is float32 shaped [Size, FeatureShape...]. Labels (int64, [Size]) is
// set for classification data and Targets (float32, [Size, 1], the shape
// of a one-output regression model's prediction) for regression data; the
// other is nil. Rows lists the dataset rows the batch holds, in order.
//
// A batch a Loader yields is valid until the loop asks for the next one:
// its buffers are then refilled. Copy (Clone) what must outlive that.
type Batch struct {
	X       *tensor.Tensor
	Labels  *tensor.Tensor
	Targets *tensor.Tensor
	Rows    []int
	Size    int

	x      []float32
	labels []int64
	y      []float32
	rows   []int
	shape  []int // [0 (batch), FeatureShape...]
}

// NewBatch returns an empty batch with room for capacity examples of d.
func (d *Dataset) NewBatch(capacity int) *Batch {
	b := &Batch{
		x:     make([]float32, capacity*d.t.Cols),
		rows:  make([]int, capacity),
		shape: append([]int{0}, d.shape...),
	}
	if d.t.Labels != nil {
		b.labels = make([]int64, capacity)
	}
	if d.t.Y != nil {
		b.y = make([]float32, capacity)
	}
	return b
}

// Gather copies the examples at rows into b, which must have been made by
// d.NewBatch with room for len(rows) examples. Tensors are rebuilt only
// when the batch size changes, so refilling a batch allocates nothing.
func (d *Dataset) Gather(rows []int, b *Batch) {
	n := len(rows)
	if n > len(b.rows) {
		panic(fmt.Sprintf("dataset: Gather of %d rows into a batch with room for %d", n, len(b.rows)))
	}
	if len(b.x) != len(b.rows)*d.t.Cols || (b.labels == nil) != (d.t.Labels == nil) || (b.y == nil) != (d.t.Y == nil) {
		panic("dataset: Gather into a batch made by another dataset")
	}
	cols := d.t.Cols
	for k, i := range rows {
		copy(b.x[k*cols:(k+1)*cols], d.t.X[i*cols:(i+1)*cols])
		if b.labels != nil {
			b.labels[k] = d.t.Labels[i]
		}
		if b.y != nil {
			b.y[k] = d.t.Y[i]
		}
	}
	copy(b.rows, rows)
	b.Rows = b.rows[:n]
	if b.X == nil || b.Size != n {
		b.Size = n
		b.shape[0] = n
		b.X = tensor.FromFloat32(b.x[:n*cols], b.shape...)
		b.Labels, b.Targets = nil, nil
		if b.labels != nil {
			b.Labels = tensor.FromInt64(b.labels[:n], n)
		}
		if b.y != nil {
			b.Targets = tensor.FromFloat32(b.y[:n], n, 1)
		}
	}
}

// Batch returns a new batch holding the examples at rows (a convenience
// for evaluation and tests; loops should use a Loader).
func (d *Dataset) Batch(rows []int) *Batch {
	b := d.NewBatch(len(rows))
	d.Gather(rows, b)
	return b
}
