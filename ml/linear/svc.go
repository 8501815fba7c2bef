package linear

import (
	"encoding/json"
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// LinearSVC is a linear support vector classifier. It minimizes
//
//	1/W Σ w_i ℓ(t_i·(β·x_i + b)) + λ(α‖β‖₁ + (1−α)/2 ‖β‖²)
//
// with t_i = ±1, ℓ(z) = max(0, 1 − z) (Loss "hinge", Spark's) or
// max(0, 1 − z)² (Loss "squared_hinge", scikit-learn's default), W = Σ w_i,
// λ = RegParam and α = ElasticNetParam (an extension: Spark's LinearSVC
// has L2 only); the intercept is not penalized. L-BFGS solves it without
// an L1 part (as Spark does for the non-smooth hinge), OWL-QN with one.
//
// Two classes give Spark's binary model. More classes are fitted one
// against the rest, as scikit-learn does: one coefficient vector per
// class, with t = +1 for that class and −1 for the others; the K
// problems are independent, so the sum of their objectives is minimized
// at once (one pass over the data per evaluation for all of them).
//
// The hinge loss is not differentiable where t·m = 1: quasi-Newton
// methods (Spark's and these) stop near its minimizer rather than at it,
// at a point that depends on the path (the number of ranks included, to a
// small degree). The squared hinge is differentiable and is minimized to
// the tolerance.
//
// scikit-learn's LinearSVC(C) minimizes ½‖β‖² + C Σ ℓ, the same minimizer
// as λ = 1/(C·n) with Standardization=false — except that liblinear
// penalizes the intercept (a constant feature of value intercept_scaling);
// with FitIntercept=false and a column of ones among the features the
// two are the same problem.
type LinearSVC struct {
	// Params are the penalty, the solver and the input columns, shared
	// by the linear estimators.
	Params `yaml:",inline"`
	// Loss is hinge (Spark's) or squared_hinge (scikit-learn's default).
	Loss string `json:"loss" yaml:"loss"`
	// Threshold: binary prediction 1 when the margin exceeds it [0].
	Threshold float64 `json:"threshold" yaml:"threshold"`
	// PredictionCol names the output prediction column.
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// RawPredictionCol names the output margin vector column.
	RawPredictionCol string `json:"rawPredictionCol" yaml:"rawPredictionCol"`
	// AggregationDepth is accepted for Spark configs and ignored (an
	// all-reduce has no tree depth).
	AggregationDepth int `json:"aggregationDepth" yaml:"aggregationDepth"`
}

// NewLinearSVC returns a LinearSVC with Spark's defaults (hinge loss,
// regParam 0, threshold 0 on the margin).
func NewLinearSVC() *LinearSVC {
	return &LinearSVC{Params: defaultParams(), Loss: "hinge",
		PredictionCol:    ml.PredictionCol,
		RawPredictionCol: ml.RawPredictionCol, AggregationDepth: 2}
}

// Type returns "LinearSVC".
func (e *LinearSVC) Type() string { return "LinearSVC" }

// Copy returns a copy of the estimator.
func (e *LinearSVC) Copy() ml.Estimator { c := *e; return &c }

// Fit fits the model (see the type's documentation).
func (e *LinearSVC) Fit(d ml.Data) (ml.Model, error) {
	const name = "LinearSVC"
	if err := checkCommon(name, e.RegParam, e.ElasticNetParam, e.MaxIter, e.Tol); err != nil {
		return nil, err
	}
	var loss Loss
	switch e.Loss {
	case "hinge":
		loss = Hinge
	case "squared_hinge":
		loss = SquaredHinge
	default:
		return nil, fmt.Errorf("%s: loss must be hinge or squared_hinge, got %q", name, e.Loss)
	}
	fd, err := loadFitData(d, name, e.FeaturesCol, e.LabelCol, e.WeightCol, true)
	if err != nil {
		return nil, err
	}
	nc := fd.numClasses
	nc = max(nc, 2)
	k := 1
	if nc > 2 {
		k = nc
	}
	sol, err := solve(fd, problem{report: d.Report, loss: loss, k: k, intercept: e.FitIntercept, standardize: e.Standardization,
		regParam: e.RegParam, elasticNet: e.ElasticNetParam, maxIter: e.MaxIter, tol: e.Tol})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &LinearSVCModel{Coefficients: sol.coef, Intercepts: sol.icpt, NumClasses: nc, NumFeatures: fd.x.Cols,
		Threshold: e.Threshold, FeaturesCol: e.FeaturesCol, PredictionCol: e.PredictionCol,
		RawPredictionCol: e.RawPredictionCol, Iterations: sol.iterations, Evaluations: sol.evaluations, Objective: sol.objective}, nil
}

// LinearSVCModel is a fitted LinearSVC: Coefficients is k × NumFeatures
// (row-major) with k = 1 for two classes, k = NumClasses one-vs-rest.
type LinearSVCModel struct {
	Coefficients []float64
	Intercepts   []float64
	NumClasses   int
	NumFeatures  int
	// Threshold is applied to the binary margin: prediction 1 when
	// β·x + b > Threshold (Spark's LinearSVCModel).
	Threshold float64

	FeaturesCol, PredictionCol, RawPredictionCol string

	// Iterations, Evaluations and Objective are the solver's (not saved).
	Iterations, Evaluations int
	Objective               float64
}

// Type returns "LinearSVCModel".
func (m *LinearSVCModel) Type() string { return "LinearSVCModel" }

// Transform adds rawPrediction (binary: [−m, m]; one-vs-rest: each
// class's margin) and prediction (one-vs-rest: the largest margin).
func (m *LinearSVCModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, m.FeaturesCol)
	if err != nil {
		return nil, fmt.Errorf("LinearSVCModel: %w", err)
	}
	if x.Cols != m.NumFeatures {
		return nil, fmt.Errorf("LinearSVCModel: column %q has %d features, the model %d", m.FeaturesCol, x.Cols, m.NumFeatures)
	}
	k, nc := len(m.Intercepts), m.NumClasses
	mg := margins(x, m.Coefficients, m.Intercepts, k)
	raw := make([]float64, x.Rows*nc)
	pred := make([]float64, x.Rows)
	for i := range x.Rows {
		r := raw[i*nc : (i+1)*nc]
		if k == 1 {
			z := mg[i]
			r[0], r[1] = -z, z
			if z > m.Threshold {
				pred[i] = 1
			}
			continue
		}
		copy(r, mg[i*k:(i+1)*k])
		pred[i] = float64(argmaxScaled(r, nil))
	}
	return ml.WithColumns(f, ml.VectorOut(m.RawPredictionCol, nc, raw), ml.ScalarOut(m.PredictionCol, pred))
}

type svcParams struct {
	NumClasses       int     `json:"numClasses"`
	Threshold        float64 `json:"threshold"`
	FeaturesCol      string  `json:"featuresCol"`
	PredictionCol    string  `json:"predictionCol"`
	RawPredictionCol string  `json:"rawPredictionCol"`
}

// Encode saves the coefficient matrix and the intercepts.
func (m *LinearSVCModel) Encode() (ml.Encoded, error) {
	k := len(m.Intercepts)
	return ml.Encoded{
		Params: svcParams{m.NumClasses, m.Threshold, m.FeaturesCol, m.PredictionCol, m.RawPredictionCol},
		Arrays: map[string]ml.Array{"coefficients": ml.Mat(k, m.NumFeatures, m.Coefficients), "intercepts": ml.Vec(m.Intercepts)},
	}, nil
}

func decodeLinearSVCModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p svcParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.NumClasses < 2 {
		return nil, fmt.Errorf("bad numClasses %d", p.NumClasses)
	}
	k := 1
	if p.NumClasses > 2 {
		k = p.NumClasses
	}
	c, err := ml.Need(arrays, "coefficients", k, -1)
	if err != nil {
		return nil, err
	}
	b, err := ml.Need(arrays, "intercepts", k)
	if err != nil {
		return nil, err
	}
	return &LinearSVCModel{Coefficients: c.Data, Intercepts: b.Data, NumClasses: p.NumClasses, NumFeatures: c.Shape[1],
		Threshold: p.Threshold, FeaturesCol: p.FeaturesCol, PredictionCol: p.PredictionCol, RawPredictionCol: p.RawPredictionCol}, nil
}

func init() {
	ml.RegisterStage("LinearSVC", func() ml.Stage { return NewLinearSVC() })
	ml.RegisterModel("LinearSVCModel", decodeLinearSVCModel)
}
