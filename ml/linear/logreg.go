package linear

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// LogisticRegression is Spark ML's logistic regression. It minimizes
//
//	1/W Σ w_i ℓ(x_i, y_i) + λ(α‖β‖₁ + (1−α)/2 ‖β‖²)
//
// where ℓ is the binomial log loss (one coefficient vector, labels 0/1) or
// the multinomial (softmax) log loss with one coefficient vector per class
// and no reference class; W = Σ w_i, λ = RegParam, α = ElasticNetParam;
// intercepts are not penalized. With Standardization the penalty applies
// to the coefficients of the unit-variance features (as Spark). L-BFGS
// solves it without an L1 part, OWL-QN with one.
//
// scikit-learn's LogisticRegression(C) minimizes C·Σℓ + ½‖β‖², the same
// objective with λ = 1/(C·n) and Standardization=false.
//
// A label with one class and FitIntercept: the coefficients are zero and
// the intercept +∞ for that class, −∞ for the others (the binomial
// intercept is +∞ when every label is 1, −∞ when every label is 0), no
// optimization is run — Spark's documented behaviour.
type LogisticRegression struct {
	// Params are the penalty, the solver and the input columns, shared
	// by the linear estimators.
	Params `yaml:",inline"`
	// Family is auto (binomial for ≤ 2 classes), binomial or multinomial.
	Family string `json:"family" yaml:"family"`
	// Threshold: binomial prediction 1 when P(1) > Threshold [0.5].
	Threshold float64 `json:"threshold" yaml:"threshold"`
	// Thresholds, one per class, predict argmax P(c)/t_c (Spark's);
	// when set they take precedence over Threshold.
	Thresholds []float64 `json:"thresholds,omitempty" yaml:"thresholds"`
	// PredictionCol names the output prediction column.
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// ProbabilityCol names the output class-probability vector column.
	ProbabilityCol string `json:"probabilityCol" yaml:"probabilityCol"`
	// RawPredictionCol names the output margin vector column.
	RawPredictionCol string `json:"rawPredictionCol" yaml:"rawPredictionCol"`
	// AggregationDepth is accepted for Spark configs and ignored (an
	// all-reduce has no tree depth).
	AggregationDepth int `json:"aggregationDepth" yaml:"aggregationDepth"`
}

// NewLogisticRegression returns a LogisticRegression with Spark's
// defaults.
func NewLogisticRegression() *LogisticRegression {
	return &LogisticRegression{Params: defaultParams(),
		Family: "auto", Threshold: 0.5,
		PredictionCol: ml.PredictionCol, ProbabilityCol: ml.ProbabilityCol, RawPredictionCol: ml.RawPredictionCol,
		AggregationDepth: 2}
}

// Type returns "LogisticRegression".
func (e *LogisticRegression) Type() string { return "LogisticRegression" }

// Copy returns a copy of the estimator.
func (e *LogisticRegression) Copy() ml.Estimator {
	c := *e
	c.Thresholds = append([]float64(nil), e.Thresholds...)
	return &c
}

// Fit fits the model (see the type's documentation).
func (e *LogisticRegression) Fit(d ml.Data) (ml.Model, error) {
	const name = "LogisticRegression"
	if err := checkCommon(name, e.RegParam, e.ElasticNetParam, e.MaxIter, e.Tol); err != nil {
		return nil, err
	}
	if !(e.Threshold >= 0 && e.Threshold <= 1) {
		return nil, fmt.Errorf("%s: threshold must be in [0, 1], got %g", name, e.Threshold)
	}
	switch e.Family {
	case "auto", "binomial", "multinomial":
	default:
		return nil, fmt.Errorf("%s: family must be auto, binomial or multinomial, got %q", name, e.Family)
	}
	fd, err := loadFitData(d, name, e.FeaturesCol, e.LabelCol, e.WeightCol, true)
	if err != nil {
		return nil, err
	}
	nc := fd.numClasses
	multi := false
	switch e.Family {
	case "auto":
		multi = nc > 2
	case "binomial":
		if nc > 2 {
			return nil, fmt.Errorf("%s: family binomial needs labels 0 and 1, column %q has %d classes (use family multinomial or auto)", name, e.LabelCol, nc)
		}
	case "multinomial":
		multi = true
	}
	if !multi {
		nc = 2
	}
	if err := checkThresholds(name, e.Thresholds, nc); err != nil {
		return nil, err
	}
	hist, err := classWeights(fd, nc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	k := 1
	if multi {
		k = nc
	}
	dd := fd.x.Cols
	m := &LogisticRegressionModel{NumClasses: nc, NumFeatures: dd, Multinomial: multi,
		Threshold: e.Threshold, Thresholds: append([]float64(nil), e.Thresholds...),
		FeaturesCol: e.FeaturesCol, PredictionCol: e.PredictionCol, ProbabilityCol: e.ProbabilityCol,
		RawPredictionCol: e.RawPredictionCol}
	present, only := 0, 0
	for c, h := range hist {
		if h > 0 {
			present++
			only = c
		}
	}
	if present == 1 && e.FitIntercept {
		m.Coefficients = make([]float64, k*dd)
		m.Intercepts = make([]float64, k)
		if multi {
			for c := range k {
				m.Intercepts[c] = math.Inf(-1)
			}
			m.Intercepts[only] = math.Inf(1)
		} else if only == 1 {
			m.Intercepts[0] = math.Inf(1)
		} else {
			m.Intercepts[0] = math.Inf(-1)
		}
		return m, nil
	}
	// Start at zero coefficients and the intercepts of the class prior
	// (Spark's start; the minimizer does not depend on it).
	x0 := make([]float64, k*dd+k)
	if e.FitIntercept {
		if multi {
			mean := 0.0
			for c := range k {
				x0[k*dd+c] = math.Log1p(hist[c])
				mean += x0[k*dd+c] / float64(k)
			}
			for c := range k {
				x0[k*dd+c] -= mean
			}
		} else {
			x0[dd] = math.Log(hist[1] / hist[0])
		}
	}
	loss := Logistic
	if multi {
		loss = Softmax
	}
	sol, err := solve(fd, problem{report: d.Report, loss: loss, k: k, intercept: e.FitIntercept, standardize: e.Standardization,
		regParam: e.RegParam, elasticNet: e.ElasticNetParam, maxIter: e.MaxIter, tol: e.Tol, x0: x0})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if multi {
		// Softmax is unchanged by a shift of every class's margin: the
		// intercepts (and without a penalty the coefficients) are
		// centred, as Spark does.
		centre(sol.icpt, k, 1)
		if e.RegParam == 0 {
			centre(sol.coef, k, dd)
		}
	}
	m.Coefficients, m.Intercepts = sol.coef, sol.icpt
	m.Iterations, m.Evaluations, m.Objective = sol.iterations, sol.evaluations, sol.objective
	return m, nil
}

// centre subtracts from each of the d columns of the k × d matrix a its
// mean over the k rows.
func centre(a []float64, k, d int) {
	for j := range d {
		mean := 0.0
		for c := range k {
			mean += a[c*d+j]
		}
		mean /= float64(k)
		for c := range k {
			a[c*d+j] -= mean
		}
	}
}

// LogisticRegressionModel is a fitted LogisticRegression. Coefficients is
// the k × NumFeatures coefficient matrix (row-major) and Intercepts its k
// intercepts: k = 1 for the binomial model (Spark's coefficients and
// intercept), k = NumClasses for the multinomial one.
type LogisticRegressionModel struct {
	Coefficients []float64
	Intercepts   []float64
	NumClasses   int
	NumFeatures  int
	Multinomial  bool
	Threshold    float64
	Thresholds   []float64

	FeaturesCol, PredictionCol, ProbabilityCol, RawPredictionCol string

	// Iterations, Evaluations (of the loss and gradient over the data)
	// and Objective are the solver's (not saved).
	Iterations, Evaluations int
	Objective               float64
}

// Type returns "LogisticRegressionModel".
func (m *LogisticRegressionModel) Type() string { return "LogisticRegressionModel" }

// Transform adds the rawPrediction (binomial: [−m, m]; multinomial: the
// margins), probability and prediction columns.
func (m *LogisticRegressionModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, m.FeaturesCol)
	if err != nil {
		return nil, fmt.Errorf("LogisticRegressionModel: %w", err)
	}
	if x.Cols != m.NumFeatures {
		return nil, fmt.Errorf("LogisticRegressionModel: column %q has %d features, the model %d", m.FeaturesCol, x.Cols, m.NumFeatures)
	}
	k, nc := len(m.Intercepts), m.NumClasses
	mg := margins(x, m.Coefficients, m.Intercepts, k)
	raw := make([]float64, x.Rows*nc)
	prob := make([]float64, x.Rows*nc)
	pred := make([]float64, x.Rows)
	for i := range x.Rows {
		r, p := raw[i*nc:(i+1)*nc], prob[i*nc:(i+1)*nc]
		if m.Multinomial {
			copy(r, mg[i*k:(i+1)*k])
			softmaxInto(p, r)
			pred[i] = float64(argmaxScaled(p, m.Thresholds))
			continue
		}
		z := mg[i]
		r[0], r[1] = -z, z
		p[1] = sigmoid(z)
		p[0] = 1 - p[1]
		switch {
		case len(m.Thresholds) > 0:
			pred[i] = float64(argmaxScaled(p, m.Thresholds))
		case p[1] > m.Threshold:
			pred[i] = 1
		}
	}
	return ml.WithColumns(f, ml.VectorOut(m.RawPredictionCol, nc, raw), ml.VectorOut(m.ProbabilityCol, nc, prob),
		ml.ScalarOut(m.PredictionCol, pred))
}

type logRegParams struct {
	NumClasses       int       `json:"numClasses"`
	Multinomial      bool      `json:"multinomial"`
	Threshold        float64   `json:"threshold"`
	Thresholds       []float64 `json:"thresholds,omitempty"`
	FeaturesCol      string    `json:"featuresCol"`
	PredictionCol    string    `json:"predictionCol"`
	ProbabilityCol   string    `json:"probabilityCol"`
	RawPredictionCol string    `json:"rawPredictionCol"`
}

// Encode saves the coefficient matrix and the intercepts.
func (m *LogisticRegressionModel) Encode() (ml.Encoded, error) {
	k := len(m.Intercepts)
	return ml.Encoded{
		Params: logRegParams{m.NumClasses, m.Multinomial, m.Threshold, m.Thresholds, m.FeaturesCol, m.PredictionCol, m.ProbabilityCol, m.RawPredictionCol},
		Arrays: map[string]ml.Array{"coefficients": ml.Mat(k, m.NumFeatures, m.Coefficients), "intercepts": ml.Vec(m.Intercepts)},
	}, nil
}

func decodeLogisticRegressionModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p logRegParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	k := 1
	if p.Multinomial {
		k = p.NumClasses
	}
	if p.NumClasses < 2 || len(p.Thresholds) != 0 && len(p.Thresholds) != p.NumClasses {
		return nil, fmt.Errorf("bad numClasses %d or thresholds %v", p.NumClasses, p.Thresholds)
	}
	c, err := ml.Need(arrays, "coefficients", k, -1)
	if err != nil {
		return nil, err
	}
	b, err := ml.Need(arrays, "intercepts", k)
	if err != nil {
		return nil, err
	}
	return &LogisticRegressionModel{Coefficients: c.Data, Intercepts: b.Data, NumClasses: p.NumClasses,
		NumFeatures: c.Shape[1], Multinomial: p.Multinomial, Threshold: p.Threshold, Thresholds: p.Thresholds,
		FeaturesCol: p.FeaturesCol, PredictionCol: p.PredictionCol, ProbabilityCol: p.ProbabilityCol,
		RawPredictionCol: p.RawPredictionCol}, nil
}

func init() {
	ml.RegisterStage("LogisticRegression", func() ml.Stage { return NewLogisticRegression() })
	ml.RegisterModel("LogisticRegressionModel", decodeLogisticRegressionModel)
}
