package mljob

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// Test-only stand-ins registered under names no real stage takes: an
// assembler of numeric columns, a ridge regressor and an RMSE evaluator.

type assembler struct {
	InputCols []string `json:"inputCols" yaml:"inputCols"`
	OutputCol string   `json:"outputCol" yaml:"outputCol"`
}

func (a *assembler) Type() string { return "mljobTestAssembler" }
func (a *assembler) Transform(f *data.Frame) (*data.Frame, error) {
	n := f.Len()
	w := len(a.InputCols)
	x := make([]float64, n*w)
	for j, c := range a.InputCols {
		v, err := ml.Numbers(f, c)
		if err != nil {
			return nil, err
		}
		for i := range n {
			x[i*w+j] = v[i]
		}
	}
	return ml.WithColumns(f, ml.VectorOut(a.OutputCol, w, x))
}
func (a *assembler) Encode() (ml.Encoded, error) { return ml.Encoded{Params: a}, nil }

type ridge struct {
	RegParam    float64 `json:"regParam" yaml:"regParam"`
	MaxIter     int     `json:"maxIter" yaml:"maxIter"`
	FeaturesCol string  `json:"featuresCol" yaml:"featuresCol"`
	LabelCol    string  `json:"labelCol" yaml:"labelCol"`
}

func newRidge() *ridge              { return &ridge{MaxIter: 100, FeaturesCol: "features", LabelCol: "label"} }
func (r *ridge) Type() string       { return "mljobTestRidge" }
func (r *ridge) Copy() ml.Estimator { c := *r; return &c }
func (r *ridge) Fit(d ml.Data) (ml.Model, error) {
	if r.RegParam < 0 {
		return nil, fmt.Errorf("mljobTestRidge: regParam must be ≥ 0, got %g", r.RegParam)
	}
	x, err := ml.Features(d.Frame, r.FeaturesCol)
	if err != nil {
		return nil, err
	}
	y, err := ml.Numbers(d.Frame, r.LabelCol)
	if err != nil {
		return nil, err
	}
	k := x.Cols
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
	for j := range k {
		s[j*k+j] += r.RegParam * s[k*k+k]
	}
	w, _, err := ml.CholeskySolve(s[:k*k], k, s[k*k:k*k+k])
	if err != nil {
		return nil, err
	}
	return &ridgeModel{W: w, FeaturesCol: r.FeaturesCol, Iter: r.MaxIter}, nil
}

type ridgeModel struct {
	W           []float64 `json:"-"`
	FeaturesCol string    `json:"featuresCol"`
	Iter        int       `json:"iter"`
}

func (m *ridgeModel) Type() string       { return "mljobTestRidgeModel" }
func (m *ridgeModel) NumIterations() int { return m.Iter }
func (m *ridgeModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, m.FeaturesCol)
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
	return ml.Encoded{Params: m, Arrays: map[string]ml.Array{"w": ml.Vec(m.W)}}, nil
}

type rmseEval struct {
	MetricName string `json:"metricName" yaml:"metricName"`
	LabelCol   string `json:"labelCol" yaml:"labelCol"`
}

func (e *rmseEval) Metric() string     { return e.MetricName }
func (e *rmseEval) LargerBetter() bool { return e.MetricName == "r2" }
func (e *rmseEval) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	p, err := ml.Numbers(f, "prediction")
	if err != nil {
		return 0, err
	}
	y, err := ml.Numbers(f, e.LabelCol)
	if err != nil {
		return 0, err
	}
	s := []float64{0, 0, 0, float64(len(y))}
	for i := range y {
		s[0] += (p[i] - y[i]) * (p[i] - y[i])
		s[1] += y[i]
		s[2] += y[i] * y[i]
	}
	if err := c.AllReduce(s, ml.OpSum); err != nil {
		return 0, err
	}
	switch e.MetricName {
	case "rmse":
		return math.Sqrt(s[0] / s[3]), nil
	case "r2":
		return 1 - s[0]/(s[2]-s[1]*s[1]/s[3]), nil
	}
	return 0, fmt.Errorf("metricName %q", e.MetricName)
}

func init() {
	ml.RegisterStage("mljobTestAssembler", func() ml.Stage { return &assembler{OutputCol: "features"} })
	ml.RegisterModel("mljobTestAssembler", func(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
		a := &assembler{}
		return a, ml.DecodeParams(raw, a)
	})
	ml.RegisterStage("mljobTestRidge", func() ml.Stage { return newRidge() })
	ml.RegisterModel("mljobTestRidgeModel", func(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
		m := &ridgeModel{}
		if err := ml.DecodeParams(raw, m); err != nil {
			return nil, err
		}
		w, err := ml.Need(arrays, "w", -1)
		m.W = w.Data
		return m, err
	})
	ml.RegisterEvaluator("mljobTestRegressionEvaluator", func() ml.Evaluator { return &rmseEval{MetricName: "rmse", LabelCol: "label"} })
}
