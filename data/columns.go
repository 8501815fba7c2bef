package data

// Pieces shared by the CSV and Parquet readers: label kinds, missing-value
// policies, class-name encoding and column selection.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// LabelKind says how a label column is read.
type LabelKind int

const (
	// LabelClass reads the label as a class name (any string, including
	// numbers such as "0"/"1") and stores a class index in Table.Labels.
	LabelClass LabelKind = iota
	// LabelNumeric reads the label as a number and stores it in Table.Y
	// (regression).
	LabelNumeric
)

// Impute says what a reader does with a missing feature value.
type Impute int

const (
	// MissingError makes a missing value an error naming file, row and column.
	MissingError Impute = iota
	// MissingMean fills a missing value with the mean of the column's present
	// values. The reader must see the whole input, so streaming scanners do not
	// offer it.
	MissingMean
)

// defaultMissing backs DefaultMissing.
var defaultMissing = []string{"", "NA", "NaN", "?"}

// DefaultMissing returns the cell values the CSV reader treats as missing when
// CSVOptions.Missing is nil: "", "NA", "NaN" and "?". Cells are compared with
// them after trimming spaces, without regard to case.
func DefaultMissing() []string { return slices.Clone(defaultMissing) }

// classEncoder turns class names into indices. Without a fixed class list it
// numbers classes in order of first appearance, which keeps indices stable
// while streaming; sortClasses then puts them in a canonical order.
type classEncoder struct {
	fixed   bool
	classes []string
	index   map[string]int64
}

func newClassEncoder(fixed []string) (*classEncoder, error) {
	e := &classEncoder{index: map[string]int64{}}
	if len(fixed) > 0 {
		e.fixed = true
		for i, c := range fixed {
			if _, dup := e.index[c]; dup {
				return nil, fmt.Errorf("class %q is listed twice", c)
			}
			e.index[c] = int64(i)
		}
		e.classes = slices.Clone(fixed)
	}
	return e, nil
}

// encode returns the index of class name s, adding it if the list is not
// fixed. ok is false for a name outside a fixed list.
func (e *classEncoder) encode(s string) (idx int64, ok bool) {
	if i, found := e.index[s]; found {
		return i, true
	}
	if e.fixed {
		return 0, false
	}
	i := int64(len(e.classes))
	e.classes = append(e.classes, s)
	e.index[s] = i
	return i, true
}

// unknownClass describes a class name that is not in a fixed list.
func (e *classEncoder) unknownClass(s string) string {
	list := strings.Join(e.classes, ", ")
	if len(list) > 200 {
		list = list[:200] + "..."
	}
	return fmt.Sprintf("unknown class %q (classes: %s)", s, list)
}

// sortClasses puts a class list that was built from the data in canonical
// order and rewrites labels to match: numerically when every name is a number
// (so "2" < "10"), otherwise by byte-wise string order. The class list of a
// data set then does not depend on its row order. A fixed list is kept as given.
func (e *classEncoder) sortClasses(labels []int64) []string {
	if e.fixed {
		return slices.Clone(e.classes)
	}
	numeric := true
	values := make([]float64, len(e.classes))
	for i, c := range e.classes {
		v, err := strconv.ParseFloat(strings.TrimSpace(c), 64)
		if err != nil || math.IsNaN(v) {
			numeric = false
			break
		}
		values[i] = v
	}
	order := make([]int, len(e.classes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if numeric {
			if c := cmp.Compare(values[a], values[b]); c != 0 {
				return c
			}
		}
		return strings.Compare(e.classes[a], e.classes[b])
	})
	remap := make([]int64, len(order))
	sorted := make([]string, len(order))
	for newIdx, old := range order {
		remap[old] = int64(newIdx)
		sorted[newIdx] = e.classes[old]
	}
	for i, l := range labels {
		labels[i] = remap[l]
	}
	return sorted
}

// selection is the outcome of resolving the column options against the names
// of a file's columns.
type selection struct {
	features []int // source column index of each feature, in output order
	label    int   // source column index of the label, or -1
}

// selectColumns resolves label, select and ignore (all by name; label may
// instead be given by labelIndex, 1-based, -1 for the last column) against
// names. It reports unknown names so that typos do not pass silently.
func selectColumns(names []string, label string, labelIndex int, sel, ignore []string) (selection, error) {
	pos := make(map[string]int, len(names))
	for i, n := range names {
		if _, dup := pos[n]; dup {
			return selection{}, fmt.Errorf("column name %q appears twice", n)
		}
		pos[n] = i
	}
	lookup := func(what, n string) (int, error) {
		i, ok := pos[n]
		if !ok {
			return 0, fmt.Errorf("%s column %q not found (columns: %s)", what, n, strings.Join(names, ", "))
		}
		return i, nil
	}
	s := selection{label: -1}
	switch {
	case labelIndex > 0:
		if labelIndex > len(names) {
			return s, fmt.Errorf("label column %d is out of range: there are %d columns", labelIndex, len(names))
		}
		s.label = labelIndex - 1
	case labelIndex == -1:
		if len(names) == 0 {
			return s, fmt.Errorf("label column: there are no columns")
		}
		s.label = len(names) - 1
	case labelIndex < -1:
		return s, fmt.Errorf("label column index %d: use 1-based indices, or -1 for the last column", labelIndex)
	case label != "":
		i, err := lookup("label", label)
		if err != nil {
			return s, err
		}
		s.label = i
	}
	skip := make([]bool, len(names))
	for _, n := range ignore {
		i, err := lookup("ignored", n)
		if err != nil {
			return s, err
		}
		skip[i] = true
	}
	if len(sel) > 0 {
		taken := make([]bool, len(names))
		for _, n := range sel {
			i, err := lookup("selected", n)
			if err != nil {
				return s, err
			}
			if i == s.label {
				return s, fmt.Errorf("column %q is the label; it cannot also be a feature", n)
			}
			if taken[i] {
				return s, fmt.Errorf("column %q is selected twice", n)
			}
			taken[i] = true
			if !skip[i] {
				s.features = append(s.features, i)
			}
		}
		return s, nil
	}
	for i := range names {
		if i != s.label && !skip[i] {
			s.features = append(s.features, i)
		}
	}
	return s, nil
}

// missingCells remembers where missing feature values are, so that they can be
// imputed once the whole column has been seen.
type missingCells struct {
	pos []int // indices into Table.X
}

// imputeMean replaces the recorded cells by their column's mean over present
// values. colName names column j for errors.
func (m *missingCells) imputeMean(t *Table, colName func(j int) string) error {
	if len(m.pos) == 0 {
		return nil
	}
	isMissing := make([]bool, len(t.X))
	for _, p := range m.pos {
		isMissing[p] = true
	}
	sum := make([]float64, t.Cols)
	count := make([]int, t.Cols)
	for i, v := range t.X {
		if !isMissing[i] {
			sum[i%t.Cols] += float64(v)
			count[i%t.Cols]++
		}
	}
	for _, p := range m.pos {
		j := p % t.Cols
		if count[j] == 0 {
			return fmt.Errorf("column %s: every value is missing, there is no mean to impute", colName(j))
		}
		t.X[p] = float32(sum[j] / float64(count[j]))
	}
	return nil
}
