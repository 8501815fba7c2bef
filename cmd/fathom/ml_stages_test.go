package main

import (
	"encoding/json"
	"math"

	"github.com/fathom-ml/fathom/bench"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// Test-only stand-in stages, under names no real stage takes: the
// commands are tested before (and independently of) the algorithms.

type cmdAssembler struct {
	InputCols []string `json:"inputCols" yaml:"inputCols"`
}

func (a *cmdAssembler) Type() string { return "cmdTestAssembler" }
func (a *cmdAssembler) Transform(f *data.Frame) (*data.Frame, error) {
	w := len(a.InputCols)
	x := make([]float64, f.Len()*w)
	for j, c := range a.InputCols {
		v, err := ml.Numbers(f, c)
		if err != nil {
			return nil, err
		}
		for i := range v {
			x[i*w+j] = v[i]
		}
	}
	return ml.WithColumns(f, ml.VectorOut("features", w, x))
}
func (a *cmdAssembler) Encode() (ml.Encoded, error) { return ml.Encoded{Params: a}, nil }

// cmdCentroid is a nearest-centroid classifier with softmax(-distance²)
// probabilities, its sums all-reduced.
type cmdCentroid struct {
	Scale float64 `json:"scale" yaml:"scale"`
}

func (c *cmdCentroid) Type() string       { return "cmdTestCentroid" }
func (c *cmdCentroid) Copy() ml.Estimator { d := *c; return &d }
func (c *cmdCentroid) Fit(d ml.Data) (ml.Model, error) {
	x, err := ml.Features(d.Frame, "features")
	if err != nil {
		return nil, err
	}
	y, k, err := ml.Classes(d, "label")
	if err != nil {
		return nil, err
	}
	s := make([]float64, k*(x.Cols+1))
	for i := range x.Rows {
		for j, v := range x.Row(i) {
			s[y[i]*(x.Cols+1)+j] += v
		}
		s[y[i]*(x.Cols+1)+x.Cols]++
	}
	if err := d.C().AllReduce(s, ml.OpSum); err != nil {
		return nil, err
	}
	m := &cmdCentroidModel{K: k, W: x.Cols, Scale: c.Scale, C: make([]float64, k*x.Cols)}
	for a := range k {
		for j := range x.Cols {
			m.C[a*x.Cols+j] = s[a*(x.Cols+1)+j] / max(s[a*(x.Cols+1)+x.Cols], 1)
		}
	}
	return m, nil
}

type cmdCentroidModel struct {
	K, W  int
	Scale float64
	C     []float64 `json:"-"`
}

func (m *cmdCentroidModel) Type() string { return "cmdTestCentroidModel" }
func (m *cmdCentroidModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, "features")
	if err != nil {
		return nil, err
	}
	pred := make([]float64, x.Rows)
	prob := make([]float64, x.Rows*m.K)
	for i := range x.Rows {
		p := prob[i*m.K : (i+1)*m.K]
		sum := 0.0
		for a := range m.K {
			d := 0.0
			for j, v := range x.Row(i) {
				d += (v - m.C[a*m.W+j]) * (v - m.C[a*m.W+j])
			}
			p[a] = math.Exp(-m.Scale * d)
			sum += p[a]
		}
		for a := range p {
			p[a] /= sum
			if p[a] > p[int(pred[i])] {
				pred[i] = float64(a)
			}
		}
	}
	return ml.WithColumns(f, ml.ScalarOut("prediction", pred), ml.VectorOut("probability", m.K, prob))
}
func (m *cmdCentroidModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{Params: m, Arrays: map[string]ml.Array{"c": ml.Vec(m.C)}}, nil
}

type cmdAccuracy struct {
	MetricName string `json:"metricName" yaml:"metricName"`
}

func (e *cmdAccuracy) Metric() string     { return e.MetricName }
func (e *cmdAccuracy) LargerBetter() bool { return true }
func (e *cmdAccuracy) Evaluate(f *data.Frame, c ml.Comm) (float64, error) {
	v, err := bench.Accuracy(f)
	if err != nil {
		return 0, err
	}
	s := []float64{v * float64(f.Len()), float64(f.Len())}
	if err := c.AllReduce(s, ml.OpSum); err != nil {
		return 0, err
	}
	return s[0] / s[1], nil
}

func init() {
	ml.RegisterStage("cmdTestAssembler", func() ml.Stage { return &cmdAssembler{} })
	ml.RegisterModel("cmdTestAssembler", func(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
		a := &cmdAssembler{}
		return a, ml.DecodeParams(raw, a)
	})
	ml.RegisterStage("cmdTestCentroid", func() ml.Stage { return &cmdCentroid{Scale: 1} })
	ml.RegisterModel("cmdTestCentroidModel", func(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
		m := &cmdCentroidModel{}
		if err := ml.DecodeParams(raw, m); err != nil {
			return nil, err
		}
		c, err := ml.Need(arrays, "c", m.K*m.W)
		m.C = c.Data
		return m, err
	})
	ml.RegisterEvaluator("cmdTestAccuracy", func() ml.Evaluator { return &cmdAccuracy{MetricName: "accuracy"} })
}
