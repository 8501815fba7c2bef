package data

import (
	"fmt"
	"slices"
)

// Table is an in-memory data set: a dense float32 feature matrix and optional
// targets. It is what every reader in this package returns.
//
// X is row-major: the features of row i are X[i*Cols : (i+1)*Cols].
//
// A table has at most one kind of target:
//   - Labels holds class indices in [0, len(Classes)) for classification;
//     Classes[k] is the name of class k.
//   - Y holds one float32 target per row for regression.
//
// Both are nil for unlabelled data (features only, as for batch inference).
type Table struct {
	Rows, Cols int
	X          []float32

	// Columns names the Cols feature columns (may be nil).
	Columns []string
	// FeatureShape is the shape of one row when the features are not a flat
	// vector, e.g. [28 28] for MNIST images; its product is Cols. Nil for
	// ordinary tabular data.
	FeatureShape []int

	// LabelName is the name of the column the targets came from.
	LabelName string
	// Labels holds a class index per row, or is nil.
	Labels []int64
	// Classes names the classes of Labels; len(Classes) is the class count.
	Classes []string
	// Y holds a numeric target per row, or is nil.
	Y []float32
}

// Row returns the features of row i; the slice aliases X.
func (t *Table) Row(i int) []float32 {
	return t.X[i*t.Cols : (i+1)*t.Cols : (i+1)*t.Cols]
}

// NumClasses returns len(Classes), the number of classes of Labels.
func (t *Table) NumClasses() int { return len(t.Classes) }

// Validate checks that the table's fields agree with each other: X has
// Rows×Cols values, names and targets have one entry per column and row,
// labels are valid class indices, and FeatureShape matches Cols.
func (t *Table) Validate() error {
	if t.Rows < 0 || t.Cols < 0 {
		return fmt.Errorf("table: negative size %d×%d", t.Rows, t.Cols)
	}
	if len(t.X) != t.Rows*t.Cols {
		return fmt.Errorf("table: X has %d values, want %d×%d = %d", len(t.X), t.Rows, t.Cols, t.Rows*t.Cols)
	}
	if t.Columns != nil && len(t.Columns) != t.Cols {
		return fmt.Errorf("table: %d column names for %d columns", len(t.Columns), t.Cols)
	}
	if t.FeatureShape != nil {
		n := 1
		for _, d := range t.FeatureShape {
			n *= d
		}
		if n != t.Cols {
			return fmt.Errorf("table: feature shape %v has %d values, rows have %d", t.FeatureShape, n, t.Cols)
		}
	}
	if t.Labels != nil && t.Y != nil {
		return fmt.Errorf("table: has both class labels and numeric targets")
	}
	if t.Labels != nil {
		if len(t.Labels) != t.Rows {
			return fmt.Errorf("table: %d labels for %d rows", len(t.Labels), t.Rows)
		}
		for i, l := range t.Labels {
			if l < 0 || l >= int64(len(t.Classes)) {
				return fmt.Errorf("table: row %d: label %d is outside [0, %d)", i, l, len(t.Classes))
			}
		}
	}
	if t.Y != nil && len(t.Y) != t.Rows {
		return fmt.Errorf("table: %d targets for %d rows", len(t.Y), t.Rows)
	}
	return nil
}

// Subset returns a new table holding the given rows of t, in the given order
// (rows may repeat). The column and class metadata is shared, not copied.
func (t *Table) Subset(rows []int) *Table {
	out := t.emptyLike(len(rows))
	for k, i := range rows {
		copy(out.X[k*t.Cols:(k+1)*t.Cols], t.Row(i))
		if t.Labels != nil {
			out.Labels[k] = t.Labels[i]
		}
		if t.Y != nil {
			out.Y[k] = t.Y[i]
		}
	}
	return out
}

// emptyLike returns a table with t's columns and classes and n zeroed rows.
func (t *Table) emptyLike(n int) *Table {
	out := &Table{
		Rows: n, Cols: t.Cols, X: make([]float32, n*t.Cols),
		Columns: t.Columns, FeatureShape: t.FeatureShape,
		LabelName: t.LabelName, Classes: t.Classes,
	}
	if t.Labels != nil {
		out.Labels = make([]int64, n)
	}
	if t.Y != nil {
		out.Y = make([]float32, n)
	}
	return out
}

// Clone returns a deep copy of t.
func (t *Table) Clone() *Table {
	return &Table{
		Rows: t.Rows, Cols: t.Cols, X: slices.Clone(t.X),
		Columns: slices.Clone(t.Columns), FeatureShape: slices.Clone(t.FeatureShape),
		LabelName: t.LabelName, Labels: slices.Clone(t.Labels),
		Classes: slices.Clone(t.Classes), Y: slices.Clone(t.Y),
	}
}

// ClassCounts returns how many rows carry each class label.
func (t *Table) ClassCounts() []int {
	counts := make([]int, len(t.Classes))
	for _, l := range t.Labels {
		if l >= 0 && int(l) < len(counts) {
			counts[l]++
		}
	}
	return counts
}

// Column returns the index of the feature column called name, or -1.
func (t *Table) Column(name string) int {
	return slices.Index(t.Columns, name)
}
