package tune

import (
	"fmt"
	"strings"

	"github.com/fathom-ml/fathom/ml"
)

// Setting is one parameter value of a grid point: the axis name, the
// value (for reports) and the typed function that sets it on an
// estimator.
type Setting struct {
	// Name is the axis name ("regParam", "lr.maxIter", ...).
	Name string
	// Value is the value set, as given to Axis.
	Value any
	set   func(ml.Estimator) error
}

// Dim is one axis of a parameter grid: a name and its settings, one per
// value. Build one with Axis.
type Dim struct {
	Name     string
	Settings []Setting
}

// Axis is a grid axis over values of type T: set applies one value to an
// estimator (a copy made for the grid point; set may type-assert it to
// the concrete estimator or reach into a Pipeline's stages). The values
// are tried in the order given.
//
//	tune.Axis("regParam", func(e ml.Estimator, v float64) error {
//		e.(*linear.LogisticRegression).RegParam = v
//		return nil
//	}, 0.1, 0.01)
func Axis[T any](name string, set func(e ml.Estimator, v T) error, values ...T) Dim {
	d := Dim{Name: name, Settings: make([]Setting, len(values))}
	for i, v := range values {
		d.Settings[i] = Setting{Name: name, Value: v, set: func(e ml.Estimator) error { return set(e, v) }}
	}
	return d
}

// ParamMap is one grid point: the settings it applies, in axis order.
type ParamMap []Setting

// Apply returns a copy of est with the point's settings applied; est is
// left as it is.
func (p ParamMap) Apply(est ml.Estimator) (ml.Estimator, error) {
	e := est.Copy()
	for _, s := range p {
		if s.set == nil {
			continue
		}
		if err := s.set(e); err != nil {
			return nil, fmt.Errorf("%s=%v: %w", s.Name, s.Value, err)
		}
	}
	return e, nil
}

// String is "name=value, name=value" (or "{}" for the empty point).
func (p ParamMap) String() string {
	if len(p) == 0 {
		return "{}"
	}
	parts := make([]string, len(p))
	for i, s := range p {
		parts[i] = fmt.Sprintf("%s=%v", s.Name, s.Value)
	}
	return strings.Join(parts, ", ")
}

// Values returns the point's values by axis name, for reports (JSON).
func (p ParamMap) Values() map[string]any {
	out := make(map[string]any, len(p))
	for _, s := range p {
		out[s.Name] = s.Value
	}
	return out
}

// ParamGridBuilder builds the cartesian product of its axes, as Spark
// ML's ParamGridBuilder.
type ParamGridBuilder struct {
	dims []Dim
}

// NewParamGridBuilder returns an empty builder; Build on it returns one
// empty point (the estimator as it is).
func NewParamGridBuilder() *ParamGridBuilder { return &ParamGridBuilder{} }

// AddGrid adds an axis. An axis of a name already added replaces the
// earlier one's values in its place (as Spark's builder, a map of params).
func (b *ParamGridBuilder) AddGrid(d Dim) *ParamGridBuilder {
	for i := range b.dims {
		if b.dims[i].Name == d.Name {
			b.dims[i] = d
			return b
		}
	}
	b.dims = append(b.dims, d)
	return b
}

// Build returns every grid point, in Spark's order: the first axis added
// varies fastest. With axes a = [a1, a2] then b = [b1, b2] the points are
// (a1, b1), (a2, b1), (a1, b2), (a2, b2). An axis with no values makes an
// empty grid.
func (b *ParamGridBuilder) Build() []ParamMap {
	points := []ParamMap{{}}
	for _, d := range b.dims {
		next := make([]ParamMap, 0, len(points)*len(d.Settings))
		for _, s := range d.Settings {
			for _, p := range points {
				q := make(ParamMap, len(p), len(p)+1)
				copy(q, p)
				next = append(next, append(q, s))
			}
		}
		points = next
	}
	return points
}
