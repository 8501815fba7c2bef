package mlp

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
)

// MultilayerPerceptronClassificationModel is a fitted
// MultilayerPerceptronClassifier. Transform adds Spark's columns:
// rawPrediction (the output layer's values before the softmax),
// probability (after it) and prediction (the most probable class, the
// first on ties); an output column whose name is "" is left out.
type MultilayerPerceptronClassificationModel struct {
	// Layers are the layer sizes, input first (0s resolved from the data).
	Layers []int
	// Weights are every layer's weights in Spark ML's layout: for each
	// layer from in to out units, the in × out matrix W row-major (entry
	// (i, o) at i·out + o), then the out biases. A row x of a layer's
	// input gives the output x·W + b.
	Weights []float64
	// Iterations is the number of solver iterations the fit ran,
	// Evaluations the number of loss and gradient evaluations (line
	// searches included), Loss the objective at the end (mean
	// cross-entropy plus the penalty).
	Iterations  int
	Evaluations int
	Loss        float64

	FeaturesCol      string
	PredictionCol    string
	ProbabilityCol   string
	RawPredictionCol string
}

// Type returns "MultilayerPerceptronClassificationModel".
func (m *MultilayerPerceptronClassificationModel) Type() string { return typeModel }

// NumClasses returns the size of the output layer.
func (m *MultilayerPerceptronClassificationModel) NumClasses() int {
	return m.Layers[len(m.Layers)-1]
}

// check validates the model's shape (a decoded model may be damaged).
func (m *MultilayerPerceptronClassificationModel) check() error {
	if len(m.Layers) < 2 {
		return fmt.Errorf("layers %v: need at least an input and an output size", m.Layers)
	}
	for i, s := range m.Layers {
		if s <= 0 {
			return fmt.Errorf("layers[%d] = %d, must be > 0", i, s)
		}
	}
	if n := newTopology(m.Layers).size; len(m.Weights) != n {
		return fmt.Errorf("%d weights, layers %v need %d", len(m.Weights), m.Layers, n)
	}
	return nil
}

// Transform adds the prediction columns to f.
func (m *MultilayerPerceptronClassificationModel) Transform(f *data.Frame) (*data.Frame, error) {
	fail := func(err error) (*data.Frame, error) {
		return nil, fmt.Errorf("%s: %w", typeModel, err)
	}
	if err := m.check(); err != nil {
		return fail(err)
	}
	x, err := readFeatures(f, m.FeaturesCol)
	if err != nil {
		return fail(err)
	}
	if x.Cols != m.Layers[0] {
		return fail(fmt.Errorf("column %q has %d values per row, the model was fitted on %d", m.FeaturesCol, x.Cols, m.Layers[0]))
	}
	raw, prob, pred := m.predict(x)
	var cols []data.Column
	k := m.NumClasses()
	if m.RawPredictionCol != "" {
		cols = append(cols, ml.VectorOut(m.RawPredictionCol, k, raw))
	}
	if m.ProbabilityCol != "" {
		cols = append(cols, ml.VectorOut(m.ProbabilityCol, k, prob))
	}
	if m.PredictionCol != "" {
		cols = append(cols, ml.ScalarOut(m.PredictionCol, pred))
	}
	out, err := ml.WithColumns(f, cols...)
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// predict returns, for every row of x, the output layer's values before
// the softmax, the probabilities and the class.
func (m *MultilayerPerceptronClassificationModel) predict(x features) (raw, prob, pred []float64) {
	top := newTopology(m.Layers)
	k, n := m.NumClasses(), x.Rows
	nw := newNetwork(top, featureMajor[float64](x), nil, n, kernel.Dgemm)
	if n > 0 {
		nw.setWeights(m.Weights)
		nw.forward()
	}
	z := nw.act[top.affine()-1] // k × n
	raw = make([]float64, n*k)
	prob = make([]float64, n*k)
	pred = make([]float64, n)
	nw.eachChunk(func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			r, p := raw[i*k:(i+1)*k], prob[i*k:(i+1)*k]
			best := 0
			for j := range r {
				r[j] = z[j*n+i]
				if r[j] > r[best] {
					best = j
				}
			}
			s := 0.0
			for j, v := range r {
				p[j] = math.Exp(v - r[best])
				s += p[j]
			}
			for j := range p {
				p[j] /= s
			}
			pred[i] = float64(best)
		}
	})
	return raw, prob, pred
}

// modelParams is what Encode saves besides the weights.
type modelParams struct {
	Layers           []int   `json:"layers"`
	Iterations       int     `json:"iterations"`
	Evaluations      int     `json:"evaluations"`
	Loss             float64 `json:"loss"`
	FeaturesCol      string  `json:"featuresCol"`
	PredictionCol    string  `json:"predictionCol"`
	ProbabilityCol   string  `json:"probabilityCol"`
	RawPredictionCol string  `json:"rawPredictionCol"`
}

// Encode returns the layers and columns as params and the weights as the
// array "weights".
func (m *MultilayerPerceptronClassificationModel) Encode() (ml.Encoded, error) {
	if err := m.check(); err != nil {
		return ml.Encoded{}, err
	}
	return ml.Encoded{
		Params: modelParams{
			Layers: m.Layers, Iterations: m.Iterations, Evaluations: m.Evaluations, Loss: m.Loss,
			FeaturesCol: m.FeaturesCol, PredictionCol: m.PredictionCol,
			ProbabilityCol: m.ProbabilityCol, RawPredictionCol: m.RawPredictionCol,
		},
		Arrays: map[string]ml.Array{"weights": ml.Vec(m.Weights)},
	}, nil
}

func decodeModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p modelParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	w, err := ml.Need(arrays, "weights", -1)
	if err != nil {
		return nil, err
	}
	m := &MultilayerPerceptronClassificationModel{
		Layers: p.Layers, Weights: slices.Clone(w.Data), Iterations: p.Iterations, Evaluations: p.Evaluations, Loss: p.Loss,
		FeaturesCol: p.FeaturesCol, PredictionCol: p.PredictionCol,
		ProbabilityCol: p.ProbabilityCol, RawPredictionCol: p.RawPredictionCol,
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// NumIterations is the solver's iteration count (ml.Iterative).
func (m *MultilayerPerceptronClassificationModel) NumIterations() int { return m.Iterations }
