package tune

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// ridge is a test-only stand-in estimator: least squares with an L2
// penalty regParam·n·‖w‖² (no intercept) on the features column, solved by
// the normal equations, its sums all-reduced over the ranks.
type ridge struct {
	RegParam float64 `json:"regParam" yaml:"regParam"`
	// FailAbove makes Fit fail when RegParam exceeds it (0: never).
	FailAbove float64 `json:"failAbove" yaml:"failAbove"`
}

func (r *ridge) Type() string       { return "tuneTestRidge" }
func (r *ridge) Copy() ml.Estimator { c := *r; return &c }
func (r *ridge) setReg(v float64)   { r.RegParam = v }
func setReg(e ml.Estimator, v float64) error {
	r, ok := e.(*ridge)
	if !ok {
		return fmt.Errorf("not a ridge: %T", e)
	}
	if v < 0 {
		return fmt.Errorf("regParam must be ≥ 0, got %g", v)
	}
	r.setReg(v)
	return nil
}

func (r *ridge) Fit(d ml.Data) (ml.Model, error) {
	if r.FailAbove > 0 && r.RegParam > r.FailAbove {
		return nil, fmt.Errorf("ridge: regParam %g too large", r.RegParam)
	}
	x, err := ml.Features(d.Frame, "features")
	if err != nil {
		return nil, err
	}
	y, err := ml.Numbers(d.Frame, "label")
	if err != nil {
		return nil, err
	}
	k := x.Cols
	// [XᵀX | Xᵀy | n]
	s := make([]float64, k*k+k+1)
	for i := range x.Rows {
		row := x.Row(i)
		for a := range k {
			for b := range k {
				s[a*k+b] += row[a] * row[b]
			}
			s[k*k+a] += row[a] * y[i]
		}
	}
	s[k*k+k] = float64(x.Rows)
	if err := d.C().AllReduce(s, ml.OpSum); err != nil {
		return nil, err
	}
	n := s[k*k+k]
	a := s[:k*k]
	for j := range k {
		a[j*k+j] += r.RegParam * n
	}
	w, _, err := ml.CholeskySolve(a, k, s[k*k:k*k+k])
	if err != nil {
		return nil, err
	}
	return &ridgeModel{W: w}, nil
}

type ridgeModel struct{ W []float64 }

func (m *ridgeModel) Type() string { return "tuneTestRidgeModel" }
func (m *ridgeModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, "features")
	if err != nil {
		return nil, err
	}
	p := make([]float64, x.Rows)
	for i := range p {
		for j, v := range x.Row(i) {
			p[i] += v * m.W[j]
		}
	}
	return ml.WithColumns(f, ml.ScalarOut("prediction", p))
}
func (m *ridgeModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{Arrays: map[string]ml.Array{"w": ml.Vec(m.W)}}, nil
}

// rmse is a test-only stand-in evaluator: the root mean squared error of
// prediction against label over every rank's rows.
type rmse struct{}

func (rmse) Metric() string     { return "rmse" }
func (rmse) LargerBetter() bool { return false }
func (rmse) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	p, err := ml.Numbers(f, "prediction")
	if err != nil {
		return 0, err
	}
	y, err := ml.Numbers(f, "label")
	if err != nil {
		return 0, err
	}
	s := []float64{0, float64(len(y))}
	for i := range y {
		s[0] += (p[i] - y[i]) * (p[i] - y[i])
	}
	if err := c.AllReduce(s, ml.OpSum); err != nil {
		return 0, err
	}
	return math.Sqrt(s[0] / s[1]), nil
}

func init() {
	ml.RegisterModel("tuneTestRidgeModel", func(_ json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
		w, err := ml.Need(arrays, "w", -1)
		if err != nil {
			return nil, err
		}
		return &ridgeModel{W: w.Data}, nil
	})
}

// regression returns n rows of 3 features and a noisy linear label,
// generated deterministically.
func regression(n int) *data.Frame {
	x := make([]float64, 3*n)
	y := make([]float64, n)
	state := uint64(12345)
	next := func() float64 {
		state = state*6364136223846793005 + 1442695040888963407
		return float64(state>>11)/(1<<53) - 0.5
	}
	for i := range n {
		for j := range 3 {
			x[3*i+j] = next() * 4
		}
		y[i] = 2*x[3*i] - x[3*i+1] + 0.5*x[3*i+2] + next()*3
	}
	f, err := data.NewFrame(data.NewVectorColumn("features", 3, x, nil, nil), data.NewColumn("label", y, nil))
	if err != nil {
		panic(err)
	}
	return f
}
