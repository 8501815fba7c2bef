package linear

import "github.com/fathom-ml/fathom/ml"

// Params are the parameters every linear estimator shares, with Spark
// ML's names: the penalty λ(α‖β‖₁ + (1−α)/2 ‖β‖²), the iterative solver's
// limits, the intercept, standardization and the input columns.
type Params struct {
	// RegParam is λ, the penalty's weight [0].
	RegParam float64 `json:"regParam" yaml:"regParam"`
	// ElasticNetParam is α ∈ [0, 1]: 0 is L2 (ridge), 1 is L1 (lasso) [0].
	ElasticNetParam float64 `json:"elasticNetParam" yaml:"elasticNetParam"`
	// MaxIter bounds the iterations of the iterative solver [100].
	MaxIter int `json:"maxIter" yaml:"maxIter"`
	// Tol stops the iterative solver when the objective changes by less
	// than Tol relative to its size [1e-6].
	Tol float64 `json:"tol" yaml:"tol"`
	// FitIntercept fits an (unpenalized) intercept [true].
	FitIntercept bool `json:"fitIntercept" yaml:"fitIntercept"`
	// Standardization applies the penalty to the coefficients of the
	// features scaled to unit standard deviation [true].
	Standardization bool `json:"standardization" yaml:"standardization"`
	// WeightCol names a column of row weights ≥ 0; "" weighs every row 1.
	WeightCol string `json:"weightCol" yaml:"weightCol"`
	// FeaturesCol names the features (a vector or numeric column).
	FeaturesCol string `json:"featuresCol" yaml:"featuresCol"`
	// LabelCol names the label column.
	LabelCol string `json:"labelCol" yaml:"labelCol"`
}

// defaultParams returns Spark's defaults.
func defaultParams() Params {
	return Params{MaxIter: 100, Tol: 1e-6, FitIntercept: true, Standardization: true,
		FeaturesCol: ml.FeaturesCol, LabelCol: ml.LabelCol}
}

// NumIterations is the iterative solver's iteration count (ml.Iterative).
func (m *LinearRegressionModel) NumIterations() int { return m.Iterations }

// NumIterations is the solver's iteration count (ml.Iterative).
func (m *LogisticRegressionModel) NumIterations() int { return m.Iterations }

// NumIterations is the solver's iteration count (ml.Iterative).
func (m *LinearSVCModel) NumIterations() int { return m.Iterations }
