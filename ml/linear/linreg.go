package linear

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/ml"
)

// LinearRegression fits y ≈ β·x + b by minimizing Spark ML's objective
//
//	1/(2W) Σ w_i (y_i − β·x_i − b)² + λ(α‖β‖₁ + (1−α)/2 ‖β‖²)
//
// (W = Σ w_i, λ = RegParam, α = ElasticNetParam; the intercept is not
// penalized). With Standardization the penalty applies to the
// coefficients of the features scaled to unit variance (the fitted
// coefficients are reported in the original space). With
// Standardization=false it is exactly scikit-learn's ElasticNet (Ridge,
// LinearRegression) objective.
//
// Solvers: "normal" solves the normal equations by Cholesky (with an L1
// part, λα > 0, it runs OWL-QN instead, as Spark's normal solver runs its
// own OWL-QN then); "l-bfgs" runs L-BFGS, or OWL-QN when λα > 0; "auto"
// picks normal when λα = 0, and falls back to l-bfgs when the normal
// equations are singular (Spark does the same); "normal" reports a
// singular system as an error wrapping ml.ErrSingular. Unlike Spark, the label is not scaled
// by its standard deviation inside the optimization, so the L2 penalty is
// exactly the documented one (Spark's effective L2 term differs from it by
// a factor of the label's standard deviation).
type LinearRegression struct {
	// Params are the penalty, the solver and the input columns, shared
	// by the linear estimators.
	Params `yaml:",inline"`
	// Solver is auto, normal or l-bfgs (see above) [auto].
	Solver string `json:"solver" yaml:"solver"`
	// PredictionCol names the output prediction column.
	PredictionCol string `json:"predictionCol" yaml:"predictionCol"`
	// AggregationDepth is accepted for Spark configs and ignored (an
	// all-reduce has no tree depth).
	AggregationDepth int `json:"aggregationDepth" yaml:"aggregationDepth"`
}

// NewLinearRegression returns a LinearRegression with Spark's defaults.
func NewLinearRegression() *LinearRegression {
	return &LinearRegression{Params: defaultParams(),
		Solver: "auto", PredictionCol: ml.PredictionCol,
		AggregationDepth: 2}
}

// Type returns "LinearRegression".
func (e *LinearRegression) Type() string { return "LinearRegression" }

// Copy returns a copy of the estimator.
func (e *LinearRegression) Copy() ml.Estimator { c := *e; return &c }

func checkCommon(name string, regParam, elasticNet float64, maxIter int, tol float64) error {
	switch {
	case !(regParam >= 0) || math.IsInf(regParam, 0):
		return fmt.Errorf("%s: regParam must be ≥ 0, got %g", name, regParam)
	case !(elasticNet >= 0 && elasticNet <= 1):
		return fmt.Errorf("%s: elasticNetParam must be in [0, 1], got %g", name, elasticNet)
	case maxIter < 0:
		return fmt.Errorf("%s: maxIter must be ≥ 0, got %d", name, maxIter)
	case !(tol >= 0):
		return fmt.Errorf("%s: tol must be ≥ 0, got %g", name, tol)
	}
	return nil
}

// Fit fits the model (see the type's documentation).
func (e *LinearRegression) Fit(d ml.Data) (ml.Model, error) {
	const name = "LinearRegression"
	if err := checkCommon(name, e.RegParam, e.ElasticNetParam, e.MaxIter, e.Tol); err != nil {
		return nil, err
	}
	switch e.Solver {
	case "auto", "normal", "l-bfgs":
	default:
		return nil, fmt.Errorf("%s: solver must be auto, normal or l-bfgs, got %q", name, e.Solver)
	}
	fd, err := loadFitData(d, name, e.FeaturesCol, e.LabelCol, e.WeightCol, false)
	if err != nil {
		return nil, err
	}
	dd := fd.x.Cols
	m := &LinearRegressionModel{FeaturesCol: e.FeaturesCol, PredictionCol: e.PredictionCol, Coefficients: make([]float64, dd)}
	yMean := fd.labelSum / fd.wsum
	yVar := fd.labelSq/fd.wsum - yMean*yMean
	switch {
	case e.FitIntercept && yVar <= 1e-14*yMean*yMean:
		// A constant label: zero coefficients, the label as the
		// intercept (Spark's documented behaviour).
		m.Intercept = yMean
		m.Solver = "constant label"
	case !e.FitIntercept && fd.labelSq == 0:
		m.Solver = "zero label"
	default:
		l1 := e.RegParam * e.ElasticNetParam
		solved := false
		if l1 == 0 && e.Solver != "l-bfgs" {
			err := e.normal(fd, m)
			switch {
			case err == nil:
				solved = true
			case errors.Is(err, ml.ErrSingular) && e.Solver == "auto":
				// Spark's fallback: the iterative solver finds a
				// minimizer of a singular problem (one of many without
				// regularization).
			case errors.Is(err, ml.ErrSingular):
				return nil, fmt.Errorf("%s: the normal equations' matrix is singular (duplicated or collinear features, or fewer rows than features): %w; set regParam > 0, or solver \"l-bfgs\" (or \"auto\") to get one of the minimizers", name, err)
			default:
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if !solved {
			sol, err := solve(fd, problem{report: d.Report, loss: SquaredError, k: 1, intercept: e.FitIntercept,
				standardize: e.Standardization, regParam: e.RegParam, elasticNet: e.ElasticNetParam,
				maxIter: e.MaxIter, tol: e.Tol})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			copy(m.Coefficients, sol.coef)
			m.Intercept = sol.icpt[0]
			m.Iterations, m.Objective = sol.iterations, sol.objective
			m.Solver = "l-bfgs"
			if l1 > 0 {
				m.Solver = "owlqn"
			}
		}
	}
	if err := m.summarize(fd, e, e.RegParam == 0 && m.Solver == "normal"); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// normal solves the normal equations (L2 penalty only) by Cholesky:
// (XcᵀWXc/W + λD)β = XcᵀW(y − ȳ)/W on centred data (uncentred without an
// intercept), D = diag(σ_j²) with standardization, I without. A feature
// with σ_j = 0 gets a zero coefficient when there is an intercept.
func (e *LinearRegression) normal(fd *fitData, m *LinearRegressionModel) error {
	x, dd := fd.x, fd.x.Cols
	W := fd.wsum
	yMean := fd.labelSum / W
	// [XcᵀWXc (d²), XcᵀW(y − ȳ) (d)] summed over the ranks, on data
	// centred by the global means when there is an intercept (centring
	// the sums afterwards would cancel digits when |mean| ≫ std), a
	// block of rows at a time.
	s := make([]float64, dd*dd+dd)
	const block = 256
	xc := make([]float64, block*dd)
	xw := make([]float64, block*dd)
	yc := make([]float64, block)
	for b0 := 0; b0 < x.Rows && dd > 0; b0 += block {
		rows := min(block, x.Rows-b0)
		for i := range rows {
			wi := 1.0
			if fd.w != nil {
				wi = fd.w[b0+i]
			}
			yc[i] = fd.y[b0+i]
			if e.FitIntercept {
				yc[i] -= yMean
			}
			for j, v := range x.Row(b0 + i) {
				if e.FitIntercept {
					v -= fd.mean[j]
				}
				xc[i*dd+j] = v
				xw[i*dd+j] = v * wi
			}
		}
		kernel.Dgemm(true, false, dd, dd, rows, 1, xw, dd, xc, dd, 1, s[:dd*dd], dd)
		kernel.Dgemm(true, false, dd, 1, rows, 1, xw, dd, yc, 1, 1, s[dd*dd:], 1)
	}
	if err := fd.comm.AllReduce(s, ml.OpSum); err != nil {
		return err
	}
	var active []int
	for j := range dd {
		if fd.std[j] > 0 || !e.FitIntercept && fd.mean[j] != 0 {
			active = append(active, j)
		}
	}
	p := len(active)
	if p == 0 {
		if e.FitIntercept {
			m.Intercept = yMean
		}
		m.Solver = "normal"
		return nil
	}
	a := make([]float64, p*p)
	b := make([]float64, p)
	lam := e.RegParam
	for r, i := range active {
		for c, j := range active {
			a[r*p+c] = s[i*dd+j] / W
		}
		pen := lam
		if e.Standardization {
			pen *= fd.std[i] * fd.std[i]
		}
		a[r*p+r] += pen
		b[r] = s[dd*dd+i] / W
	}
	beta, inv, err := ml.CholeskySolve(a, p, b)
	if err != nil {
		return err
	}
	icpt := 0.0
	if e.FitIntercept {
		icpt = yMean
	}
	for r, j := range active {
		m.Coefficients[j] = beta[r]
		if e.FitIntercept {
			icpt -= beta[r] * fd.mean[j]
		}
	}
	m.Intercept = icpt
	m.Solver = "normal"
	m.inv, m.active = inv, active
	return nil
}

// LinearRegressionModel is a fitted LinearRegression: prediction =
// Coefficients·x + Intercept. The summary fields (Spark's
// LinearRegressionSummary on the training data) are not saved.
type LinearRegressionModel struct {
	Coefficients  []float64
	Intercept     float64
	FeaturesCol   string
	PredictionCol string

	// Solver is the solver that produced the model ("normal", "l-bfgs",
	// "owlqn", "constant label" or "zero label"); Iterations are the
	// iterative solver's. Objective is the objective's value at the fit.
	Solver     string
	Iterations int
	Objective  float64
	// RootMeanSquaredError and R2 are those of the training data
	// (weighted).
	RootMeanSquaredError, R2 float64
	// CoefficientStandardErrors (and InterceptStandardError) are the
	// standard errors of the coefficients, computed for the normal solver
	// without regularization only (nil otherwise), as Spark's summary.
	CoefficientStandardErrors []float64
	InterceptStandardError    float64

	inv    []float64 // (XcᵀWXc/W)⁻¹ over the active features
	active []int
}

// summarize computes the training summary: one pass for Σw r².
func (m *LinearRegressionModel) summarize(fd *fitData, e *LinearRegression, stdErrs bool) error {
	intercept := e.FitIntercept
	x := fd.x
	pred := predict1(x, m.Coefficients, m.Intercept)
	s := []float64{0}
	for i, p := range pred {
		wi := 1.0
		if fd.w != nil {
			wi = fd.w[i]
		}
		r := fd.y[i] - p
		s[0] += wi * r * r
	}
	if err := fd.comm.AllReduce(s, ml.OpSum); err != nil {
		return err
	}
	rss, W := s[0], fd.wsum
	m.RootMeanSquaredError = math.Sqrt(rss / W)
	m.Objective = rss / (2 * W)
	for j, b := range m.Coefficients {
		if e.Standardization {
			b *= fd.std[j]
		}
		m.Objective += e.RegParam * (e.ElasticNetParam*math.Abs(b) + (1-e.ElasticNetParam)/2*b*b)
	}
	yMean := fd.labelSum / W
	sst := fd.labelSq - W*yMean*yMean
	if !intercept {
		sst = fd.labelSq
	}
	if sst > 0 {
		m.R2 = 1 - rss/sst
	}
	if stdErrs && m.inv != nil {
		dof := fd.rows - len(m.active)
		if intercept {
			dof--
		}
		if dof > 0 {
			sigma2 := rss / float64(dof)
			p := len(m.active)
			m.CoefficientStandardErrors = make([]float64, x.Cols)
			for r, j := range m.active {
				m.CoefficientStandardErrors[j] = math.Sqrt(sigma2 * m.inv[r*p+r] / W)
			}
			if intercept {
				q := 0.0
				for r, i := range m.active {
					for c, j := range m.active {
						q += fd.mean[i] * m.inv[r*p+c] * fd.mean[j]
					}
				}
				m.InterceptStandardError = math.Sqrt(sigma2 * (1 + q) / W)
			}
		}
	}
	m.inv, m.active = nil, nil
	return nil
}

// predict1 returns x·coef + b for every row.
func predict1(x ml.Matrix, coef []float64, b float64) []float64 {
	out := make([]float64, x.Rows)
	if x.Rows > 0 && x.Cols > 0 {
		kernel.Dgemm(false, false, x.Rows, 1, x.Cols, 1, x.Data, x.Cols, coef, 1, 0, out, 1)
	}
	for i := range out {
		out[i] += b
	}
	return out
}

// Type returns "LinearRegressionModel".
func (m *LinearRegressionModel) Type() string { return "LinearRegressionModel" }

// Transform adds the prediction column.
func (m *LinearRegressionModel) Transform(f *data.Frame) (*data.Frame, error) {
	x, err := ml.Features(f, m.FeaturesCol)
	if err != nil {
		return nil, fmt.Errorf("LinearRegressionModel: %w", err)
	}
	if x.Cols != len(m.Coefficients) {
		return nil, fmt.Errorf("LinearRegressionModel: column %q has %d features, the model %d", m.FeaturesCol, x.Cols, len(m.Coefficients))
	}
	return ml.WithColumns(f, ml.ScalarOut(m.PredictionCol, predict1(x, m.Coefficients, m.Intercept)))
}

type linRegParams struct {
	FeaturesCol   string `json:"featuresCol"`
	PredictionCol string `json:"predictionCol"`
}

// Encode saves the coefficients and the intercept.
func (m *LinearRegressionModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{Params: linRegParams{m.FeaturesCol, m.PredictionCol}, Arrays: map[string]ml.Array{
		"coefficients": ml.Vec(m.Coefficients), "intercept": ml.Vec([]float64{m.Intercept})}}, nil
}

func decodeLinearRegressionModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	var p linRegParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	c, err := ml.Need(arrays, "coefficients", -1)
	if err != nil {
		return nil, err
	}
	b, err := ml.Need(arrays, "intercept", 1)
	if err != nil {
		return nil, err
	}
	return &LinearRegressionModel{Coefficients: c.Data, Intercept: b.Data[0], FeaturesCol: p.FeaturesCol, PredictionCol: p.PredictionCol}, nil
}

func init() {
	ml.RegisterStage("LinearRegression", func() ml.Stage { return NewLinearRegression() })
	ml.RegisterModel("LinearRegressionModel", decodeLinearRegressionModel)
}
